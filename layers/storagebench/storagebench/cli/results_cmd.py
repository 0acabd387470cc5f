"""``storagebench results`` and ``storagebench cleanup``: what local runs stored, and their leftovers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from storagebench.cli.console import fail, out, print_json

ROOT_OPTION = typer.Option(help="where local runs keep their results and artifacts")


@contextmanager
def local_store(root: Path) -> Iterator[Any]:
    """The results of local runs: DynamoDB Local over the data under ``root``."""
    import boto3

    from storagebench.adapters.aws.dynamodb import DynamoResultsStore
    from storagebench.local.dynamodb_local import DynamoDBLocal, DynamoDBLocalUnavailable
    from storagebench.local.session import REGION, TABLE

    try:
        with DynamoDBLocal(root.resolve()) as server:
            client = boto3.client(
                "dynamodb",
                region_name=REGION,
                endpoint_url=server.endpoint_url,
                aws_access_key_id="local",
                aws_secret_access_key="local",
            )
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
        "run", "suite", "status", "started", "ended", "configs", "records", title=title, title_justify="left"
    )
    for run in runs:
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
                )
            )
        )
    return table


def results(
    run: Annotated[str | None, typer.Option("--run", help="one run with its configs and results")] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="the latest runs of this suite")] = None,
    last: Annotated[int, typer.Option("--last", min=1, max=1000, help="how many runs of --suite")] = 10,
    active: Annotated[bool, typer.Option("--active", help="runs in progress")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
    root: Annotated[Path, ROOT_OPTION] = Path(".storagebench"),
) -> None:
    """Query stored results: a run (--run), a suite's history (--suite --last N), runs in progress."""
    if sum([run is not None, suite is not None, active]) != 1:
        raise fail("give exactly one of --run RUN_ID, --suite NAME or --active")
    with local_store(root) as store:
        if run is not None:
            try:
                document = store.get_run(run)
            except KeyError:
                raise fail(f"no run {run!r} in the local results") from None
            if as_json:
                print_json(document)
            else:
                from storagebench.analysis.stats import aggregate
                from storagebench.cli import render
                from storagebench.results.records import ResultRecord

                out.print(_runs_table([{**document["run"], "configs": document["configs"]}], f"run {run}"))
                records = [ResultRecord.model_validate(r["record"]) for r in document["results"]]
                render.aggregates(out, aggregate(records))
            return
        runs = store.list_runs(suite, last) if suite is not None else store.runs_in_progress()
    if as_json:
        print_json({"runs": runs})
    else:
        out.print(_runs_table(runs, f"suite {suite}, latest {last}" if suite else "runs in progress"))


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
