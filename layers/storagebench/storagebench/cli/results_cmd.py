"""``storagebench results`` and ``storagebench cleanup``: what local runs stored, and their leftovers."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from storagebench.cli import listing, render
from storagebench.cli.console import err, fail, out, print_json
from storagebench.cli.listing import FORMAT_HELP, FORMATS, Field, Listing, output_format, when
from storagebench.cli.options import HistogramsOption
from storagebench.cli.run_tables import runs_listing
from storagebench.cli.stack_client import ApiUrlOption, StackRegionOption
from storagebench.core.clock import parse_iso

if TYPE_CHECKING:
    from storagebench.api.models import RunDetail

# ``storagebench.export.EXPORT_FORMATS``: with --run, these formats are its per-repetition rows
EXPORT_FORMATS = ("csv", "jsonl", "parquet")
EXIT_NOTHING = 1

ROOT_OPTION = typer.Option(help="where local runs keep their results and artifacts")


@contextmanager
def local_store(root: Path) -> Iterator[Any]:
    """The results of local runs: DynamoDB Local over the data under ``root`` (the shared server,
    kept running between commands: ``storagebench_local.dynamodb_shared``)."""
    from storagebench.adapters.aws.dynamodb import DynamoResultsStore
    from storagebench_local.dynamodb_local import DynamoDBLocalUnavailable
    from storagebench_local.dynamodb_shared import InvalidIdleTimeout, shared_dynamodb_local
    from storagebench_local.session import REGION, TABLE

    try:
        with shared_dynamodb_local(root) as server:
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
    except InvalidIdleTimeout as exc:
        raise fail(str(exc)) from None


def _measured(key: str, digits: int, scale: float = 1.0) -> Any:
    return lambda value: f"{value * scale:,.{digits}f}" if isinstance(value, int | float) else "-"


def history_listing(points: list[dict[str, Any]], title: str) -> Listing:
    listing = Listing(
        title,
        [
            Field("started", "id", when, priority=5),
            Field("run", "id", priority=10),
            Field("config", "id", priority=4),
            Field("rep", "number", priority=3),
            Field("dir", priority=6),
            Field("IOPS", "number", _measured("iops", 0), priority=9),
            Field("MiB/s", "number", _measured("bw_mibps", 1), priority=7),
            Field("p95 ms", "number", _measured("p95_us", 3, 1e-3), priority=8),
        ],
    )
    for point in points:
        record = point.get("record") or {}
        listing.add(
            **{
                "started": point.get("started_at"),
                "run": point.get("run_id"),
                "config": point.get("config_id"),
                "rep": point.get("repetition"),
                "dir": record.get("direction"),
                "IOPS": record.get("iops"),
                "MiB/s": record.get("bw_mibps"),
                "p95 ms": (record.get("latency") or {}).get("p95_us"),
            }
        )
    return listing


def _iso_date(value: str, option: str) -> str:
    try:
        parse_iso(value)
    except ValueError:
        raise fail(f"{option} {value!r} is not a date: give an ISO date such as 2026-11-01") from None
    return value


DIRECTIONS = ("read", "write", "mixed", "trim")
EVER = "1970-01-01"  # --since when not given: the whole history
RESULTS_FORMATS = (*FORMATS, "parquet")
# A local run's id is ``<suite>-<UTC stamp>-<hex>`` (or ``<suite>-key-<digest>``): its suite is the prefix
_RUN_ID = re.compile(r"^(?P<suite>.+)-(?:\d{8}T\d{6}Z-[0-9a-f]+|key-[0-9a-f]+)$")


def local_suites(root: Path) -> list[str]:
    """The suites whose runs left artifacts under ``root`` (each run keeps ``artifacts/runs/<id>``)."""
    runs = root / "artifacts" / "runs"
    names = sorted(p.name for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    return sorted({m["suite"] for name in names if (m := _RUN_ID.match(name))})


def latest_local_runs(store: Any, root: Path, last: int) -> list[dict[str, Any]]:
    """The newest ``last`` runs of every suite run here, and those in progress, newest first."""
    found: dict[str, dict[str, Any]] = {}
    for suite in local_suites(root):
        for run in store.list_runs(suite, last):
            found[str(run.get("run_id"))] = run
    for run in store.runs_in_progress():
        found.setdefault(str(run.get("run_id")), run)
    ordered = sorted(
        found.values(), key=lambda r: (str(r.get("started_at")), str(r.get("run_id"))), reverse=True
    )
    return ordered[:last]


@dataclass(frozen=True)
class Ask:
    """What ``results`` was asked, checked."""

    run: str | None
    suite: str | None
    last: int
    active: bool
    storage: str | None
    config: str | None
    target: str | None
    workload: str | None
    since: str
    until: str | None
    variant: str
    phase: str
    direction: str | None
    histograms: bool = False

    @property
    def history(self) -> bool:
        return self.storage is not None or self.config is not None

    def history_query(self, storage: str) -> dict[str, Any]:
        return {
            "storage": storage,
            "workload": self.workload,
            "since": self.since,
            "until": self.until,
            "variant": self.variant,
            "phase": self.phase,
            "direction": self.direction,
        }


def _checked(ask: Ask) -> None:
    if ask.storage is not None and ask.config is not None:
        raise fail("give --storage OPTION or --config ID (its storage option is looked up), not both")
    if ask.history:
        if ask.workload is None:
            raise fail("a history needs --workload ID (with --storage OPTION or --config ID)")
        if ask.active:
            raise fail("--active lists runs in progress: it goes with no history option")
        if ask.storage is not None and ask.run is not None:
            raise fail(
                "--run names the run whose request reads --config: give --config with it, not --storage"
            )
        if ask.direction is not None and ask.direction not in DIRECTIONS:
            raise fail(f"--direction {ask.direction!r} is not one of {', '.join(DIRECTIONS)}")
        return
    if sum([ask.run is not None, ask.suite is not None, ask.active]) > 1:
        raise fail("give one of --run RUN_ID, --suite NAME or --active (none: the latest runs)")
    if ask.workload is not None or ask.target is not None:
        raise fail("--workload and --target go with --config ID or --storage OPTION (a history)")


def _check_histograms(ask: Ask, fmt: str) -> None:
    """Histograms go into a run's JSON document only: no table or export row has a place for them."""
    if ask.histograms and (ask.run is None or ask.history or fmt != "json"):
        raise fail(
            "--histograms adds each record's latency histogram to a run's JSON document: give --run RUN_ID "
            f"--format json (not --format {fmt}: a table, and the export's csv, jsonl and parquet rows, "
            "have no column for a histogram)"
            if ask.run is not None and not ask.history
            else "--histograms goes with --run RUN_ID --format json (a run's records; runs and histories "
            "hold no histograms)"
        )


