"""fio's normal (human) output: the "Run status group" summary and the per-job headline lines.

The summary is what practitioners quote (study 1 reads io, aggrb, minb/maxb, mint/maxt from
it), so it is the reference the JSON-derived records are checked against::

    Run status group 0 (all jobs):
       READ: bw=51.9MiB/s (54.4MB/s), 12.8MiB/s-13.3MiB/s (13.4MB/s-13.9MB/s),
             io=8080KiB (8274kB), run=151-152msec        (one line in fio's output)

fio prints every amount twice, in the unit base of the job (``kb_base``, 1024 by default) and in
the other one in parentheses, each rounded to a few significant digits. ``Amount`` keeps both
renderings and the resolution of each, so a comparison can say "agrees within fio's rounding"
instead of guessing a tolerance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from storagebench.results.errors import ParseError

_PREFIX = {
    "": 1,
    "k": 10**3,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "KI": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_COUNT_PREFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}

_NUM = r"\d+(?:\.\d+)?"
_Q = rf"{_NUM}(?:[kKMGTPE]i?)?B"  # an amount of bytes: 4096B, 76.8MiB, 8274kB
_R = rf"{_Q}/s"  # a rate: 76.7MiB/s
_QUANTITY = re.compile(rf"^(?P<num>{_NUM})(?P<prefix>(?:[kKMGTPE]i?)?)B(?:/s)?$")

_GROUP_HEADER = re.compile(r"^\s*Run status group (?P<group>\d+) \(all jobs\):\s*$")
_GROUP_LINE = re.compile(
    rf"^\s*(?P<dir>READ|WRITE|TRIM|MIXED):\s+bw=(?P<bw>{_R})\s+\((?P<bw2>{_R})\),\s+"
    rf"(?P<minb>{_R})-(?P<maxb>{_R})\s+\((?P<minb2>{_R})-(?P<maxb2>{_R})\),\s+"
    rf"io=(?P<io>{_Q})\s+\((?P<io2>{_Q})\),\s+run=(?P<mint>\d+)-(?P<maxt>\d+)msec\s*$"
)
_DIRECTION_WORD = re.compile(r"^\s*(READ|WRITE|TRIM|MIXED):")
_JOB_HEADER = re.compile(
    r"^(?P<name>\S.*?): \(groupid=(?P<group>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>-?\d+)"
)
_JOB_LINE = re.compile(
    rf"^\s+(?P<dir>read|write|trim|mixed)\s*: IOPS=(?P<iops>{_NUM})(?P<iops_prefix>[kKMGT]?),\s+"
    rf"BW=(?P<bw>{_R})\s+\((?P<bw2>{_R})\)\((?P<io>{_Q})/(?P<run>\d+)msec\)"
)


@dataclass(frozen=True)
class Quantity:
    """One printed number: its text, its value in bytes (or bytes/s, or I/Os) and its resolution.

    ``resolution`` is one unit of the last printed digit: "76.7MiB/s" has a resolution of
    0.1 MiB/s, "161MiB/s" of 1 MiB/s.
    """

    text: str
    value: float
    resolution: float

    def agrees(self, value: float) -> bool:
        """True when ``value`` prints as this quantity, whether fio rounded or truncated."""
        return abs(value - self.value) <= self.resolution * (1 + 1e-9)


@dataclass(frozen=True)
class Amount:
    """The same amount as fio printed it, usually twice (IEC and SI units)."""

    renderings: tuple[Quantity, ...]

    @property
    def value(self) -> float:
        """The value of the most precise rendering."""
        return min(self.renderings, key=lambda q: q.resolution / max(q.value, 1e-300)).value

    def agrees(self, value: float) -> bool:
        """True when ``value`` agrees with every rendering within its printed resolution."""
        return all(q.agrees(value) for q in self.renderings)

    def __str__(self) -> str:
        return " ".join(q.text for q in self.renderings)


@dataclass(frozen=True)
class GroupStatus:
    """One line of a "Run status group" block: fio's own group totals for one direction.

    ``bw`` is aggrb (all the group's bytes over its longest job runtime), ``bw_min``/``bw_max``
    the slowest and fastest job (minb/maxb), ``run_min_ms``/``run_max_ms`` mint/maxt.
    """

    group: int
    direction: str  # read | write | trim | mixed
    bw: Amount
    bw_min: Amount
    bw_max: Amount
    io: Amount
    run_min_ms: int
    run_max_ms: int


@dataclass(frozen=True)
class JobDirection:
    """A job's headline line: ``read: IOPS=19.6k, BW=76.7MiB/s (80.5MB/s)(76.8MiB/1001msec)``."""

    direction: str
    iops: Quantity
    bw: Amount
    io: Amount
    runtime_ms: int


@dataclass(frozen=True)
class JobSummary:
    """A job block of the normal output (one per group with ``group_reporting``)."""

    name: str
    group: int
    jobs: int
    error: int
    directions: dict[str, JobDirection] = field(default_factory=dict)


def parse_quantity(text: str, source: str | PurePath | None = None) -> Quantity:
    """Parse one fio amount such as ``76.7MiB/s``, ``8274kB`` or ``4096B`` into bytes."""
    match = _QUANTITY.match(text.strip())
    if not match:
        raise ParseError(source, f"{text!r} is not a fio amount of bytes (like 76.7MiB/s or 8274kB)")
    number = match["num"]
    unit = _PREFIX[match["prefix"]]
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return Quantity(text=text.strip(), value=float(number) * unit, resolution=unit * 10.0**-decimals)


def _count(number: str, prefix: str) -> Quantity:
    unit = _COUNT_PREFIX[prefix]
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return Quantity(text=number + prefix, value=float(number) * unit, resolution=unit * 10.0**-decimals)


def _amount(source: str | PurePath | None, *texts: str) -> Amount:
    return Amount(tuple(parse_quantity(text, source) for text in texts))


def parse_run_status(text: str, source: str | PurePath | None = None) -> list[GroupStatus]:
    """Every direction line of every "Run status group N (all jobs):" block, in output order.

    A direction line inside a block that does not have the expected shape raises ParseError
    naming the line: silently skipping it would drop a group from the cross-check.
    """
    statuses: list[GroupStatus] = []
    group: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _GROUP_HEADER.match(line)
        if header:
            group = int(header["group"])
            continue
        if group is None:
            continue
        if not line.strip():
            group = None
            continue
        if not _DIRECTION_WORD.match(line):
            continue
        match = _GROUP_LINE.match(line)
        if not match:
            raise ParseError(source, f"line {number}: unrecognised run status line {line.strip()!r}")
        statuses.append(
            GroupStatus(
                group=group,
                direction=match["dir"].lower(),
                bw=_amount(source, match["bw"], match["bw2"]),
                bw_min=_amount(source, match["minb"], match["minb2"]),
                bw_max=_amount(source, match["maxb"], match["maxb2"]),
                io=_amount(source, match["io"], match["io2"]),
                run_min_ms=int(match["mint"]),
                run_max_ms=int(match["maxt"]),
            )
        )
    return statuses


def parse_job_summaries(text: str, source: str | PurePath | None = None) -> list[JobSummary]:
    """The per-job blocks: name, group, ``jobs=`` (members under group_reporting), err, IOPS."""
    jobs: list[JobSummary] = []
    current: JobSummary | None = None
    for line in text.splitlines():
        header = _JOB_HEADER.match(line)
        if header:
            current = JobSummary(
                name=header["name"],
                group=int(header["group"]),
                jobs=int(header["jobs"]),
                error=int(header["err"]),
            )
            jobs.append(current)
            continue
        if _GROUP_HEADER.match(line):
            current = None
            continue
        match = _JOB_LINE.match(line)
        if match and current is not None:
            current.directions[match["dir"]] = JobDirection(
                direction=match["dir"],
                iops=_count(match["iops"], match["iops_prefix"]),
                bw=_amount(source, match["bw"], match["bw2"]),
                io=_amount(source, match["io"]),
                runtime_ms=int(match["run"]),
            )
    return jobs
