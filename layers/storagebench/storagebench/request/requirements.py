"""Requirements: one threshold syntax for the request, the CLI, the API and the report.

``WORKLOAD[:DIRECTION]:METRIC OP VALUE``, as k6 writes its thresholds (``p95_ms<2``), per workload
and optionally per direction::

    std-randread-4k:iops>=3500
    std-randread-4k:read:p95_ms < 2
    std-seqread-1m:mibps>=500

Units are in the metric's name (``_ms``, ``mibps``), so a value is a bare number. A requirement
says nothing about how it is judged (that is ``costs.recommend``'s: on a confidence bound); this
module only reads the text and says exactly where and why it cannot.

Requirements never contain a comma outside a workload's override brackets: API Gateway joins a
repeated query parameter with commas, so ``?require=A&require=B`` arrives as ``A,B`` and splits
back exactly (:func:`split_joined`).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DIRECTIONS",
    "METRICS",
    "OPERATORS",
    "Requirement",
    "RequirementError",
    "RequirementMetric",
    "parse_requirement",
    "parse_requirements",
    "requirement_problems",
    "split_joined",
]

Op = Literal["<", "<=", ">", ">="]
OPERATORS: tuple[Op, ...] = ("<", "<=", ">", ">=")
DIRECTIONS: tuple[str, ...] = ("read", "write", "trim", "mixed")
"""As the records name them; ``mixed`` is a workload's read+write total."""
MAX_LENGTH = 200


@dataclass(frozen=True)
class RequirementMetric:
    """A metric a requirement can name: which repetition statistic it reads and in what unit."""

    name: str
    label: str
    stat: str = ""  # the key of ``analysis.stats.HEADLINE_METRICS`` it is read from
    scale: float = 1.0  # from the statistic's unit to the requirement's
    unit: str = ""


METRICS: dict[str, RequirementMetric] = {
    m.name: m
    for m in (
        RequirementMetric("iops", "IOPS", "iops", 1.0, "IOPS"),
        RequirementMetric("mibps", "MiB/s", "bw_mibps", 1.0, "MiB/s"),
        RequirementMetric("lat_mean_ms", "mean latency", "lat_mean_us", 1e-3, "ms"),
        RequirementMetric("p50_ms", "p50 latency", "lat_p50_us", 1e-3, "ms"),
        RequirementMetric("p95_ms", "p95 latency", "lat_p95_us", 1e-3, "ms"),
        RequirementMetric("p99_ms", "p99 latency", "lat_p99_us", 1e-3, "ms"),
        RequirementMetric("p999_ms", "p99.9 latency", "lat_p999_us", 1e-3, "ms"),
        RequirementMetric("real_s", "run time", "real_s", 1.0, "s"),
    )
}

