"""GNU coreutils dd's summary on stderr::

    1000+0 records in
    1000+0 records out
    1048576000 bytes (1.0 GB, 1000 MiB) copied, 5.12 s, 205 MB/s

Also read: the pre-8.24 form ``1048576000 bytes (1.0 GB) copied, 5.12 s, 205 MB/s``, tiny
copies without the parenthesis (``100 bytes copied``, ``1 byte copied``), partial records
(``999+1``), ``N truncated records``, ``status=progress`` lines (carriage-return separated), a
decimal comma from a non-C locale, and ``dd: ...`` error lines, which are kept: the read in
study 3 (``of=/dev/null conv=fdatasync``) prints ``dd: fsync failed for '/dev/null': Invalid
argument`` and exits 1 after copying everything.

When dd printed several summaries (``kill -USR1``), the last one is the result. Bandwidth is
recomputed from bytes and seconds (dd's own rate is rounded to 2-3 significant digits and
uses SI units); dd's printed rate is kept for cross-checking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath

from storagebench.results.errors import ParseError

MIB = 1 << 20
_UNITS = {
    "": 1,
    "k": 10**3,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_NUM = r"\d+(?:[.,]\d+)?(?:e[+-]?\d+)?"
_RECORDS = re.compile(r"^(?P<full>\d+)\+(?P<partial>\d+) records (?P<way>in|out)$")
_TRUNCATED = re.compile(r"^(?P<n>\d+) truncated records?$")
_COPIED = re.compile(
    rf"^(?P<bytes>\d+) bytes? (?:\((?P<human>[^)]*)\) )?copied,\s*(?P<seconds>{_NUM})\s*s(?:econds)?,\s*"
    rf"(?P<rate>{_NUM}|[Ii]nf(?:inity)?)\s*(?P<unit>[kKMGTPE]?i?)B/s$"
)


@dataclass(frozen=True)
class DdRecords:
    full: int
    partial: int

    @property
    def total(self) -> int:
        return self.full + self.partial


@dataclass(frozen=True)
class DdResult:
    records_in: DdRecords
    records_out: DdRecords
    bytes: int
    seconds: float
    reported_rate_bytes_per_s: float | None  # dd's own (rounded) rate; None for "Infinity"
    reported_rate: str  # as printed, e.g. "205 MB/s"
    truncated_records: int = 0
    errors: tuple[str, ...] = ()

    @property
    def bytes_per_s(self) -> float | None:
        return self.bytes / self.seconds if self.seconds > 0 else None

    @property
    def mibps(self) -> float | None:
        rate = self.bytes_per_s
        return rate / MIB if rate is not None else None


def _float(text: str) -> float:
    return float(text.replace(",", "."))


def parse_dd_stderr(text: str, source: str | PurePath | None = None) -> DdResult:
    """Parse dd's stderr. Raises ParseError when there is no complete summary."""
    lines = [line.strip() for line in re.split(r"[\r\n]+", text) if line.strip()]
    errors = tuple(line for line in lines if line.startswith("dd: "))
    records: dict[str, DdRecords] = {}
    truncated = 0
    result: DdResult | None = None
    for line in lines:
        match = _RECORDS.match(line)
        if match:
            records[match["way"]] = DdRecords(int(match["full"]), int(match["partial"]))
            continue
        match = _TRUNCATED.match(line)
        if match:
            truncated = int(match["n"])
            continue
        match = _COPIED.match(line)
        if not match:
            continue
        if "in" not in records or "out" not in records:
            # A status=progress line: a running total without the records lines.
            continue
        rate_text = match["rate"]
        rate = None if rate_text.lower().startswith("inf") else _float(rate_text) * _UNITS[match["unit"]]
        result = DdResult(
            records_in=records["in"],
            records_out=records["out"],
            bytes=int(match["bytes"]),
            seconds=_float(match["seconds"]),
            reported_rate_bytes_per_s=rate,
            reported_rate=f"{rate_text} {match['unit']}B/s",
            truncated_records=truncated,
            errors=errors,
        )
        records = {}
        truncated = 0
    if result is None:
        detail = f"; dd said: {errors[-1]}" if errors else ""
        raise ParseError(
            source, f"no dd summary ('N+M records in/out' and 'N bytes ... copied, S s, R/s'){detail}"
        )
    return result


def read_dd_stderr(path: str | Path) -> DdResult:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ParseError(path, f"cannot read: {exc.strerror or exc}") from None
    return parse_dd_stderr(text, path)
