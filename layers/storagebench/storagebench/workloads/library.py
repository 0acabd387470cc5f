"""The profile library: the published field studies, the standard suite, sweeps, custom runs.

Each profile reproduces a command a practitioner ran (quoted in its description) at
``scale=1``; smaller scales shrink sizes, counts and runtimes only. Sources refer to
``field-workloads.md`` (the four studies) and AWS's EBS benchmarking guidance.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from storagebench.protocol.plan import FioJob, Phase
from storagebench.workloads.command_needs import REQUIRES_HELP, check_requires, parse_requires
from storagebench.workloads.fio_options import option_problem
from storagebench.workloads.params import Param, ParamValue, format_size, parse_size
from storagebench.workloads.profile import Profile, TargetContext
from storagebench.workloads.sla import sla_profile

# Options every fio profile shares: direct I/O through libaio (what the studies and AWS's guide
# use), total-latency percentiles, per-job reporting so job histograms merge exactly.
FIO_BASE: dict[str, Any] = {"ioengine": "libaio", "direct": 1, "lat_percentiles": 1}

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


def _int(values: Mapping[str, ParamValue], name: str) -> int:
    value = values[name]
    assert isinstance(value, int | float) and not isinstance(value, bool), name
    return int(value)


def _num(values: Mapping[str, ParamValue], name: str) -> float:
    value = values[name]
    assert isinstance(value, int | float) and not isinstance(value, bool), name
    return float(value)


def dd_size(size: int) -> str:
    """GNU dd's binary units are upper case (1M = 1,048,576); ``1m`` is an error there."""
    return format_size(size).upper()


def _str(values: Mapping[str, ParamValue], name: str) -> str:
    return str(values[name])


def auto_iodepth(values: Mapping[str, ParamValue], ctx: TargetContext) -> ParamValue:
    """Per-job queue depth from AWS's guidance: ~1 outstanding I/O per 500 IOPS on SSD, >= 4 on HDD."""
    jobs = max(1, _int(values, "numjobs")) if "numjobs" in values else 1
    if ctx.expected_iops is None:
        return 32
    if ctx.media == "hdd":
        return max(4, math.ceil(8 / jobs))
    total = max(4, math.ceil(ctx.expected_iops / 500))
    return max(1, math.ceil(total / jobs))


# ---------------------------------------------------------------- parameter constructors


def p_bs(default: str | tuple[str, ...], *, sweepable: bool = False) -> Param:
    return Param(
        "bs", "size", default, "block size per I/O", minimum=512, maximum=1 << 30, sweepable=sweepable
    )


def p_iodepth(default: int | str, *, auto: bool = False) -> Param:
    return Param(
        "iodepth",
        "int",
        default,
        "outstanding I/O per job",
        minimum=1,
        maximum=1024,
        sweepable=True,
        auto=auto,
    )


def p_numjobs(default: int) -> Param:
    return Param(
        "numjobs", "int", default, "parallel jobs (processes)", minimum=1, maximum=256, sweepable=True
    )


def p_runtime(default: float, floor: float = 3) -> Param:
    return Param(
        "runtime",
        "duration",
        default,
        "seconds of measured I/O",
        minimum=1,
        maximum=86_400,
        scales=True,
        scale_floor=floor,
    )


def p_ramp(default: float) -> Param:
    return Param(
        "ramp_time",
        "duration",
        default,
        "seconds of warm-up before measuring",
        minimum=0,
        maximum=3600,
        scales=True,
        scale_floor=1,
    )


def p_size(
    default: str, floor: str = "16m", help_text: str = "bytes per job (file size or device region)"
) -> Param:
    return Param(
        "size",
        "size",
        default,
        help_text,
        minimum=1 << 20,
        maximum=64 << 40,
        scales=True,
        scale_floor=parse_size(floor),
    )


def p_rwmixread(default: int) -> Param:
    return Param(
        "rwmixread", "int", default, "percent of I/O that reads", minimum=0, maximum=100, sweepable=True
    )


def p_direct(default: int) -> Param:
    return Param("direct", "int", default, "1 bypasses the page cache (O_DIRECT)", minimum=0, maximum=1)


