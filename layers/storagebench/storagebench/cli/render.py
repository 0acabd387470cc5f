"""Tables for people: request summaries, the workload library, measured results."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from storagebench.analysis.grades import GradeScale, grade
from storagebench.analysis.stats import Aggregate, Summary
from storagebench.cli.listing import Field, Listing, print_table
from storagebench.cli.matrix_lines import print_matrices
from storagebench.core.interruption import interruption_line

if TYPE_CHECKING:
    from storagebench.report.model import SlaLimit
    from storagebench.results.records import ResultRecord


def request_summary(console: Console, source: str, summary: dict[str, Any]) -> None:
    console.print(
        Text.assemble(
            (f"{source}: valid", "bold green"), f" - suite {summary['name']}, baseline {summary['baseline']}"
        ),
        highlight=False,
        soft_wrap=True,
    )
    configs = Listing(
        None,
        [
            Field("config", "id", priority=9),
            Field("machines", "id", priority=8),
            Field("targets", priority=7),
            Field("steps", "number", priority=6),
        ],
    )
    for config in summary["configs"]:
        targets = "\n".join(
            f"{t['id']} ({t['kind']})" + (f": {t['envelope']}" if t.get("envelope") else "")
            for t in config["targets"]
        )
        configs.add(config=config["id"], machines=config["machines"], targets=targets, steps=config["steps"])
    print_table(console, configs)
    workloads = ", ".join(
        f"{w['id']}" + (f" x{w['scale']:g}" if w["scale"] != 1 else "") for w in summary["workloads"]
    )
    console.print(Text(f"workloads: {workloads}"), highlight=False, soft_wrap=True)
    print_matrices(console, summary.get("matrices", []))
    for warning in summary["warnings"]:
        console.print(Text.assemble(("warning: ", "yellow"), warning), highlight=False, soft_wrap=True)


def workload_listing(library: dict[str, Any]) -> Listing:
    """One row per profile; the parameters with their defaults as one text."""
    listing = Listing(
        None,
        [
            Field("profile", "id", priority=9),
            Field("family", priority=3),
            Field("intent", priority=5),
            Field("engine", priority=4),
            Field("what it runs", priority=8),
            Field("parameters (default)", priority=6),
        ],
    )
    for profile in library["profiles"]:
        listing.add(
            **{
                "profile": profile["name"],
                "family": profile["family"],
                "intent": profile["intent"],
                "engine": profile["engine"],
                "what it runs": profile["title"],
                "parameters (default)": ", ".join(
                    f"{p['name']}={_brief(p['default'])}" for p in profile["params"]
                ),
            }
        )
    return listing


def suite_lines(console: Console, library: dict[str, Any]) -> None:
    for name, members in library["suites"].items():
        console.print(Text(f"suite {name}: {', '.join(members)}"), highlight=False, soft_wrap=True)


def _brief(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ",".join(map(str, value)) + "]"
    if isinstance(value, str) and len(value) > 20:
        return value[:17] + "..."
    return str(value)


def _number(summary: Summary | None, digits: int = 0, scale: float = 1.0) -> str:
    if summary is None:
        return "-"
    text = f"{summary.mean * scale:,.{digits}f}"
    if summary.ci95_low is not None and summary.ci95_high is not None and summary.n > 1:
        # [low–high], never ±: a non-negative quantity's interval is clipped at 0 (analysis.stats)
        low, high = max(0.0, summary.ci95_low * scale), summary.ci95_high * scale
        text += f" [{low:,.{digits}f}–{high:,.{digits}f}]"
    return text


def _metric(digits: int = 0, scale: float = 1.0) -> Any:
    return lambda summary: _number(summary, digits, scale)


AGGREGATE_FIELDS = [
    Field("config", priority=9),
    Field("workload", "id", priority=9),
    Field("variant", priority=4),
    Field("phase", priority=1),
    Field("dir", priority=8),
    Field("n", "number", priority=3),
    Field("IOPS", "number", _metric(), priority=7),
    Field("MiB/s", "number", _metric(1), priority=5),
    Field("lat mean ms", "number", _metric(3, 1e-3), priority=1),
    Field("p95 ms", "number", _metric(3, 1e-3), priority=6),
    Field("p99 ms", "number", _metric(3, 1e-3), priority=2),
    Field("grade", priority=1),
    Field("real s", "number", _metric(2), priority=0),
]


def _grade_text(p95: Summary | None, scale: GradeScale, emulated: bool) -> str | None:
    if p95 is None:
        return None
    letter = grade(p95.mean, scale).letter
    return f"{letter} (emulated)" if emulated else letter


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """``iodepth=4`` before ``iodepth=16``: digits compare as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)