# Spellings people reach for first (fio's and k6's names); difflib would not find most of them.
_SPELLINGS = {
    "bw": "mibps",
    "bw_mibps": "mibps",
    "throughput": "mibps",
    "mbps": "mibps",
    "lat": "lat_mean_ms",
    "latency": "lat_mean_ms",
    "mean_ms": "lat_mean_ms",
    "avg_ms": "lat_mean_ms",
    "p50": "p50_ms",
    "median_ms": "p50_ms",
    "p95": "p95_ms",
    "p99": "p99_ms",
    "p999": "p999_ms",
    "p99.9_ms": "p999_ms",
    "runtime": "real_s",
    "total": "mixed",
}
# A profile or request id, optionally with its overrides (``workloads.naming``: std-randread-4k[bs=8k]).
_WORKLOAD = re.compile(r"^[a-z0-9][a-z0-9-]*(\[[^\[\]:#]+\])?$")
_OPERATOR = re.compile(r"<=|>=|=>|=<|==|!=|<|>|=")
# Plain decimal numbers: no units, no thousands separators (a comma would split a joined query)
_NUMBER = re.compile(r"^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class RequirementError(ValueError):
    """A requirement that cannot be read: the text, where (0-based character), what, what is allowed."""

    def __init__(
        self, text: str, position: int, problem: str, allowed: str, suggestion: str | None = None
    ) -> None:
        self.text = text
        self.position = position
        self.problem = problem
        self.allowed = allowed
        self.suggestion = suggestion
        hint = f"; did you mean {suggestion}?" if suggestion else ""
        super().__init__(f"{text!r}, character {position + 1}: {problem}; {allowed}{hint}")

    @property
    def reason(self) -> str:
        """The message without the text itself (for a field that already shows it)."""
        hint = f"; did you mean {self.suggestion}?" if self.suggestion else ""
        return f"character {self.position + 1}: {self.problem}; {self.allowed}{hint}"


@dataclass(frozen=True)
class Requirement:
    workload: str
    direction: str | None
    metric: str
    op: Op
    value: float

    @property
    def spec(self) -> RequirementMetric:
        return METRICS[self.metric]

    @property
    def at_least(self) -> bool:
        """True for > and >=: a lower bound must clear the value (else an upper bound must)."""
        return self.op in (">", ">=")

    def holds(self, measured: float) -> bool:
        if self.op == "<":
            return measured < self.value
        if self.op == "<=":
            return measured <= self.value
        if self.op == ">":
            return measured > self.value
        return measured >= self.value

    @property
    def text(self) -> str:
        """The canonical spelling (no spaces; what the answer and the report quote)."""
        where = f"{self.workload}:{self.direction}" if self.direction else self.workload
        return f"{where}:{self.metric}{self.op}{self.value:g}"

    def __str__(self) -> str:
        return self.text


SYNTAX = "expected WORKLOAD[:DIRECTION]:METRIC OP VALUE, e.g. std-randread-4k:iops>=3500"


def _closest(word: str, choices: Collection[str]) -> str | None:
    spelled = _SPELLINGS.get(word.lower())
    if spelled in choices:
        return spelled
    found = difflib.get_close_matches(word.lower(), list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def _pieces(text: str, end: int) -> list[tuple[int, str]]:
    """The ':'-separated parts of ``text[:end]``, each stripped, with where it starts."""
    parts: list[tuple[int, str]] = []
    start = 0
    for piece in text[:end].split(":"):
        stripped = piece.strip()
        offset = start + (len(piece) - len(piece.lstrip())) if stripped else start
        parts.append((offset, stripped))
        start += len(piece) + 1
    return parts


def parse_requirement(text: str, workloads: Collection[str] | None = None) -> Requirement:
    """Read one requirement; ``workloads`` (when given) are the names it may refer to.

    Raises :class:`RequirementError` naming the position and what is allowed there."""
    if not isinstance(text, str):
        raise RequirementError(str(text), 0, "not text", SYNTAX)
    if len(text) > MAX_LENGTH:
        raise RequirementError(text[:40] + "...", MAX_LENGTH, "too long", f"at most {MAX_LENGTH} characters")
    if not text.strip():
        raise RequirementError(text, 0, "empty", SYNTAX)
    found = _OPERATOR.search(text, text.rfind("]") + 1)  # after a workload's overrides, whose '=' are theirs
    operators = "OP is one of " + " ".join(OPERATORS)
    if found is None:
        raise RequirementError(text, len(text.rstrip()), "no comparison", f"{SYNTAX}; {operators}")
    op = found.group()
    if op not in OPERATORS:
        meant = {"=>": ">=", "=<": "<="}.get(op)
        raise RequirementError(text, found.start(), f"{op!r} is not a comparison", operators, meant)
    parts = _pieces(text, found.start())
    if len(parts) == 1:
        raise RequirementError(text, parts[0][0], "no workload", SYNTAX)
    if len(parts) > 3:
        colons = [i for i, c in enumerate(text[: found.start()]) if c == ":"]
        raise RequirementError(text, colons[2], "too many ':'", SYNTAX)
    (w_at, workload), *middle, (m_at, metric) = parts
    if not workload:
        raise RequirementError(text, w_at, "no workload before ':'", SYNTAX)
    if not _WORKLOAD.match(workload):
        raise RequirementError(
            text,
            w_at,
            f"{workload!r} is not a workload id",
            "lowercase letters, digits and dashes, then any overrides in brackets",
        )
    if workloads is not None and workload not in workloads:
        listed = ", ".join(workloads) or "none"
        raise RequirementError(
            text,
            w_at,
            f"unknown workload {workload!r}",
            f"workloads: {listed}",
            _closest(workload, workloads),
        )
    direction: str | None = None
    if middle:
        d_at, direction = middle[0]
        if direction not in DIRECTIONS:
            raise RequirementError(
                text,
                d_at,
                f"unknown direction {direction!r}" if direction else "empty direction",
                f"directions: {', '.join(DIRECTIONS)} (mixed: the read+write total), or none",
                _closest(direction, DIRECTIONS) if direction else None,
            )
    if metric not in METRICS:
        raise RequirementError(
            text,
            m_at,
            f"unknown metric {metric!r}" if metric else "no metric",
            f"metrics: {', '.join(METRICS)}",
            _closest(metric, METRICS) if metric else None,
        )
    raw = text[found.end() :]
    v_at = found.end() + (len(raw) - len(raw.lstrip()))
    number = raw.strip()
    if not number:
        raise RequirementError(text, v_at, f"no value after {op!r}", "a number, e.g. 3500 or 0.5")
    if not _NUMBER.match(number):
        unit = METRICS[metric].unit
        why = (
            f"the unit is in the metric's name ({metric}: {unit})"
            if re.match(r"^[\d.]+\s*[a-zA-Z/%]", number)
            else ""
        )
        raise RequirementError(
            text,
            v_at,
            f"{number!r} is not a number",
            "a non-negative plain number such as 3500, 0.5 or 1e4" + (f"; {why}" if why else ""),
        )
    value = float(number)
    if not math.isfinite(value):
        raise RequirementError(text, v_at, f"{number!r} is not finite", "a finite number")
    return Requirement(workload=workload, direction=direction, metric=metric, op=op, value=value)


def parse_requirements(texts: Sequence[str], workloads: Collection[str] | None = None) -> list[Requirement]:
    """Each text read; the first that cannot be read raises (a list of them is short)."""
    return [parse_requirement(t, workloads) for t in texts]


def split_joined(value: str) -> list[str]:
    """``A,B`` (a repeated query parameter as API Gateway passes it) back into ``[A, B]``."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(value):  # a workload's overrides (``[bs=8k,iodepth=64]``) keep their commas
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth <= 0:
            parts.append(value[start:index])
            start = index + 1
    parts.append(value[start:])
    return [part for part in parts if part.strip()] or [value]


Problem = tuple[tuple[str | int, ...], Any, str]


def requirement_problems(values: Any, workloads: Sequence[str]) -> list[Problem]:
    """A request's ``requirements`` checked on plain data (as ``request.references`` checks ids):
    each one that cannot be read, located at ``requirements[i]``; ``workloads`` are the request's."""
    if not isinstance(values, list):
        return []  # the model reports a wrong type
    found: list[Problem] = []
    for index, text in enumerate(values):
        if not isinstance(text, str):
            continue  # the model reports a wrong type
        try:
            parse_requirement(text, workloads or None)
        except RequirementError as exc:
            found.append((("requirements", index), text, exc.reason))
    return found