def p_threads(default: tuple[int, ...] | int) -> Param:
    return Param(
        "threads",
        "int",
        default,
        "parallel processes, each on its own files",
        minimum=1,
        maximum=256,
        sweepable=True,
    )


# ---------------------------------------------------------------- builders


def fio_phase(
    name: str, global_options: Mapping[str, Any], jobs: list[FioJob], *, timeseries: bool = True
) -> Phase:
    return {
        "name": name,
        "engine": "fio",
        "fio": {"global_options": dict(global_options), "jobs": jobs, "timeseries": timeseries},
    }


def _timed(values: Mapping[str, ParamValue]) -> dict[str, Any]:
    options: dict[str, Any] = {"time_based": 1, "runtime": f"{math.ceil(_num(values, 'runtime'))}s"}
    if _num(values, "ramp_time") > 0:
        options["ramp_time"] = f"{math.ceil(_num(values, 'ramp_time'))}s"
    return options


def simple_fio(rw: str, *, sequential: bool = False) -> Any:
    """A one-job-section fio profile: ``numjobs`` copies of one job, time based."""

    def build(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
        size = _int(values, "size")
        options: dict[str, Any] = {
            **FIO_BASE,
            "rw": rw,
            "bs": format_size(_int(values, "bs")),
            "iodepth": _int(values, "iodepth"),
            "numjobs": _int(values, "numjobs"),
            "size": format_size(size),
            **_timed(values),
        }
        if "rwmixread" in values and rw in ("randrw", "rw"):
            options["rwmixread"] = _int(values, "rwmixread")
        if sequential and ctx.mode == "raw":
            options["offset_increment"] = format_size(size)  # each job streams its own region
        for extra in ("sync", "fsync"):
            if extra in values:
                options[extra] = values[extra]
        return [fio_phase("run", {}, [{"name": rw, "options": options}])]

    return build


def _dd_build(count_param: str = "count") -> Any:
    def build(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
        return [
            {
                "name": "write",
                "engine": "dd",
                "dd": {
                    "direction": "write",
                    "input": "/dev/zero",
                    "file": "test",
                    "bs": dd_size(_int(values, "bs")),
                    "count": _int(values, count_param),
                    "oflag": _str(values, "oflag"),
                    "parallel": 1,
                },
            }
        ]

    return build


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
        build=_dd_build(),
    )


def _randrw_4k_25read(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    options: dict[str, Any] = {
        "ioengine": "libaio",
        "direct": _int(values, "direct"),
        "lat_percentiles": 1,
        "rw": "randrw",
        "rwmixread": _int(values, "rwmixread"),
        "bs": format_size(_int(values, "bs")),
        "iodepth": _int(values, "iodepth"),
        "numjobs": _int(values, "numjobs"),
        "size": format_size(_int(values, "size")),
        "nrfiles": _int(values, "nrfiles"),
    }
    return [fio_phase("run", {}, [{"name": "randrw-4k", "options": options}])]


def _vsan_two_groups(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    common = {
        **FIO_BASE,
        "rw": "randrw",
        "iodepth": _int(values, "iodepth"),
        "numjobs": _int(values, "jobs_per_group"),
        "size": format_size(_int(values, "size")),
        **_timed(values),
    }
    jobs: list[FioJob] = [
        {"name": "randrw-8k", "options": {**common, "bs": "8k"}},
        # new_group without stonewall: both groups run at once and fio reports them apart.
        {"name": "randrw-128k", "options": {**common, "bs": "128k", "new_group": 1}},
    ]
    return [fio_phase("run", {}, jobs)]


def _genomics_large_file(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    threads = _int(values, "threads")
    count = _int(values, "count")
    bs = dd_size(_int(values, "bs"))
    return [
        {
            "name": "create",
            "engine": "dd",
            "dd": {
                "direction": "write",
                "input": "/dev/urandom",
                "file": "large_100gb.txt",
                "bs": bs,
                "count": count,
                "iflag": "fullblock",
                "parallel": threads,
            },
        },
        # The study read right after writing; dropping the cache keeps this a storage read, not RAM.
        # Its `conv=fdatasync` is dropped: syncing /dev/null fails on current coreutils (exit 1
        # after a complete copy) and syncs nothing on older ones.
        {
            "name": "read",
            "engine": "dd",
            "drop_caches": True,
            "dd": {
                "direction": "read",
                "file": "large_100gb.txt",
                "bs": bs,
                "count": count,
                "parallel": threads,
            },
        },
    ]


_SMALL_FILES_RANGE = (
    "n=$SB_FILES; t=$SB_THREADS; k=$SB_THREAD; per=$(( (n + t - 1) / t )); first=$(( k * per + 1 )); "
    'last=$(( (k + 1) * per )); [ "$last" -gt "$n" ] && last=$n; d="$SB_TARGET_DIR/small"; mkdir -p "$d"; '
    "j=$first; "
)
SMALL_FILES_CREATE = (
    _SMALL_FILES_RANGE
    + 'while [ "$j" -le "$last" ]; do head -c "$SB_FILE_SIZE" </dev/urandom > "$d/randfile$j.txt"; '
    "j=$((j + 1)); done"
)
SMALL_FILES_READ = (
    _SMALL_FILES_RANGE
    + 'while [ "$j" -le "$last" ]; do dd if="$d/randfile$j.txt" of=/dev/null 2>/dev/null; j=$((j + 1)); done'
)


def _genomics_small_files(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    files = _int(values, "files")
    file_bytes = _int(values, "file_size")
    env = {"SB_FILES": str(files), "SB_FILE_SIZE": str(file_bytes)}
    accounting = {"bytes": files * file_bytes, "files": files}
    threads = _int(values, "threads")
    return [
        {
            "name": "create",
            "engine": "command",
            "command": {
                "script": SMALL_FILES_CREATE,
                "parallel": threads,
                "env": env,
                "accounting": accounting,
            },
        },
        {
            "name": "read",
            "engine": "command",
            "drop_caches": True,
            "command": {
                "script": SMALL_FILES_READ,
                "parallel": threads,
                "env": env,
                "accounting": accounting,
            },
        },
    ]


def _custom_command(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    command: dict[str, Any] = {"script": _str(values, "command"), "parallel": _int(values, "threads")}
    if "bytes" in values:
        command["accounting"] = {"bytes": _int(values, "bytes")}
    if "requires" in values:
        command["requires"] = parse_requires(_str(values, "requires"))
    return [{"name": "run", "engine": "command", "command": command}]  # type: ignore[typeddict-item]


def check_fio_job_file(text: str) -> None:
    """Reject job files fio would refuse, and every option outside the allow-list
    (``workloads.fio_options``): a job file runs as root on the instance."""
    import configparser

    for number, line in enumerate(text.splitlines(), start=1):
        # configparser folds an indented line into the option above it, but fio reads every line
        # as an option of its own: an indented `exec_prerun=...` would pass unseen.
        if line[:1].isspace() and line.strip():
            raise ValueError(
                f"line {number} is indented ({line.strip()[:40]!r}): fio reads it as an option "
                "of its own, so write every option at the start of its line"
            )
    parser = configparser.ConfigParser(
        allow_no_value=True, strict=False, interpolation=None, delimiters=("=",)
    )
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(f"not a fio job file: {exc.message.splitlines()[0]}") from None
    jobs = [section for section in parser.sections() if section != "global"]
    if not jobs:
        raise ValueError("the job file has no job section (only [global] or nothing)")
    problems = [
        f"[{section}] {problem}"
        for section in parser.sections()
        for key, value in parser[section].items()
        if (problem := option_problem(key.split()[0] if key.split() else key, value)) is not None
    ]
    if problems:
        raise ValueError("; ".join(problems))


def _custom_fio(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    return [
        {
            "name": "run",
            "engine": "fio",
            "fio": {
                "job_file": _str(values, "job_file"),
                "jobs": [],
                "timeseries": bool(values.get("timeseries", True)),
            },
        }
    ]


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
            build=_randrw_4k_25read,
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
            build=_vsan_two_groups,
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
            build=_genomics_large_file,
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
            build=_genomics_small_files,
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
            build=_custom_fio,
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
            build=_custom_command,
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
