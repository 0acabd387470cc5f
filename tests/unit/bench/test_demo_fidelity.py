"""bench/demo.py --runs: each demo's emulated figures judged against the plan's limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from demo_fidelity import DemoArtifactsError, judge_run, recommended


def _config(run: Path, config: str, limits: dict[str, object], figures: dict[str, list[float]]) -> None:
    agent = run / config / "instances" / "AROA:i-1" / "agent"
    agent.mkdir(parents=True)
    plan = {"targets": [{"id": "ebs0", "emulate": [{"limits": limits}]}]}
    (agent / "plan.json").write_text(json.dumps(plan))
    for workload, values in figures.items():
        for rep, value in enumerate(values, start=1):
            step = agent / "steps" / f"{workload}.ebs0.r{rep}" / "run"
            step.mkdir(parents=True)
            # two jobs, each half of the figure: the judgement sums the jobs
            half = {"iops": value / 2, "bw_bytes": value / 2 * (1 << 20)}
            (step / "fio.json").write_text(json.dumps({"jobs": [{"read": half}, {"read": half}]}))


def test_means_and_spreads_are_judged_against_the_limits_burst_first(tmp_path: Path) -> None:
    gp2 = {"iops": 300, "mibps": 75, "burst_iops": 3000, "burst_mibps": 128, "credit_unit": "io"}
    _config(tmp_path, "gp2", gp2, {"std-randread-4k": [2990, 2980], "std-seqread-1m": [128, 127.9]})
    io1 = {"iops": 4000, "mibps": 500}
    # 3,728 then 3,924: the mean is 4.4 % short and the repetitions 5.3 % apart
    _config(tmp_path, "io1", io1, {"std-randread-4k": [3924, 3728], "std-seqread-1m": [500, 498]})
    rows = {(r["config"], r["workload"]): r for r in judge_run(tmp_path)}
    gp2_rand = rows[("gp2", "std-randread-4k")]
    assert gp2_rand["limit"] == 3000 and gp2_rand["mean_within_3pct"] and gp2_rand["repetitions_within_5pct"]
    io1_rand = rows[("io1", "std-randread-4k")]
    assert io1_rand["repetitions"] == [3924, 3728]
    assert io1_rand["mean_to_limit"] == pytest.approx(0.957, abs=1e-3)
    assert not io1_rand["mean_within_3pct"] and not io1_rand["repetitions_within_5pct"]
    assert rows[("io1", "std-seqread-1m")]["mean_within_3pct"]


def test_repetitions_are_read_in_their_order_past_nine(tmp_path: Path) -> None:
    values = [4000.0 - i for i in range(11)]
    figures = {"std-randread-4k": values, "std-seqread-1m": [500.0]}
    _config(tmp_path, "io1", {"iops": 4000, "mibps": 500}, figures)
    assert judge_run(tmp_path)[0]["repetitions"] == values


def test_missing_artifacts_are_named(tmp_path: Path) -> None:
    _config(tmp_path, "io1", {"iops": 4000, "mibps": 500}, {"std-randread-4k": [4000]})
    with pytest.raises(DemoArtifactsError, match="no repetition of std-seqread-1m on ebs0"):
        judge_run(tmp_path)
    (tmp_path / "gp3").mkdir()
    with pytest.raises(DemoArtifactsError, match="gp3: no instances"):
        judge_run(tmp_path)


def test_recommended_reads_the_named_config_or_none() -> None:
    assert recommended({"recommended": {"config_id": "io1"}}) == "io1"
    assert recommended({"recommended": None}) is None
