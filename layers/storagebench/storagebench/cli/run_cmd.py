"""``storagebench run --local``: the whole workflow on this machine, live, then the comparison."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.live import Live
from rich.table import Table
from rich.text import Text

from storagebench.cli.console import err, fail, out, print_json
from storagebench.cli.matrix_lines import print_matrices
from storagebench.cli.network_lines import print_network
from storagebench.cli.quota_lines import print_quotas
from storagebench.cli.stack_client import ApiUrlOption, StackRegionOption

if TYPE_CHECKING:
    from storagebench.costs.recommend import Recommendation
    from storagebench.planning.local import LocalOptions
    from storagebench.request.model import BenchmarkRequest

# The progress display asks each poll which instance runs a config; one found this recently is
# taken as is (each look is a DescribeInstances, whose CPU the emulated volumes' fio would miss).
PROGRESS_PREFIX_AGE_S = 5.0


def _agent_progress(session: Any, key: str) -> dict[str, Any]:
    """The agent's progress as the instance last uploaded it (every heartbeat), {} before that."""
    from storagebench.core.errors import WorkflowError

    try:
        found = session.services.artifacts.get_json(key)
    except (KeyError, ValueError, OSError, WorkflowError):  # not uploaded yet; the next poll retries
        return {}
    return found if isinstance(found, dict) else {}


def _progress_table(session: Any, run_id: str, configs: list[str], started: float) -> Table:
    table = Table(
        "config", "status", "agent stage", "step", "current", title=f"run {run_id}", title_justify="left"
    )
    run = _safe_run(session, run_id)
    statuses = {c.get("config_id"): c.get("status", "") for c in run.get("configs", [])}
    for config_id in configs:
        prefix = session.instance_prefix(run_id, config_id, max_age_s=PROGRESS_PREFIX_AGE_S)
        progress = _agent_progress(session, f"{prefix}agent/progress.json") if prefix else {}
        step = f"{progress.get('step', 0)}/{progress.get('steps', 0)}" if progress.get("steps") else "-"
        table.add_row(
            *(
                Text(str(v))
                for v in (
                    config_id,
                    statuses.get(config_id, "PLANNED"),
                    progress.get("stage", "-"),
                    step,
                    progress.get("current") or "-",
                )
            )
        )
    table.caption = f"{time.monotonic() - started:.0f} s elapsed"
    return table


@dataclass
class ProgressLines:
    """Progress where no live table can redraw (a log, a pipe): one stderr line per change."""

    session: Any
    configs: list[str]
    started: float
    shown: dict[str, str] = field(default_factory=dict)

    def poll(self, run_id: str) -> None:
        run = _safe_run(self.session, run_id)
        statuses = {c.get("config_id"): c.get("status", "") for c in run.get("configs", [])}
        for config_id in self.configs:
            prefix = self.session.instance_prefix(run_id, config_id, max_age_s=PROGRESS_PREFIX_AGE_S)
            progress = _agent_progress(self.session, f"{prefix}agent/progress.json") if prefix else {}
            step = f" step {progress.get('step')}/{progress.get('steps')}" if progress.get("steps") else ""
            stage = f" {progress['stage']}" if progress.get("stage") else ""
            line = f"{config_id}: {statuses.get(config_id, 'PLANNED')}{stage}{step}"
            if self.shown.get(config_id) != line:
                self.shown[config_id] = line
                elapsed = time.monotonic() - self.started
                err.print(Text(f"{elapsed:6.0f} s  {line}"), highlight=False, soft_wrap=True)


