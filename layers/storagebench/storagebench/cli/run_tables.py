"""``results --run``: one renderer of the run view (``api.run_view``'s ``RunDetail``) for a local run
and a stack's alike, so a run reads the same wherever it was stored: what its numbers cannot mean,
its row, each config's status, storage options and errors, its costs, the measurements (with load
curves and latency-SLA answers), how its repetitions stopped, then the notes on stderr."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from storagebench.analysis.stats import Aggregate
from storagebench.api.models import ConfigProgress, RunDetail
from storagebench.cli import listing, render
from storagebench.cli.listing import Field, Listing, when
from storagebench.cli.repetitions_render import show_repetitions
from storagebench.core.series import ConfigRepetitions
from storagebench.store.models import error_lines

ERROR_SHOWN = 160  # characters of one error line in the table; the run's JSON has it whole
OPTION_HEAD = "storage option (for --storage)"


def _regressions(run: dict[str, Any]) -> str | None:
    counts = run.get("regression_counts") or {}
    return f"{counts.get('regression', 0)} down, {counts.get('improvement', 0)} up" if counts else None


def runs_listing(runs: list[dict[str, Any]], title: str) -> Listing:
    """One row per run; the run id is never cut (a narrow terminal drops other columns first)."""
    listing = Listing(
        title,
        [
            Field("run", "id", priority=10),
            Field("suite", priority=3),
            Field("status", priority=9),
            Field("started", "id", when, priority=6),
            Field("ended", "id", when, priority=1),
            Field("configs", "number", priority=4),
            Field("records", "number", priority=5),
            Field("run cost", "number", render.usd, priority=7),
            Field("regressions", priority=2),
        ],
    )
    for run in runs:
        listing.add(
            **{
                "run": run.get("run_id"),
                "suite": run.get("suite"),
                "status": run.get("status"),
                "started": run.get("started_at"),
                "ended": run.get("ended_at"),
                "configs": len(run.get("configs") or []),
                "records": run.get("records"),
                "run cost": (run.get("economics") or {}).get("run_cost_usd"),
                "regressions": _regressions(run),
            }
        )
    return listing


def _options(config: ConfigProgress) -> str | None:
    """The storage option (one target), or each target's on a line of its own."""
    options = config.storage_options
    if len(options) == 1:
        return next(iter(options.values()))
    return "\n".join(f"{target}: {option}" for target, option in sorted(options.items())) or None


def _errors(config: ConfigProgress) -> str | None:
    lines = [e if len(e) <= ERROR_SHOWN else e[: ERROR_SHOWN - 3] + "..." for e in error_lines(config.errors)]
    return "\n".join(lines) or None


def configs_listing(view: RunDetail) -> Listing:
    """Each config's status, the storage option its history is kept under, when it last changed
    and its errors."""
    configs = Listing(
        None,
        [
            Field("config", "id", priority=9),
            Field("status", priority=8),
            Field(OPTION_HEAD, "id", priority=7),
            Field("updated", "id", when, priority=3),
            Field("errors", priority=6),
        ],
    )
    for config in view.configs:
        configs.add(
            **{
                "config": config.config_id,
                "status": config.status,
                OPTION_HEAD: _options(config),
                "updated": config.updated_at,
                "errors": _errors(config),
            }
        )
    return configs


def measurements(view: RunDetail, columns: str | None) -> tuple[list[Aggregate], list[str] | None]:
    """The run's measurements and the columns ``--columns`` chose of their table (exit 2 naming
    the choices when one is unknown)."""
    from storagebench.cli.console import fail

    rows = list(view.results)
    try:
        return rows, listing.parse_columns(columns, render.aggregate_listing(rows))
    except listing.ColumnsError as exc:
        raise fail(str(exc)) from None


def stack_run_view(document: Any) -> RunDetail:
    """``GET /runs/{id}``'s JSON read back into the run view; exit 1 naming the first field that
    does not read (an API of another version, say)."""
    from pydantic import ValidationError

    from storagebench.cli.console import fail

    try:
        return RunDetail.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise fail(
            f"the API's run document does not read as a run view: {where}: {first['msg']} "
            f"({exc.error_count()} problem(s)); `results --run ID --json` prints it as sent",
            1,
        ) from None


def show_run(out: Console, err: Console, view: RunDetail, columns: str | None = None) -> None:
    """The run id on a line of its own (copyable whole), its row, its configs, costs, measurements
    and how its repetitions stopped; what its numbers cannot mean comes first, notes go to ``err``."""
    rows, chosen = measurements(view, columns)
    for caveat in view.caveats:
        out.print(Text.assemble(("caveat: ", "bold yellow"), caveat), highlight=False)
    run = dict(view.run) if view.run is not None else {"run_id": view.run_id, "status": view.status}
    out.print(Text(f"run {view.run_id}"), highlight=False, soft_wrap=True)
    listing.show(out, runs_listing([run], ""), "table")
    listing.print_table(out, configs_listing(view))
    render.economics(out, {**run, "economics": view.economics})
    if rows:
        render.aggregates(out, rows, emulated=set(view.emulated), chosen=chosen, sla_limits=view.sla_searches)
    repetitions = [
        ConfigRepetitions(config_id=c.config_id, series=c.series, steady_state=c.steady_state)
        for c in view.configs
        if c.series or c.steady_state
    ]
    show_repetitions(out, repetitions)
    for note in view.notes:
        err.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
