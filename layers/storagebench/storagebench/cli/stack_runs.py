"""A run on a deployed stack, followed from the terminal: ``run --stack --wait`` and ``cancel``.

``--wait`` polls GET /runs/{id} (progress on stderr, one line each time something changes) until the
run ends, then exits like a local run: 0 when it SUCCEEDED, 1 otherwise, and with ``--require`` 1
when no config meets every requirement (GET /runs/{id}/recommendation). ``cancel`` is DELETE
/runs/{id}: the stack stops the execution and releases what the run launched, by its tags.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.text import Text

from storagebench.cli.console import err, fail, out, print_json
from storagebench.cli.stack_client import ApiUrlOption, StackRegionOption

# A run (store) or its execution (Step Functions) still going; anything else is how it ended
ACTIVE = frozenset({"RUNNING", "STOPPING", "PENDING", "PLANNED", "PENDING_REDRIVE"})
DEFAULT_POLL_S = 30.0


def progress_line(detail: dict[str, Any]) -> str:
    """``RUNNING: gp2 RUNNING, gp3 COLLECTED``: the run's status and each config's."""
    configs = ", ".join(f"{c.get('config_id')} {c.get('status')}" for c in detail.get("configs") or [])
    return f"{detail.get('status')}" + (f": {configs}" if configs else "")


def wait_for_run(
    api: Any,
    run_id: str,
    poll_s: float,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """Poll GET /runs/{id} until the run is no longer active; its last detail. ``sleep`` and
    ``clock`` default to this module's ``time`` (looked up at each call, so a test can replace it)."""
    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    started = clock()
    shown = None
    while True:
        _, detail = api.call("GET", f"/runs/{run_id}")
        line = progress_line(detail)
        if line != shown:
            err.print(Text(f"{clock() - started:6.0f} s  {line}"), highlight=False, soft_wrap=True)
            shown = line
        if str(detail.get("status")) not in ACTIVE:
            return dict(detail)
        sleep(poll_s)


def finish_waiting(api: Any, run_id: str, detail: dict[str, Any], requires: list[str], as_json: bool) -> None:
    """The run's end as a local run shows it: its status, its costs, the recommendation; exit 0/1."""
    from storagebench.cli import render
    from storagebench.cli.recommend_cmd import show_recommendation
    from storagebench.costs.recommend import Recommendation

    status = str(detail.get("status"))
    answer = None
    if requires and status in {"SUCCEEDED", "PARTIAL"}:
        _, document = api.call("GET", f"/runs/{run_id}/recommendation", {"require": ",".join(requires)})
        answer = Recommendation.model_validate(document)
    if as_json:
        print_json({**detail, **({"recommendation": answer.model_dump(mode="json")} if answer else {})})
    else:
        style = "bold green" if status == "SUCCEEDED" else "bold red"
        out.print(Text(f"run {run_id}: {status}", style=style), highlight=False, soft_wrap=True)
        run = detail.get("run") or {}
        render.economics(out, run)
        if answer is not None:
            show_recommendation(out, answer)
    if status != "SUCCEEDED":
        raise typer.Exit(1)
    if answer is not None and answer.recommended is None:
        err.print(Text("no config meets every --require: exit 1"), highlight=False)
        raise typer.Exit(1)


def cancel(
    run_id: Annotated[str, typer.Argument(help="the run (as `storagebench results --stack` lists it)")],
    stack: Annotated[str | None, typer.Option("--stack", help="the deployed stack running it")] = None,
    api_url: ApiUrlOption = None,
    region: StackRegionOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
) -> None:
    """Stop a run on a stack (DELETE /runs/{id}): the execution stops and everything the run launched
    is released by its tags. Exit 2 when the run is unknown or not running. (A local run stops with
    Ctrl-C; `storagebench cleanup --run ID` removes what a killed one left.)"""
    from storagebench.cli.stack_client import stack_api

    if stack is None and api_url is None:
        raise fail("cancel stops a run on a deployed stack: give --stack NAME or --api-url URL")
    with stack_api(stack, api_url, region) as api:
        _, answer = api.call("DELETE", f"/runs/{run_id}")
    if as_json:
        print_json(answer)
        return
    cleanup = {"started": "cleanup started", "not_needed": "nothing was launched"}.get(
        str(answer.get("cleanup")), str(answer.get("cleanup"))
    )
    out.print(Text(f"run {answer['run_id']}: {answer['status']}, {cleanup}"), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command()(cancel)
