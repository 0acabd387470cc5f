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
from rich.text import Text

from storagebench.cli import listing
from storagebench.cli.console import err, fail, out, print_json
from storagebench.cli.listing import FORMAT_HELP, Field, Listing, output_format
from storagebench.cli.matrix_lines import print_matrices

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
    from storagebench.core.guardrails import Guardrails
    from storagebench.costs.spot_estimate import request_estimates, spot_notes, with_spot
    from storagebench.planning.duration import estimate_duration

    duration = estimate_duration(request, request.max_concurrency or len(request.configs))
    # Spot where the request buys it (and DEFAULT_PURCHASE, the stack's default, when set here)
    instances = request_estimates(request, Guardrails.from_env().default_purchase, request.region)
    types = {c.id: c.instance_type for c in request.configs}

    def usd(config_id: str, hours: float) -> float:
        priced = with_spot(costs[config_id].for_hours(hours), instances[config_id], types[config_id])
        return round(priced.usd, 6)

    return {
        "wall_hours": round(duration.wall_hours, 6),
        "min_wall_hours": round(duration.min_wall_hours, 6),
        "concurrency": duration.concurrency,
        "complete": duration.complete,
        "notes": duration.notes,
        "spot_notes": spot_notes(instances.values()),
        "configs": {
            c.config_id: {
                "hours": round(c.hours, 6),
                "usd": usd(c.config_id, c.hours),
                "min_hours": round(c.min_hours, 6),
                "min_usd": usd(c.config_id, c.min_hours),
                "purchase": instances[c.config_id].purchase,
                "spot_usd_per_hour": instances[c.config_id].spot_usd,
            }
            for c in duration.configs
        },
    }


def cost_listing(document: dict[str, Any]) -> Listing:
    """One row per config and the total of each cost column (a partial figure says so)."""
    hours = document["hours"]
    expected = document.get("expected")
    gateways = any("gateway_monthly_usd" in entry for entry in document["configs"])
    fields = [
        Field("config", "id", priority=9),
        Field("instance", "id", priority=5),
        Field("monthly", "number", priority=8),
        Field("vs baseline", "number", priority=7),
        Field("storage only", "number", priority=7),
        Field("storage vs baseline", "number", priority=7),
    ]
    if gateways:
        fields += [Field("gateway monthly", "number", priority=4), Field("gateway vs baseline", priority=3)]
    if expected is not None:
        fields += [
            Field("expected h", "number", priority=6),
            Field("expected", "number", priority=6),
        ]
    hours_name = f"{hours:g} h" if hours is not None else None
    if hours_name is not None:
        fields.append(Field(hours_name, "number", priority=6))
    fields.append(Field("prices", priority=2))
    listing = Listing(
        f"{document['suite']}: {document['region']}, USD, 730 h per month; baseline {document['baseline']}",
        fields,
    )
    incomplete = not all(entry["complete"] for entry in document["configs"])
    partial = " (incomplete)" if incomplete else ""
    total: dict[str, Any] = {
        "config": "total",
        "monthly": _usd(document_total(document, "monthly_usd")) + partial,
        "storage only": _usd(document_total(document, "storage_monthly_usd")) + partial,
    }
    for entry in document["configs"]:
        baseline = entry["id"] == document["baseline"]
        row: dict[str, Any] = {
            "config": entry["id"],
            "instance": entry["instance_type"],
            "monthly": _usd(entry["monthly_usd"]) + ("" if entry["complete"] else " (incomplete)"),
            "vs baseline": "baseline" if baseline else _pct(entry["delta_monthly_pct"]),  # "-": reason below
            "storage only": _usd(entry["storage_monthly_usd"])
            + (" + instance store" if entry.get("storage_in_instance_price") else ""),
            "storage vs baseline": "baseline" if baseline else _pct(entry["delta_storage_monthly_pct"]),
            "prices": f"{entry['price_source']} {entry['price_date'] or '-'}",
        }
        if gateways:
            gateway = entry.get("gateway_monthly_usd")
            gateway_delta = "baseline" if baseline else _pct(entry.get("delta_gateway_monthly_pct"))
            row["gateway monthly"] = None if gateway is None else _usd(gateway)
            row["gateway vs baseline"] = None if gateway is None else gateway_delta
        if expected is not None:
            run = expected["configs"][entry["id"]]
            row["expected h"] = f"{run['hours']:.2f}"
            row["expected"] = _usd(run["usd"])
        if hours_name is not None:
            row[hours_name] = _usd(entry["hours_usd"])
        listing.add(**row)
    if gateways:
        total["gateway monthly"] = _usd(sum(e.get("gateway_monthly_usd") or 0.0 for e in document["configs"]))
    if expected is not None:
        total["expected"] = _usd(sum(run["usd"] for run in expected["configs"].values())) + partial
    if hours_name is not None:
        total[hours_name] = _usd(document_total(document, "hours_usd")) + partial
    listing.total = total
    return listing


