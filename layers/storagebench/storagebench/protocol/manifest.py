"""The agent's output: a directory of raw tool output plus ``manifest.json``.

Layout (paths relative to the output directory)::

    manifest.json                       this document, rewritten atomically after every step
    plan.json                           the plan as received
    agent.log                           the progress lines also written to stderr
    prewarm/<target>/                   dd.<device>.stderr or fio.<device>.json per member device;
                                        the cold-read check: dd.<device>.{cold,warm}.stderr
    steps/<step id>/<phase>/            one directory per phase of a step
        job.fio                         fio: the job file as run
        fio.json                        fio: --output-format=json+ part (per-job, with latency bins)
        fio.txt                         fio: the normal part (fio's own group summary lines)
        fio.stderr
        ts/<job>_{iops,lat,bw}.<n>.log  fio: 1 s averaged time series when the phase asks for them
        probe-<nn>/                     a latency-SLA search: the same fio files, one directory per rate
        dd.<thread>.stderr              dd: dd's own records in/out and rate lines
        stdout.<thread>.txt, stderr.<thread>.txt   command
        timing.json                     real/user/sys measured by the agent (os.wait4 rusage)

Nothing here is parsed by the agent beyond splitting fio's combined output: turning raw output
into records is the domain's job (``storagebench.results``), so a raw file is never lost to a
parser bug and can be re-parsed later.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, List, Optional, TypedDict

MANIFEST_VERSION = 1
STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_SKIPPED = "skipped"


class ThreadTiming(TypedDict, total=False):
    thread: int
    rc: int
    real_s: float
    user_s: float
    sys_s: float
    bytes: int
    files: int


class Timing(TypedDict, total=False):
    real_s: float
    user_s: float
    sys_s: float
    threads: List[ThreadTiming]
    accounting: Dict[str, int]  # bytes / files the planner says the command moves


class PhaseResult(TypedDict, total=False):
    name: str
    engine: str
    dir: str
    status: str
    error: Optional[str]
    rc: Optional[int]
    started_at: str
    ended_at: str
    timing: Timing
    files: List[str]
    drop_caches: str  # done | skipped: not root
    volume: List[Dict[str, Any]]  # each device's view of the phase (agent.ebs_stats.summary)
    warnings: List[str]  # e.g. too small to measure (protocol.measurable)
    search: Dict[str, Any]  # a latency-SLA search: every probe and the answer (protocol.sla.SearchResult)
    clients: List[str]  # a multi-client fio phase: the fio servers fio --client drove, in order
    missing: List[str]  # a command phase's requires this machine lacks (the command was not started)
    # A node removed mid-phase: agent.node_loss.LossMeasurement per direction (read, write, trim:
    # on IOPS; read_bw, ...: on MiB/s), or node_loss_error when the logs could not say.
    node_loss: Dict[str, Any]
    node_loss_error: str


class StepResult(TypedDict, total=False):
    id: str
    workload: str
    profile: str
    variant: Dict[str, Any]
    repetition: int
    target: str
    intent: str
    status: str
    error: Optional[str]
    started_at: str
    ended_at: str
    phases: List[PhaseResult]


class DeviceInfo(TypedDict, total=False):
    path: str
    name: str
    volume_id: Optional[str]
    serial: Optional[str]
    model: Optional[str]
    size_bytes: int
    emulated: Optional[Dict[str, Any]]


class TargetResult(TypedDict, total=False):
    id: str
    kind: str
    mode: str  # raw | filesystem | directory | network
    path: str  # what workloads use: a block device (raw) or a directory
    devices: List[DeviceInfo]
    md_device: Optional[str]
    filesystem: Optional[str]
    labels: List[str]


class SampledExtent(TypedDict):
    """One extent of a cold-read check (``agent.cold_read``): dd's seconds for each pass."""

    offset: int
    bytes: int
    cold_s: float
    warm_s: float


class PrewarmDevice(TypedDict, total=False):
    path: str
    bytes: int  # the device's size (a full read reads all of it)
    seconds: float  # full: the read; sampled: the cold pass (dd's own seconds, summed)
    mibps: float
    files: List[str]
    # mode sampled only
    sampled_bytes: int
    block_bytes: int
    warm_mibps: float
    extents: List[SampledExtent]


class PrewarmResult(TypedDict, total=False):
    target: str
    method: str
    mode: str  # full (read end to end; absent in older manifests) | sampled (the cold-read check)
    pass_seconds: Dict[str, float]  # sampled: cold and warm pass on the agent's clock
    status: str
    error: Optional[str]
    dir: str
    devices: List[PrewarmDevice]
    started_at: str
    ended_at: str


class CleanupReport(TypedDict):
    actions: List[Dict[str, Any]]
    leftovers: List[str]
    status: str  # ok | incomplete


class Manifest(TypedDict, total=False):
    manifest_version: int
    agent_version: str
    run_id: str
    config_id: str
    status: str  # running | ok | failed | partial
    error: Optional[str]
    started_at: str
    ended_at: Optional[str]
    system: Dict[str, Any]
    packages: Dict[str, str]  # what the task installed or found, with versions
    targets: List[TargetResult]
    prewarm: List[PrewarmResult]
    steps: List[StepResult]
    adaptive: List[Dict[str, Any]]  # each adaptive series: repetitions spent, values, why it stopped
    emulation_events: List[Dict[str, Any]]
    emulation: Dict[str, Any]
    hooks: Dict[str, Any]
    cleanup: CleanupReport
    # A machine of a multi-machine config (protocol.topology): its role and index, and what went
    # wrong telling the others to finish (the primary; the workflow's cleanup releases them anyway).
    topology: Dict[str, Any]


def write_json_atomic(path: str, document: Any) -> None:
    """Write JSON so a reader (or a crash) never sees half a file."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_manifest(output_dir: str) -> Manifest:
    with open(os.path.join(output_dir, "manifest.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    if not isinstance(document, dict) or document.get("manifest_version") != MANIFEST_VERSION:
        raise ValueError(
            f"{output_dir}/manifest.json: manifest_version {document.get('manifest_version')!r} "
            f"is not {MANIFEST_VERSION}"
        )
    return document  # type: ignore[return-value]