def _safe_run(session: Any, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
    """The stored run, {} before Plan recorded it; ``histograms``: each record's latency histogram too
    (kept apart in the store: the progress polls leave them out, the final --json asks for them)."""
    try:
        run: dict[str, Any] = session.services.store.get_run(run_id, histograms=histograms)
    except KeyError:
        return {}
    return run


def _check_requirements(requires: list[str], workloads: list[str], judged: bool) -> None:
    """Refuse a requirement that cannot be read before anything runs (exit 2), not after."""
    from storagebench.request.requirements import RequirementError, parse_requirement

    if requires and not judged:
        raise fail(
            "--require judges the run's results, and --stack without --wait only starts the run: add "
            "--wait, or once it ended ask `storagebench recommend --stack NAME --run ID --require ...`"
        )
    for text in requires:
        try:
            parse_requirement(text, workloads)
        except RequirementError as exc:
            raise fail(f"--require {exc}") from None


def run(
    suite: Annotated[Path, typer.Option("--suite", "-s", help="request file (JSON)")],
    local: Annotated[
        bool, typer.Option("--local", help="run the workflow on this machine (moto + agent)")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="print the run record with its results as JSON (each record's latency histogram too)",
        ),
    ] = False,
    capacity_gib: Annotated[float, typer.Option(help="backing file of each emulated volume")] = 1.0,
    knee_seconds: Annotated[
        float, typer.Option(help="gp2/st1/sc1: a full burst bucket lasts this long")
    ] = 60.0,
    root: Annotated[Path, typer.Option(help="where local results and artifacts are kept")] = Path(
        ".storagebench"
    ),
    stack: Annotated[
        str | None, typer.Option("--stack", help="start the run on this deployed stack (its API, SigV4)")
    ] = None,
    api_url: ApiUrlOption = None,
    region: StackRegionOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="the plan, expected wall time and cost, and the guardrails; start nothing"
        ),
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="with --stack: follow the run until it ends (progress on stderr) and exit 0 when it "
            "succeeded, 1 when not (or, with --require, when no config meets them)",
        ),
    ] = False,
    poll_seconds: Annotated[
        float, typer.Option("--poll-seconds", min=1, help="with --wait: seconds between two looks")
    ] = 30.0,
    require: Annotated[
        list[str] | None,
        typer.Option(
            "--require",
            "-r",
            metavar="EXPR",
            help="local: after the run, name the cheapest config meeting this requirement, and exit 0 "
            "when one meets every --require, 1 when none does (see `storagebench recommend`); repeat for "
            "several",
        ),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key",
            help="with --stack: start at most one run for this key (its Idempotency-Key header, 1-255 "
            "printable ASCII characters): the same key and request again print the run it started, "
            "the same key with another request is refused (409)",
        ),
    ] = None,
) -> None:
    """Run a request through the benchmark workflow: on this machine (--local) or on a deployed
    stack (--stack NAME), and show the comparison (local) or the run id (stack)."""
    from storagebench.planning.local import LocalOptions
    from storagebench.request import RequestError, load_request

    if local == (stack is not None or api_url is not None):
        raise fail("give --local (this machine) or --stack NAME / --api-url URL (a deployed stack)")
    if local and idempotency_key is not None:
        raise fail("--idempotency-key goes with --stack or --api-url: a local run starts once anyway")
    if wait and (local or dry_run):
        raise fail(
            "--wait follows a run started on a stack (--stack, without --dry-run); a local run waits anyway"
        )
    try:
        request = load_request(suite)
    except RequestError as exc:
        raise fail(str(exc)) from None
    requires = list(require or [])
    _check_requirements(requires, [w.id for w in request.resolved_workloads()], local or wait)
    if local and dry_run:
        _local_dry_run(request, root, as_json)
        return
    if not local:
        from storagebench.api.errors import ApiError
        from storagebench.api.service import check_execution_input, checked_idempotency_key
        from storagebench.request.json_document import decode_json
        from storagebench.request.privilege import privileged_content

        # shell on the instance goes through the separately granted route (docs/deploy.md, Security)
        route = "/runs/privileged" if privileged_content(request) else "/runs"
        document = decode_json(suite.read_bytes())
        try:  # the API's own checks, so the answer is the same before anything is sent
            if idempotency_key is not None:
                checked_idempotency_key(idempotency_key)
            check_execution_input(document)
        except ApiError as exc:
            where = "--idempotency-key" if exc.status == 400 else str(suite)
            raise fail(f"{where}: {exc.status} {exc.code}: {exc.message}") from None
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else {}
        _run_on_stack(
            document,
            StackTarget(stack, api_url, region),
            Waiting(wait, poll_seconds, requires),
            dry_run,
            as_json,
            route,
            headers,
        )
        return
    options = LocalOptions(capacity_bytes=int(capacity_gib * (1 << 30)), knee_seconds=knee_seconds)
    _run_locally(request, json.loads(suite.read_text(encoding="utf-8")), root, options, requires, as_json)


