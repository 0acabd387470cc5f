"""``storagebench results`` and ``storagebench cleanup``: what local runs stored, and their leftovers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from storagebench.cli import render
from storagebench.cli.console import err, fail, out, print_json
from storagebench.core.clock import parse_iso

ROOT_OPTION = typer.Option(help="where local runs keep their results and artifacts")


@contextmanager
def local_store(root: Path) -> Iterator[Any]:
    """The results of local runs: DynamoDB Local over the data under ``root``."""
    from storagebench.adapters.aws.dynamodb import DynamoResultsStore
    from storagebench_local.dynamodb_local import DynamoDBLocal, DynamoDBLocalUnavailable
    from storagebench_local.session import REGION, TABLE

    try:
        with DynamoDBLocal(root.resolve()) as server:
            client = server.client(region_name=REGION)
            if TABLE not in client.list_tables().get("TableNames", []):
                raise fail(
                    f"no local results under {root}: run `storagebench run --local --suite FILE` first"
                )
            yield DynamoResultsStore(client, TABLE)
    except DynamoDBLocalUnavailable as exc:
        raise fail(
            f"local results live in DynamoDB Local, which cannot start here ({exc}); "
            "`storagebench run --local --json` prints a run's results instead"
        ) from None


def _runs_table(runs: list[dict[str, Any]], title: str) -> Table:
    table = Table(
        "run",
        "suite",
        "status",
        "started",
        "ended",
        "configs",
        "records",
        "run cost",
        "regressions",
        title=title,
        title_justify="left",
    )
    for run in runs:
        counts = run.get("regression_counts") or {}
        flagged = f"{counts.get('regression', 0)} down, {counts.get('improvement', 0)} up" if counts else "-"
        table.add_row(
            *(
                Text(str(v))
                for v in (
                    run.get("run_id"),
                    run.get("suite"),
                    run.get("status"),
                    run.get("started_at"),
                    run.get("ended_at") or "-",
                    len(run.get("configs") or []),
                    run.get("records", "-"),
                    render.usd((run.get("economics") or {}).get("run_cost_usd")),
                    flagged,
                )
            )
        )
    return table


def _history_table(points: list[dict[str, Any]], title: str) -> Table:
    table = Table("started", "run", "config", "rep", "dir", "IOPS", "MiB/s", "p95 ms", title=title)
    for point in points:
        record = point.get("record") or {}
        latency = record.get("latency") or {}
        p95 = latency.get("p95_us")
        table.add_row(
            *(
                Text(str(v))
                for v in (
                    point.get("started_at"),
                    point.get("run_id"),
                    point.get("config_id"),
                    point.get("repetition"),
                    record.get("direction", "-"),
                    f"{record['iops']:,.0f}" if isinstance(record.get("iops"), int | float) else "-",
                    f"{record['bw_mibps']:,.1f}" if isinstance(record.get("bw_mibps"), int | float) else "-",
                    f"{p95 / 1000:,.3f}" if isinstance(p95, int | float) else "-",
                )
            )
        )
    return table


def _iso_date(value: str, option: str) -> str:
    try:
        parse_iso(value)
    except ValueError:
        raise fail(f"{option} {value!r} is not a date: give an ISO date such as 2026-11-01") from None
    return value


DIRECTIONS = ("read", "write", "mixed", "trim")


def results(
    run: Annotated[str | None, typer.Option("--run", help="one run with its configs and results")] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="the latest runs of this suite")] = None,
    last: Annotated[int, typer.Option("--last", min=1, max=1000, help="how many runs of --suite")] = 10,
    active: Annotated[bool, typer.Option("--active", help="runs in progress")] = False,
    storage: Annotated[
        str | None,
        typer.Option("--storage", help="one storage option's history (as `results --run` names it)"),
    ] = None,
    workload: Annotated[
        str | None, typer.Option("--workload", help="with --storage: the workload id")
    ] = None,
    since: Annotated[str | None, typer.Option("--since", help="with --storage: from this ISO date")] = None,
    until: Annotated[str | None, typer.Option("--until", help="with --storage: before this ISO date")] = None,
    variant: Annotated[str, typer.Option(help="with --storage: sweep point, e.g. numjobs=16")] = "-",
    phase: Annotated[str, typer.Option(help="with --storage: the workload phase")] = "run",
    direction: Annotated[
        str | None, typer.Option(help=f"with --storage: one of {', '.join(DIRECTIONS)} (default: all)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
    root: Annotated[Path, ROOT_OPTION] = Path(".storagebench"),
    stack: Annotated[
        str | None, typer.Option("--stack", help="query this deployed stack's API (SigV4) instead")
    ] = None,
    api_url: Annotated[str | None, typer.Option("--api-url", help="the API's URL instead of --stack")] = None,
    region: Annotated[str | None, typer.Option("--region", help="with --stack: the stack's region")] = None,
) -> None:
    """Query stored results: a run (--run), a suite's history (--suite --last N), one storage
    option's metric history (--storage --workload --since), runs in progress (--active); locally,
    or on a deployed stack (--stack NAME).

    Each is a single DynamoDB Query (the history: one per direction)."""
    if sum([run is not None, suite is not None, active, storage is not None]) != 1:
        raise fail("give exactly one of --run RUN_ID, --suite NAME, --storage OPTION or --active")
    if storage is not None:
        if workload is None or since is None:
            raise fail("--storage needs --workload ID and --since DATE")
        if direction is not None and direction not in DIRECTIONS:
            raise fail(f"--direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
        since = _iso_date(since, "--since")
        until = _iso_date(until, "--until") if until is not None else None
    if stack is not None or api_url is not None:
        _results_on_stack(
            stack,
            api_url,
            region,
            {
                "run": run,
                "suite": suite,
                "last": last,
                "storage": storage,
                "workload": workload,
                "since": since,
                "until": until,
                "variant": variant,
                "phase": phase,
                "direction": direction,
            },
            as_json,
        )
        return
    with local_store(root) as store:
        if run is not None:
            try:
                document = store.get_run(run)
            except KeyError:
                raise fail(f"no run {run!r} in the local results") from None
            if as_json:
                print_json(document)
            else:
                _show_run(document)
            return
        if storage is not None:
            assert workload is not None and since is not None
            points = [
                point
                for d in ((direction,) if direction else DIRECTIONS)
                for point in store.metric_history(storage, workload, variant, phase, d, since, until)
            ]
            points.sort(key=lambda p: (str(p.get("started_at")), str(p.get("run_id"))), reverse=True)
            if as_json:
                print_json({"storage_option": storage, "workload": workload, "points": points})
            else:
                out.print(_history_table(points, f"{storage} / {workload} since {since}"))
            return
        runs = store.list_runs(suite, last) if suite is not None else store.runs_in_progress()
    if as_json:
        print_json({"runs": runs})
        return
    out.print(_runs_table(runs, f"suite {suite}, latest {last}" if suite else "runs in progress"))
    for item in runs:
        table = render.economics_table(item)
        if table is not None:
            out.print(table)


def _results_on_stack(
    stack: str | None, api_url: str | None, region: str | None, ask: dict[str, Any], as_json: bool
) -> None:
    """The same queries through the stack's API: GET /runs/{id}, /runs, /results."""
    from storagebench.cli.stack_client import stack_api

    with stack_api(stack, api_url, region) as api:
        if ask["run"] is not None:
            _, document = api.call("GET", f"/runs/{ask['run']}")
        elif ask["storage"] is not None:
            query = {
                k: ask[k] for k in ("storage", "workload", "since", "until", "variant", "phase", "direction")
            }
            points: list[dict[str, Any]] = []
            cursor = None
            while True:  # every page, as `results --storage` shows the whole history locally
                _, page = api.call("GET", "/results", {**query, "limit": 1000, "cursor": cursor})
                points.extend(page["points"])
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            document = {"storage_option": ask["storage"], "workload": ask["workload"], "points": points}
        else:
            query = (
                {"suite": ask["suite"], "limit": min(ask["last"], 100)} if ask["suite"] else {"limit": 100}
            )
            _, page = api.call("GET", "/runs", query)
            document = {"runs": page["runs"]}
    if as_json:
        print_json(document)
    elif ask["run"] is not None:
        run = document.get("run") or {"run_id": document["run_id"], "status": document["status"]}
        out.print(_runs_table([run], f"run {document['run_id']}"))
        progress = Table("config", "status", "updated", title_justify="left")
        for config in document.get("configs") or []:
            progress.add_row(
                *(Text(str(config.get(k) or "-")) for k in ("config_id", "status", "updated_at"))
            )
        out.print(progress)
        table = render.economics_table(run)
        if table is not None:
            out.print(table)
    elif ask["storage"] is not None:
        out.print(
            _history_table(document["points"], f"{ask['storage']} / {ask['workload']} since {ask['since']}")
        )
    else:
        title = f"suite {ask['suite']}, latest {ask['last']}" if ask["suite"] else "runs in progress"
        out.print(_runs_table(document["runs"], title))


