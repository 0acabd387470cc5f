"""Runs that succeed, and requests the workflow must refuse before it launches anything.

* a demo-like run: emulated gp2, gp3 and io1 with the dd pre-warm and two short fio workloads, all
  succeeding, their records in DynamoDB Local, their raw output on disk, nothing left behind, and
  at most 60 state transitions per config;
* a long (simulated) workload costs the same transitions as a short one: the agent runs on a
  heartbeated task token, one transition however long it runs (~40 s at 3 s heartbeats here, the
  same shape as 3 hours at 5-minute heartbeats);
* an invalid request and a request over the stack's guardrails end FAILED through the Rejected
  state, with nothing launched.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails

from .conftest import (
    CAPACITY_BYTES,
    HAPPY_PATH,
    MAX_TRANSITIONS_PER_CONFIG,
    RUN_LEVEL_STATES,
    SUMMARY,
    Bench,
    RunResult,
    command,
    ebs,
    read_json,
    request,
    short_workloads,
)

pytestmark = [pytest.mark.root, pytest.mark.slow]

DEMO_CONFIGS = ("gp2", "gp3", "io1")
LONG_SLEEP_S = 36
HEARTBEAT_S = 3


def _seconds(start: str | None, end: str | None) -> float:
    assert start and end, (start, end)
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


@pytest.fixture(scope="module")
def demo(bench: Bench) -> RunResult:
    """The local demo, smaller: three EBS types, dd pre-warm, two fio workloads at scale 0.02."""
    document = request(
        "wf-demo",
        [ebs("gp2", "gp2"), ebs("gp3", "gp3"), ebs("io1", "io1", iops=3000)],
        workloads=short_workloads(0.02),
        prewarm="dd",
    )
    result = bench.run(document)
    timings: dict[str, Any] = {"execution": round(result.execution.wall_s, 1)}
    for config_id in DEMO_CONFIGS:
        manifest = read_json(bench.artifacts(result.run_id, config_id) / "manifest.json")
        if manifest.get("started_at") and manifest.get("ended_at"):
            agent = _seconds(manifest["started_at"], manifest["ended_at"])
            prewarm = sum(_seconds(p["started_at"], p["ended_at"]) for p in manifest.get("prewarm", []))
            timings[config_id] = f"agent {agent:.1f} s (pre-warm {prewarm:.1f} s)"
    SUMMARY["measured"]["demo-like run, 3 EBS configs, dd pre-warm (s)"] = timings
    return result


def test_every_config_succeeds(demo: RunResult) -> None:
    assert demo.execution.status == "SUCCEEDED", (demo.execution.error, demo.execution.cause)
    assert demo.status == "SUCCEEDED", demo.execution.output
    assert set(demo.configs) == set(DEMO_CONFIGS)
    for config in demo.configs.values():
        assert config["status"] == "succeeded", config
        assert config["records"] > 0, config
        assert config["errors"] == [], config
        assert config["leftovers"] == [], config
    assert demo.fired == []


def test_results_are_in_dynamodb_local(bench: Bench, demo: RunResult) -> None:
    assert bench.session.dynamodb_endpoint, "results must go to DynamoDB Local, not moto's in-memory table"
    stored = bench.store(demo.run_id)
    assert stored["run"]["status"] == "SUCCEEDED"
    assert stored["run"]["records"] == sum(c["records"] for c in demo.configs.values())
    statuses = {c["config_id"]: c["status"] for c in stored["configs"]}
    assert statuses == dict.fromkeys(DEMO_CONFIGS, "SUCCEEDED")
    for config_id, config in demo.configs.items():
        results = bench.results_of(demo.run_id, config_id)
        assert len(results) == config["records"] > 0
        workloads = {r["record"]["workload"] for r in results}
        assert {"std-randread-4k", "std-latency-4k-qd1"} <= workloads, workloads


def test_raw_artifacts_are_on_disk(bench: Bench, demo: RunResult) -> None:
    for config_id in DEMO_CONFIGS:
        directory = bench.artifacts(demo.run_id, config_id)
        manifest = read_json(directory / "manifest.json")
        assert manifest, f"no manifest.json under {directory}"
        assert manifest["status"] == "ok", manifest.get("error")
        assert (manifest["run_id"], manifest["config_id"]) == (demo.run_id, config_id)
        assert manifest["cleanup"]["leftovers"] == []
        assert len(manifest["steps"]) == 2


def test_prewarm_is_recorded(bench: Bench, demo: RunResult) -> None:
    for config_id in DEMO_CONFIGS:
        manifest = read_json(bench.artifacts(demo.run_id, config_id) / "manifest.json")
        [prewarm] = manifest["prewarm"]
        assert (prewarm["method"], prewarm["status"], prewarm["target"]) == ("dd", "ok", "main")
        assert sum(d["bytes"] for d in prewarm["devices"]) == CAPACITY_BYTES  # every block read
        records = [
            r["record"]
            for r in bench.results_of(demo.run_id, config_id)
            if r["record"]["workload"] == "prewarm"
        ]
        assert len(records) == 1, records
        assert records[0]["engine"] == "prewarm"


def test_nothing_is_left_behind(demo: RunResult) -> None:
    assert demo.leaks == []


def test_transitions_per_config(demo: RunResult) -> None:
    assert demo.run_level.states == list(RUN_LEVEL_STATES)
    for config_id, counts in demo.per_config.items():
        assert counts.states == HAPPY_PATH, config_id
        assert counts.retries == 0
        assert counts.billed <= MAX_TRANSITIONS_PER_CONFIG
    per_config = sorted({c.billed for c in demo.per_config.values()})
    SUMMARY["measured"]["transitions per config, demo-like run"] = per_config
    SUMMARY["measured"]["transitions per run, demo-like run"] = demo.run_level.billed + sum(
        c.billed for c in demo.per_config.values()
    )


def test_a_long_workload_costs_the_same_transitions_as_a_short_one(bench: Bench, demo: RunResult) -> None:
    document = request(
        "wf-long",
        [bench.local("short", target_id="fast"), bench.local("long", target_id="slow")],
        workloads=[
            command("sleep-1", "sleep 1", ["fast"]),
            command("sleep-long", f"sleep {LONG_SLEEP_S}", ["slow"]),
        ],
        command_poll_s=HEARTBEAT_S,
    )
    result = bench.run(document)
    assert result.status == "SUCCEEDED", result.execution.output
    for config_id in ("short", "long"):
        assert result.configs[config_id]["status"] == "succeeded"
        assert len(bench.results_of(result.run_id, config_id)) == result.configs[config_id]["records"] > 0
    stored = {c["config_id"]: c for c in bench.store(result.run_id)["configs"]}
    assert stored["long"]["state"]["item"]["timing"]["heartbeat_s"] == HEARTBEAT_S
    manifest = read_json(bench.artifacts(result.run_id, "long") / "manifest.json")
    agent_s = _seconds(manifest["started_at"], manifest["ended_at"])
    # The task survived many heartbeat timeouts: only heartbeats kept it alive.
    assert agent_s >= LONG_SLEEP_S > 10 * HEARTBEAT_S

    short, long = result.per_config["short"], result.per_config["long"]
    assert long.states == short.states == HAPPY_PATH
    assert long.billed == short.billed == demo.per_config["gp3"].billed
    SUMMARY["measured"]["transitions per config, short vs long workload"] = (
        f"{short.billed} (sleep 1) vs {long.billed} (agent ran {agent_s:.0f} s at {HEARTBEAT_S} s heartbeats)"
    )
    assert result.leaks == []


def _assert_rejected(bench: Bench, result: RunResult, error: str, instances_before: int) -> None:
    assert result.execution.status == "FAILED"
    assert result.execution.error == error, result.execution.cause
    assert result.run_level.states == ["Plan", "Rejected"]
    assert result.per_config == {}  # no Map iteration ran
    assert bench.instance_count() == instances_before
    with pytest.raises(KeyError):
        bench.store(result.run_id)  # the run was never recorded
    assert result.leaks == []


def test_an_invalid_request_is_rejected_before_anything_launches(bench: Bench) -> None:
    """io1 without iops, sent straight to the state machine (no CLI validation in front)."""
    before = bench.instance_count()
    document = request("wf-invalid", [ebs("ok", "gp3"), ebs("bad", "io1")])
    result = bench.run(document)
    _assert_rejected(bench, result, "InvalidRequestError", before)
    assert "iops" in (result.execution.cause or "")


def test_a_guardrail_breach_is_rejected_before_anything_launches(bench: Bench) -> None:
    before = bench.instance_count()
    document = request("wf-guardrail", [bench.local("one"), bench.local("two")])
    with bench.guardrails(Guardrails(max_configs_per_run=1, max_concurrency=8)):
        result = bench.run(document)
    _assert_rejected(bench, result, "GuardrailError", before)
    assert "MaxConfigsPerRun" in (result.execution.cause or "")
