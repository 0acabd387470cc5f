"""Tables for people: request summaries, the workload library, measured results."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from storagebench.analysis.grades import GradeScale, grade
from storagebench.analysis.stats import Aggregate, Summary


def _row(table: Table, *values: object) -> None:
    """Cells as plain text: ids, paths and messages may hold brackets that are not markup."""
    table.add_row(*(Text(str(value)) for value in values))


def request_summary(console: Console, source: str, summary: dict[str, Any]) -> None:
    console.print(
        Text.assemble(
            (f"{source}: valid", "bold green"), f" - suite {summary['name']}, baseline {summary['baseline']}"
        ),
        highlight=False,
    )
    table = Table("config", "instance", "targets", "steps", title=None)
    for config in summary["configs"]:
        targets = "\n".join(
            f"{t['id']} ({t['kind']})" + (f": {t['envelope']}" if t.get("envelope") else "")
            for t in config["targets"]
        )
        _row(table, config["id"], config["instance_type"], targets, config["steps"])
    console.print(table)
    workloads = ", ".join(
        f"{w['id']}" + (f" x{w['scale']:g}" if w["scale"] != 1 else "") for w in summary["workloads"]
    )
    console.print(Text(f"workloads: {workloads}"), highlight=False, soft_wrap=True)
    for warning in summary["warnings"]:
        console.print(Text.assemble(("warning: ", "yellow"), warning), highlight=False, soft_wrap=True)


def workload_library(console: Console, library: dict[str, Any]) -> None:
    table = Table("family", "intent", "engine", "what it runs", "parameters (default)")
    table.columns.insert(0, Column("profile", no_wrap=True))
    for profile in library["profiles"]:
        params = ", ".join(f"{p['name']}={_brief(p['default'])}" for p in profile["params"])
        _row(
            table,
            profile["name"],
            profile["family"],
            profile["intent"],
            profile["engine"],
            profile["title"],
            params,
        )
    console.print(table)
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
        half = (summary.ci95_high - summary.ci95_low) / 2 * scale
        text += f" ±{half:,.{digits}f}"
    return text


def aggregates(console: Console, rows: list[Aggregate], scale: GradeScale | None = None) -> None:
    """One line per measurement: mean over repetitions with the 95 % confidence half-width."""
    scale = scale or GradeScale()
    table = Table(
        Column("config", no_wrap=True),
        Column("workload", no_wrap=True),
        "variant",
        "phase",
        "dir",
        "n",
        "IOPS",
        "MiB/s",
        "lat mean ms",
        "p95 ms",
        "p99 ms",
        "grade",
        "real s",
    )
    for row in rows:
        p95 = row.metrics.get("lat_p95_us")
        letter = grade(p95.mean, scale).letter if p95 is not None else "-"
        _row(
            table,
            row.config_id,
            row.workload,
            row.variant or "-",
            row.phase,
            row.direction,
            row.repetitions,
            _number(row.metrics.get("iops")),
            _number(row.metrics.get("bw_mibps"), 1),
            _number(row.metrics.get("lat_mean_us"), 3, 1e-3),
            _number(p95, 3, 1e-3),
            _number(row.metrics.get("lat_p99_us"), 3, 1e-3),
            letter,
            _number(row.metrics.get("real_s"), 2),
        )
    console.print(table)


def usd(value: Any) -> str:
    return f"${value:,.2f}" if isinstance(value, int | float) else "-"


def pct(value: Any) -> str:
    return f"{value:+.1f} %" if isinstance(value, int | float) else "-"


def economics_table(run: dict[str, Any]) -> Table | None:
    """Each config against the baseline: monthly cost, its delta, this run's cost, the verdict."""
    economics = run.get("economics")
    if not economics:
        return None
    table = Table(
        Column("config", no_wrap=True),
        Column("monthly", justify="right"),
        Column("vs baseline", justify="right"),
        Column("this run", justify="right"),
        "verdict",
        title=f"run {run.get('run_id')}: costs against {economics.get('baseline')} "
        f"({economics.get('price_source')}, prices of {economics.get('price_date')})",
        title_justify="left",
    )
    for config in economics.get("configs") or []:
        monthly = usd(config.get("monthly_usd")) + (" *" if config.get("cost_partial") else "")
        table.add_row(
            Text(str(config.get("id"))),
            Text(monthly),
            Text(pct(config.get("delta_monthly_pct"))),
            Text(usd(config.get("run_usd"))),
            Text(str(config.get("verdict"))),
        )
    if any(c.get("cost_partial") for c in economics.get("configs") or []):
        table.caption = "* partly unpriced: see the report"
    return table


def run_summary(console: Console, run_id: str, execution: Any, record: dict[str, Any]) -> None:
    """The run's status, each config's status and errors, then the measurements side by side."""
    from storagebench.analysis.stats import aggregate
    from storagebench.results.records import ResultRecord

    run = record.get("run", {})
    status = (execution.output or {}).get("status") or run.get("status") or execution.status
    style = {"SUCCEEDED": "bold green", "PARTIAL": "bold yellow"}.get(str(status), "bold red")
    console.print(
        Text.assemble((f"run {run_id}: {status}", style), f" in {execution.wall_s:.0f} s"), highlight=False
    )
    if execution.status != "SUCCEEDED":
        console.print(
            Text(f"execution {execution.status}: {execution.error}: {execution.cause}"), highlight=False
        )
    configs = Table("config", "status", "records", "errors")
    for config in (execution.output or {}).get("configs", []):
        problems = "; ".join(
            f"{e['step']}: {e['error']}: {e['cause'][:120]}" for e in config.get("errors", [])
        )
        leftovers = "; ".join(config.get("leftovers", []))
        _row(
            configs,
            config["config_id"],
            config["status"],
            config["records"],
            problems + (f" | leftovers: {leftovers}" if leftovers else "") or "-",
        )
    console.print(configs)
    records = [ResultRecord.model_validate(r["record"]) for r in record.get("results", [])]
    if records:
        aggregates(console, aggregate(records))
    table = economics_table(run)
    if table is not None:
        console.print(table)
    output = execution.output or {}
    failed_costs = [] if output.get("economics") else output.get("economics_notes", [])  # else: in the report
    for note in [*failed_costs, *output.get("report_notes", [])]:
        console.print(Text.assemble(("note: ", "yellow"), str(note)), highlight=False)
    if output.get("report"):
        console.print(Text(f"report: {output['report'].get('html')}"), highlight=False)
