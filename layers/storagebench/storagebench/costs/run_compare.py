"""One run against another: per measurement and metric, the two means, the delta, and whether it is real.

Run A is the reference (the older run), run B the one judged: deltas are ``(B - A) / |A|``.
Measurements are matched by what was measured, not by how the request named it: the storage
option (``c5.4xlarge/ebs:gp3:100GiB:xfs``, the key of a series across runs) with the workload,
sweep point, phase, direction and fio group; the config and target ids are the fallback for
results stored without an option, or an option two configs of a run share. Anything measured in
one run only is listed, never dropped. Pre-warm reads are not workloads and are left out; a
workload that records reads and writes separately is also compared on their per-repetition
total (``costs.measures.with_totals``).

Each metric (IOPS, MiB/s, p50/p95/p99 latency, a timed command's run time) is judged by
``analysis.significance``: "faster"/"slower" (rates), "lower"/"higher" (latency), "shorter"/
"longer" (run time) only on a significant difference (Welch's t-test, p < 0.05); otherwise "no
significant difference" when the repetitions could have detected the planned effect, else "too
few repetitions (need N)" with N per side.

Input is what ``ResultsStore.get_run`` answers (the API's ``GET /runs/{id}`` reads the same);
:func:`pick_suite_runs` chooses a suite's two runs from its run items, newest first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from storagebench.analysis.significance import ALPHA, MIN_EFFECT_PCT, POWER, Outcome, judge
from storagebench.analysis.stats import Aggregate, aggregate
from storagebench.core.clock import parse_iso
from storagebench.costs.measures import METRICS, Frozen, MetricSpec, with_totals
from storagebench.costs.recommend import EMULATED_LABEL
from storagebench.protocol.caveats import emulated_caveat
from storagebench.store.models import RunDocument, decode_run

__all__ = [
    "COMPARED_METRICS",
    "FINISHED",
    "FLAT_FIELDS",
    "MeasurementComparison",
    "MetricComparison",
    "RunComparison",
    "RunSide",
    "SuiteSelectionError",
    "Unmatched",
    "compare_runs",
    "flat_rows",
    "pick_suite_runs",
]

P50 = MetricSpec("lat_p50_us", "p50 latency", False, "latency", "us")
"""The median latency is compared between runs; the cost comparison (``METRICS``) does not use it."""
COMPARED_METRICS: dict[str, MetricSpec] = {
    name: METRICS.get(name, P50)
    for name in ("iops", "bw_mibps", "lat_p50_us", "lat_p95_us", "lat_p99_us", "real_s")
}
"""The metrics compared, in this order; one absent from either run is skipped for that measurement."""

FINISHED = ("SUCCEEDED", "PARTIAL")
"""Runs with results to compare: a suite's runs in progress or failed are passed over."""

_WORDS: dict[str, tuple[str, str]] = {
    "rate": ("faster", "slower"),
    "latency": ("higher", "lower"),
    "time": ("longer", "shorter"),
}
"""Per metric kind, the word for B's mean above A's, and below."""

MatchedBy = Literal["storage option", "config id"]
Key = tuple[str, str, str, str, str, int | None]  # subject, workload, variant, phase, direction, group


class RunSide(Frozen):
    run_id: str
    suite: str | None
    status: str | None
    started_at: str | None


class MetricComparison(Frozen):
    metric: str
    label: str
    unit: str
    higher_is_better: bool
    a: float = Field(description="run A's mean over its repetitions")
    b: float = Field(description="run B's mean over its repetitions")
    n_a: int
    n_b: int
    delta_pct: float | None = Field(description="(b - a) / |a| x 100; null when a is 0")
    p_value: float | None = Field(description="Welch's t-test, two-sided; null with one repetition on a side")
    ci_difference: tuple[float, float] | None = Field(description="95 % interval of b - a")
    ci_delta_pct: tuple[float, float] | None = Field(
        description="95 % interval of the delta in percent (Fieller); null when unbounded or untested"
    )
    outcome: Outcome
    better: bool | None = Field(description="B better than A; null unless the difference is significant")
    repetitions_needed: int | None = Field(
        description="per side, to detect the observed difference (at least 5 %) with power 0.8; null when "
        "significant or when no spread is known"
    )
    verdict: str = Field(
        description="faster/slower, higher/lower or longer/shorter (significant only), 'no significant "
        "difference', or 'too few repetitions (need N)'"
    )
    reason: str