def results(
    run: Annotated[str | None, typer.Option("--run", help="one run with its configs and results")] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="the latest runs of this suite")] = None,
    last: Annotated[int, typer.Option("--last", min=1, max=1000, help="how many runs to list")] = 10,
    active: Annotated[bool, typer.Option("--active", help="runs in progress")] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history", help="a metric's history (implied by --config or --storage, which it needs)"
        ),
    ] = False,
    storage: Annotated[
        str | None,
        typer.Option("--storage", help="one storage option's history (as `results --run` names it)"),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="one config's history, by its id in the request (of --run, else the latest run of --suite, "
            "else the latest run)",
        ),
    ] = None,
    target: Annotated[
        str | None, typer.Option("--target", help="with --config: the target, when the config has several")
    ] = None,
    workload: Annotated[
        str | None, typer.Option("--workload", help="with --config or --storage: the workload id")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="a history from this ISO date (default: all of it)")
    ] = None,
    until: Annotated[str | None, typer.Option("--until", help="a history before this ISO date")] = None,
    variant: Annotated[str, typer.Option(help="a history's sweep point, e.g. numjobs=16")] = "-",
    phase: Annotated[str, typer.Option(help="a history's workload phase")] = "run",
    direction: Annotated[
        str | None, typer.Option(help=f"a history's direction: {', '.join(DIRECTIONS)} (default: all)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable (--format json)")] = False,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=FORMAT_HELP + "; with --run, csv, jsonl and parquet are one row per repetition (the export)",
        ),
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="with --run --format csv|jsonl|parquet: write this file")
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns", help="the table's columns, comma-separated (with --run: the measurements' table)"
        ),
    ] = None,
    histograms: HistogramsOption = False,
    root: Annotated[Path, ROOT_OPTION] = Path(".storagebench"),
    stack: Annotated[
        str | None, typer.Option("--stack", help="query this deployed stack's API (SigV4) instead")
    ] = None,
    api_url: ApiUrlOption = None,
    region: StackRegionOption = None,
) -> None:
    """Query stored results: the latest runs (no option), a run (--run), a suite's latest runs
    (--suite --last N), runs in progress (--active), or one storage option's metric history
    (--config ID or --storage OPTION, with --workload); locally, or on a deployed stack (--stack NAME).

    A history whose names match nothing lists the choices and exits 2; one with no measurement
    exits 1."""
    chosen = output_format(fmt, as_json, RESULTS_FORMATS)
    if history and storage is None and config is None:
        raise fail(
            "--history needs --config ID (a config of the latest run, or of --run/--suite) or "
            "--storage OPTION, and --workload ID; e.g. --history --config gp3 --workload std-randread-4k"
        )
    ask = Ask(
        run=run,
        suite=suite,
        last=last,
        active=active,
        storage=storage,
        config=config,
        target=target,
        workload=workload,
        since=_iso_date(since, "--since") if since is not None else EVER,
        until=_iso_date(until, "--until") if until is not None else None,
        variant=variant,
        phase=phase,
        direction=direction,
        histograms=histograms,
    )
    _checked(ask)
    _check_histograms(ask, chosen)
    if chosen == "parquet" and (ask.run is None or ask.history):
        raise fail("--format parquet is the export of one run: give --run RUN_ID")
    if out_file is not None and (ask.run is None or ask.history or chosen not in EXPORT_FORMATS):
        raise fail("--out writes a run's export: give --run RUN_ID --format csv|jsonl|parquet")
    if stack is not None or api_url is not None:
        _results_on_stack(stack, api_url, region, ask, chosen, columns, out_file)
        return
    with local_store(root) as store:
        if ask.history:
            storage_key = ask.storage or _local_option(store, root, ask)
            points = [
                point
                for d in ((ask.direction,) if ask.direction else DIRECTIONS)
                for point in store.metric_history(
                    storage_key, ask.workload, ask.variant, ask.phase, d, ask.since, ask.until
                )
            ]
            points.sort(key=lambda p: (str(p.get("started_at")), str(p.get("run_id"))), reverse=True)
            _show_history(ask, storage_key, points, chosen, columns)
            return
        if ask.run is not None:
            _show_local_run(store, ask, chosen, columns, out_file)
            return
        if ask.suite is not None:
            runs, title = store.list_runs(ask.suite, ask.last), f"suite {ask.suite}, latest {ask.last}"
        elif ask.active:
            runs, title = store.runs_in_progress(), "runs in progress"
        else:
            runs, title = latest_local_runs(store, root, ask.last), f"latest {ask.last} runs, every suite"
    _show_runs(runs, title, chosen, columns)


