"""run_rows: a stored run as flat rows, one per record, with the run and config beside each metric."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.export import run_rows
from storagebench.export.schema import COLUMN_NAMES

DEMO_RUN = Path(__file__).resolve().parents[2] / "data" / "runs" / "local-demo.json"
RUN_ID = "local-demo-20261125T151152Z-e9fe"


@pytest.fixture
def demo() -> dict[str, Any]:
    """``storagebench results --run <id> --json`` of a local demo run (histograms left out)."""
    document: dict[str, Any] = json.loads(DEMO_RUN.read_text(encoding="utf-8"))
    return document


def one(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    (row,) = [r for r in rows if all(r[k] == v for k, v in match.items())]
    return row


def test_one_row_per_stored_record_with_every_column(demo: dict[str, Any]) -> None:
    rows = run_rows(demo)
    assert len(rows) == len(demo["results"]) == 21
    assert all(list(row) == list(COLUMN_NAMES) for row in rows)
    assert {(r["config_id"], r["workload"]) for r in rows} == {
        (c, w)
        for c in ("gp2", "gp3", "io1")
        for w in ("prewarm", "std-randread-4k", "std-seqread-1m", "std-latency-4k-qd1")
    }


def test_a_fio_record_carries_its_metrics_with_units_and_its_config(demo: dict[str, Any]) -> None:
    row = one(run_rows(demo), config_id="gp2", workload="std-latency-4k-qd1", repetition=1)
    assert (row["run_id"], row["suite"]) == (RUN_ID, "local-demo")
    assert (row["started_at"], row["date"]) == ("2026-11-25T15:11:52Z", "2026-11-25")
    assert row["measured_at"] == "2026-11-25T15:12:40.776Z"
    assert (row["instance_type"], row["target_id"], row["target_kind"]) == ("c5.4xlarge", "ebs0", "ebs")
    assert (row["target_type"], row["target_size_gib"]) == ("gp2", 100)
    assert row["storage_option"] == "c5.4xlarge/ebs:gp2:100GiB:xfs"
    assert (row["monthly_usd"], row["monthly_usd_partial"]) == (507.04, False)
    assert (row["price_source"], row["price_date"]) == ("snapshot", "2026-11-21")
    assert (row["phase"], row["direction"], row["engine"], row["variant"]) == ("run", "read", "fio", "")
    assert (row["job_group"], row["jobs"], row["emulated"]) == (0, 1, True)
    assert row["labels"] == "emulated:gp2:100GiB,burst"
    assert row["iops"] == pytest.approx(2989.963803882856)
    assert (row["p50_us"], row["p95_us"], row["p99_us"], row["p99_9_us"]) == (
        80.384,
        154.624,
        366.592,
        73924.608,
    )
    assert (row["io_bytes"], row["ios"], row["runtime_s"]) == (74440704, 18173, 6.078)
    assert (row["lat_basis"], row["lat_samples"]) == ("lat", 18173)
    assert (row["volume_source"], row["volume_iops"]) == ("kernel-counters", pytest.approx(3416.584402764067))
    assert row["fio_version"] is None  # the demo ran before Collect kept it


def test_a_prewarm_record_has_no_latency(demo: dict[str, Any]) -> None:
    row = one(run_rows(demo), config_id="io1", workload="prewarm")
    assert (row["engine"], row["phase"]) == ("prewarm", "prewarm")
    assert row["p95_us"] is None and row["lat_basis"] is None and row["bw_mibps"] > 0


def test_io1_has_its_provisioned_volume_and_its_price(demo: dict[str, Any]) -> None:
    row = one(run_rows(demo), config_id="io1", workload="std-randread-4k", repetition=2)
    assert (row["target_type"], row["monthly_usd"]) == ("io1", pytest.approx(769.54))


def test_a_sweep_point_is_named_by_its_parameters_in_name_order(demo: dict[str, Any]) -> None:
    demo["results"][5]["record"]["variant"] = {"numjobs": 16, "iodepth": 32}
    assert run_rows(demo)[5]["variant"] == "iodepth=32,numjobs=16"


def test_fio_version_comes_from_the_stored_labels(demo: dict[str, Any]) -> None:
    demo["results"][3]["labels"]["fio_version"] = "fio-3.36"
    rows = run_rows(demo)
    assert rows[3]["fio_version"] == "fio-3.36" and rows[4]["fio_version"] is None


def test_a_run_without_economics_or_a_readable_request_keeps_its_metrics(demo: dict[str, Any]) -> None:
    damaged = copy.deepcopy(demo)
    del damaged["run"]["economics"]
    damaged["run"]["request"] = {"name": "local-demo", "configs": "not a list"}
    rows = run_rows(damaged)
    assert len(rows) == 21
    assert all(r["monthly_usd"] is None and r["instance_type"] is None for r in rows)
    assert [r["p95_us"] for r in rows] == [r["p95_us"] for r in run_rows(demo)]


def test_an_unreadable_result_is_left_out_and_a_non_finite_number_is_empty(demo: dict[str, Any]) -> None:
    demo["results"][0]["record"]["repetition"] = "first"
    demo["results"][3]["record"]["iops"] = float("nan")
    rows = run_rows(demo)
    assert len(rows) == 20
    assert rows[2]["iops"] is None and rows[2]["bw_mibps"] is not None


def test_a_start_that_is_not_a_time_leaves_started_at_and_date_empty(demo: dict[str, Any]) -> None:
    demo["run"]["started_at"] = "yesterday"
    row = run_rows(demo)[0]
    assert (row["started_at"], row["date"]) == (None, None)