class MeasurementComparison(Frozen):
    matched_by: MatchedBy
    subject: str = Field(description="the storage option, or 'config/target' when matched by config id")
    option_a: str | None
    option_b: str | None
    config_a: str
    config_b: str
    target_a: str
    target_b: str
    workload: str
    variant: str
    phase: str
    direction: str
    group: int | None
    metrics: list[MetricComparison]


class Unmatched(Frozen):
    """A measurement of one run that the other run does not have."""

    run_id: str
    config_id: str
    target_id: str
    option: str | None
    workload: str
    variant: str
    phase: str
    direction: str
    group: int | None
    repetitions: int


class RunComparison(Frozen):
    a: RunSide
    b: RunSide
    alpha: float
    power: float
    min_effect_pct: float
    measurements: list[MeasurementComparison]
    only_in_a: list[Unmatched]
    only_in_b: list[Unmatched]
    emulated: bool = Field(description="some results come from emulated volumes (local mode)")
    summary: str
    notes: list[str] = Field(default_factory=list)


# ------------------------------------------------------------------------------ one metric


def verdict_text(spec: MetricSpec, outcome: Outcome, up: bool, needed: int | None) -> str:
    """The verdict word: directional only for a significant difference."""
    if outcome == "different":
        above, below = _WORDS[spec.kind]
        return above if up else below
    if outcome == "no_difference":
        return "no significant difference"
    return f"too few repetitions (need {needed})" if needed is not None else "too few repetitions (need 2+)"


def compare_metric(
    spec: MetricSpec,
    a: list[float],
    b: list[float],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    min_effect_pct: float = MIN_EFFECT_PCT,
) -> MetricComparison:
    """One metric of one measurement: A's repetitions against B's."""
    answer = judge(a, b, alpha=alpha, power=power, min_effect_pct=min_effect_pct)
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    test = answer.test
    significant = answer.outcome == "different"
    needed = answer.needed.per_side if answer.needed is not None else None
    return MetricComparison(
        metric=spec.name,
        label=spec.label,
        unit=spec.unit,
        higher_is_better=spec.higher_is_better,
        a=mean_a,
        b=mean_b,
        n_a=len(a),
        n_b=len(b),
        delta_pct=(mean_b - mean_a) / abs(mean_a) * 100.0 if mean_a != 0 else None,
        p_value=test.p_value if test is not None else None,
        ci_difference=test.ci_difference if test is not None else None,
        ci_delta_pct=test.ci_delta_pct if test is not None else None,
        outcome=answer.outcome,
        better=((mean_b > mean_a) == spec.higher_is_better) if significant else None,
        repetitions_needed=needed if not significant else None,
        verdict=verdict_text(spec, answer.outcome, mean_b > mean_a, needed),
        reason=answer.reason,
    )


# ------------------------------------------------------------------------------ matching


