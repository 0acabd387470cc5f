"""A run's economics from what the store holds: lifetimes from launch to the last status write."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.costs.economics import MAX_VERDICT_CHARS, RunEconomics, config_lifetime_s, economics_summary
from storagebench.store.models import StoredConfig


def item(launched: str | None, updated: str | None) -> dict[str, Any]:
    return {"config_id": "c", "updated_at": updated, "state": {"resources": {"launched_at": launched}}}


@pytest.mark.parametrize(
    ("launched", "updated", "expected"),
    [
        ("2026-11-21T17:00:00Z", "2026-11-21T17:10:30Z", 630.0),  # launch to Cleanup's write
        ("2026-11-21T17:00:00Z", None, 3600.0),  # no write time: the run's end
        (None, "2026-11-21T17:10:00Z", 0.0),  # never launched: nothing billed
        ("2026-11-21T17:00:00Z", "2026-11-21T16:00:00Z", 0.0),  # clocks disagree: not negative
        ("not a time", "2026-11-21T17:10:00Z", 0.0),
    ],
)
def test_config_lifetime(launched: str | None, updated: str | None, expected: float) -> None:
    assert config_lifetime_s(StoredConfig.decode(item(launched, updated)), "2026-11-21T18:00:00Z") == expected


def test_a_state_without_resources_lived_zero_seconds() -> None:
    assert (
        config_lifetime_s(StoredConfig.decode({"config_id": "c", "state": None}), "2026-11-21T18:00:00Z")
        == 0.0
    )


def test_the_summary_bounds_each_verdict_and_keeps_what_results_shows() -> None:
    long = "x" * (MAX_VERDICT_CHARS + 100)
    economics = RunEconomics(
        comparison={
            "baseline": "a",
            "configs": [
                {
                    "config_id": "a",
                    "monthly_usd": 10.0,
                    "delta_monthly_pct": 0.0,
                    "cost_partial": False,
                    "price_source": "snapshot",
                    "price_date": "2026-11-21",
                    "verdict": long,
                }
            ],
        },
        run_cost={"total_usd": 0.5, "orchestration_usd": 0.01, "transitions": 12, "by_config": {"a": 0.49}},
    )
    summary = economics_summary(economics, "s3://bucket/runs/r/economics.json")
    (config,) = summary["configs"]
    assert len(config["verdict"]) == MAX_VERDICT_CHARS
    assert config["run_usd"] == 0.49 and summary["run_cost_usd"] == 0.5 and summary["baseline"] == "a"
    assert summary["artifact"] == "s3://bucket/runs/r/economics.json"