def _latest_run_for_names(store: Any, root: Path, ask: Ask) -> dict[str, Any]:
    if ask.run is not None:
        try:
            return dict(store.get_run(ask.run)["run"])
        except KeyError:
            raise fail(f"no run {ask.run!r} in the local results") from None
    runs = store.list_runs(ask.suite, 1) if ask.suite is not None else latest_local_runs(store, root, 1)
    if not runs:
        where = f"suite {ask.suite}" if ask.suite else "any suite"
        raise fail(f"no run of {where} in the local results to read --config {ask.config!r} from")
    return dict(runs[0])


def _resolved(run: dict[str, Any], ask: Ask) -> str:
    from storagebench.cli.history_names import UnknownNameError, resolve_series

    assert ask.config is not None and ask.workload is not None
    try:
        series = resolve_series(run, ask.config, ask.workload, ask.target)
    except UnknownNameError as exc:
        raise fail(str(exc)) from None
    err.print(
        Text(f"--config {ask.config}: {series.storage_option} (named by run {series.run_id})"),
        highlight=False,
        soft_wrap=True,
    )
    return series.storage_option


def _local_option(store: Any, root: Path, ask: Ask) -> str:
    return _resolved(_latest_run_for_names(store, root, ask), ask)


def _show_history(
    ask: Ask, storage_key: str, points: list[dict[str, Any]], fmt: str, columns: str | None
) -> None:
    """The points; none at all is an answer too, but exits 1 so a script notices the empty series."""
    label = f"{storage_key} / {ask.workload}" + (f" since {ask.since}" if ask.since != EVER else "")
    document = {"storage_option": storage_key, "workload": ask.workload, "points": points}
    listing.show(out, history_listing(points, label), fmt, document, columns)
    if not points:
        which = f"variant {ask.variant}, phase {ask.phase}, direction {ask.direction or 'any'}"
        raise fail(
            f"no measurement of {ask.workload} on {storage_key} ({which}) since {ask.since}: check the names "
            "with `storagebench results --run RUN_ID`",
            EXIT_NOTHING,
        )


