"""The profile library: the published field studies, the standard suite, sweeps, custom runs.

Each profile reproduces a command a practitioner ran (quoted in its description) at
``scale=1``; smaller scales shrink sizes, counts and runtimes only. Sources refer to
``field-workloads.md`` (the four studies) and AWS's EBS benchmarking guidance.

The params the profiles share are built in ``workloads.param_builders``, their phases in
``workloads.phase_builders``; this module names the profiles and the suites.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

from storagebench.workloads.command_needs import REQUIRES_HELP, check_requires
from storagebench.workloads.param_builders import (
    auto_iodepth,
    p_bs,
    p_direct,
    p_iodepth,
    p_numjobs,
    p_ramp,
    p_runtime,
    p_rwmixread,
    p_size,
    p_threads,
)
from storagebench.workloads.params import Param
from storagebench.workloads.phase_builders import (
    FIO_BASE,
    check_fio_job_file,
    custom_command,
    custom_fio,
    dd_build,
    genomics_large_file,
    genomics_small_files,
    randrw_4k_25read,
    simple_fio,
    vsan_two_groups,
)
from storagebench.workloads.profile import Profile
from storagebench.workloads.sla import sla_profile

# The fio profiles, their sources and shared descriptions: data, read once (fio_profiles.toml).
_DATA: dict[str, Any] = tomllib.loads(
    resources.files("storagebench.workloads").joinpath("fio_profiles.toml").read_text(encoding="utf-8")
)
SOURCES: dict[str, str] = _DATA["sources"]
STUDY_FILE_GATEWAY = SOURCES["file-gateway"]
STUDY_VSAN = SOURCES["virtual-san"]
STUDY_GENOMICS = SOURCES["genomics"]
STUDY_REPORT_CARD = SOURCES["report-card"]
AWS_GUIDE = SOURCES["aws-guide"]


# ---------------------------------------------------------------- builders


def _dd_write_profile(name: str, title: str, count: int, note: str) -> Profile:
    return Profile(
        name=name,
        title=title,
        description=(
            "`dd if=/dev/zero of=<mount>/test bs=1048576 count=N oflag=dsync`: 1 MiB synchronous writes "
            f"that defeat the page cache, repeated 12 times per share in the study. {note}"
        ),
        source=STUDY_FILE_GATEWAY,
        family="field-study:file-gateway",
        intent="throughput",
        engine="dd",
        needs="filesystem",
        params=(
            p_bs("1m"),
            Param(
                "count",
                "int",
                count,
                "blocks to write",
                minimum=1,
                maximum=10_000_000,
                scales=True,
                scale_floor=1,
            ),
            Param(
                "oflag",
                "choice",
                "dsync",
                "output flags",
                choices=("dsync", "sync", "direct", "direct,dsync"),
            ),
        ),
        build=dd_build(),
    )


def _fio_profile(
    name: str,
    title: str,
    description: str,
    source: str,
    family: str,
    intent: Any,
    rw: str,
    *,
    bs: str,
    iodepth: int | str,
    numjobs: int,
    runtime: float,
    ramp: float = 0,
    size: str = "1g",
    rwmixread: int | None = None,
    sequential: bool = False,
    bs_sweep: tuple[str, ...] | None = None,
    numjobs_sweep: tuple[int, ...] | None = None,
    iodepth_sweep: tuple[int, ...] | None = None,
    extra_params: tuple[Param, ...] = (),
) -> Profile:
    params = [
        p_bs(bs_sweep if bs_sweep else bs, sweepable=True),
        Param(
            "iodepth",
            "int",
            iodepth_sweep if iodepth_sweep else iodepth,
            "outstanding I/O per job",
            minimum=1,
            maximum=1024,
            sweepable=True,
            auto=iodepth == "auto",
        ),
        Param(
            "numjobs",
            "int",
            numjobs_sweep if numjobs_sweep else numjobs,
            "parallel jobs (processes)",
            minimum=1,
            maximum=256,
            sweepable=True,
        ),
        p_runtime(runtime),
        p_ramp(ramp),
        p_size(size),
        *extra_params,
    ]
    if rwmixread is not None:
        params.append(p_rwmixread(rwmixread))
    auto = {"iodepth": auto_iodepth} if iodepth == "auto" else {}
    return Profile(
        name=name,
        title=title,
        description=description,
        source=source,
        family=family,
        intent=intent,
        engine="fio",
        params=tuple(params),
        build=simple_fio(rw, sequential=sequential),
        auto=auto,
    )


_SYNC = Param("sync", "int", 1, "1 opens with O_SYNC, as a database log writer does", minimum=0, maximum=1)
_EXTRA_PARAMS = {"sync": _SYNC}
_SWEEPS = ("bs_sweep", "numjobs_sweep", "iodepth_sweep")
_FIO_FIELDS = frozenset(
    {"title", "description", "description_of", "result", "source", "family", "intent", "rw"}
    | {"bs", "iodepth", "numjobs", "runtime", "ramp", "size", "rwmixread", "sequential", "extra_params"}
    | set(_SWEEPS)
)


def fio_profile(name: str) -> Profile:
    """The fio profile ``name`` of ``fio_profiles.toml``, built with :func:`_fio_profile`."""
    row = dict(_DATA["fio"][name])
    unknown = sorted(set(row) - _FIO_FIELDS)
    if unknown:
        raise ValueError(
            f"fio_profiles.toml [fio.{name}]: unknown field(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(_FIO_FIELDS))}"
        )
    shared = row.pop("description_of", None)
    if shared is not None:
        description = _DATA["descriptions"][shared].format(result=row.pop("result", ""))
    else:
        description = row.pop("description")
    head = [row.pop(field) for field in ("title", "source", "family", "intent", "rw")]
    title, source, family, intent, rw = head
    options: dict[str, Any] = {k: tuple(v) if k in _SWEEPS else v for k, v in row.items()}
    options["extra_params"] = tuple(_EXTRA_PARAMS[p] for p in options.pop("extra_params", ()))
    return _fio_profile(name, title, description, SOURCES[source], family, intent, rw, **options)


def _sla_probe_params() -> tuple[Param, ...]:
    """What each probe of a latency-SLA search runs: 20 s after 5 s of warm-up at scale 1."""
    return (p_bs("4k"), p_iodepth(32), p_numjobs(1), p_runtime(20), p_ramp(5), p_size("1g"))


def _profiles() -> list[Profile]:
    return [
        # ---- standard suite
        fio_profile("std-randread-4k"),
        fio_profile("std-randwrite-4k"),
        fio_profile("std-seqread-1m"),
        fio_profile("std-seqwrite-1m"),
        fio_profile("std-latency-4k-qd1"),
        fio_profile("std-mixed-16k-70read"),
        # ---- sweeps: one workload, a latency-vs-load curve
        fio_profile("sweep-qd-randread-4k"),
        fio_profile("sweep-jobs-randread-4k"),
        # ---- latency SLA: the highest IOPS under a latency target, by bisection of the rate
        sla_profile(
            "sla-randread-4k",
            "4k random read: IOPS under a latency SLA",
            "randread",
            base=FIO_BASE,
            workload_params=_sla_probe_params(),
        ),
        sla_profile(
            "sla-randwrite-4k",
            "4k random write: IOPS under a latency SLA",
            "randwrite",
            base=FIO_BASE,
            workload_params=_sla_probe_params(),
        ),
        # ---- field study 1: File Gateway
        _dd_write_profile(
            "dd-seq-write-1m-dsync",
            "dd 1 MiB x 1,000 synchronous write",
            1000,
            "The study's base case (about 1 GB); set count to 1 for its 1 MB file.",
        ),
        _dd_write_profile(
            "dd-seq-write-1g-dsync", "dd 1 GiB synchronous write", 1024, "The study's 1 GB file variant."
        ),
        _dd_write_profile(
            "dd-seq-write-4g-dsync",
            "dd 4 GiB synchronous write",
            4096,
            "The study's 3-5 GB file variant (4 GiB; set count for 3 or 5).",
        ),
        Profile(
            name="fio-randrw-4k-25read",
            title="4 jobs x 2 files, 4k random, 25 % reads (instruments writing)",
            description=(
                "`fio --ioengine=libaio --bs=4k --iodepth=4 --numjobs=4 --size=8G --readwrite=randrw "
                "--rwmixread=25 --nrfiles=2`: each job has two 4 GiB files. Buffered (direct=0) as the study "
                "ran it; about 3 hours on a c5.large client at scale 1. fio's group minb/maxb/mint/maxt "
                "are kept."
            ),
            source=STUDY_FILE_GATEWAY,
            family="field-study:file-gateway",
            intent="mixed",
            engine="fio",
            needs="filesystem",
            params=(
                p_bs("4k"),
                p_iodepth(4),
                p_numjobs(4),
                p_size("8g", help_text="bytes per job, split across nrfiles"),
                p_rwmixread(25),
                Param("nrfiles", "int", 2, "files per job", minimum=1, maximum=10_000),
                p_direct(0),
            ),
            build=randrw_4k_25read,
        ),
        # ---- field study 2: virtual SAN
        fio_profile("vsan-randwrite-8k"),
        fio_profile("vsan-randread-8k"),
        fio_profile("vsan-randrw-8k"),
        fio_profile("vsan-randwrite-256k"),
        fio_profile("vsan-randrw-256k"),
        fio_profile("vsan-randread-small-blocks"),
        Profile(
            name="vsan-two-groups",
            title="8k and 128k random 50/50 as two concurrent job groups",
            description=(
                "Two fio job groups running at once (new_group, no stonewall), 24 or 32 jobs each, as the "
                "study "
                "ran them; fio reports each group apart and so do the records (group 0 and 1)."
            ),
            source=STUDY_VSAN,
            family="field-study:virtual-san",
            intent="mixed",
            engine="fio",
            params=(
                Param(
                    "jobs_per_group", "int", 24, "jobs in each group", minimum=1, maximum=128, sweepable=True
                ),
                p_iodepth(14),
                p_runtime(30),
                p_ramp(0),
                p_size("1g"),
            ),
            build=vsan_two_groups,
        ),
        # ---- field study 3: genomics
        Profile(
            name="genomics-large-file",
            title="Create then read one large file per thread (dd, timed)",
            description=(
                "`dd if=/dev/urandom of=<dir>/large_100gb.txt iflag=fullblock bs=100M count=1024`, then "
                "`dd if=<file> of=/dev/null`, timed real/user/sys at 1, 4 and 8 threads (each thread its own "
                "file). The page cache is dropped before the read. The study's read also had conv=fdatasync, "
                "which fails on /dev/null with current coreutils and is left out."
            ),
            source=STUDY_GENOMICS,
            family="field-study:genomics",
            intent="throughput",
            engine="dd",
            needs="filesystem",
            params=(
                p_bs("100m"),
                Param(
                    "count",
                    "int",
                    1024,
                    "blocks per file",
                    minimum=1,
                    maximum=1_000_000,
                    scales=True,
                    scale_floor=1,
                ),
                p_threads((1, 4, 8)),
            ),
            build=genomics_large_file,
        ),
        Profile(
            name="genomics-small-files",
            title="Create then read 100,000 files of 500 kB (shell loops, timed)",
            description=(
                "`head -c 500kB </dev/urandom > <dir>/small/randfile$j.txt` in a loop, then `dd if=$file "
                "of=/dev/null` for each, timed real/user/sys at 1, 4 and 8 threads splitting the files. "
                "The page cache is dropped before the read."
            ),
            source=STUDY_GENOMICS,
            family="field-study:genomics",
            intent="metadata",
            engine="command",
            needs="filesystem",
            params=(
                Param(
                    "files",
                    "int",
                    100_000,
                    "files in all",
                    minimum=1,
                    maximum=10_000_000,
                    scales=True,
                    scale_floor=100,
                ),
                Param(
                    "file_size",
                    "int",
                    500_000,
                    "bytes per file (head -c 500kB = 500,000)",
                    minimum=1,
                    maximum=1 << 30,
                ),
                p_threads((1, 4, 8)),
            ),
            build=genomics_small_files,
        ),
        # ---- field study 4: IO report card
        fio_profile("reportcard-oltp-8k-randread"),
        fio_profile("reportcard-dss-1m-seqread"),
        fio_profile("reportcard-log-1k-seqwrite"),
        fio_profile("reportcard-log-128k-seqwrite"),
        # ---- custom
        Profile(
            name="fio-custom",
            title="Your fio job file",
            description=(
                "Runs the given fio job file against the prepared target: the agent adds `directory=` (file "
                "system) or `filename=` (raw) and its output options. Only allow-listed options are accepted "
                "(I/O pattern, engine, rate, reporting; no filename, directory, include, exec_*, log paths "
                "or $VARIABLES: the job runs as root). Not scaled."
            ),
            source="custom",
            family="custom",
            intent="mixed",
            engine="fio",
            params=(
                Param(
                    "job_file",
                    "text",
                    None,
                    "fio job file text (ini format)",
                    check=check_fio_job_file,
                    required=True,
                ),
                Param("timeseries", "bool", True, "write 1 s IOPS/latency/bandwidth logs"),
            ),
            build=custom_fio,
        ),
        Profile(
            name="command",
            title="Your command, timed (real/user/sys)",
            description=(
                "Runs a shell command in the target directory ($SB_TARGET_DIR), timed by the agent with "
                "real/user/sys, e.g. a genomics pipeline (`cellranger count --localcores=8 ...`). With "
                "threads > 1 it runs that many copies with $SB_THREAD set. Give `bytes` to get MiB/s, and "
                "`requires` to have the programs and data it needs checked before launch and before it runs."
            ),
            source=STUDY_GENOMICS,
            family="custom",
            intent="application",
            engine="command",
            needs="filesystem",
            params=(
                Param("command", "text", None, "shell command (run by /bin/sh)", required=True),
                Param("threads", "int", 1, "parallel copies", minimum=1, maximum=256),
                Param("bytes", "int", None, "bytes the command moves, for MiB/s", minimum=0),
                Param("requires", "text", None, REQUIRES_HELP, check=check_requires),
            ),
            build=custom_command,
        ),
    ]


PROFILES: dict[str, Profile] = {p.name: p for p in _profiles()}

SUITES: dict[str, tuple[str, ...]] = {
    "standard": (
        "std-randread-4k",
        "std-randwrite-4k",
        "std-seqread-1m",
        "std-seqwrite-1m",
        "std-latency-4k-qd1",
        "std-mixed-16k-70read",
    ),
    "file-gateway": (
        "dd-seq-write-1m-dsync",
        "dd-seq-write-1g-dsync",
        "dd-seq-write-4g-dsync",
        "fio-randrw-4k-25read",
    ),
    "virtual-san": (
        "vsan-randwrite-8k",
        "vsan-randread-8k",
        "vsan-randrw-8k",
        "vsan-randwrite-256k",
        "vsan-randrw-256k",
        "vsan-randread-small-blocks",
        "vsan-two-groups",
    ),
    "genomics": ("genomics-large-file", "genomics-small-files"),
    "report-card": (
        "reportcard-oltp-8k-randread",
        "reportcard-dss-1m-seqread",
        "reportcard-log-1k-seqwrite",
        "reportcard-log-128k-seqwrite",
    ),
}


def get_profile(name: str) -> Profile:
    """The named profile; KeyError with close matches when unknown."""
    if name not in PROFILES:
        import difflib

        close = difflib.get_close_matches(name, PROFILES, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"unknown workload profile {name!r}{hint} (`storagebench workloads` lists them)")
    return PROFILES[name]
