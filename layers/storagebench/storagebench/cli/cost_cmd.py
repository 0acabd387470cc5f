"""``storagebench cost``: what each config of a request costs, without launching anything.

The API's dry run prices a request the same way (``costs.document.cost_document``). Prices come
from the bundled, dated snapshot (``SnapshotPriceBook``); every figure says which prices it used and
how old the oldest one is. Exit status: 0 priced, 1 priced but some prices were missing (those
totals are lower bounds, and say so), 2 invalid input.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from storagebench.cli.console import err, fail, out, print_json

if TYPE_CHECKING:
    from storagebench.costs.monthly import ConfigCost
    from storagebench.prices.book import PriceBook
    from storagebench.request.model import BenchmarkRequest

EXIT_MISSING_PRICES = 1


def price_book(region: str) -> PriceBook:
    """The book the command prices with (tests replace this function)."""
    from storagebench.prices.snapshot import SnapshotPriceBook

    return SnapshotPriceBook(region)


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) < 0.05:
        return "0 %"
    return f"{value:+.1f} %"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def expected_section(request: BenchmarkRequest, costs: dict[str, ConfigCost]) -> dict[str, Any]:
    """Each config priced for its expected duration (``planning.duration``) and the run's wall time,
    with the request's max_concurrency (all configs at once without one; a stack may cap it)."""
    from storagebench.planning.duration import estimate_duration

    duration = estimate_duration(request, request.max_concurrency or len(request.configs))
    return {
        "wall_hours": round(duration.wall_hours, 6),
        "concurrency": duration.concurrency,
        "complete": duration.complete,
        "notes": duration.notes,
        "configs": {
            c.config_id: {
                "hours": round(c.hours, 6),
                "usd": round(costs[c.config_id].for_hours(c.hours).usd, 6),
            }
            for c in duration.configs
        },
    }


def _render(document: dict[str, Any], costs: dict[str, ConfigCost]) -> None:
    hours = document["hours"]
    expected = document.get("expected")
    columns = ["config", "instance", "monthly", "vs baseline"]
    gateways = any("gateway_monthly_usd" in entry for entry in document["configs"])
    if gateways:
        columns += ["gateway monthly", "gateway vs baseline"]
    if expected is not None:
        columns += ["expected h", "expected"]
    if hours is not None:
        columns.append(f"{hours:g} h")
    columns.append("prices")
    table = Table(
        *columns,
        title=(
            f"{document['suite']}: {document['region']}, USD, 730 h per month; "
            f"baseline {document['baseline']}"
        ),
        title_justify="left",
    )
    for entry in document["configs"]:
        monthly = _usd(entry["monthly_usd"]) + ("" if entry["complete"] else " (incomplete)")
        delta = "baseline" if entry["id"] == document["baseline"] else _pct(entry["delta_monthly_pct"])
        row = [entry["id"], entry["instance_type"], monthly, delta]
        if gateways:
            gateway = entry.get("gateway_monthly_usd")
            is_baseline = entry["id"] == document["baseline"]
            gateway_delta = "baseline" if is_baseline else _pct(entry.get("delta_gateway_monthly_pct"))
            row += ["-", "-"] if gateway is None else [_usd(gateway), gateway_delta]
        if expected is not None:
            run = expected["configs"][entry["id"]]
            row += [f"{run['hours']:.2f}", _usd(run["usd"])]
        if hours is not None:
            row.append(_usd(entry["hours_usd"]))
        row.append(f"{entry['price_source']} {entry['price_date'] or '-'}")
        table.add_row(*(Text(str(v)) for v in row))
    out.print(table)
    if expected is not None:
        floor = "" if expected["complete"] else "at least "
        total = sum(run["usd"] for run in expected["configs"].values())
        out.print(
            Text(
                f"expected run: {floor}{expected['wall_hours']:.1f} h wall time with "
                f"{expected['concurrency']} config(s) at once, {floor}{_usd(total)}"
            ),
            highlight=False,
        )
        for line in expected["notes"]:
            out.print(Text.assemble(("duration: ", "yellow"), line), highlight=False)
    parts = Table("config", "component", "monthly", title="components", title_justify="left")
    for config_id, cost in costs.items():
        for c in cost.components:
            parts.add_row(Text(config_id), Text(c.detail), Text(_usd(c.monthly_usd)))
    out.print(parts)
    for config_id, cost in costs.items():
        for line in cost.unpriced:
            out.print(Text.assemble(("not priced: ", "yellow"), f"{config_id}: {line}"), highlight=False)
        for line in cost.notes:
            out.print(Text.assemble(("note: ", "dim"), f"{config_id}: {line}"), highlight=False)
        for line in cost.missing_prices:
            err.print(Text.assemble(("missing price: ", "bold red"), f"{config_id}: {line}"), highlight=False)


REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}$")


def cost(
    suite: Annotated[Path, typer.Option("--suite", "-s", help="request file (JSON)")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable result")] = False,
    hours: Annotated[
        float | None, typer.Option("--hours", min=0, help="also price keeping each config this many hours")
    ] = None,
    expected: Annotated[
        bool,
        typer.Option(
            "--expected",
            help="also price each config for its expected duration and show the run's wall time",
        ),
    ] = False,
    region: Annotated[
        str | None, typer.Option("--region", help="price in this region (default: the request's)")
    ] = None,
) -> None:
    """Price a request without launching anything: monthly cost per config, its parts, and the delta
    against the baseline (exit 1 when some prices are missing, 2 on invalid input)."""
    from storagebench.costs.document import cost_document
    from storagebench.request import RequestError, load_request

    try:
        request = load_request(suite)
    except RequestError as exc:
        raise fail(str(exc)) from None
    if region is not None and not REGION.match(region):
        raise fail(f"--region {region!r} is not a region code such as us-east-1")
    if hours is not None and not math.isfinite(hours):
        raise fail(f"--hours {hours!r} is not a number of hours")
    book = price_book(region or request.region)
    document, costs = cost_document(request, book, hours)
    if expected:
        document["expected"] = expected_section(request, costs)
    if as_json:
        print_json(document)
    else:
        _render(document, costs)
    if not document["complete"]:
        raise typer.Exit(EXIT_MISSING_PRICES)


def register(app: typer.Typer) -> None:
    app.command()(cost)
