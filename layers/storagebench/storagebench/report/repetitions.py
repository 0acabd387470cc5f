"""The report's "Adaptive repetitions" section: how each config's repetitions stopped, as tables the
HTML and the Markdown render alike.

* An adaptive series (``repetitions: {min, max, ci_pct}``) repeats a workload until the 95 %
  confidence half-width of its headline metric is under ``ci_pct`` % of the mean, or ``max`` is
  spent: a row says what it spent, what it was allowed, the precision reached and why it stopped.
* fio's steady-state detection (a workload's ``steady_state``) ends a long job once its criterion
  holds over a window: a row per job says whether it did and how long the job ran.

A series that spent its ``max`` short of the precision asked, a series the run cut short and a job
that never reached steady state also become findings, so the Warnings section says it next to the
numbers they qualify. The words come from ``core.series``, as ``results --run`` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storagebench.core.series import ConfigRepetitions, SeriesOutcome
from storagebench.protocol.adaptive import STOP_MAX
from storagebench.report.model import METRIC_INFO, Finding

__all__ = [
    "StopTable",
    "in_config_order",
    "repetition_findings",
    "repetition_tables",
    "repetitions_title",
    "series_rows",
    "steady_rows",
]

SERIES_INTRO = (
    "Adaptive repetitions repeat a workload until the 95 % confidence half-width of its headline "
    "metric is under the precision asked (a percentage of the mean), or until the most repetitions "
    "allowed are spent. Each row is one series (workload, target and sweep point): the repetitions "
    "spent, failed ones included, the range allowed and the precision asked, the precision reached "
    "and why the series stopped."
)
STEADY_INTRO = (
    "fio's steady-state detection ends a job once its criterion (a slope or a deviation of IOPS or "
    "bandwidth) holds over the window; a job that did not attain it ran its whole runtime."
)
SERIES_HEAD = ["config", "series", "headline metric", "spent", "allowed, asked", "±95 % reached", "stopped"]
SERIES_NUMERIC = [False, False, False, True, False, True, False]
STEADY_HEAD = ["config", "step", "phase", "job", "criterion", "window", "steady state", "job ran"]
STEADY_NUMERIC = [False, False, False, False, False, True, False, True]


def in_config_order(stops: Sequence[ConfigRepetitions], config_ids: Sequence[str]) -> list[ConfigRepetitions]:
    """The configs in the report's order (others after them, as stored)."""
    rank = {cid: index for index, cid in enumerate(config_ids)}
    return sorted(stops, key=lambda s: rank.get(s.config_id, len(rank)))


def repetitions_title(stops: Sequence[ConfigRepetitions]) -> str:
    series = any(s.series for s in stops)
    steady = any(s.steady_state for s in stops)
    if series and steady:
        return "Adaptive repetitions and steady state"
    return "Adaptive repetitions" if series else "Steady state"


@dataclass(frozen=True)
class StopTable:
    """One table of the section with the paragraph that says how to read it."""

    intro: str
    head: list[str]
    numeric: list[bool]
    rows: list[list[str]]


def repetition_tables(stops: Sequence[ConfigRepetitions]) -> list[StopTable]:
    """The series' table, then the steady-state verdicts' table, each only when it has rows."""
    tables = [
        StopTable(SERIES_INTRO, SERIES_HEAD, SERIES_NUMERIC, series_rows(stops)),
        StopTable(STEADY_INTRO, STEADY_HEAD, STEADY_NUMERIC, steady_rows(stops)),
    ]
    return [t for t in tables if t.rows]


def _metric(name: str) -> str:
    info = METRIC_INFO.get(name)
    return info.label if info is not None else name


def series_rows(stops: Sequence[ConfigRepetitions]) -> list[list[str]]:
    return [
        [
            stop.config_id,
            series.series,
            _metric(series.metric),
            str(series.spent),
            series.bounds,
            series.reached or "-",
            series.decision,
        ]
        for stop in stops
        for series in stop.series
    ]


def steady_rows(stops: Sequence[ConfigRepetitions]) -> list[list[str]]:
    return [
        [
            stop.config_id,
            verdict.step,
            verdict.phase,
            verdict.job,
            verdict.criterion,
            f"{verdict.duration_s:g} s",
            "attained" if verdict.attained else "not attained",
            f"{verdict.runtime_s:g} s" if verdict.runtime_s is not None else "-",
        ]
        for stop in stops
        for verdict in stop.steady_state
    ]


def _series_finding(config_id: str, series: SeriesOutcome) -> Finding | None:
    if series.stopped is None:
        text = (
            f"{config_id}: series {series.series} is undecided after {series.spent} of "
            f"{series.min}..{series.max} repetitions: the run ended first ({series.reason})"
        )
        return Finding(severity="warning", category="repetitions", config_id=config_id, text=text)
    if series.stopped == STOP_MAX:  # the rule stops for precision first: max means it was not reached
        reached = series.reached or "no interval"
        text = (
            f"{config_id}: series {series.series} spent its {series.max} repetitions at {reached}, short of "
            f"the < {series.ci_pct:g} % asked: its {_metric(series.metric)} is less precise than asked"
        )
        return Finding(severity="info", category="repetitions", config_id=config_id, text=text)
    return None


def repetition_findings(stops: Sequence[ConfigRepetitions]) -> list[Finding]:
    """A warning per series the run cut short and per job that never reached steady state; a note
    (info) per series that spent its ``max`` short of the precision asked, the cap the request set."""
    findings = [f for stop in stops for s in stop.series if (f := _series_finding(stop.config_id, s))]
    findings += [
        Finding(
            severity="warning",  # as Collect warns: the job's figures may still drift
            category="repetitions",
            config_id=stop.config_id,
            text=f"{stop.config_id}: {verdict.text}: the figures may still drift",
        )
        for stop in stops
        for verdict in stop.steady_state
        if not verdict.attained
    ]
    return findings
