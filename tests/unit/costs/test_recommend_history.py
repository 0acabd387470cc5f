"""A dry recommendation from history: each config judged on the newest run that measured it, by its
storage option key, never nights pooled; configs never measured fail with "no history"."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.support.records import result_record

from storagebench.costs.recommend import ConfigPrice
from storagebench.costs.recommend_history import recommend_from_history, storage_options
from storagebench.costs.recommend_run import NoRequirementsError
from storagebench.request import parse_request
from storagebench.request.requirements import RequirementError

EVENTS = Path(__file__).resolve().parents[3] / "events"
DEMO: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
PRICES = {
    "gp2": ConfigPrice("gp2", 507.04),
    "gp3": ConfigPrice("gp3", 505.04),
    "io1": ConfigPrice("io1", 769.54),
}


def point(run_id: str, started_at: str, repetition: int, iops: float) -> dict[str, Any]:
    measured = result_record(config_id="old-name", repetition=repetition, iops=iops, bw_mibps=iops / 256)
    record = measured.model_dump(mode="json")
    record.pop("config_id")  # series items store the record without it, as metric_history answers
    return {"started_at": started_at, "run_id": run_id, "config_id": "old-name", "record": record}


class FakeHistory:
    def __init__(self, series: Mapping[str, list[dict[str, Any]]]) -> None:
        self.series = series
        self.asked: list[tuple[str, str, str, str]] = []

    def metric_history(
        self,
        storage_option: str,
        workload: str,
        variant: Mapping[str, Any] | str,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 1000,
    ) -> list[dict[str, Any]]:
        self.asked.append((storage_option, workload, direction, since))
        if direction != "read" or workload != "std-randread-4k":
            return []
        return [p for p in self.series.get(storage_option, []) if p["started_at"] >= since]


def demo_request() -> Any:
    return parse_request(DEMO)


def history() -> FakeHistory:
    keys = {c.id: storage_options(c)[0] for c in demo_request().configs}
    return FakeHistory(
        {
            keys["gp3"]: [point("new", "2026-11-20T00:00:00Z", r, 3000.0 + r) for r in (1, 2)],
            # io1's newest run is slow; an older, faster night must not be pooled into it
            keys["io1"]: [
                *(point("new", "2026-11-20T00:00:00Z", r, 3600.0 + 5 * r) for r in (1, 2)),
                *(point("old", "2026-11-01T00:00:00Z", r, 9000.0 + r) for r in (1, 2)),
            ],
        }
    )


def test_storage_options_are_the_keys_results_are_stored_under() -> None:
    keys = [storage_options(c)[0] for c in demo_request().configs]
    assert keys == [
        "c5.4xlarge/ebs:gp2:100GiB:xfs",
        "c5.4xlarge/ebs:gp3:100GiB:xfs",
        "c5.4xlarge/ebs:io1:100GiB:4000iops:xfs",
    ]


def since_october(requirement: str) -> tuple[Any, Any]:
    """The demo's recommendation, at PRICES, from the stored history since October for one requirement."""
    return recommend_from_history(
        demo_request(), history(), since="2026-10-01", requirements=[requirement], prices=PRICES
    )


def test_the_cheapest_config_meeting_the_requirement_on_its_newest_run() -> None:
    answer, sources = since_october("std-randread-4k:iops>=3500")
    assert answer.recommended is not None and answer.recommended.config_id == "io1"
    assert answer.run_id is None
    io1 = next(s for s in sources if s.config_id == "io1")
    assert (io1.run_id, io1.repetitions) == ("new", 2)
    gp2 = next(s for s in sources if s.config_id == "gp2")
    assert gp2.run_id is None and "no history" in gp2.text()
    assert any("no history since 2026-10-01 for: gp2 std-randread-4k" in n for n in answer.notes)


def test_nights_are_never_pooled_and_none_meets_a_higher_bar() -> None:
    answer, _ = since_october("std-randread-4k:iops>=5000")
    # pooled with the old 9,000-IOPS night, io1's mean would pass 5,000
    assert answer.recommended is None
    assert {v.config_id for v in answer.failed} == {"gp2", "gp3", "io1"}
    gp2 = next(v for v in answer.failed if v.config_id == "gp2")
    assert gp2.checks and not gp2.checks[0].met


def test_since_limits_the_history_read() -> None:
    reader = history()
    answer, sources = recommend_from_history(
        demo_request(), reader, since="2026-11-21", requirements=["std-randread-4k:iops>=10"], prices=PRICES
    )
    assert answer.recommended is None
    assert all(s.run_id is None for s in sources)
    assert {a[3] for a in reader.asked} == {"2026-11-21"}
    # only the workloads requirements name are read: 3 configs x 4 directions
    assert len(reader.asked) == 12


def test_requirements_default_to_the_requests_and_are_checked() -> None:
    answer, _ = recommend_from_history(demo_request(), history(), since="2026-10-01", prices=PRICES)
    assert answer.requirements == DEMO["requirements"]
    with pytest.raises(RequirementError, match="unknown workload"):
        recommend_from_history(
            demo_request(), history(), since="2026-10-01", requirements=["nope:iops>=1"], prices=PRICES
        )
    bare = parse_request({k: v for k, v in DEMO.items() if k != "requirements"})
    with pytest.raises(NoRequirementsError, match="has no requirements"):
        recommend_from_history(bare, history(), since="2026-10-01", prices=PRICES)


def test_an_unreadable_stored_record_is_named_and_left_out() -> None:
    reader = history()
    key = storage_options(demo_request().configs[1])[0]
    broken = point("new", "2026-11-20T00:00:00Z", 3, 1.0)
    broken["record"]["repetition"] = 0
    reader.series[key].append(broken)  # type: ignore[attr-defined]
    answer, _ = recommend_from_history(
        demo_request(), reader, since="2026-10-01", requirements=["std-randread-4k:iops>=10"], prices=PRICES
    )
    assert any("gp3: a stored result of run new is unreadable (repetition" in n for n in answer.notes)


def test_prices_come_from_the_snapshot_when_none_are_given() -> None:
    answer, _ = recommend_from_history(
        demo_request(), history(), since="2026-10-01", requirements=["std-randread-4k:iops>=3500"]
    )
    assert answer.recommended is not None and answer.recommended.monthly_usd == pytest.approx(769.54)
    assert any("bundled price snapshot" in n for n in answer.notes)
