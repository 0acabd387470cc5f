"""Composition roots: which adapters the handlers use (AWS, from the environment), built once per
Lambda container; local mode and tests put their own in with ``configure``. The one place besides
the CLI where the application meets ``storagebench.adapters``."""
