"""Listings that fit the terminal, and the same rows as JSON Lines or CSV.

A listing is named columns over rows of plain values. As a table it never cuts a number or an id
(rich would end them in ``…``): ids and numbers never wrap, text folds, and when the terminal is too
narrow for every column the least important ones are left out, saying which and how to get them
(``--columns``, ``--format csv``). As JSON Lines or CSV every column is written, unformatted.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, Literal

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

FORMATS = ("table", "json", "jsonl", "csv")
FORMAT_HELP = "table (fits the terminal), json (the whole document), jsonl or csv (one line per row)"
Kind = Literal["id", "number", "text"]

# Each column costs its padding (1 each side) and one border; the table one more border
_COLUMN_OVERHEAD = 3
_TABLE_OVERHEAD = 1
_FOLDED_MINIMUM = 8  # a text column narrower than this reads as a column of letters


def _plain(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def when(value: Any) -> str:
    """An ISO time as ``2026-11-25 16:59`` (UTC, to the minute): short enough to never wrap."""
    from storagebench.core.clock import parse_iso

    if not isinstance(value, str) or not value:
        return "-"
    try:
        moment = parse_iso(value)
    except ValueError:
        return value
    return (moment.astimezone(UTC) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class Field:
    """One column: its name (header, CSV and JSON key), what it holds, how it shows, and how much it
    matters (the higher, the later it is left out of a narrow table)."""

    name: str
    kind: Kind = "text"
    show: Callable[[Any], str] = _plain
    priority: int = 0

    @property
    def wraps(self) -> bool:
        return self.kind == "text"


@dataclass
class Listing:
    title: str | None
    fields: list[Field]
    rows: list[dict[str, Any]] = field(default_factory=list)
    caption: str | None = None
    total: dict[str, Any] | None = None  # a last row of the table only (not a row of jsonl/csv)

    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def add(self, **values: Any) -> None:
        self.rows.append(values)


class ColumnsError(ValueError):
    """A --columns value naming no column of the listing."""


def parse_columns(text: str | None, listing: Listing) -> list[str] | None:
    """``--columns a,b`` -> the names in that order; an unknown name is an error listing them all."""
    if text is None:
        return None
    chosen = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in listing.names()]
    if unknown or not chosen:
        raise ColumnsError(
            f"--columns {text!r}: {', '.join(map(repr, unknown)) or 'no column'} is not one of "
            f"{', '.join(listing.names())}"
        )
    return chosen


def _needed(column: Field, cells: list[str]) -> int:
    """The width a column takes at least: ids and numbers whole (header too), text folded."""
    whole = max([len(column.name), *(len(line) for cell in cells for line in cell.splitlines() or [""])])
    if column.wraps:
        longest_header_word = max(len(word) for word in column.name.split())
        return max(min(whole, _FOLDED_MINIMUM), longest_header_word)
    return whole


def _blank(cells: list[str]) -> bool:
    return all(cell == "-" for cell in cells)


def fitted_fields(listing: Listing, width: int, chosen: list[str] | None = None) -> list[Field]:
    """The columns shown at ``width``: the chosen ones, else all that fit, leaving out first the
    columns with nothing in them, then the least important (the last of equal importance first)."""
    if chosen is not None:
        by_name = {f.name: f for f in listing.fields}
        return [by_name[name] for name in chosen]
    rows = [*listing.rows, *([listing.total] if listing.total is not None else [])]
    cells = {f.name: [f.show(row.get(f.name)) for row in rows] for f in listing.fields}
    shown = list(listing.fields)

    def total(columns: list[Field]) -> int:
        return _TABLE_OVERHEAD + sum(_needed(f, cells[f.name]) + _COLUMN_OVERHEAD for f in columns)

    order = sorted(
        listing.fields,
        key=lambda f: (not _blank(cells[f.name]), f.priority, -listing.fields.index(f)),
    )
    for column in order:
        if total(shown) <= width or len(shown) == 1:
            break
        shown.remove(column)
    return shown


def table(listing: Listing, width: int, chosen: list[str] | None = None) -> Table:
    """The listing as a rich table that fits ``width`` without cutting an id or a number."""
    shown = fitted_fields(listing, width, chosen)
    left_out = [f.name for f in listing.fields if f not in shown]
    rows = [*listing.rows, *([listing.total] if listing.total is not None else [])]
    needed = {f.name: _needed(f, [f.show(r.get(f.name)) for r in rows]) for f in shown}
    # Chosen columns too wide for the terminal fold, ids and numbers too: split beats cut
    whole = _TABLE_OVERHEAD + sum(n + _COLUMN_OVERHEAD for n in needed.values()) <= width
    columns = [
        Column(
            f.name,
            justify="right" if f.kind == "number" else "left",
            no_wrap=whole and not f.wraps,
            overflow="fold",
            min_width=needed[f.name] if whole and not f.wraps else None,
        )
        for f in shown
    ]
    result = Table(*columns, title=listing.title, title_justify="left", caption_justify="left")
    for row in listing.rows:
        result.add_row(*(Text(f.show(row.get(f.name))) for f in shown))
    if listing.total is not None:
        result.add_section()
        result.add_row(*(Text(f.show(listing.total.get(f.name)), style="bold") for f in shown))
    notes = [listing.caption] if listing.caption else []
    if left_out and chosen is None:
        notes.append(
            f"not shown at {width} columns: {', '.join(left_out)} (--columns to choose, --format csv for all)"
        )
    result.caption = "\n".join(notes) or None
    return result


def print_table(console: Console, listing: Listing, chosen: list[str] | None = None) -> None:
    console.print(table(listing, console.width, chosen))


def _flat(value: Any) -> Any:
    """A cell for CSV: lists and mappings as JSON, None as empty."""
    if value is None:
        return ""
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, default=str, separators=(",", ":"))
    return value


def write_jsonl(rows: Sequence[Mapping[str, Any]], stream: Any = None) -> None:
    target = stream or sys.stdout
    for row in rows:
        target.write(json.dumps(dict(row), default=str) + "\n")


def write_csv(rows: Sequence[Mapping[str, Any]], names: Sequence[str], stream: Any = None) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(names), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: _flat(row.get(name)) for name in names})
    (stream or sys.stdout).write(buffer.getvalue())


def output_format(fmt: str | None, as_json: bool, allowed: Sequence[str] = FORMATS) -> str:
    """The format asked for: ``--json`` is ``--format json``; anything else not allowed exits 2."""
    from storagebench.cli.console import fail

    if as_json and fmt not in (None, "json"):
        raise fail(f"--json is --format json: give one of --json and --format {fmt}")
    chosen = "json" if as_json else fmt or "table"
    if chosen not in allowed:
        raise fail(f"--format {chosen!r} is not one of {', '.join(allowed)}")
    return chosen


def show(
    console: Console, listing: Listing, fmt: str, document: Any = None, columns: str | None = None
) -> None:
    """``emit`` with ``--columns`` read against the listing (an unknown column exits 2, naming them)."""
    from storagebench.cli.console import fail

    try:
        chosen = parse_columns(columns, listing)
    except ColumnsError as exc:
        raise fail(str(exc)) from None
    emit(console, listing, fmt, document, chosen)


def emit(
    console: Console, listing: Listing, fmt: str, document: Any = None, chosen: list[str] | None = None
) -> None:
    """Print ``listing`` in ``fmt``: json prints ``document`` (the command's whole answer) when given."""
    names = chosen or listing.names()
    if fmt == "table":
        print_table(console, listing, chosen)
    elif fmt == "json":
        from storagebench.cli.console import print_json

        print_json(document if document is not None else [{n: r.get(n) for n in names} for r in listing.rows])
    elif fmt == "jsonl":
        write_jsonl([{n: r.get(n) for n in names} for r in listing.rows])
    elif fmt == "csv":
        write_csv(listing.rows, names)
    else:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
