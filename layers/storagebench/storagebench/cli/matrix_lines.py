"""The expansion of a request's matrices for people: validate, cost and the dry run print it alike.

Each matrix: its axes, how many points became configs and which were skipped, and for each skipped
point the rule it breaks (``request.matrix``). Lines wrap between words at the terminal's width, so
that no id or reason is cut (an id is at most 63 characters).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

MAX_IDS_SHOWN = 6  # a matrix's generated ids on its line; the config table lists them all


def _axes(axes: Mapping[str, Sequence[Any]]) -> str:
    if not axes:
        return "no varied field"
    return " x ".join(f"{key} {'/'.join(json.dumps(v) for v in values)}" for key, values in axes.items())


def print_matrices(console: Console, matrices: Sequence[Mapping[str, Any]]) -> None:
    """One line per matrix, then one per skipped point with its reasons (``MatrixSummary`` dumps)."""
    for matrix in matrices:
        generated = list(matrix["generated"])
        skipped = list(matrix["skipped"])
        shown = ", ".join(generated[:MAX_IDS_SHOWN]) + (
            f", ... ({len(generated) - MAX_IDS_SHOWN} more)" if len(generated) > MAX_IDS_SHOWN else ""
        )
        console.print(
            Text.assemble(
                ("matrix ", "bold"),
                f"configs[{matrix['config_index']}] {matrix['base_id']}: {_axes(matrix['axes'])} = "
                f"{matrix['points']} point(s): {len(generated)} config(s), {len(skipped)} skipped; "
                f"{shown}",
            ),
            highlight=False,
        )
        for point in skipped:
            reasons = "; ".join(
                f"{p['field']} {json.dumps(p['value'])}: {p['message']}" for p in point["problems"]
            )
            console.print(
                Text.assemble(("  skipped ", "yellow"), f"{point['id']}: {reasons}"),
                highlight=False,
            )
