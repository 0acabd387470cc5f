"""Which parts of a request run shell as root on the benchmark instance: the privileged content.

Setup and teardown hooks (a config's and its node groups') and ``command`` workloads are shell;
a custom fio job file is checked against an allow-list (``workloads.fio_options``) but is still
the caller's program for fio, so it counts too. A request carrying any of them is privileged:
the API starts it only on its separately granted route (``POST /runs/privileged``) and only
when the stack allows privileged runs; schedules the stack's owner writes are trusted as the
owner's own (docs/deploy.md, Security).
"""

from __future__ import annotations

from dataclasses import dataclass

from storagebench.request.model import BenchmarkRequest

SHELL_PROFILES = {"command": "a shell command", "fio-custom": "a custom fio job file"}


@dataclass(frozen=True)
class Privileged:
    """One privileged part: where it is and what it runs."""

    path: str
    what: str


def privileged_content(request: BenchmarkRequest) -> list[Privileged]:
    found: list[Privileged] = []
    for index, config in enumerate(request.configs):
        for hook in ("setup", "teardown"):
            if getattr(config, hook):
                found.append(Privileged(f"configs[{index}].{hook}", f"a {hook} hook (shell, as root)"))
        for position, group in enumerate(config.nodes):
            for hook in ("setup", "teardown"):
                if getattr(group, hook):
                    found.append(
                        Privileged(
                            f"configs[{index}].nodes[{position}].{hook}",
                            f"a {hook} hook on the {group.role} nodes (shell, as root)",
                        )
                    )
    for index, workload in enumerate(request.workloads):
        if workload.profile in SHELL_PROFILES:
            found.append(Privileged(f"workloads[{index}].profile", SHELL_PROFILES[workload.profile]))
    return found