def totals(document: dict[str, Any]) -> dict[str, Any]:
    """The sum of every config's figures (a lower bound when some price is missing: ``complete``)."""
    found: dict[str, Any] = {
        "monthly_usd": round(document_total(document, "monthly_usd"), 6),
        "complete": all(entry["complete"] for entry in document["configs"]),
    }
    if document["hours"] is not None:
        found["hours_usd"] = round(document_total(document, "hours_usd"), 6)
    if document.get("expected") is not None:
        found["expected_usd"] = round(sum(run["usd"] for run in document["expected"]["configs"].values()), 6)
    return found


def document_total(document: dict[str, Any], key: str) -> float:
    return float(sum(entry[key] or 0.0 for entry in document["configs"]))


def _render(document: dict[str, Any], costs: dict[str, ConfigCost], columns: str | None) -> None:
    from storagebench.costs.monthly import unverified_prices

    expected = document.get("expected")
    listing.show(out, cost_listing(document), "table", None, columns)
    print_matrices(out, document["matrices"])
    if expected is not None:
        floor = "" if expected["complete"] else "at least "
        total = sum(run["usd"] for run in expected["configs"].values())
        fewest = sum(run["min_usd"] for run in expected["configs"].values())
        adaptive = expected["min_wall_hours"] < expected["wall_hours"]
        hours = (
            f"{expected['min_wall_hours']:.1f}..{expected['wall_hours']:.1f}"
            if adaptive
            else f"{expected['wall_hours']:.1f}"
        )
        usd = f"{_usd(fewest)}..{_usd(total)}" if adaptive else _usd(total)
        out.print(
            Text(
                f"expected run: {floor}{hours} h wall time with "
                f"{expected['concurrency']} config(s) at once, {floor}{usd}"
                + (" (adaptive repetitions: every series at its min .. at its max)" if adaptive else "")
            ),
            highlight=False,
        )
        for line in expected["notes"]:
            out.print(Text.assemble(("duration: ", "yellow"), line), highlight=False)
        for line in expected["spot_notes"]:
            out.print(Text.assemble(("Spot: ", "yellow"), line), highlight=False)
    parts = Listing(
        "components",
        [
            Field("config", "id", priority=9),
            Field("component", priority=8),
            Field("monthly", "number", priority=9),
        ],
    )
    for config_id, cost in costs.items():
        for c in cost.components:
            flag = " *" if c.unverified else ""
            parts.add(config=config_id, component=c.detail, monthly=_usd(c.monthly_usd) + flag)
    unverified = unverified_prices(costs)  # as `prices show` flags them: * and why
    if unverified:
        parts.caption = "* unverified price (why: below)"
    listing.print_table(out, parts)
    for line in unverified:
        out.print(Text.assemble(("unverified: ", "yellow"), line), highlight=False)
    for config_id, cost in costs.items():
        for line in cost.unpriced:
            out.print(Text.assemble(("not priced: ", "yellow"), f"{config_id}: {line}"), highlight=False)
        for line in cost.notes:
            out.print(Text.assemble(("note: ", "dim"), f"{config_id}: {line}"), highlight=False)
        for line in cost.missing_prices:
            err.print(Text.assemble(("missing price: ", "bold red"), f"{config_id}: {line}"), highlight=False)
    out.print(
        Text.assemble(
            ("storage only: ", "dim"),
            "each config's targets alone (volumes, file systems, their IOPS and throughput charges), "
            "without instances and root volumes",
        ),
        highlight=False,
    )
    for entry in document["configs"]:
        if entry.get("delta_monthly_reason"):
            out.print(
                Text.assemble(("vs baseline: ", "yellow"), f"{entry['id']}: {entry['delta_monthly_reason']}")
            )
        storage_reason = entry.get("delta_storage_monthly_reason")
        if storage_reason and storage_reason != entry.get("delta_monthly_reason"):
            out.print(Text.assemble(("storage vs baseline: ", "yellow"), f"{entry['id']}: {storage_reason}"))


REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}$")


def cost(
    suite: Annotated[Path, typer.Option("--suite", "-s", help="request file (JSON)")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable result (--format json)")] = False,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=FORMAT_HELP + " (jsonl and csv: one line per config, unformatted)"),
    ] = None,
    columns: Annotated[
        str | None, typer.Option("--columns", help="the table's columns, comma-separated")
    ] = None,
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
    from storagebench.request.matrix import summarize_matrices

    chosen = output_format(fmt, as_json)
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
    document["matrices"] = [m.model_dump(mode="json") for m in summarize_matrices(request)]
    if expected:
        document["expected"] = expected_section(request, costs)
    document["total"] = totals(document)
    if chosen == "json":
        print_json(document)
    elif chosen == "table":
        _render(document, costs, columns)
    else:
        rows = [
            {k: v for k, v in entry.items() if not isinstance(v, list | dict)}
            for entry in document["configs"]
        ]
        names = list(dict.fromkeys(k for row in rows for k in row))
        if chosen == "jsonl":
            listing.write_jsonl(rows)
        else:
            listing.write_csv(rows, names)
    if not document["complete"]:
        raise typer.Exit(EXIT_MISSING_PRICES)


def register(app: typer.Typer) -> None:
    app.command()(cost)
