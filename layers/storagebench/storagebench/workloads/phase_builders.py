"""How the library's profiles build their phases from their params: a plain fio job, dd writes, the
field studies' own job layouts (the File Gateway study's 4k mix, the virtual SAN's two job groups,
the genomics large file and small files), and custom commands and fio job files.
``workloads.library`` names the profiles that use them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from storagebench.protocol.plan import FioJob, Phase
from storagebench.workloads.command_needs import parse_requires
from storagebench.workloads.fio_options import option_problem
from storagebench.workloads.param_builders import dd_size, int_value, number_value, str_value
from storagebench.workloads.params import ParamValue, format_size
from storagebench.workloads.profile import TargetContext

# Options every fio profile shares: direct I/O through libaio (what the studies and AWS's guide
# use), total-latency percentiles, per-job reporting so job histograms merge exactly.
FIO_BASE: dict[str, Any] = {"ioengine": "libaio", "direct": 1, "lat_percentiles": 1}


def fio_phase(
    name: str, global_options: Mapping[str, Any], jobs: list[FioJob], *, timeseries: bool = True
) -> Phase:
    return {
        "name": name,
        "engine": "fio",
        "fio": {"global_options": dict(global_options), "jobs": jobs, "timeseries": timeseries},
    }


def _timed(values: Mapping[str, ParamValue]) -> dict[str, Any]:
    options: dict[str, Any] = {"time_based": 1, "runtime": f"{math.ceil(number_value(values, 'runtime'))}s"}
    if number_value(values, "ramp_time") > 0:
        options["ramp_time"] = f"{math.ceil(number_value(values, 'ramp_time'))}s"
    return options


def simple_fio(rw: str, *, sequential: bool = False) -> Any:
    """A one-job-section fio profile: ``numjobs`` copies of one job, time based."""

    def build(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
        size = int_value(values, "size")
        options: dict[str, Any] = {
            **FIO_BASE,
            "rw": rw,
            "bs": format_size(int_value(values, "bs")),
            "iodepth": int_value(values, "iodepth"),
            "numjobs": int_value(values, "numjobs"),
            "size": format_size(size),
            **_timed(values),
        }
        if "rwmixread" in values and rw in ("randrw", "rw"):
            options["rwmixread"] = int_value(values, "rwmixread")
        if sequential and ctx.mode == "raw":
            options["offset_increment"] = format_size(size)  # each job streams its own region
        for extra in ("sync", "fsync"):
            if extra in values:
                options[extra] = values[extra]
        return [fio_phase("run", {}, [{"name": rw, "options": options}])]

    return build


def dd_build(count_param: str = "count") -> Any:
    def build(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
        return [
            {
                "name": "write",
                "engine": "dd",
                "dd": {
                    "direction": "write",
                    "input": "/dev/zero",
                    "file": "test",
                    "bs": dd_size(int_value(values, "bs")),
                    "count": int_value(values, count_param),
                    "oflag": str_value(values, "oflag"),
                    "parallel": 1,
                },
            }
        ]

    return build


def randrw_4k_25read(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    options: dict[str, Any] = {
        "ioengine": "libaio",
        "direct": int_value(values, "direct"),
        "lat_percentiles": 1,
        "rw": "randrw",
        "rwmixread": int_value(values, "rwmixread"),
        "bs": format_size(int_value(values, "bs")),
        "iodepth": int_value(values, "iodepth"),
        "numjobs": int_value(values, "numjobs"),
        "size": format_size(int_value(values, "size")),
        "nrfiles": int_value(values, "nrfiles"),
    }
    return [fio_phase("run", {}, [{"name": "randrw-4k", "options": options}])]


def vsan_two_groups(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    common = {
        **FIO_BASE,
        "rw": "randrw",
        "iodepth": int_value(values, "iodepth"),
        "numjobs": int_value(values, "jobs_per_group"),
        "size": format_size(int_value(values, "size")),
        **_timed(values),
    }
    jobs: list[FioJob] = [
        {"name": "randrw-8k", "options": {**common, "bs": "8k"}},
        # new_group without stonewall: both groups run at once and fio reports them apart.
        {"name": "randrw-128k", "options": {**common, "bs": "128k", "new_group": 1}},
    ]
    return [fio_phase("run", {}, jobs)]


def genomics_large_file(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    threads = int_value(values, "threads")
    count = int_value(values, "count")
    bs = dd_size(int_value(values, "bs"))
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


def genomics_small_files(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    files = int_value(values, "files")
    file_bytes = int_value(values, "file_size")
    env = {"SB_FILES": str(files), "SB_FILE_SIZE": str(file_bytes)}
    accounting = {"bytes": files * file_bytes, "files": files}
    threads = int_value(values, "threads")
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


def custom_command(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    command: dict[str, Any] = {
        "script": str_value(values, "command"),
        "parallel": int_value(values, "threads"),
    }
    if "bytes" in values:
        command["accounting"] = {"bytes": int_value(values, "bytes")}
    if "requires" in values:
        command["requires"] = parse_requires(str_value(values, "requires"))
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


def custom_fio(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
    return [
        {
            "name": "run",
            "engine": "fio",
            "fio": {
                "job_file": str_value(values, "job_file"),
                "jobs": [],
                "timeseries": bool(values.get("timeseries", True)),
            },
        }
    ]
