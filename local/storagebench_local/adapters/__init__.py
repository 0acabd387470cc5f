"""The workflow's ports on this machine: the agent run here, artifacts on disk, notifications in a
file, moto's EC2 made to answer like EC2, and the fault injector the fault matrix uses."""
