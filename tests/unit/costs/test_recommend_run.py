"""A stored run's recommendation: requirements from the caller or the run's request, costs from the
run's economics (or the bundled snapshot when it stored none), records from its results."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.records import result_record, stored_result

from storagebench.costs.recommend_run import NoRequirementsError, recommend_stored_run
from storagebench.request.requirements import RequirementError

EVENTS = Path(__file__).resolve().parents[3] / "events"
DEMO: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
MONTHLY = {"gp2": 507.04, "gp3": 505.04, "io1": 769.54}
IOPS = {"gp2": [3000.0, 3010.0], "gp3": [3005.0, 3011.0], "io1": [3999.0, 4003.0]}


def result(config_id: str, repetition: int, iops: float) -> dict[str, Any]:
    labels = [f"emulated:{config_id}:100GiB"]
    record = result_record(
        config_id=config_id, repetition=repetition, iops=iops, bw_mibps=iops / 256, labels=labels
    )
    return stored_result(record)


def stored(
    *, requirements: list[str] | None = None, economics: bool = True, request: bool = True
) -> dict[str, Any]:
    document = copy.deepcopy(DEMO)
    document.pop("requirements", None)  # the shipped demo has some; each test says what it wants
    if requirements is not None:
        document["requirements"] = requirements
    run: dict[str, Any] = {"run_id": "local-demo-1", "status": "SUCCEEDED", "configs": list(MONTHLY)}
    if request:
        run["request"] = document
    if economics:
        run["economics"] = {
            "configs": [
                {"id": cid, "monthly_usd": usd, "cost_partial": False} for cid, usd in MONTHLY.items()
            ]
        }
    results = [result(cid, i + 1, v) for cid, values in IOPS.items() for i, v in enumerate(values)]
    return {"run": run, "configs": [], "results": results}


def test_the_callers_requirements_are_judged_at_the_runs_stored_monthly_costs() -> None:
    answer = recommend_stored_run(stored(), ["std-randread-4k:iops>=3500"])
    assert answer.run_id == "local-demo-1"
    assert answer.recommended is not None and answer.recommended.config_id == "io1"
    assert answer.recommended.monthly_usd == 769.54
    assert [(v.config_id, v.monthly_usd) for v in answer.failed] == [("gp3", 505.04), ("gp2", 507.04)]
    assert answer.emulated and answer.notes[0].startswith("emulated volumes (gp2, gp3, io1)")


def test_without_requirements_the_requests_own_are_judged() -> None:
    answer = recommend_stored_run(stored(requirements=["std-randread-4k:iops>=5000"]))
    assert answer.requirements == ["std-randread-4k:iops>=5000"] and answer.recommended is None
    given = recommend_stored_run(
        stored(requirements=["std-randread-4k:iops>=5000"]), ["std-randread-4k:iops>=1"]
    )
    assert given.requirements == ["std-randread-4k:iops>=1"]


def test_no_requirement_given_nor_in_the_request_is_an_error_naming_the_run() -> None:
    with pytest.raises(NoRequirementsError, match="local-demo-1's request has no requirements"):
        recommend_stored_run(stored())


def test_a_requirement_on_a_workload_the_run_lacks_lists_the_requests_workloads() -> None:
    with pytest.raises(RequirementError) as caught:
        recommend_stored_run(stored(), ["std-randwrite-4k:iops>=1"])
    assert "workloads: std-randread-4k, std-seqread-1m, std-latency-4k-qd1" in str(caught.value)


def test_a_run_that_stored_no_costs_is_priced_from_the_bundled_snapshot_and_says_so() -> None:
    answer = recommend_stored_run(stored(economics=False), ["std-randread-4k:iops>=1"])
    assert any("priced here from the bundled price snapshot" in n for n in answer.notes)
    prices = {v.config_id: v.monthly_usd for v in [answer.recommended, *answer.runners_up] if v is not None}
    assert set(prices) == {"gp2", "gp3", "io1"} and all(p is not None and p > 0 for p in prices.values())
    assert prices["io1"] > prices["gp3"]  # 4,000 provisioned IOPS cost more than gp3's baseline
    assert answer.recommended is not None and answer.recommended.config_id == min(
        prices, key=lambda c: prices[c] or 0
    )


def test_a_run_without_its_request_judges_the_workloads_its_results_name() -> None:
    answer = recommend_stored_run(stored(request=False), ["std-randread-4k:iops>=3500"])
    assert answer.recommended is not None and answer.recommended.config_id == "io1"
    assert any("holds no request" in n for n in answer.notes)
    with pytest.raises(RequirementError, match="workloads: std-randread-4k"):
        recommend_stored_run(stored(request=False), ["std-seqread-1m:mibps>=1"])


def test_a_run_not_yet_succeeded_says_so() -> None:
    document = stored()
    document["run"]["status"] = "RUNNING"
    answer = recommend_stored_run(document, ["std-randread-4k:iops>=3500"])
    assert "the run is RUNNING: a config without results (yet) fails every requirement" in answer.notes
    assert not any(
        n.startswith("the run is") for n in recommend_stored_run(stored(), ["std-randread-4k:iops>=1"]).notes
    )
