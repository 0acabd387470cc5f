"""``storagebench recommend --run ID --require EXPR``: the cheapest config meeting every requirement.

``--suite FILE`` instead judges a request's configs on what the store already measured (a dry
recommendation from history: nothing is launched).

Exit status, for CI pipelines: 0 when a config meets every requirement, 1 when none does, 2 for
bad input (a requirement that cannot be read, an unknown run, none given nor in the request).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from storagebench.cli import listing
from storagebench.cli.console import err, fail, out, print_json
from storagebench.cli.listing import FORMAT_HELP, Field, Listing, output_format
from storagebench.cli.results_cmd import ROOT_OPTION, local_store
from storagebench.cli.stack_client import ApiUrlOption, AskStackOption, StackRegionOption
from storagebench.costs.recommend import ConfigVerdict, Recommendation

EXIT_NONE_MEETS = 1

REQUIRE_HELP = (
    "WORKLOAD[:DIRECTION]:METRIC OP VALUE, e.g. std-randread-4k:iops>=3500 or "
    "std-randread-4k:read:p95_ms<2 (metrics: iops, mibps, lat_mean_ms, p50_ms, p95_ms, p99_ms, p999_ms, "
    "real_s; OP: < <= > >=); repeat for several"
)


def _verdict_text(verdict: ConfigVerdict) -> str:
    lines = []
    for check in verdict.checks:
        mark = "meets" if check.met else "FAILS"
        where = f" ({check.measurement})" if check.measurement else ""
        lines.append(f"{mark} {check.requirement}{where}: {check.reason}")
    return "\n".join(lines)


def _monthly(verdict: ConfigVerdict) -> str:
    if verdict.monthly_usd is None:
        return "unpriced"
    return f"${verdict.monthly_usd:,.2f}" + ("*" if verdict.cost_partial else "")


ROLE_STYLE = {"cheapest": "green", "also": "", "fails": "red"}


def _verdicts(answer: Recommendation) -> list[tuple[ConfigVerdict, str]]:
    """Each config with its role: the recommended one, the runners-up, the others (each by cost)."""
    rows: list[tuple[ConfigVerdict, str]] = []
    if answer.recommended is not None:
        rows.append((answer.recommended, "cheapest"))
    rows += [(v, "also") for v in answer.runners_up]
    rows += [(v, "fails") for v in answer.failed]
    return rows


def verdict_listing(answer: Recommendation) -> Listing:
    """One row per config for the table: the config and its cost never cut, the reasons folded."""
    table = Listing(
        None,
        [
            Field("config", "id", priority=10),
            Field("monthly", "number", priority=9),
            Field("role", priority=8),
            Field("why", priority=7),
        ],
    )
    for verdict, role in _verdicts(answer):
        table.add(config=verdict.config_id, monthly=_monthly(verdict), role=role, why=_verdict_text(verdict))
    return table


VERDICT_COLUMNS = ("config_id", "role", "meets_all", "monthly_usd", "cost_partial", "emulated", "checks")


def verdict_rows(answer: Recommendation) -> list[dict[str, Any]]:
    """One row per config for jsonl/csv: unformatted figures, every check (JSON in a CSV cell)."""
    return [
        {
            "config_id": verdict.config_id,
            "role": role,
            "meets_all": verdict.meets_all,
            "monthly_usd": verdict.monthly_usd,
            "cost_partial": verdict.cost_partial,
            "emulated": verdict.emulated,
            "checks": [check.model_dump(mode="json") for check in verdict.checks],
        }
        for verdict, role in _verdicts(answer)
    ]


def show_recommendation(console: Console, answer: Recommendation) -> None:
    """The answer for people: the run id on a line of its own (copyable whole), the verdict, then
    one row per config (recommended, runners-up, the others, each by cost) that fits the terminal."""
    if answer.emulated:
        console.print(Text.assemble(("emulated: ", "bold yellow"), answer.notes[0]), highlight=False)
    where = f"run {answer.run_id}" if answer.run_id else "from stored history (nothing launched)"
    console.print(Text(where), highlight=False, soft_wrap=True)
    console.print(Text(f"requirements: {', '.join(answer.requirements)}"), highlight=False)
    style = "bold green" if answer.recommended is not None else "bold red"
    console.print(Text(answer.summary, style=style), highlight=False)
    listing.print_table(console, verdict_listing(answer))
    for note in answer.notes[1:] if answer.emulated else answer.notes:
        console.print(Text.assemble(("note: ", "yellow"), note), highlight=False, soft_wrap=False)
    if any(v.cost_partial for v, _ in _verdicts(answer)):
        console.print(Text("* cost partly unpriced"), highlight=False)


def exit_code(answer: Recommendation) -> int:
    return 0 if answer.recommended is not None else EXIT_NONE_MEETS


def local_recommendation(store: Any, run: str, requires: list[str], where: str) -> Recommendation:
    """The recommendation for a run of ``store`` (a ``ResultsStore``); bad input exits 2."""
    from storagebench.costs.recommend_run import NoRequirementsError, recommend_stored_run
    from storagebench.request.requirements import RequirementError

    try:
        stored = store.get_run(run)
    except KeyError:
        raise fail(f"no run {run!r} in {where}") from None
    try:
        return recommend_stored_run(stored, requires)
    except RequirementError as exc:
        raise fail(f"--require {exc}") from None
    except NoRequirementsError as exc:
        raise fail(f"{exc} (--require EXPR)") from None


class _ApiHistory:
    """``MetricHistory`` over a stack's ``GET /results`` (every page), for ``--suite --stack``."""

    def __init__(self, api: Any) -> None:
        self.api = api

    def metric_history(
        self,
        storage_option: str,
        workload: str,
        variant: Any,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 1000,
        *,
        suite: str | None = None,
        fields: Sequence[str] | None = None,  # the API answers whole records: a superset
    ) -> list[dict[str, Any]]:
        from storagebench.cli.stack_client import results_points

        query = {"storage": storage_option, "workload": workload, "variant": variant, "phase": phase}
        query |= {"direction": direction, "since": since, "until": until, "suite": suite}
        return results_points(self.api, query)[:limit]


