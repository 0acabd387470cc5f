"""What a result measured on this machine cannot say: one wording for the agent and the report.

Local mode stands an EBS volume in with an EBS twin (a per-I/O model of the volume type behind a
loop device) or, where the twin cannot run, a loop device under the kernel's throttle
(``agent.emulate``); ``--dir`` benchmarks an existing directory in place. Neither
measures cloud storage, and the person reading the numbers must be told before anything else: the
agent prints these lines on stderr before it runs, the report puts them first. Stdlib only (the
agent ships as a Python 3.9 zipapp), so the report imports the wording from here.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Mapping

EMULATED_LABEL_PREFIX = "emulated:"
"""Records measured on an emulated volume carry ``emulated:<type>:<size>GiB`` (``agent.targets``)."""
EMULATOR_LABEL_PREFIX = "emulator:"
"""... and ``emulator:twin`` or ``emulator:throttle``: which stand-in served it (none: the throttle,
the only emulator before the twin)."""
DIRECTORY_LABEL_PREFIX = "directory:"
"""Records measured in a directory target carry ``directory:unthrottled`` (``agent.targets``)."""


NOT_EBS = (
    "grades, verdicts and the cost-performance frontier computed from them say nothing about EBS. "
    "Run on AWS to measure EBS."
)
"""How every emulated-volume caveat ends: one wording for what such numbers cannot say."""


def _names(names: Iterable[str]) -> str:
    unique = sorted(set(names))
    return f" ({', '.join(unique)})" if unique else ""


def emulated_caveat(names: Iterable[str] = ()) -> str:
    """The caveat before a run, when the emulator is not yet known; ``names``: configs or volumes."""
    return (
        f"emulated volumes{_names(names)}: an EBS twin on this host (every I/O admitted at the volume "
        "type's IOPS and throughput envelope and answered after a service time drawn from the catalog's "
        "latency model), or where the twin cannot run a loop device throttled by the kernel. Either way "
        "IOPS, MiB/s and latency follow a model of EBS, not a measurement of it: " + NOT_EBS
    )


def twin_caveat(names: Iterable[str] = ()) -> str:
    """Results measured on EBS twins."""
    return (
        f"EBS twins{_names(names)}: every I/O was admitted at the volume type's IOPS and throughput "
        "envelope and answered after a service time drawn from the catalog's latency model for the type: "
        "IOPS, MiB/s and latency show that model (queueing included), not a measurement of EBS: " + NOT_EBS
    )


def throttle_caveat(names: Iterable[str] = ()) -> str:
    """Results measured on throttled loop devices (the fallback where a twin cannot run)."""
    return (
        f"throttled emulated volumes{_names(names)}: a loop device on this host's disk, throttled to the "
        "EBS volume type's IOPS and throughput envelope. Emulated latency is the host disk's and the "
        "throttle's (I/O served in slices), not EBS latency, and IOPS and MiB/s show the emulated "
        "ceiling, not a measurement of EBS: " + NOT_EBS
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
    twins: List[str] = []
    throttled: List[str] = []
    directory: List[str] = []
    for name, labels in labels_by_name.items():
        seen = list(labels)
        if any(label.startswith(EMULATED_LABEL_PREFIX) for label in seen):
            if f"{EMULATOR_LABEL_PREFIX}twin" in seen:
                twins.append(name)
            if f"{EMULATOR_LABEL_PREFIX}twin" not in seen or f"{EMULATOR_LABEL_PREFIX}throttle" in seen:
                throttled.append(name)
        if any(label.startswith(DIRECTORY_LABEL_PREFIX) for label in seen):
            directory.append(name)
    out: List[str] = []
    if twins:
        out.append(twin_caveat(twins))
    if throttled:
        out.append(throttle_caveat(throttled))
    if directory:
        out.append(directory_caveat(directory))
    return out


def plan_caveats(targets: Iterable[Mapping[str, object]]) -> List[str]:
    """The caveats for a plan's targets (``Plan["targets"]``), before anything is measured: the
    emulator a volume asks for decides the wording ("auto" may still end on the throttle)."""
    by_emulator: Dict[str, List[str]] = {"auto": [], "twin": [], "throttle": []}
    directories: List[str] = []
    for target in targets:
        emulations = target.get("emulate")
        if isinstance(emulations, list):
            for emulation in emulations:
                spec = emulation if isinstance(emulation, dict) else {}
                name = f"{target.get('id')}: {spec.get('volume_type') or 'ebs'}"
                by_emulator.get(str(spec.get("emulator", "auto")), by_emulator["auto"]).append(name)
        if target.get("kind") == "directory":
            directories.append(f"{target.get('id')}: {target.get('path')}")
    out: List[str] = []
    for emulator, wording in (
        ("auto", emulated_caveat),
        ("twin", twin_caveat),
        ("throttle", throttle_caveat),
    ):
        if by_emulator[emulator]:
            out.append(wording(by_emulator[emulator]))
    if directories:
        out.append(directory_caveat(directories))
    return out
