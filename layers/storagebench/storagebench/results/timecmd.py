"""Output of ``time``: bash's keyword, POSIX ``time -p`` and GNU ``/usr/bin/time``.

bash::

    real    0m1.234s
    user    0m0.001s
    sys     0m0.002s

``time -p`` (bash or /usr/bin/time)::

    real 1.23
    user 0.00
    sys 0.02

GNU time's default format is read too
(``0.00user 0.02system 0:01.05elapsed 95%CPU (...)``). Hours appear as ``1h2m3.000s`` in some
shells and ``1:02:03`` in GNU time; a decimal comma (non-C locale) is accepted. When the text
holds several reports (a loop of timed commands), the last complete one is returned; use
``parse_all_times`` for all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from storagebench.results.errors import ParseError

_DURATION = re.compile(
    r"^(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?P<s>\d+(?:[.,]\d*)?)s?$|^(?P<plain>\d+(?:[.,]\d*)?)$"
)
_LINE = re.compile(r"^\s*(?P<key>real|user|sys)\s+(?P<value>\S+)\s*$")
_GNU = re.compile(
    r"(?P<user>\d+(?:[.,]\d+)?)user\s+(?P<sys>\d+(?:[.,]\d+)?)system\s+"
    r"(?P<elapsed>(?:\d+:)?\d+:\d+(?:[.,]\d+)?)elapsed"
)


@dataclass(frozen=True)
class CommandTimes:
    real_s: float
    user_s: float
    sys_s: float

    @property
    def cpu_usr_pct(self) -> float | None:
        return self.user_s / self.real_s * 100 if self.real_s > 0 else None

    @property
    def cpu_sys_pct(self) -> float | None:
        return self.sys_s / self.real_s * 100 if self.real_s > 0 else None


def parse_duration(text: str, source: str | PurePath | None = None) -> float:
    """Seconds in ``0m1.234s``, ``1h2m3s``, ``1.23``, ``1,23`` or ``1:02.03`` / ``1:02:03`` form."""
    value = text.strip()
    if ":" in value:
        parts = value.replace(",", ".").split(":")
        try:
            numbers = [float(p) for p in parts]
        except ValueError:
            raise ParseError(source, f"{text!r} is not a duration") from None
        if len(numbers) > 3 or any(n < 0 for n in numbers):
            raise ParseError(source, f"{text!r} is not a duration")
        seconds = 0.0
        for number in numbers:
            seconds = seconds * 60 + number
        return seconds
    match = _DURATION.match(value)
    if not match:
        raise ParseError(source, f"{text!r} is not a duration (like 0m1.234s or 1.23)")
    if match["plain"] is not None:
        return float(match["plain"].replace(",", "."))
    return int(match["h"] or 0) * 3600 + int(match["m"] or 0) * 60 + float(match["s"].replace(",", "."))


def parse_all_times(text: str, source: str | PurePath | None = None) -> list[CommandTimes]:
    """Every complete real/user/sys report in ``text``, in order."""
    reports: list[CommandTimes] = []
    current: dict[str, float] = {}
    for line in text.splitlines():
        gnu = _GNU.search(line)
        if gnu:
            reports.append(
                CommandTimes(
                    real_s=parse_duration(gnu["elapsed"], source),
                    user_s=parse_duration(gnu["user"], source),
                    sys_s=parse_duration(gnu["sys"], source),
                )
            )
            current = {}
            continue
        match = _LINE.match(line)
        if not match:
            continue
        key = match["key"]
        if key == "real":
            current = {}
        current[key] = parse_duration(match["value"], source)
        if {"real", "user", "sys"} <= current.keys():
            reports.append(CommandTimes(real_s=current["real"], user_s=current["user"], sys_s=current["sys"]))
            current = {}
    return reports


def parse_time_output(text: str, source: str | PurePath | None = None) -> CommandTimes:
    """The last complete real/user/sys report; ParseError when there is none."""
    reports = parse_all_times(text, source)
    if not reports:
        raise ParseError(source, "no time report (real/user/sys lines, or GNU time's default line)")
    return reports[-1]
