"""``storagebench compare RUN_A RUN_B`` and ``compare --suite NAME [--against DATE]``: run B against run A.

Per measurement (storage option, workload, direction) and metric: both means, the delta, its 95 %
interval, Welch's p-value and the verdict (``costs.run_compare``). Locally, or on a deployed stack
through ``GET /runs/{B}/compare?against={A}``. Exit 0 with an answer, 2 on bad input (an unknown
run or suite, a date that is not one, a suite without two finished runs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from storagebench.cli.console import fail, out, print_json
from storagebench.cli.listing import FORMAT_HELP, output_format, write_csv, write_jsonl
from storagebench.cli.results_cmd import ROOT_OPTION, local_store
from storagebench.cli.stack_client import ApiUrlOption, AskStackOption, StackRegionOption
from storagebench.costs.run_compare import (
    FLAT_FIELDS,
    MeasurementComparison,
    MetricComparison,
    RunComparison,
    RunSide,
    SuiteSelectionError,
    Unmatched,
    compare_runs,
    flat_rows,
    pick_suite_runs,
)

RUNS_PAGE = 100
"""Runs read per page when a suite's two runs are chosen (the API's most)."""

_UNITS = {"iops": ("IOPS", 1.0), "bw_mibps": ("MiB/s", 1.0), "real_s": ("real s", 1.0)}
"""Metric -> its row label and scale in the table; latencies show in milliseconds."""


# ------------------------------------------------------------------------------ the table


def _label(metric: MetricComparison) -> tuple[str, float]:
    if metric.metric in _UNITS:
        return _UNITS[metric.metric]
    return (metric.metric.removeprefix("lat_").removesuffix("_us") + " ms", 1e-3)


def number(value: float) -> str:
    """Four significant digits or so, never in exponent form: 3,006 / 127.9 / 11.72 / 0.073."""
    size = abs(value)
    digits = 0 if size >= 1000 else 1 if size >= 100 else 2 if size >= 10 else 3
    return f"{value:,.{digits}f}"


def _pct(value: float) -> str:
    return f"{value:+.0f}" if abs(value) >= 10 else f"{value:+.1f}"


def _interval(metric: MetricComparison) -> str:
    if metric.ci_delta_pct is None:
        return "-"
    low, high = metric.ci_delta_pct
    return f"{_pct(low)}..{_pct(high)}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def short_verdict(metric: MetricComparison) -> Text:
    """The verdict as the table shows it: a word when significant, else why there is none."""
    if metric.outcome == "different":
        return Text(metric.verdict, style="green" if metric.better else "red")
    if metric.outcome == "no_difference":
        return Text("no sig. difference")
    need = metric.repetitions_needed
    return Text(f"too few (need {need})" if need is not None else "too few (need 2+)", style="yellow")


def _heading(m: MeasurementComparison) -> Text:
    where = [m.workload, m.direction]
    if m.variant:
        where.append(m.variant)
    if m.phase not in ("run", ""):
        where.append(f"{m.phase} phase")
    if m.group:  # fio's group 0 is the only one of most jobs
        where.append(f"group {m.group}")
    text = Text.assemble((m.subject, "bold"), "  ", ", ".join(where))
    if m.matched_by == "config id":
        sides = f"A {m.config_a} {m.option_a or '?'}, B {m.config_b} {m.option_b or '?'}"
        text.append(f"  (matched by config id: {sides})", style="yellow")
    return text


def measurement_table(m: MeasurementComparison) -> Table:
    """One measurement's metrics; no cell ends in "…": numbers never wrap, the verdict folds."""
    table = Table(
        Column("metric", no_wrap=True),
        Column("A", justify="right", no_wrap=True),
        Column("B", justify="right", no_wrap=True),
        Column("Δ %", justify="right", no_wrap=True),
        Column("95 % CI Δ %", justify="right", no_wrap=True),
        Column("p", justify="right", no_wrap=True),
        Column("verdict", overflow="fold", min_width=10),
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    for metric in m.metrics:
        label, scale = _label(metric)
        table.add_row(
            Text(label),
            Text(number(metric.a * scale)),
            Text(number(metric.b * scale)),
            Text(_pct(metric.delta_pct) if metric.delta_pct is not None else "-"),
            Text(_interval(metric)),
            Text(_p(metric.p_value)),
            short_verdict(metric),
        )
    return table


def _side_lines(console: Console, name: str, side: RunSide) -> None:
    # The id alone after its letter: whole, copyable, never folded into the table
    console.print(Text(f"run {name}: {side.run_id}"), highlight=False, soft_wrap=True)
    console.print(
        Text(f"  {side.suite or '?'}, {side.status or '?'}, started {side.started_at or '?'}"),
        highlight=False,
    )


def _unmatched_line(side: str, u: Unmatched) -> Text:
    where = ", ".join([u.workload, u.direction, *([u.variant] if u.variant else [])])
    what = u.option or f"{u.config_id}/{u.target_id}"
    return Text(f"only in {side}: {what}  {where} ({u.config_id}, {u.repetitions} repetition(s))")


def show_comparison(console: Console, comparison: RunComparison) -> None:
    """For people: both runs (ids on lines of their own), the emulation caveat first, one small
    table per measurement, what only one run measured, then how to read the verdicts."""
    console.print(Text("run B against run A (deltas are B - A over A)", style="bold"), highlight=False)
    _side_lines(console, "A", comparison.a)
    _side_lines(console, "B", comparison.b)
    notes = list(comparison.notes)
    if comparison.emulated:
        console.print(Text.assemble(("emulated: ", "bold yellow"), notes.pop(0)), highlight=False)
    console.print(Text(comparison.summary), highlight=False)
    for measurement in comparison.measurements:
        console.print()
        console.print(_heading(measurement), highlight=False)
        console.print(measurement_table(measurement))
    unmatched = [("A", u) for u in comparison.only_in_a] + [("B", u) for u in comparison.only_in_b]
    if unmatched:
        console.print()
    for side, u in unmatched:
        console.print(_unmatched_line(side, u), highlight=False)
    console.print()
    for note in notes:
        console.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
    console.print(
        Text(
            f"p: Welch's t-test (two-sided). A verdict needs p < {comparison.alpha:g}. "
            f"'too few (need N)': N repetitions per side would detect the difference (at least "
            f"{comparison.min_effect_pct:g} %) with power {comparison.power:g}; 'no sig. difference': "
            "they could have, and did not.",
            style="dim",
        ),
        highlight=False,
    )


# ------------------------------------------------------------------------------ finding the runs


def _local_suite_runs(store: Any, suite: str) -> Iterator[dict[str, Any]]:
    cursor: str | None = None
    while True:
        page, cursor = store.list_runs_page(suite, RUNS_PAGE, cursor)
        yield from page
        if cursor is None:
            return


def _stack_suite_runs(api: Any, suite: str) -> Iterator[dict[str, Any]]:
    cursor: str | None = None
    while True:
        _, page = api.call("GET", "/runs", {"suite": suite, "limit": RUNS_PAGE, "cursor": cursor})
        yield from page["runs"]
        cursor = page.get("next_cursor")
        if cursor is None:
            return


def _chosen(suite: str, runs: Iterator[dict[str, Any]], against: str | None) -> tuple[str, str]:
    try:
        return pick_suite_runs(suite, runs, against)
    except SuiteSelectionError as exc:
        raise fail(str(exc)) from None


def _local_comparison(
    root: Path,
    run_a: str | None,
    run_b: str | None,
    suite: str | None,
    against: str | None,
    min_effect: float,
) -> RunComparison:
    with local_store(root) as store:
        if suite is not None:
            run_a, run_b = _chosen(suite, _local_suite_runs(store, suite), against)
        assert run_a is not None and run_b is not None
        documents = []
        for name, run_id in (("RUN_A", run_a), ("RUN_B", run_b)):
            try:
                documents.append(store.get_run(run_id))
            except KeyError:
                raise fail(
                    f"{name}: no run {run_id!r} in the local results under {root} "
                    "(`storagebench results --suite NAME` lists a suite's runs)"
                ) from None
    return compare_runs(documents[0], documents[1], min_effect_pct=min_effect)


def _stack_comparison(
    stack: str | None,
    api_url: str | None,
    region: str | None,
    run_a: str | None,
    run_b: str | None,
    suite: str | None,
    against: str | None,
    min_effect: float,
) -> RunComparison:
    from storagebench.cli.stack_client import stack_api

    with stack_api(stack, api_url, region) as api:
        if suite is not None:
            run_a, run_b = _chosen(suite, _stack_suite_runs(api, suite), against)
        query = {"against": run_a, "min_effect_pct": min_effect}
        _, document = api.call("GET", f"/runs/{run_b}/compare", query)
    return RunComparison.model_validate(document)


# ------------------------------------------------------------------------------ the command


def _checked_arguments(
    run_a: str | None, run_b: str | None, suite: str | None, against: str | None, on_stack: bool, local: bool
) -> None:
    if local and on_stack:
        raise fail("give --local (this machine's runs) or --stack NAME / --api-url URL, not both")
    if suite is None:
        if run_a is None or run_b is None:
            raise fail("give two runs (compare RUN_A RUN_B) or a suite (compare --suite NAME)")
        if against is not None:
            raise fail(f"--against {against!r} chooses a suite's run: use it with --suite NAME")
        if run_a == run_b:
            raise fail(f"RUN_A and RUN_B are the same run, {run_a}: give two different runs")
    elif run_a is not None or run_b is not None:
        raise fail("give two runs or --suite NAME, not both")


def compare(
    run_a: Annotated[str | None, typer.Argument(help="the reference run (usually the older)")] = None,
    run_b: Annotated[str | None, typer.Argument(help="the run judged against it")] = None,
    suite: Annotated[
        str | None,
        typer.Option("--suite", help="compare this suite's latest finished run with the one before it"),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="DATE",
            help="with --suite: against the latest finished run started before this ISO date or time",
        ),
    ] = None,
    min_effect: Annotated[
        float,
        typer.Option(
            "--min-effect",
            min=0,
            max=100,
            help="the smallest difference, in %, worth planning repetitions for (too few (need N))",
        ),
    ] = 5.0,
    fmt: Annotated[str | None, typer.Option("--format", help=FORMAT_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable (--format json)")] = False,
    local: Annotated[bool, typer.Option("--local", help="local runs (the default)")] = False,
    root: Annotated[Path, ROOT_OPTION] = Path(".storagebench"),
    stack: AskStackOption = None,
    api_url: ApiUrlOption = None,
    region: StackRegionOption = None,
) -> None:
    """Compare run B with run A: per storage option, workload and metric both means, the delta with
    its 95 % interval, Welch's p-value, and a verdict that says faster or slower only when the
    difference is significant (else how many repetitions would tell). Exit 0, or 2 on bad input."""
    chosen = output_format(fmt, as_json)
    on_stack = stack is not None or api_url is not None
    _checked_arguments(run_a, run_b, suite, against, on_stack, local)
    if on_stack:
        comparison = _stack_comparison(stack, api_url, region, run_a, run_b, suite, against, min_effect)
    else:
        comparison = _local_comparison(root, run_a, run_b, suite, against, min_effect)
    if chosen == "json":
        print_json(comparison.model_dump(mode="json"))
    elif chosen == "jsonl":
        write_jsonl(flat_rows(comparison))
    elif chosen == "csv":
        write_csv(flat_rows(comparison), FLAT_FIELDS)
    else:
        show_comparison(out, comparison)


def register(app: typer.Typer) -> None:
    app.command()(compare)