def _run_locally(
    request: BenchmarkRequest,
    document: dict[str, Any],
    root: Path,
    options: LocalOptions,
    requires: list[str],
    as_json: bool,
) -> None:
    """The workflow on this machine, its progress on stderr, then the run and its results."""
    from storagebench_local.session import LocalSession

    with LocalSession(root, options) as session:
        for notice in session.notices:
            err.print(Text.assemble(("note: ", "yellow"), notice), highlight=False)
        run_id, arn = session.start(document)
        started = time.monotonic()
        configs = [c.id for c in request.configs]
        # Progress goes to stderr, so stdout holds only the answer (the JSON with --json)
        if err.is_terminal:
            with Live(
                _progress_table(session, run_id, configs, started), console=err, refresh_per_second=2
            ) as live:
                execution = session.wait(
                    run_id,
                    arn,
                    on_poll=lambda rid: live.update(_progress_table(session, rid, configs, started)),
                )
        else:
            lines = ProgressLines(session, configs, started)
            err.print(Text(f"run {run_id} started"), highlight=False, soft_wrap=True)
            execution = session.wait(run_id, arn, on_poll=lines.poll)
        record = _safe_run(session, run_id, histograms=as_json)  # --json prints everything measured
        answer: Recommendation | None = None
        if requires:
            from storagebench.cli.recommend_cmd import local_recommendation

            assert session.services is not None  # set when the session started the run
            answer = local_recommendation(session.services.store, run_id, requires, "this session's results")
    _show_local_run(run_id, execution, record, answer, as_json)


def _show_local_run(
    run_id: str, execution: Any, record: dict[str, Any], answer: Recommendation | None, as_json: bool
) -> None:
    """The run and its results (and with --require, the recommendation); exit 1 when the run
    failed or no config meets every --require."""
    if as_json:
        print_json(
            {
                "run_id": run_id,
                "execution": {
                    "status": execution.status,
                    "error": execution.error,
                    "cause": execution.cause,
                    "wall_s": round(execution.wall_s, 1),
                },
                **record,
                **({"recommendation": answer.model_dump(mode="json")} if answer is not None else {}),
            }
        )
    else:
        from storagebench.cli import render

        render.run_summary(out, run_id, execution, record)
        if answer is not None:
            from storagebench.cli.recommend_cmd import show_recommendation

            show_recommendation(out, answer)
    if execution.status != "SUCCEEDED" or (execution.output or {}).get("status") != "SUCCEEDED":
        raise typer.Exit(1)
    if answer is not None and answer.recommended is None:
        err.print(Text("no config meets every --require: exit 1"), highlight=False)
        raise typer.Exit(1)


@dataclass(frozen=True)
class StackTarget:
    stack: str | None
    api_url: str | None
    region: str | None


@dataclass(frozen=True)
class Waiting:
    wait: bool
    poll_s: float
    requires: list[str]