class _Side:
    """One run's measurements, keyed by storage option and by config id."""

    def __init__(self, document: RunDocument) -> None:
        self.run_id = document.run.run_id or "(unknown run)"
        records = [r for r in document.records if r.phase != "prewarm"]
        self.emulated = sorted(
            {r.config_id for r in records if any(label.startswith(EMULATED_LABEL) for label in r.labels)}
        )
        self.aggregates = aggregate(with_totals(records))
        options = document.options
        owners: dict[str, set[tuple[str, str]]] = {}
        for pair, option in options.items():
            owners.setdefault(option, set()).add(pair)
        # An option two configs (or targets) share in this run cannot tell them apart
        self.options = {pair: o for pair, o in options.items() if len(owners[o]) == 1}

    def option(self, agg: Aggregate) -> str | None:
        return self.options.get((agg.config_id, agg.target_id))

    @staticmethod
    def _rest(agg: Aggregate) -> tuple[str, str, str, str, int | None]:
        return (agg.workload, agg.variant, agg.phase, agg.direction, agg.group)

    def by_option(self) -> dict[Key, Aggregate]:
        return {(o, *self._rest(a)): a for a in self.aggregates if (o := self.option(a)) is not None}

    def by_config(self, aggs: Iterable[Aggregate]) -> dict[Key, Aggregate]:
        return {(f"{a.config_id}/{a.target_id}", *self._rest(a)): a for a in aggs}

    def unmatched(self, agg: Aggregate) -> Unmatched:
        return Unmatched(
            run_id=self.run_id,
            config_id=agg.config_id,
            target_id=agg.target_id,
            option=self.option(agg),
            workload=agg.workload,
            variant=agg.variant,
            phase=agg.phase,
            direction=agg.direction,
            group=agg.group,
            repetitions=agg.repetitions,
        )


def _pairs(
    a: _Side, b: _Side
) -> tuple[list[tuple[MatchedBy, Aggregate, Aggregate]], list[Aggregate], list[Aggregate]]:
    """Matched measurements in B's order (by option first, then by config id), and the rest of each."""
    matched: dict[int, tuple[MatchedBy, Aggregate]] = {}  # id(B's aggregate) -> how, A's
    a_options, b_options = a.by_option(), b.by_option()
    for key, agg_b in b_options.items():
        if key in a_options:
            matched[id(agg_b)] = ("storage option", a_options[key])
    used_a = {id(agg_a) for _, agg_a in matched.values()}
    a_config = a.by_config(x for x in a.aggregates if id(x) not in used_a)
    b_config = b.by_config(x for x in b.aggregates if id(x) not in matched)
    for key, agg_b in b_config.items():
        if key in a_config:
            matched[id(agg_b)] = ("config id", a_config[key])
    used_a = {id(agg_a) for _, agg_a in matched.values()}
    pairs = [(matched[id(x)][0], matched[id(x)][1], x) for x in b.aggregates if id(x) in matched]
    only_a = [x for x in a.aggregates if id(x) not in used_a]
    only_b = [x for x in b.aggregates if id(x) not in matched]
    return pairs, only_a, only_b


def _measurement(
    how: MatchedBy, a: _Side, agg_a: Aggregate, b: _Side, agg_b: Aggregate, **levels: float
) -> MeasurementComparison:
    metrics = [
        compare_metric(spec, summary_a.values, summary_b.values, **levels)
        for name, spec in COMPARED_METRICS.items()
        if (summary_a := agg_a.metrics.get(name)) is not None
        and (summary_b := agg_b.metrics.get(name)) is not None
    ]
    option_a, option_b = a.option(agg_a), b.option(agg_b)
    subject = option_b if how == "storage option" and option_b else f"{agg_b.config_id}/{agg_b.target_id}"
    return MeasurementComparison(
        matched_by=how,
        subject=subject,
        option_a=option_a,
        option_b=option_b,
        config_a=agg_a.config_id,
        config_b=agg_b.config_id,
        target_a=agg_a.target_id,
        target_b=agg_b.target_id,
        workload=agg_b.workload,
        variant=agg_b.variant,
        phase=agg_b.phase,
        direction=agg_b.direction,
        group=agg_b.group,
        metrics=metrics,
    )


# ------------------------------------------------------------------------------ two runs


def _side(document: RunDocument) -> RunSide:
    run = document.run
    return RunSide(
        run_id=run.run_id or "(unknown run)", suite=run.suite, status=run.status, started_at=run.started_at
    )