def _reading_order(row: Aggregate) -> tuple[Any, ...]:
    """Config, workload, then sweep points in load order: the store returns them as text sorts."""
    return (row.config_id, row.workload, _natural(row.variant), row.phase, row.direction, row.group or 0)


def aggregate_listing(
    rows: list[Aggregate], scale: GradeScale | None = None, emulated: Collection[str] = ()
) -> Listing:
    """One row per measurement: mean over repetitions with the 95 % confidence half-width."""
    scale = scale or GradeScale()
    fields = list(AGGREGATE_FIELDS)
    if any(row.variant for row in rows):  # sweep points are indistinguishable without it
        fields = [replace(f, priority=8) if f.name == "variant" else f for f in fields]
    listing = Listing(None, fields)
    for row in sorted(rows, key=_reading_order):
        p95 = row.metrics.get("lat_p95_us")
        listing.add(
            **{
                "config": row.config_id,
                "workload": row.workload,
                "variant": row.variant or None,
                "phase": row.phase,
                "dir": row.direction,
                "n": row.repetitions,
                "IOPS": row.metrics.get("iops"),
                "MiB/s": row.metrics.get("bw_mibps"),
                "lat mean ms": row.metrics.get("lat_mean_us"),
                "p95 ms": p95,
                "p99 ms": row.metrics.get("lat_p99_us"),
                "grade": _grade_text(p95, scale, row.config_id in emulated),
                "real s": row.metrics.get("real_s"),
            }
        )
    return listing


def caveats(console: Console, records: Sequence[ResultRecord]) -> frozenset[str]:
    """Print first what these results cannot mean (emulated volumes, directory targets: the
    report's and the agent's words, ``protocol.caveats``); returns the configs measured on emulation."""
    from storagebench.protocol.caveats import EMULATED_LABEL_PREFIX, label_caveats

    labels: dict[str, list[str]] = {}
    for record in records:
        labels.setdefault(record.config_id, []).extend(record.labels)
    for caveat in label_caveats(labels):
        console.print(Text.assemble(("caveat: ", "bold yellow"), caveat), highlight=False)
    return frozenset(
        cid for cid, seen in labels.items() if any(label.startswith(EMULATED_LABEL_PREFIX) for label in seen)
    )


def aggregates(
    console: Console,
    rows: list[Aggregate],
    scale: GradeScale | None = None,
    emulated: Collection[str] = (),
    records: Sequence[ResultRecord] = (),
    chosen: list[str] | None = None,
    sla_limits: Sequence[SlaLimit] | None = None,
) -> None:
    """One line per measurement (mean over repetitions, its 95 % interval; grades of ``emulated``
    configs marked so), then each load sweep read as a curve: the knee where latency turns up and
    p95's growth per doubling of load; then each latency-SLA search answered in words, as the report
    says it: ``sla_limits`` (a run view's), else those of ``records`` (the rows' records: aggregates
    do not keep the searches). ``chosen`` are the table's columns (``--columns``), all that fit when
    None."""
    from storagebench.analysis.curves import sweep_curves
    from storagebench.report.sla_searches import build_sla_limits, limit_line

    print_table(console, aggregate_listing(rows, scale, emulated), chosen)
    for sweep in sweep_curves(rows):
        where = f"{sweep.config_id} {sweep.workload} ({sweep.direction})"
        console.print(Text.assemble(("latency against load, ", "bold"), f"{where}: {sweep.curve.reading}"))
    for limit in build_sla_limits(records) if sla_limits is None else sla_limits:
        line = limit_line(limit) + (" (emulated)" if limit.config_id in emulated else "")
        console.print(Text.assemble(("latency SLA, ", "bold"), line), highlight=False)


