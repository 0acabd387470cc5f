"""Powering this machine off: a node's planned removal (``workloads[].node_loss``, ``plan.power_off``).

On EC2, ``systemctl poweroff`` shuts the instance down; storagebench launches every instance with
``InstanceInitiatedShutdownBehavior=terminate``, so EC2 then terminates it. Its services stop, its
address stops answering and its volumes detach, as when a controller is lost; the workflow's
cleanup finds it terminated (or terminates it) like any machine of the config.

The command is looked up on ``PATH`` like every program the agent runs. A local instance
(``storagebench_local``) puts a stand-in first on its ``PATH`` that stops every process of that
instance, never the host: the machine-level action is the only part that differs.
"""

from __future__ import annotations

import subprocess
from typing import List

from storagebench.agent.proc import CommandError

POWER_OFF: List[str] = ["systemctl", "poweroff"]
TIMEOUT_S = 60.0  # systemctl queues the shutdown and returns; the machine goes down after


def power_off() -> None:
    """Ask the machine to power off; CommandError when the request itself fails (the machine stays)."""
    try:
        done = subprocess.run(POWER_OFF, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandError(f"{' '.join(POWER_OFF)}: {exc}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise CommandError(f"{' '.join(POWER_OFF)} exited with status {done.returncode}: {said[0]}")
