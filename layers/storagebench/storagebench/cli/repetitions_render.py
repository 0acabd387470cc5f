"""How each config's repetitions stopped, as ``results --run`` shows it (from the run view, a local
run's and a stack's alike: ``cli.run_tables``): adaptive series (spent, the precision reached, why
they stopped) and fio's steady-state verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from storagebench.cli.listing import Field, Listing, print_table
from storagebench.core.series import ConfigRepetitions


def series_listing(repetitions: Sequence[ConfigRepetitions]) -> Listing | None:
    """One row per adaptive series; None when no config repeated adaptively."""
    rows = [(config.config_id, s) for config in repetitions for s in config.series]
    if not rows:
        return None
    listing = Listing(
        "adaptive repetitions",
        [
            Field("config", "id", priority=9),
            Field("series", "id", priority=8),
            Field("metric", priority=4),
            Field("spent", "number", priority=7),
            Field("of", priority=3),
            Field("±95 %", "number", priority=6),
            Field("stopped", priority=9),
        ],
    )
    for config_id, s in rows:
        listing.add(
            config=config_id,
            series=s.series,
            metric=s.metric,
            spent=s.spent,
            of=s.bounds,
            **{"±95 %": s.reached},
            stopped=s.decision,
        )
    return listing


def show_repetitions(console: Console, repetitions: Sequence[ConfigRepetitions]) -> None:
    """The adaptive series' table and a line per steady-state verdict, when there are any."""
    listing = series_listing(repetitions)
    if listing is not None:
        print_table(console, listing)
    for config in repetitions:
        for verdict in config.steady_state:
            style = "green" if verdict.attained else "yellow"
            console.print(
                Text.assemble((f"{config.config_id}: ", "bold"), (verdict.text, style)),
                highlight=False,
                soft_wrap=True,
            )