def _show_run(document: dict[str, Any]) -> None:
    from storagebench.analysis.stats import aggregate
    from storagebench.store.models import decode_run

    run = document["run"]
    decoded = decode_run(document)
    out.print(_runs_table([run], f"run {decoded.run.run_id}"))
    options = Table("config", "status", "storage option (for --storage)", title_justify="left")
    status = {c.config_id: c.status for c in decoded.configs}
    for (config_id, _target), option in sorted(decoded.options.items()):
        options.add_row(Text(config_id), Text(str(status.get(config_id, "-"))), Text(option))
    out.print(options)
    table = render.economics_table(run)
    if table is not None:
        out.print(table)
    render.aggregates(out, aggregate(decoded.records))
    for note in decoded.notes:
        err.print(Text.assemble(("note: ", "yellow"), note), highlight=False)


def cleanup(
    run: Annotated[str, typer.Option("--run", help="the run whose leftovers to remove")],
    config: Annotated[str | None, typer.Option("--config", help="only this config of the run")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
) -> None:
    """Remove what a killed local run left on this machine: agents, mounts, loop devices, cgroups."""
    from storagebench.agent.cli import DEFAULT_MOUNT_ROOT, DEFAULT_VOLUMES_DIR
    from storagebench.agent.sweep import sweep

    report = sweep(run, DEFAULT_MOUNT_ROOT, DEFAULT_VOLUMES_DIR, config)
    if as_json:
        print_json(report)
    else:
        for line in report["removed"]:
            out.print(Text(f"removed: {line}"), highlight=False)
        for line in report["leftovers"]:
            out.print(Text.assemble(("left: ", "red"), line), highlight=False)
        if not report["found"]:
            out.print(Text(f"nothing of run {run} found on this machine"), highlight=False)
    if report["leftovers"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(results)
    app.command()(cleanup)
