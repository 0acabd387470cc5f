"""Parsing of compact command-line values into request fields (errors name the option), and the
options several commands declare alike."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

HistogramsOption = Annotated[
    bool,
    typer.Option(
        "--histograms",
        help="with --run --format json: each record's latency histogram too (the store keeps them "
        "apart: one more read)",
    ),
]

EMULATE_HELP = "TYPE:SIZE_GIB[:IOPS[:THROUGHPUT_MIBPS]], e.g. gp3:100, io1:512:1500, gp3:200:6000:250"


def parse_emulate(text: str) -> dict[str, Any]:
    """``gp3:100:6000:250`` -> {"type": "gp3", "size_gib": 100, "iops": 6000, "throughput_mibps": 250}."""
    parts = text.split(":")
    if not 2 <= len(parts) <= 4 or not all(parts):
        raise ValueError(f"--emulate {text!r}: expected {EMULATE_HELP}")
    volume: dict[str, Any] = {"type": parts[0]}
    for name, raw in zip(("size_gib", "iops", "throughput_mibps"), parts[1:], strict=False):
        try:
            volume[name] = int(raw)
        except ValueError:
            raise ValueError(
                f"--emulate {text!r}: {name} {raw!r} is not a whole number ({EMULATE_HELP})"
            ) from None
    return volume


def parse_params(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs; VALUE is JSON when it parses (numbers, lists), else a string."""
    params: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--param {item!r}: expected NAME=VALUE, e.g. iodepth=32 or numjobs=[1,2,4]")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    return params