def _summary(measurements: list[MeasurementComparison], only_a: int, only_b: int) -> str:
    metrics = [m for x in measurements for m in x.metrics]
    better = sum(1 for m in metrics if m.better is True)
    worse = sum(1 for m in metrics if m.better is False)
    same = sum(1 for m in metrics if m.outcome == "no_difference")
    few = sum(1 for m in metrics if m.outcome == "too_few")
    parts = [
        f"{len(metrics)} metric(s) of {len(measurements)} measurement(s) compared: "
        f"{better} better and {worse} worse in B (significant), {same} no significant difference, "
        f"{few} with too few repetitions"
    ]
    if only_a or only_b:
        parts.append(f"{only_a} measurement(s) only in A, {only_b} only in B")
    return "; ".join(parts)


def compare_runs(
    stored_a: Mapping[str, Any],
    stored_b: Mapping[str, Any],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    min_effect_pct: float = MIN_EFFECT_PCT,
) -> RunComparison:
    """Run B against run A (both as ``ResultsStore.get_run`` answers them), measurement by measurement."""
    if min_effect_pct < 0 or min_effect_pct > 100:
        raise ValueError(f"min_effect_pct must be between 0 and 100, got {min_effect_pct!r}")
    doc_a, doc_b = decode_run(stored_a), decode_run(stored_b)
    a, b = _Side(doc_a), _Side(doc_b)
    pairs, only_a, only_b = _pairs(a, b)
    levels = {"alpha": alpha, "power": power, "min_effect_pct": min_effect_pct}
    measurements = [_measurement(how, a, agg_a, b, agg_b, **levels) for how, agg_a, agg_b in pairs]
    notes: list[str] = []
    emulated = sorted({*a.emulated, *b.emulated})
    if emulated:
        notes.append(emulated_caveat(emulated))
    side_a, side_b = _side(doc_a), _side(doc_b)
    if side_a.suite != side_b.suite:
        notes.append(f"the runs are of different suites ({side_a.suite} and {side_b.suite})")
    if side_a.started_at and side_b.started_at and side_b.started_at < side_a.started_at:
        notes.append("run B started before run A: deltas are still B against A")
    for side, run in (("A", doc_a.run), ("B", doc_b.run)):
        if run.status not in FINISHED:
            notes.append(f"run {side} is {run.status or 'of unknown status'}: its results may be incomplete")
    by_config = sum(1 for m in measurements if m.matched_by == "config id")
    if by_config:
        notes.append(
            f"{by_config} measurement(s) matched by config id, not storage option (no option stored, or "
            "one the run's configs share): check that both runs measured the same storage"
        )
    notes += [f"run A: {n}" for n in doc_a.notes] + [f"run B: {n}" for n in doc_b.notes]
    return RunComparison(
        a=side_a,
        b=side_b,
        alpha=alpha,
        power=power,
        min_effect_pct=min_effect_pct,
        measurements=measurements,
        only_in_a=[a.unmatched(x) for x in only_a],
        only_in_b=[b.unmatched(x) for x in only_b],
        emulated=bool(emulated),
        summary=_summary(measurements, len(only_a), len(only_b)),
        notes=notes,
    )


FLAT_FIELDS = (
    "run_a",
    "run_b",
    "subject",
    "matched_by",
    "config_a",
    "config_b",
    "workload",
    "variant",
    "phase",
    "direction",
    "group",
    "metric",
    "unit",
    "a",
    "b",
    "n_a",
    "n_b",
    "delta_pct",
    "ci_delta_pct_low",
    "ci_delta_pct_high",
    "p_value",
    "outcome",
    "better",
    "repetitions_needed",
    "verdict",
)
"""The columns of :func:`flat_rows`, in order."""