def usd(value: Any) -> str:
    return f"${value:,.2f}" if isinstance(value, int | float) else "-"


def pct(value: Any) -> str:
    return f"{value:+.1f} %" if isinstance(value, int | float) else "-"


def _monthly(config: dict[str, Any]) -> str:
    return usd(config.get("monthly_usd")) + (" *" if config.get("cost_partial") else "")


def economics_listing(run: dict[str, Any]) -> Listing | None:
    """Each config against the baseline: monthly cost, its delta, this run's cost, the verdict."""
    economics = run.get("economics")
    if not economics:
        return None
    listing = Listing(
        f"run {run.get('run_id')}: costs against {economics.get('baseline')} "
        f"({economics.get('price_source')}, prices of {economics.get('price_date')})",
        [
            Field("config", "id", priority=9),
            Field("monthly", "number", priority=8),
            Field("vs baseline", "number", pct, priority=7),
            Field("this run", "number", usd, priority=5),
            Field("verdict", priority=6),
        ],
    )
    for config in economics.get("configs") or []:
        listing.add(
            **{
                "config": config.get("id"),
                "monthly": _monthly(config),
                "vs baseline": config.get("delta_monthly_pct"),
                "this run": config.get("run_usd"),
                "verdict": config.get("verdict"),
            }
        )
    if any(c.get("cost_partial") for c in economics.get("configs") or []):
        listing.caption = "* partly unpriced: see the report"
    return listing


def economics(console: Console, run: dict[str, Any]) -> None:
    listing = economics_listing(run)
    if listing is not None:
        print_table(console, listing)


def run_summary(console: Console, run_id: str, execution: Any, record: dict[str, Any]) -> None:
    """The run's status, each config's status and errors, then the measurements side by side."""
    from storagebench.analysis.stats import aggregate
    from storagebench.results.records import ResultRecord

    run = record.get("run", {})
    records = [ResultRecord.model_validate(r["record"]) for r in record.get("results", [])]
    emulated = caveats(console, records)  # what the numbers cannot mean comes first
    status = (execution.output or {}).get("status") or run.get("status") or execution.status
    style = {"SUCCEEDED": "bold green", "PARTIAL": "bold yellow"}.get(str(status), "bold red")
    console.print(
        Text.assemble((f"run {run_id}: {status}", style), f" in {execution.wall_s:.0f} s"),
        highlight=False,
        soft_wrap=True,
    )
    if execution.status != "SUCCEEDED":
        console.print(
            Text(f"execution {execution.status}: {execution.error}: {execution.cause}"),
            highlight=False,
            soft_wrap=True,
        )
    configs = Listing(
        None,
        [
            Field("config", "id", priority=9),
            Field("status", priority=8),
            Field("records", "number", priority=7),
            Field("errors", priority=6),
        ],
    )
    for config in (execution.output or {}).get("configs", []):
        problems = "; ".join(
            f"{e['step']}: {e['error']}: {e['cause'][:120]}" for e in config.get("errors", [])
        )
        leftovers = "; ".join(config.get("leftovers", []))
        interrupted = "; ".join(interruption_line(i) for i in config.get("interruptions", []))
        notes = [problems, *([f"leftovers: {leftovers}"] if leftovers else [])]
        notes += [f"Spot: {interrupted}"] if interrupted else []
        configs.add(
            config=config["config_id"],
            status=config["status"],
            records=config["records"],
            errors=" | ".join(n for n in notes if n) or None,
        )
    print_table(console, configs)
    if records:
        aggregates(console, aggregate(records), emulated=emulated, records=records)
    economics(console, run)
    output = execution.output or {}
    failed_costs = [] if output.get("economics") else output.get("economics_notes", [])  # else: in the report
    for note in [*failed_costs, *output.get("report_notes", [])]:
        console.print(Text.assemble(("note: ", "yellow"), str(note)), highlight=False)
    if output.get("report"):
        console.print(Text(f"report: {output['report'].get('html')}"), highlight=False)
