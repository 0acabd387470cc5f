"""``storagebench prices``: what the bundled price snapshot holds, and rebuilding it from AWS.

``storagebench.cli.main`` registers this module (``prices_cmd.register(app)``); the module
imports ``main`` only inside its commands, so importing either first works.

``prices show`` reads the snapshot offline (its date, the regions it covers, every price with
its unit and identifier, the unverified ones flagged). ``prices refresh`` reads the AWS Price
List API (AWS credentials allowed ``pricing:GetProducts``) for the regions asked and writes a
snapshot of the same structure; written over an existing snapshot file it replaces only those
regions. Exit status 2 names the problem: an uncovered region, no credentials, no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from storagebench.cli.listing import FORMAT_HELP

prices_app = typer.Typer(
    name="prices",
    help="Prices: the bundled dated snapshot, and refreshing it from the AWS Price List API.",
    no_args_is_help=True,
)

FILE_OPTION = typer.Option("--file", help="a snapshot file (default: the bundled snapshot)")
CREDENTIALS_HELP = (
    "`storagebench prices refresh` reads the AWS Price List API and needs AWS credentials allowed "
    "pricing:GetProducts (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO or an instance role)"
)


def register(app: typer.Typer) -> None:
    app.add_typer(prices_app, name="prices")


def _load(file: Path | None) -> Any:
    from pydantic import ValidationError

    from storagebench.cli.console import fail
    from storagebench.prices.snapshot import load_snapshot

    try:
        return load_snapshot(file)
    except FileNotFoundError:
        raise fail(f"no snapshot file {file}") from None
    except (ValidationError, ValueError) as exc:
        raise fail(f"{file or 'the bundled snapshot'} is not a price snapshot: {exc}") from None


def _identifier(rate: Any) -> str:
    return str(rate.usagetype or rate.group or rate.sku or "-")


def _tier(rate: Any) -> str:
    if rate.begin == 0 and rate.end is None:
        return ""
    end = "" if rate.end is None else f"{rate.end:g}"
    return f" [{rate.begin:g}-{end})"


def _table(region: str, prices: Any, as_of: str) -> Table:
    from storagebench.prices.snapshot import iter_rates

    table = Table(title=f"{region} (as of {as_of})", title_justify="left", caption_justify="left")
    table.add_column("price", no_wrap=True)
    table.add_column("USD", justify="right", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    table.add_column("identifier", min_width=12, overflow="fold")
    flagged = False
    family_shown = None
    for label, rate in iter_rates(prices):
        family, _, key = label.partition(".")
        usd = Text(f"{rate.usd:.10g}")
        if rate.unverified:
            usd.append(" *", style="yellow")
            flagged = True
        if not key:  # a single price: one row under the family's own name
            name = Text(family + _tier(rate), style="bold")
        else:
            if family != family_shown:
                table.add_row(Text(family, style="bold"))
            name = Text(f"  {key}{_tier(rate)}")
        family_shown = family
        table.add_row(name, usd, rate.unit, Text(_identifier(rate)))
    for missing in prices.missing:
        table.add_row(Text(missing.key), Text("missing", style="red"), "-", Text(missing.product))
    if flagged:
        table.caption = "* unverified (why: below)"
    return table


def _notes(prices: Any) -> list[Text]:
    """Why each unverified price is unverified, and why each missing one is missing."""
    from storagebench.prices.snapshot import iter_rates

    lines = [
        Text.assemble(("unverified ", "yellow"), f"{label}: {rate.note}")
        for label, rate in iter_rates(prices)
        if rate.unverified
    ]
    lines += [Text.assemble(("missing ", "red"), f"{m.key}: {m.reason}") for m in prices.missing]
    return lines


PRICE_COLUMNS = (
    "region",
    "as_of",
    "price",
    "begin",
    "end",
    "usd",
    "unit",
    "identifier",
    "usagetype",
    "group",
    "sku",
    "source",
    "unverified",
    "missing",
    "note",
)


def price_rows(region: str, prices: Any, as_of: str) -> list[dict[str, Any]]:
    """One row per price (each tier apart) and per missing price, unformatted: for jsonl and csv."""
    from storagebench.prices.snapshot import iter_rates

    rows = [
        {
            "region": region,
            "as_of": as_of,
            "price": label,
            "begin": rate.begin,
            "end": rate.end,
            "usd": rate.usd,
            "unit": rate.unit,
            "identifier": _identifier(rate),
            "usagetype": rate.usagetype,
            "group": rate.group,
            "sku": rate.sku,
            "source": rate.source,
            "unverified": rate.unverified,
            "missing": False,
            "note": rate.note,
        }
        for label, rate in iter_rates(prices)
    ]
    rows += [
        {
            "region": region,
            "as_of": as_of,
            "price": missing.key,
            "identifier": missing.product,
            "unverified": False,
            "missing": True,
            "note": missing.reason,
        }
        for missing in prices.missing
    ]
    return rows


@prices_app.command("show")
def show(
    region: Annotated[
        str | None, typer.Option("--region", help="one region (default: every region held)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the whole snapshot (--format json)")] = False,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=FORMAT_HELP + " (jsonl and csv: one line per price, unformatted)"),
    ] = None,
    file: Annotated[Path | None, FILE_OPTION] = None,
) -> None:
    """What the price snapshot holds: its date, the regions it covers, each price and its identifier."""
    from storagebench.cli import listing
    from storagebench.cli.console import fail, out, print_json
    from storagebench.cli.listing import output_format
    from storagebench.prices.snapshot import refresh_hint

    chosen = output_format(fmt, as_json)
    snapshot = _load(file)
    held = sorted(snapshot.regions)
    if region is not None and region not in snapshot.regions:
        raise fail(
            f"the price snapshot {snapshot.snapshot_version} (as of {snapshot.as_of}) covers "
            f"{', '.join(held) or 'no region'}, not {region}: {refresh_hint(region)}"
        )
    regions = [region] if region is not None else held
    if chosen in ("jsonl", "csv"):
        rows = [
            row
            for name in regions
            for row in price_rows(
                name, snapshot.regions[name], snapshot.regions[name].as_of or snapshot.as_of
            )
        ]
        if chosen == "jsonl":
            listing.write_jsonl(rows)
        else:
            listing.write_csv(rows, PRICE_COLUMNS)
        return
    if chosen == "json":
        print_json(
            {
                "snapshot_version": snapshot.snapshot_version,
                "as_of": snapshot.as_of,
                "source": snapshot.source,
                "sources": snapshot.sources,
                "coverage": snapshot.coverage.model_dump(mode="json"),
                "unverified": {r: snapshot.regions[r].unverified() for r in regions},
                "regions": {
                    r: snapshot.regions[r].model_dump(mode="json", exclude_none=True) for r in regions
                },
            }
        )
        return
    out.print(
        Text.assemble(
            ("price snapshot ", "bold"),
            (snapshot.snapshot_version, "bold"),
            f", as of {snapshot.as_of}\n",
            f"source: {snapshot.source}\n",
            f"covers: {', '.join(held)}",
            f" ({snapshot.coverage.note})" if snapshot.coverage.note else "",
        ),
        highlight=False,
        soft_wrap=True,
    )
    for name in regions:
        prices = snapshot.regions[name]
        out.print(_table(name, prices, prices.as_of or snapshot.as_of))
        for line in _notes(prices):
            out.print(line, highlight=False, soft_wrap=True)


def _pricing_client(api_region: str) -> Any:
    import boto3
    from botocore.config import Config

    # Standard retries; AWS_MAX_ATTEMPTS (if set) bounds them, so a missing network fails fast.
    config = Config(
        region_name=api_region, retries={"mode": "standard"}, user_agent_extra="storagebench-prices"
    )
    return boto3.client("pricing", config=config)


def _has_credentials() -> bool:
    import boto3
    from botocore.exceptions import BotoCoreError

    try:
        return boto3.Session().get_credentials() is not None
    except BotoCoreError:
        return False


@prices_app.command("refresh")
def refresh(
    region: Annotated[
        list[str], typer.Option("--region", help="a region to read (repeat the option for more)")
    ],
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="write the snapshot here (default: print it); an existing snapshot keeps its other regions",
        ),
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="overwrite --out instead of merging into it")
    ] = False,
    api_region: Annotated[
        str,
        typer.Option("--api-region", help="Price List API endpoint: us-east-1, eu-central-1 or ap-south-1"),
    ] = "us-east-1",
) -> None:
    """Rebuild the price snapshot from the AWS Price List API (needs AWS credentials)."""
    from storagebench.adapters.aws.pricing import (
        API_REGIONS,
        PriceListAccessError,
        PriceListClient,
        build_snapshot,
    )
    from storagebench.cli.console import err, fail
    from storagebench.core.errors import ThrottledError, WorkflowError
    from storagebench.prices.snapshot import Snapshot, merge_snapshots

    if api_region not in API_REGIONS:
        raise fail(f"--api-region {api_region}: the Price List API answers only in {', '.join(API_REGIONS)}")
    if not _has_credentials():
        raise fail(f"no AWS credentials found: {CREDENTIALS_HELP}")
    try:
        document = build_snapshot(PriceListClient(_pricing_client(api_region)), region)
    except ThrottledError as exc:
        raise fail(
            f"cannot reach the AWS Price List API in {api_region} (network, or throttled after retries): "
            f"{exc}; prices need network access to api.pricing.{api_region}.amazonaws.com"
        ) from None
    except PriceListAccessError as exc:
        raise fail(f"the AWS Price List API refused: {exc}; {CREDENTIALS_HELP}") from None
    except WorkflowError as exc:
        raise fail(f"reading the AWS Price List API failed: {exc}") from None
    snapshot = Snapshot.model_validate(document)
    if out_file is not None and out_file.exists() and not replace:
        snapshot = merge_snapshots(_load(out_file), snapshot)
    text = json.dumps(snapshot.model_dump(mode="json", exclude_none=True), indent=2) + "\n"
    for name in sorted(document["regions"]):
        missing = snapshot.regions[name].missing
        err.print(
            Text(f"{name}: {len(missing)} price(s) missing" if missing else f"{name}: every price read"),
            highlight=False,
        )
        for item in missing:
            err.print(Text(f"  {item.key}: {item.reason}"), highlight=False, soft_wrap=True)
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.write_text(text, encoding="utf-8")
    err.print(Text(f"wrote {out_file} (covers {', '.join(snapshot.coverage.regions)})"), highlight=False)