def _show_runs(runs: list[dict[str, Any]], title: str, fmt: str, columns: str | None) -> None:
    listing.show(out, runs_listing(runs, title), fmt, {"runs": runs}, columns)
    if fmt != "table":
        return
    for item in runs:
        render.economics(out, item)


def _export(rows: list[dict[str, Any]], fmt: str, out_file: Path | None, run_id: str) -> None:
    """One row per repetition (``storagebench.export``): csv/jsonl to stdout or --out, parquet to a file."""
    from storagebench.export import ExportError, write_rows

    if fmt == "parquet" and out_file is None:
        out_file = Path(f"{run_id}.parquet")
    try:
        if out_file is None:
            write_rows(rows, fmt, sys.stdout.buffer)
            sys.stdout.flush()
            return
        with out_file.open("wb") as stream:
            write_rows(rows, fmt, stream)
    except ExportError as exc:
        raise fail(f"--format {fmt}: {exc}", 1) from None
    except OSError as exc:
        raise fail(f"--out {out_file}: {exc.strerror or exc}", 1) from None
    err.print(
        Text(f"{len(rows)} row(s) of run {run_id} written to {out_file}"), highlight=False, soft_wrap=True
    )


def _show_local_run(store: Any, ask: Ask, fmt: str, columns: str | None, out_file: Path | None) -> None:
    """The table is the run view the API answers (``api.run_view``); the JSON document and the
    export are the stored run itself, its records whole."""
    from storagebench.api.run_view import RunNotFoundError, RunReader

    assert ask.run is not None
    try:
        if fmt == "table":
            _show_run(RunReader(store).get_run(ask.run), columns)
            return
        document = store.get_run(ask.run, histograms=ask.histograms)
    except (KeyError, RunNotFoundError):
        raise fail(f"no run {ask.run!r} in the local results") from None
    if fmt in EXPORT_FORMATS:
        from storagebench.export import run_rows

        _export(run_rows(document), fmt, out_file, ask.run)
    else:
        print_json(document)


def _show_run(view: RunDetail, columns: str | None) -> None:
    """The run view's tables, one renderer for a local run and a stack's (``cli.run_tables``)."""
    from storagebench.cli.run_tables import show_run

    show_run(out, err, view, columns)


