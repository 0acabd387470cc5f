"""The knee of a burst-bucket volume: when its credits run out under the planned load (``planning.knee``
on ``catalog.envelope.credit_drain``), and the dry run saying whether the run will see it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from storagebench.catalog.envelope import credit_drain, volume_envelope
from storagebench.cli.main import app
from storagebench.planning.knee import config_knees, request_knees
from storagebench.request import load_request, parse_request

EVENTS = Path(__file__).resolve().parents[3] / "events"


# ----------------------------------------------------------------------------- the bucket model


def test_250_gib_of_gp2_at_3000_iops_empties_after_2400_s() -> None:
    gp2 = volume_envelope("gp2", 250, None, None)
    assert (gp2.baseline_iops, gp2.burst_iops, gp2.credit_capacity) == (750, 3000, 5_400_000)
    # 5.4 M / (3,000 - 750) = 2,400 s, the envelope's own burst length
    assert credit_drain(gp2, 3000, 10_000) == (0.0, pytest.approx(2400.0)) == (0.0, gp2.burst_seconds)
    assert credit_drain(gp2, 9000, 10_000)[1] == pytest.approx(2400.0)  # served at most at the burst
    assert credit_drain(gp2, 3000, 600) == (pytest.approx(5_400_000 - 600 * 2250), None)
    assert credit_drain(gp2, 3000, 10_000, balance=2_700_000)[1] == pytest.approx(1200.0)


def test_at_or_below_the_baseline_the_bucket_refills_up_to_its_capacity() -> None:
    gp2 = volume_envelope("gp2", 250, None, None)
    assert credit_drain(gp2, 750, 1e9) == (5_400_000, None)
    assert credit_drain(gp2, 0, 100, balance=1_000_000) == (pytest.approx(1_075_000), None)
    assert credit_drain(gp2, 0, 1e9, balance=0) == (5_400_000, None)


def test_throughput_credits_of_st1_and_volumes_without_a_bucket() -> None:
    st1 = volume_envelope("st1", 1024, None, None)  # 40 MiB/s baseline, 250 burst, 1 TiB of credits
    assert (
        credit_drain(st1, 250, 1e6)[1] == pytest.approx(1_048_576 / 210) == pytest.approx(st1.burst_seconds)
    )
    for never in (volume_envelope("gp2", 1000, None, None), volume_envelope("gp3", 100, 3000, 125)):
        assert credit_drain(never, 1e6, 1e6) == (0.0, None)
    with pytest.raises(ValueError, match="non-negative"):
        credit_drain(st1, -1, 10)


# ----------------------------------------------------------------------------- under a plan


def gp2_request(repetitions: int, size_gib: int = 250, count: int = 1) -> Any:
    target = {"id": "db", "kind": "ebs", "type": "gp2", "size_gib": size_gib, "filesystem": "raw"}
    if count > 1:
        target |= {"count": count, "layout": "jbod"}
    return parse_request(
        {
            "name": "knee",
            "configs": [{"id": "gp2", "instance_type": "m5.2xlarge", "targets": [target]}],
            "workloads": [{"profile": "std-randread-4k"}],
            "repetitions": repetitions,
        }
    )


def test_a_full_random_read_load_long_enough_shows_the_knee() -> None:
    # std-randread-4k: 10 s ramp + 180 s, deep queues: the volume asked for more than its burst.
    # 15 x (5 s between steps + 190 s) = 2,925 s on it: the bucket empties ~2,400 s in (plus the
    # pauses between steps, which refill it at the baseline).
    request = gp2_request(15)
    [knee] = config_knees(request, request.configs[0])
    assert knee.observed and knee.empties_after_s is not None
    assert 2400 < knee.empties_after_s < 2400 + 15 * 5 * 2 and knee.workloads_s == pytest.approx(2925)
    assert (knee.full_load_s, knee.left_pct, knee.volume) == (pytest.approx(2400), 0.0, "gp2 250 GiB")
    assert "the knee will be observed" in knee.message and "= 2,400 s at full load" in knee.message


def test_a_shorter_plan_ends_before_the_bucket_empties_and_says_what_is_left() -> None:
    request = gp2_request(3)
    [knee] = config_knees(request, request.configs[0])
    assert not knee.observed and knee.empties_after_s is None
    # 3 x 190 s at 3,000 - 750 a second, the 5 s pauses refilling 750 a second
    left = 5_400_000 - 3 * 190 * 2250 + 2 * 5 * 750
    assert knee.left_pct == pytest.approx(100 * left / 5_400_000, abs=0.01)
    assert "the knee will not be observed" in knee.message


def test_volumes_that_never_burst_have_no_knee() -> None:
    request = gp2_request(15, size_gib=1000)
    assert config_knees(request, request.configs[0]) == []


def test_the_report_card_as_shipped_ends_before_gp2_runs_out() -> None:
    # OLTP and the small log writes drain the three 250 GiB volumes; the 1 MiB reads and 128 KiB
    # writes, capped by r3.4xlarge's 250 MB/s shared by the three, refill them: one forecast, gp2's.
    [knee] = request_knees(load_request(EVENTS / "report-card.json"))
    assert (knee.config_id, knee.target_id, knee.volume) == ("gp2", "db", "3 x gp2 250 GiB")
    assert knee.full_load_s == pytest.approx(2400) and knee.workloads_s == pytest.approx(3150)
    assert not knee.observed and 50 < knee.left_pct < 100


# ----------------------------------------------------------------------------- the dry run


def test_the_dry_run_prints_the_knee_of_each_bursting_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = str(EVENTS / "report-card.json")
    text = CliRunner().invoke(app, ["run", "--local", "--dry-run", "--suite", suite], env={"COLUMNS": "400"})
    assert text.exit_code == 0, text.output
    knees = [line for line in text.stdout.splitlines() if line.startswith("knee: ")]
    assert len(knees) == 1
    assert knees[0].startswith("knee: gp2: db (3 x gp2 250 GiB): burst bucket 5,400,000 I/O credits")
    assert "the knee will not be observed" in knees[0]
    (tmp_path / "long.json").write_text(json.dumps(gp2_request(15).model_dump(mode="json")), encoding="utf-8")
    data = CliRunner().invoke(app, ["run", "--local", "--dry-run", "--suite", "long.json", "--json"])
    [knee] = json.loads(data.stdout)["preview"]["knees"]
    assert knee["observed"] is True and knee["target_id"] == "db"