def _run_on_stack(
    document: dict[str, Any],
    target: StackTarget,
    waiting: Waiting,
    dry_run: bool,
    as_json: bool,
    route: str = "/runs",
    headers: dict[str, str] | None = None,
) -> None:
    """POST /runs (or /runs/privileged): the run id and execution ARN, or with --dry-run the preview;
    with --wait, the run followed to its end."""
    from storagebench.cli.stack_client import stack_api
    from storagebench.cli.stack_runs import finish_waiting, wait_for_run

    with stack_api(target.stack, target.api_url, target.region) as api:
        _, answer = api.call("POST", route, {"dry_run": dry_run} if dry_run else None, document, headers)
        if waiting.wait:
            how = "was started by this idempotency key already" if answer.get("replayed") else "started"
            err.print(Text(f"run {answer['run_id']} {how}"), highlight=False, soft_wrap=True)
            detail = wait_for_run(api, answer["run_id"], waiting.poll_s)
            finish_waiting(api, answer["run_id"], detail, waiting.requires, as_json)
            return
    if as_json:
        print_json(answer)
        return
    if dry_run:
        show_preview(answer["preview"])
        return
    how = "was started by this idempotency key already" if answer.get("replayed") else "started"
    out.print(
        Text(f"run {answer['run_id']} {how}: {answer['execution_arn']}"), highlight=False, soft_wrap=True
    )
    out.print(
        Text(f"follow it: storagebench results --stack {target.stack or '...'} --run {answer['run_id']}"),
        highlight=False,
        soft_wrap=True,
    )


def _local_dry_run(request: BenchmarkRequest, root: Path, as_json: bool) -> None:
    """The preview the stack's dry run gives (same code: ``planning.preview``), with local mode's limits."""
    from storagebench.planning.preview import guardrail_prices, preview_request
    from storagebench.quotas.models import QuotaAnswerError
    from storagebench.quotas.ports import QuotaPolicy
    from storagebench.quotas.recorded import RecordedQuotas
    from storagebench_local.session import LocalSession

    book, _ = guardrail_prices(request.region)
    # The recorded answer stands for the account; local mode launches nothing on AWS, so an excess
    # is a note here, where a stack's dry run and Plan refuse the run.
    try:
        quotas = QuotaPolicy(RecordedQuotas(), refuse=False)
    except QuotaAnswerError as exc:  # the bundled file edited out of shape: named, exit 2
        raise fail(f"the recorded quota answer: {exc}") from None
    preview = preview_request(request, LocalSession(root).guardrails, book, quotas)
    document = preview.model_dump(mode="json")
    document["notes"] = [*document["notes"], LOCAL_DRY_RUN_NOTE]
    if as_json:
        print_json({"dry_run": True, "local": True, "preview": document})
        return
    show_preview(document)


LOCAL_DRY_RUN_NOTE = (
    "local mode: nothing is billed; the cost is what the run would cost on AWS, and the wall time "
    "counts the instance's boot and setup, which an emulated instance skips"
)


def show_preview(preview: dict[str, Any]) -> None:
    """A dry run for people: expected wall time and cost, each config, the notes, limits exceeded (exit 2)."""
    estimate = preview["estimate"]
    floor = "" if estimate["complete"] else "at least "
    out.print(
        Text(
            f"{preview['suite']}: {len(preview['configs'])} config(s), "
            f"{preview['max_concurrency']} at once; expected {floor}{estimate['wall_hours']:.1f} h "
            f"and {floor}${estimate['total_usd']:,.2f}, at most ${estimate['upper_bound_usd']:,.2f} "
            f"if every resource lived until it expires ({estimate['upper_bound_hours']:g} h; "
            f"{estimate['price_source']} prices of {estimate['price_date']})"
        ),
        highlight=False,
    )
    for config in preview["configs"]:
        out.print(
            Text(
                f"  {config['id']}: {config['machines']}, {len(config['steps'])} step(s), "
                f"{config['expected_hours']:.2f} h expected, ${config['run_usd']:,.2f}"
            ),
            highlight=False,
        )
    print_matrices(out, preview.get("matrices", []))
    print_quotas(out, preview.get("vcpu_quotas"))
    print_network(out, err, preview.get("network", []))
    for knee in preview.get("knees", []):
        out.print(Text.assemble(("knee: ", "cyan"), knee["message"]), highlight=False)
    for note in preview["notes"] + estimate["notes"] + estimate["duration"]["notes"]:
        err.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
    for problem in preview["problems"]:
        err.print(Text.assemble(("over a limit: ", "bold red"), problem["message"]), highlight=False)
    if preview["problems"]:
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command()(run)