def _results_on_stack(
    stack: str | None,
    api_url: str | None,
    region: str | None,
    ask: Ask,
    fmt: str,
    columns: str | None,
    out_file: Path | None,
) -> None:
    """The same queries through the stack's API: GET /runs/{id}, /runs, /results; a run's export
    from the files Collect wrote (GET /runs/{id}/export)."""
    from storagebench.cli.stack_client import results_points, run_document, stack_api
    from storagebench.cli.stack_export import stack_export

    with stack_api(stack, api_url, region) as api:
        if ask.history:
            storage_key = ask.storage or _stack_option(api, ask)
            # every page, as a local history shows the whole series
            points = results_points(api, ask.history_query(storage_key))
        elif ask.run is not None and fmt in EXPORT_FORMATS:
            exported = stack_export(api, ask.run)
        elif ask.run is not None:
            document = run_document(api, ask.run, histograms=ask.histograms)
        elif ask.suite is not None:
            _, page = api.call("GET", "/runs", {"suite": ask.suite, "limit": min(ask.last, 100)})
            runs, title = page["runs"], f"suite {ask.suite}, latest {ask.last}"
        else:  # the API lists finished runs by suite only: without one, the runs in progress
            _, page = api.call("GET", "/runs", {"limit": min(ask.last, 100)})
            runs, title = page["runs"], "runs in progress (finished runs: --suite NAME)"
    if ask.history:
        _show_history(ask, storage_key, points, fmt, columns)
    elif ask.run is not None and fmt in EXPORT_FORMATS:
        for note in [*exported.notes, *_without_rows(exported.configs_without_rows, exported.status)]:
            err.print(Text.assemble(("note: ", "yellow"), note), highlight=False, soft_wrap=True)
        _export(exported.rows, fmt, out_file, exported.run_id)
    elif ask.run is not None and fmt == "json":
        print_json(document)
    elif ask.run is not None:  # the API's run view, read back into its model
        from storagebench.cli.run_tables import stack_run_view

        _show_run(stack_run_view(document), columns)
    else:
        _show_runs(runs, title, fmt, columns)


def _without_rows(configs: list[str], status: str) -> list[str]:
    if not configs:
        return []
    return [
        f"{len(configs)} config(s) of the run ({status}) have no exported rows: {', '.join(configs)} "
        "(not collected yet, nothing measured, or the export failed: see `results --run` for each status)"
    ]


def _stack_option(api: Any, ask: Ask) -> str:
    """--config on a stack: the request of --run, else of the suite's latest run, names the option."""
    if ask.run is not None:
        _, detail = api.call("GET", f"/runs/{ask.run}")
        run = detail.get("run") or {}
    elif ask.suite is not None:
        _, page = api.call("GET", "/runs", {"suite": ask.suite, "limit": 1})
        if not page["runs"]:
            raise fail(f"no run of suite {ask.suite} on the stack to read --config {ask.config!r} from")
        _, detail = api.call("GET", f"/runs/{page['runs'][0]['run_id']}")
        run = detail.get("run") or {}
    else:
        raise fail("on a stack, --config needs --suite NAME or --run RUN_ID (whose request names it)")
    return _resolved(dict(run), ask)


def cleanup(
    run: Annotated[str, typer.Option("--run", help="the run whose leftovers to remove")],
    config: Annotated[str | None, typer.Option("--config", help="only this config of the run")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
) -> None:
    """Remove what a killed local run left on this machine: agents, mounts, loop devices, cgroups,
    the NFS servers of its File Gateway stand-ins."""
    from storagebench.agent.cli import DEFAULT_MOUNT_ROOT, DEFAULT_VOLUMES_DIR
    from storagebench.agent.sweep import sweep
    from storagebench_local.dynamodb_local import default_root
    from storagebench_local.gateway_sweep import sweep_gateways

    report = sweep(run, DEFAULT_MOUNT_ROOT, DEFAULT_VOLUMES_DIR, config)
    gateway_removed, gateway_left = sweep_gateways(default_root() / "gateways", run, config)
    report["found"] += gateway_removed + gateway_left
    report["removed"] += gateway_removed
    report["leftovers"] += gateway_left
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