def _since(value: str | None) -> str:
    from datetime import UTC, datetime, timedelta

    from storagebench.core.clock import parse_iso

    if value is None:
        return (datetime.now(UTC) - timedelta(days=30)).strftime("%Y-%m-%d")
    try:
        parse_iso(value)
    except ValueError:
        raise fail(f"--since {value!r} is not a date: give an ISO date such as 2026-11-01") from None
    return value


def history_recommendation(
    suite: Path, requires: list[str], since: str, reader: Any
) -> tuple[Recommendation, list[str]]:
    """The dry recommendation for the request in ``suite``; bad input exits 2."""
    from storagebench.costs.recommend_history import recommend_from_history
    from storagebench.costs.recommend_run import NoRequirementsError
    from storagebench.request import RequestError, load_request
    from storagebench.request.requirements import RequirementError

    try:
        request = load_request(suite)
    except RequestError as exc:
        raise fail(f"{suite}: {exc}") from None
    try:
        answer, sources = recommend_from_history(request, reader, since=since, requirements=requires)
    except RequirementError as exc:
        raise fail(f"--require {exc}") from None
    except NoRequirementsError as exc:
        raise fail(f"{exc} (--require EXPR)") from None
    return answer, [s.text() for s in sources if s.run_id is not None]


def recommend(
    run: Annotated[
        str | None, typer.Option("--run", help="the run (as `storagebench results` lists it)")
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite", "-s", help="a request file: judge its configs on stored history, launching nothing"
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="with --suite: history from this ISO date (default: 30 days ago)"),
    ] = None,
    require: Annotated[
        list[str] | None,
        typer.Option(
            "--require", "-r", metavar="EXPR", help=REQUIRE_HELP + "; default: the request's requirements"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the whole answer (--format json)")] = False,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=FORMAT_HELP + " (jsonl and csv: one line per config, unformatted)"),
    ] = None,
    local: Annotated[bool, typer.Option("--local", help="a local run (the default)")] = False,
    root: Annotated[Path, ROOT_OPTION] = Path(".storagebench"),
    stack: AskStackOption = None,
    api_url: ApiUrlOption = None,
    region: StackRegionOption = None,
) -> None:
    """Name the cheapest config whose 95 % confidence bound meets every requirement, the runners-up
    and why each other config failed: of a run (--run), or of a request's configs on the newest
    stored run of each (--suite FILE, a dry recommendation). Exit 0 when a config meets them all,
    1 when none does, 2 on bad input."""
    chosen = output_format(fmt, as_json)
    requires = list(require or [])
    on_stack = stack is not None or api_url is not None
    if local and on_stack:
        raise fail("give --local (this machine's runs) or --stack NAME / --api-url URL, not both")
    if (run is None) == (suite is None):
        raise fail("give exactly one of --run RUN_ID or --suite FILE")
    if since is not None and suite is None:
        raise fail("--since goes with --suite FILE")
    sources: list[str] = []
    if suite is not None:
        start = _since(since)
        if on_stack:
            from storagebench.cli.stack_client import stack_api

            with stack_api(stack, api_url, region) as api:
                answer, sources = history_recommendation(suite, requires, start, _ApiHistory(api))
        else:
            with local_store(root) as store:
                answer, sources = history_recommendation(suite, requires, start, store)
    elif on_stack:
        from storagebench.cli.stack_client import stack_api

        with stack_api(stack, api_url, region) as api:
            # One parameter joined with commas: what API Gateway makes of require=A&require=B
            query = {"require": ",".join(requires)} if requires else None
            _, document = api.call("GET", f"/runs/{run}/recommendation", query)
        answer = Recommendation.model_validate(document)
    else:
        assert run is not None
        with local_store(root) as store:
            answer = local_recommendation(store, run, requires, f"the local results under {root}")
    if chosen == "json":
        print_json({**answer.model_dump(mode="json"), **({"sources": sources} if suite else {})})
    elif chosen == "jsonl":
        listing.write_jsonl(verdict_rows(answer))
    elif chosen == "csv":
        listing.write_csv(verdict_rows(answer), VERDICT_COLUMNS)
    else:
        show_recommendation(out, answer)
        for line in sources:
            out.print(Text.assemble(("from: ", "dim"), line), highlight=False, soft_wrap=True)
    if answer.recommended is None:
        err.print(Text("no config meets every requirement: exit 1"), highlight=False)
    raise typer.Exit(exit_code(answer))


def register(app: typer.Typer) -> None:
    app.command()(recommend)
