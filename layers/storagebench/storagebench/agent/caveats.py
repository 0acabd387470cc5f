"""What a result measured on this machine cannot say: one wording for the agent and the report.

Local mode stands an EBS volume in with a loop device on the host's disk, throttled to the volume
type's envelope (``agent.emulate``); ``--dir`` benchmarks an existing directory in place. Neither
measures cloud storage, and the person reading the numbers must be told before anything else: the
agent prints these lines on stderr before it runs, the report puts them first. Stdlib only (the
agent ships as a Python 3.9 zipapp), so the report imports the wording from here.
"""

from __future__ import annotations

from typing import Iterable, List, Mapping

EMULATED_LABEL_PREFIX = "emulated:"
"""Records measured on an emulated volume carry ``emulated:<type>:<size>GiB`` (``agent.targets``)."""
DIRECTORY_LABEL_PREFIX = "directory:"
"""Records measured in a directory target carry ``directory:unthrottled`` (``agent.targets``)."""


def _names(names: Iterable[str]) -> str:
    unique = sorted(set(names))
    return f" ({', '.join(unique)})" if unique else ""


def emulated_caveat(names: Iterable[str] = ()) -> str:
    """The emulated-volume caveat; ``names`` are the configs or volume types concerned."""
    return (
        f"emulated volumes{_names(names)}: a loop device on this host's disk, throttled to the EBS volume "
        "type's IOPS and throughput envelope. Emulated latency is the host disk's, not EBS latency, and "
        "IOPS and MiB/s show the emulated ceiling, not a measurement of EBS: grades, verdicts and the "
        "cost-performance frontier computed from them say nothing about EBS. Run on AWS to measure EBS."
    )


def directory_caveat(names: Iterable[str] = ()) -> str:
    """The directory-target caveat; ``names`` are the configs or paths concerned."""
    return (
        f"directory target{_names(names)}: measures this host's file system and page cache, unthrottled "
        "(buffered I/O can be served from RAM), not any cloud storage: whatever grade or verdict a report "
        "gives it describes this machine only."
    )


def label_caveats(labels_by_name: Mapping[str, Iterable[str]]) -> List[str]:
    """The caveats that apply to results carrying these labels, keyed by config (or any name)."""
    emulated: List[str] = []
    directory: List[str] = []
    for name, labels in labels_by_name.items():
        seen = list(labels)
        if any(label.startswith(EMULATED_LABEL_PREFIX) for label in seen):
            emulated.append(name)
        if any(label.startswith(DIRECTORY_LABEL_PREFIX) for label in seen):
            directory.append(name)
    out: List[str] = []
    if emulated:
        out.append(emulated_caveat(emulated))
    if directory:
        out.append(directory_caveat(directory))
    return out


def plan_caveats(targets: Iterable[Mapping[str, object]]) -> List[str]:
    """The caveats for a plan's targets (``Plan["targets"]``), before anything is measured."""
    emulated: List[str] = []
    directories: List[str] = []
    for target in targets:
        emulations = target.get("emulate")
        if isinstance(emulations, list):
            for emulation in emulations:
                volume_type = emulation.get("volume_type") if isinstance(emulation, dict) else None
                emulated.append(f"{target.get('id')}: {volume_type or 'ebs'}")
        if target.get("kind") == "directory":
            directories.append(f"{target.get('id')}: {target.get('path')}")
    out: List[str] = []
    if emulated:
        out.append(emulated_caveat(emulated))
    if directories:
        out.append(directory_caveat(directories))
    return out
