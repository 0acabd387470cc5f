"""The adaptive stopping rule on known series, and the runner stopping a series on a directory target."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from storagebench.agent.runner import EXIT_OK, Runner
from storagebench.protocol.adaptive import STOP_MAX, STOP_PRECISION, decide, half_width, half_width_pct
from storagebench.protocol.plan import PlanError, check_plan


def test_half_width_is_the_student_t_interval_of_the_mean() -> None:
    """Stdlib only (this runs under Python 3.9 too); tests/unit/analysis checks that the report's
    intervals (analysis.stats) agree with it."""
    values = [100.0, 102.0, 98.0, 101.0]
    # t(0.975, 3) = 3.1824; stdev = 1.7078; n = 4: 3.1824 * 1.7078 / 2 = 2.7175, 2.711 % of 100.25
    assert half_width_pct(values) == pytest.approx(2.7108, abs=1e-3)
    assert half_width([5.0]) is None


def test_precision_reached_once_the_half_width_is_under_ci_pct() -> None:
    stop, reason = decide([1000.0, 1010.0, 995.0, 1005.0], 4, 2, 10, 2.0)
    assert stop == STOP_PRECISION
    assert reason == "precision reached (±1.0 % < 2 % after 4)"


def test_min_repetitions_always_run_even_when_precise() -> None:
    assert decide([1000.0, 1000.1], 2, 3, 10, 2.0)[0] is None
    assert decide([1000.0, 1000.1, 1000.0], 3, 3, 10, 2.0)[0] == STOP_PRECISION


def test_max_reached_on_a_noisy_series() -> None:
    values = [100.0, 130.0, 80.0, 120.0, 90.0, 110.0, 70.0, 125.0, 95.0, 105.0]
    assert decide(values[:9], 9, 2, 10, 2.0)[0] is None
    stop, reason = decide(values, 10, 2, 10, 2.0)
    assert stop == STOP_MAX
    assert reason.startswith("max reached (±") and reason.endswith(" after 10)")


def test_failed_repetitions_are_spent_without_a_value() -> None:
    stop, reason = decide([100.0], 3, 2, 3, 2.0)
    assert stop == STOP_MAX
    assert reason == "max reached (no interval from 1 value(s) after 3, 2 without a value)"


def test_a_mean_of_zero_never_reads_as_precise() -> None:
    assert decide([0.0, 0.0], 2, 2, 5, 2.0)[0] is None


@pytest.mark.parametrize(("minimum", "maximum", "ci_pct"), [(1, 5, 2.0), (5, 4, 2.0), (2, 5, 0.0)])
def test_a_bad_policy_is_refused(minimum: int, maximum: int, ci_pct: float) -> None:
    with pytest.raises(ValueError, match="required"):
        decide([1.0, 2.0], 2, minimum, maximum, ci_pct)


def _fio_step(repetition: int, policy: dict[str, object], vary: bool = False) -> dict[str, object]:
    # 0.3 s of buffered reads of a 1 MiB file, within ±50 % of each other; ``vary``: 0.3, 0.4, ... s,
    # a spread no precision target under 1 % can accept (two equal MiB/s were seen in CI)
    runtime_ms = 200 + 100 * repetition if vary else 300
    options = {
        "rw": "read",
        "bs": "4k",
        "size": "1m",
        "ioengine": "psync",
        "time_based": 1,
        "runtime": f"{runtime_ms}ms",
    }
    return {
        "id": f"tiny.dir.r{repetition}",
        "workload": "tiny",
        "profile": "std-seqread-1m",
        "variant": {},
        "repetition": repetition,
        "target": "dir",
        "intent": "throughput",
        "cleanup": True,
        "adaptive": policy,
        "phases": [{"name": "run", "engine": "fio", "fio": {"jobs": [{"name": "j", "options": options}]}}],
    }


def _plan(tmp_path: object, policy: dict[str, object], steps: int, vary: bool = False) -> dict[str, object]:
    return {
        "plan_version": 1,
        "run_id": "run-adaptive",
        "config_id": "cfg",
        "targets": [{"id": "dir", "kind": "directory", "path": str(tmp_path)}],
        "steps": [_fio_step(r, policy, vary) for r in range(1, steps + 1)],
    }


def test_the_plan_checks_an_adaptive_policy(tmp_path: object) -> None:
    policy = {"series": "tiny.dir", "min": 3, "max": 2, "ci_pct": 0, "metric": "speed", "phase": "nope"}
    with pytest.raises(PlanError) as caught:
        check_plan(_plan(tmp_path, policy, 2))
    text = str(caught.value)
    for fragment in (
        "adaptive.min: 3 must be at most max (2)",
        "adaptive.ci_pct",
        "adaptive.metric",
        "adaptive.phase",
    ):
        assert fragment in text


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize(
    ("metric", "ci_pct", "stopped"),
    # fio's runtime of a 0.3 s time-based job is ~0.300 s: within ±50 % at once, even on a busy
    # machine; runtimes of 0.3, 0.4, 0.5 and 0.6 s never meet a ±1 % target, so it runs to max
    [("real_s", 50.0, STOP_PRECISION), ("real_s", 1.0, STOP_MAX)],
)
def test_the_runner_stops_a_series_on_a_directory_target(
    tmp_path: Path, metric: str, ci_pct: float, stopped: str
) -> None:
    work = tmp_path / "target"
    work.mkdir()
    policy = {
        "series": "tiny.dir",
        "min": 2,
        "max": 4,
        "ci_pct": ci_pct,
        "metric": metric,
        "phase": "run",
    }
    out = tmp_path / "out"
    out.mkdir()
    plan = _plan(str(work), policy, 4, vary=stopped == STOP_MAX)
    runner = Runner(plan, str(out), str(tmp_path / "mnt"), str(tmp_path / "vol"))  # type: ignore[arg-type]
    assert runner.execute() == EXIT_OK
    manifest = runner.manifest
    (series,) = manifest["adaptive"]
    assert series["stopped"] == stopped
    ran = [s["id"] for s in manifest["steps"]]
    if stopped == STOP_PRECISION:
        assert ran == ["tiny.dir.r1", "tiny.dir.r2"]
        assert series["spent"] == 2 and series["reason"].startswith("precision reached (±")
    else:
        assert ran == [f"tiny.dir.r{r}" for r in range(1, 5)]
        assert series["spent"] == 4 and series["reason"].startswith("max reached")
    assert len(series["values"]) == series["spent"]
    assert all(v > 0 and math.isfinite(v) for v in series["values"])