def flat_rows(comparison: RunComparison) -> list[dict[str, Any]]:
    """One row per measurement and metric, then one per measurement only one run has (``outcome``
    'unmatched', ``verdict`` 'only in A' or 'only in B', no metric): the columns of
    :data:`FLAT_FIELDS` throughout, for CSV and JSON Lines."""
    rows: list[dict[str, Any]] = []
    runs = {"run_a": comparison.a.run_id, "run_b": comparison.b.run_id}
    for m in comparison.measurements:
        where = {
            "subject": m.subject,
            "matched_by": m.matched_by,
            "config_a": m.config_a,
            "config_b": m.config_b,
            "workload": m.workload,
            "variant": m.variant,
            "phase": m.phase,
            "direction": m.direction,
            "group": m.group,
        }
        for x in m.metrics:
            interval = x.ci_delta_pct or (None, None)
            rows.append(
                {
                    **runs,
                    **where,
                    **x.model_dump(
                        include={"metric", "unit", "a", "b", "n_a", "n_b", "delta_pct", "p_value"}
                    ),
                    "ci_delta_pct_low": interval[0],
                    "ci_delta_pct_high": interval[1],
                    **x.model_dump(include={"outcome", "better", "repetitions_needed", "verdict"}),
                }
            )
    for side, unmatched in (("A", comparison.only_in_a), ("B", comparison.only_in_b)):
        for u in unmatched:
            row: dict[str, Any] = dict.fromkeys(FLAT_FIELDS)
            row.update(
                runs,
                subject=u.option or f"{u.config_id}/{u.target_id}",
                workload=u.workload,
                variant=u.variant,
                phase=u.phase,
                direction=u.direction,
                group=u.group,
                outcome="unmatched",
                verdict=f"only in {side}",
            )
            row["config_a" if side == "A" else "config_b"] = u.config_id
            row["n_a" if side == "A" else "n_b"] = u.repetitions
            rows.append(row)
    return [{name: row[name] for name in FLAT_FIELDS} for row in rows]


# ------------------------------------------------------------------------------ a suite's two runs


class SuiteSelectionError(ValueError):
    """The suite has no two runs to compare as asked; the message names what exists."""


def _moment(text: str, what: str) -> datetime:
    try:
        moment = parse_iso(text)
    except ValueError:
        raise SuiteSelectionError(f"{what} {text!r} is not an ISO date or time (e.g. 2026-11-01)") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _described(run: Mapping[str, Any]) -> str:
    return f"{run.get('run_id')} ({run.get('status')}, started {run.get('started_at')})"


def pick_suite_runs(
    suite: str, runs: Iterable[Mapping[str, Any]], against: str | None = None
) -> tuple[str, str]:
    """(A, B) run ids of a suite: B its latest finished run, A the finished run before it or, with
    ``against`` (an ISO date or time), the latest finished run started before that moment.

    ``runs`` are the suite's run items newest first; they are read only as far as needed (a lazy
    page-by-page listing stops early). SuiteSelectionError names the suite and what exists."""
    before = _moment(against, "--against") if against is not None else None
    seen: list[Mapping[str, Any]] = []
    latest: Mapping[str, Any] | None = None
    for run in runs:
        seen.append(run)
        if run.get("status") not in FINISHED:
            continue
        if latest is None:
            latest = run
            if before is not None and _moment(str(run.get("started_at")), "started_at") < before:
                raise SuiteSelectionError(
                    f"the latest finished run of suite {suite}, {_described(run)}, started before {against}: "
                    "no newer run to compare with it"
                )
            continue
        if before is None or _moment(str(run.get("started_at")), "started_at") < before:
            return str(run.get("run_id")), str(latest.get("run_id"))
    if not seen:
        raise SuiteSelectionError(f"suite {suite} has no runs")
    if latest is None:
        shown = ", ".join(_described(r) for r in seen[:5])
        raise SuiteSelectionError(f"suite {suite} has no finished run ({', '.join(FINISHED)}): {shown}")
    if before is None:
        raise SuiteSelectionError(
            f"suite {suite} has one finished run, {_described(latest)}: nothing before it to compare with"
        )
    oldest = [r for r in seen if r.get("status") in FINISHED][-1]
    raise SuiteSelectionError(
        f"no finished run of suite {suite} started before {against}; its oldest finished run is "
        f"{_described(oldest)}"
    )
