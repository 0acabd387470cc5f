"""Which options a user's fio job file may set: an allow-list, not a deny-list.

A custom job file runs as root on the benchmark instance, against the target the agent prepared.
fio can do far more than I/O on that target: run programs (``exec_prerun``, ``exec_postrun``,
``ioengine=exec`` or ``external``), read other files (``include``, ``$VAR`` expansion,
``read_iolog``), write anywhere (``filename``, ``directory``, ``opendir``, the ``write_*_log``
paths), or undo the agent's output handling (``output``, ``exitall_on_error``). Anything not
listed here is refused with the option's name, so a fio release that adds an option does not
widen what a request can do. Option names from fio's HOWTO (fio 3.x, "Job file parameters").
"""

from __future__ import annotations

import re

# option -> what it shapes (named in the refusal's list of what is allowed)
ALLOWED: dict[str, str] = {
    **dict.fromkeys(
        (
            "name",
            "description",
            "stonewall",
            "wait_for",
            "new_group",
            "group_reporting",
            "loops",
            "numjobs",
            "thread",
            "startdelay",
            "runtime",
            "time_based",
            "ramp_time",
            "number_ios",
        ),
        "job control",
    ),
    **dict.fromkeys(
        (
            "rw",
            "readwrite",
            "rw_sequencer",
            "rwmixread",
            "rwmixwrite",
            "bs",
            "blocksize",
            "bsrange",
            "bssplit",
            "blocksize_unaligned",
            "bs_unaligned",
            "blockalign",
            "ba",
            "size",
            "io_size",
            "io_limit",
            "filesize",
            "offset",
            "offset_increment",
            "offset_align",
            "nrfiles",
            "file_service_type",
            "openfiles",
            "create_on_open",
            "unlink",
            "unlink_each_loop",
            "fallocate",
            "fadvise_hint",
            "zonemode",
            "zonesize",
            "zonerange",
            "zoneskip",
        ),
        "I/O pattern",
    ),
    **dict.fromkeys(
        (
            "randrepeat",
            "allrandrepeat",
            "randseed",
            "random_generator",
            "random_distribution",
            "percentage_random",
            "norandommap",
            "softrandommap",
        ),
        "randomness",
    ),
    **dict.fromkeys(
        (
            "ioengine",
            "uri",
            "iodepth",
            "iodepth_batch",
            "iodepth_batch_submit",
            "iodepth_batch_complete",
            "iodepth_batch_complete_min",
            "iodepth_batch_complete_max",
            "iodepth_low",
            "io_submit_mode",
            "direct",
            "buffered",
            "atomic",
            "sync",
            "fsync",
            "fdatasync",
            "end_fsync",
            "fsync_on_close",
            "write_barrier",
            "invalidate",
            "hipri",
            "fixedbufs",
            "registerfiles",
            "sqthread_poll",
            "nonvectored",
            "uncached",
            "nowait",
        ),
        "engine and caching",
    ),
    **dict.fromkeys(
        (
            "rate",
            "rate_min",
            "rate_iops",
            "rate_iops_min",
            "rate_process",
            "rate_ignore_thinktime",
            "rate_cycle",
            "thinktime",
            "thinktime_spin",
            "thinktime_blocks",
            "latency_target",
            "latency_window",
            "latency_percentile",
            "latency_run",
            "max_latency",
        ),
        "rate and latency targets",
    ),
    **dict.fromkeys(
        (
            "zero_buffers",
            "refill_buffers",
            "scramble_buffers",
            "buffer_compress_percentage",
            "buffer_compress_chunk",
            "dedupe_percentage",
            "buffer_pattern",
        ),
        "data content",
    ),
    **dict.fromkeys(
        (
            "lat_percentiles",
            "clat_percentiles",
            "slat_percentiles",
            "percentile_list",
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "unified_rw_reporting",
            "gtod_reduce",
            "log_avg_msec",
            "log_hist_msec",
            "log_max_value",
        ),
        "reporting",
    ),
    **dict.fromkeys(("trim_percentage", "trim_verify_zero", "trim_backlog", "trim_backlog_batch"), "trim"),
}
IOENGINES = ("libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "posixaio", "mmap", "null", "nbd")
# fio's nbd engine (libnbd, user space) reaches a block device served over the network, as a
# virtual SAN's controllers serve theirs: an nbd:// address only (no nbd+unix://, no query: no
# socket or program of the instance).
_NBD_URI = re.compile(r"^nbd://[A-Za-z0-9][A-Za-z0-9.-]{0,252}(:[0-9]{1,5})?(/[A-Za-z0-9._-]{0,64})?$")
_FIO_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h|hr)?\s*$", re.IGNORECASE)
_FIO_UNIT_S = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0}
_FIO_UNIT_S |= {"min": 60.0, "h": 3600.0, "hr": 3600.0}


def fio_seconds(value: object) -> float:
    """A fio time option (``ramp_time=5s``, ``500ms``, ``2m``, a bare number of seconds) in seconds."""
    match = _FIO_TIME.match(str(value))
    if match is None:
        raise ValueError(f"{value!r} is not a fio time (a number with us, ms, s, m or h)")
    return float(match.group(1)) * _FIO_UNIT_S[(match.group(2) or "s").lower()]


def job_file_times(text: str, option: str) -> list[float]:
    """Every value of a time option (``runtime``, ``ramp_time``) a job file sets, in seconds."""
    pattern = re.compile(rf"^\s*{re.escape(option)}\s*=\s*(.+?)\s*$", re.MULTILINE)
    return [fio_seconds(value) for value in pattern.findall(text)]


# Why the common dangerous ones are refused (others: "not in the allow-list").
REASONS = {
    "exec_prerun": "runs a program as root",
    "exec_postrun": "runs a program as root",
    "include": "reads another file into the job",
    "filename": "the agent points every job at the prepared target",
    "directory": "the agent points every job at the prepared target",
    "opendir": "reads a directory outside the target",
    "filename_format": "names files outside the agent's choice",
    "read_iolog": "reads a file of the instance",
    "write_iolog": "writes a file outside the output",
    "output": "the agent controls fio's output",
    "output-format": "the agent controls fio's output",
    "exitall_on_error": "the agent controls how a failed job ends the run",
    "write_bw_log": "the agent writes the time series",
    "write_lat_log": "the agent writes the time series",
    "write_iops_log": "the agent writes the time series",
    "write_hist_log": "the agent writes the time series",
    "cgroup": "the agent places fio in its own cgroup",
    "pre_read": "reads the target outside the measurement",
}
_VARIABLE = re.compile(r"\$\{?[A-Za-z_]")


def option_problem(option: str, value: str | None) -> str | None:
    """Why a job file may not set ``option`` (to ``value``), or None when it may."""
    name = option.strip().lower()
    if name not in ALLOWED:
        why = REASONS.get(name, "not in storagebench's allow-list of fio options")
        kinds = sorted(set(ALLOWED.values()))
        return (
            f"sets {name}, which {why}"
            if name in REASONS
            else f"sets {name}: {why} (allowed: {', '.join(kinds)})"
        )
    if value is not None and _VARIABLE.search(value):
        return f"sets {name}={value}: fio would expand an environment variable; give the value itself"
    if name == "ioengine" and (value or "").strip() not in IOENGINES:
        return f"sets ioengine={value}: allowed engines are {', '.join(IOENGINES)}"
    if name == "uri" and not _NBD_URI.match((value or "").strip()):
        return f"sets uri={value}: allowed is nbd://host[:port][/export] (fio's nbd engine)"
    return None
