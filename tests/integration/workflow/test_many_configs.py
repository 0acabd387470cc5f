"""Past 40 configs: the Distributed Map runs the per-config branch, one child execution per config.

* 60 small configs (directories of this machine, one tiny fio workload, 1 repetition) run through
  RouteConfigs into DistributedConfigs: the work items come from S3 (Plan wrote them), every config
  runs as a child execution of the state machine with its own history, succeeds, and its outcome
  reaches Finalize; never more configs at once than the guardrails allow (the children's start and
  end times say so), and nothing is left behind;
* 40 configs stay in the inline Map, no map run started;
* on both paths a config that is ready at its first poll costs the 7 transitions of the happy path
  (the children's histories counted under the inline branch's names), the run-level ones apart.

Both runs print their wall time and transitions per config at the end of the session.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails
from storagebench.core.state import INLINE_MAP_MAX_CONFIGS

from .conftest import (
    DISTRIBUTED_RUN_LEVEL_STATES,
    HAPPY_PATH,
    RUN_LEVEL_STATES,
    SUMMARY,
    Bench,
    RunResult,
    request,
)

pytestmark = [pytest.mark.root, pytest.mark.slow]

DISTRIBUTED_CONFIGS = 60
INLINE_CONFIGS = INLINE_MAP_MAX_CONFIGS
CONCURRENCY = 10
RUN_TIMEOUT_S = 1200.0  # 60 configs at 10 at once on a shared 2-core machine; a hang ends here
# Ten agents at once on a shared 2-core machine: 3 s heartbeats (the other tests') can come late, and
# the transitions do not depend on them (the agent reports on one task token however it heartbeats).
# 30 s was missed once by an agent's first heartbeat while another job loaded the machine.
HEARTBEAT_S = 90
SHORT_WORKLOAD_TRANSITIONS = len(HAPPY_PATH)  # 7: the bound for a short workload
LIMITS = Guardrails(
    max_configs_per_run=DISTRIBUTED_CONFIGS,
    max_concurrency=CONCURRENCY,
    max_concurrent_instances=CONCURRENCY,
    unprovisionable_kinds={},
)


def _run(bench: Bench, name: str, count: int) -> RunResult:
    configs = [bench.local(f"{name}-{i:02d}") for i in range(count)]
    document = request(
        name,
        configs,
        workloads=[{"profile": "std-randread-4k", "scale": 0.005}],
        repetitions=1,
        max_concurrency=CONCURRENCY,
        command_poll_s=HEARTBEAT_S,
    )
    with bench.guardrails(LIMITS):
        result = bench.run(document, timeout_s=RUN_TIMEOUT_S)
    billed = sorted({c.billed for c in result.per_config.values()})
    path = "distributed" if count > INLINE_CONFIGS else "inline"
    SUMMARY["measured"][f"{count} configs ({path} Map)"] = {
        "wall s": round(result.execution.wall_s, 1),
        "transitions per config": billed,
        "run-level transitions": result.run_level.billed,
    }
    _export(
        path,
        {
            "configs": count,
            "max_concurrency": CONCURRENCY,
            "status": result.execution.status,
            "wall_s": round(result.execution.wall_s, 1),
            "transitions_per_config": billed,
            "run_level_transitions": result.run_level.billed,
        },
    )
    return result


def _export(path: str, figures: dict[str, Any]) -> None:
    """``make bench-economy`` runs this module with $STORAGEBENCH_MANY_CONFIGS_OUT and quotes it."""
    out = os.environ.get("STORAGEBENCH_MANY_CONFIGS_OUT")
    if not out:
        return
    file = Path(out)
    existing = json.loads(file.read_text()) if file.exists() else {}
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({**existing, path: figures}, indent=2) + "\n")


@pytest.fixture(scope="module")
def distributed(bench: Bench) -> RunResult:
    return _run(bench, "wf-many", DISTRIBUTED_CONFIGS)


@pytest.fixture(scope="module")
def inline(bench: Bench) -> RunResult:
    return _run(bench, "wf-forty", INLINE_CONFIGS)


def _map_runs(result: RunResult) -> list[dict[str, Any]]:
    return [e for e in result.execution.history if e["type"] == "MapRunStarted"]


def _assert_every_config_succeeded(result: RunResult, count: int) -> None:
    assert result.execution.status == "SUCCEEDED", (result.execution.error, result.execution.cause)
    failed = {c["config_id"]: c["errors"] for c in result.configs.values() if c["status"] != "succeeded"}
    assert result.status == "SUCCEEDED", (len(failed), next(iter(failed.items()), None))
    assert len(result.configs) == count
    for config in result.configs.values():
        assert config["status"] == "succeeded", config
        assert config["records"] > 0 and config["errors"] == [] and config["leftovers"] == [], config
    stored = {r["config_id"] for r in result.execution.output["configs"]}  # type: ignore[index]
    assert stored == set(result.configs)
    assert result.leaks == []


def test_sixty_configs_run_in_the_distributed_map(bench: Bench, distributed: RunResult) -> None:
    _assert_every_config_succeeded(distributed, DISTRIBUTED_CONFIGS)
    assert distributed.run_level.states == list(DISTRIBUTED_RUN_LEVEL_STATES)
    assert len(_map_runs(distributed)) == 1
    assert len(distributed.execution.child_histories) == DISTRIBUTED_CONFIGS  # one child per config
    assert set(distributed.per_config) == set(distributed.configs)
    stored = bench.store(distributed.run_id)
    assert {r["config_id"] for r in stored["results"]} == set(distributed.configs)
    assert bench.services.artifacts.get_json(f"runs/{distributed.run_id}/work-items.json")[0]["run_id"] == (
        distributed.run_id
    )


def _stamp(event: dict[str, Any]) -> datetime:
    value = event["timestamp"]
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def test_the_distributed_map_holds_the_concurrency_guardrail(distributed: RunResult) -> None:
    """Never more children (configs, instances) at once than the run's max_concurrency."""
    edges: list[tuple[datetime, int]] = []
    for history in distributed.execution.child_histories:
        events = sorted(history, key=lambda e: e["id"])
        edges += [(_stamp(events[0]), 1), (_stamp(events[-1]), -1)]
    running = peak = 0
    for _, step in sorted(edges, key=lambda edge: (edge[0], edge[1])):  # an end before a start at a tie
        running += step
        peak = max(peak, running)
    assert 1 < peak <= CONCURRENCY, peak
    SUMMARY["measured"]["distributed Map: configs at once (peak, limit)"] = (peak, CONCURRENCY)


def test_forty_configs_stay_in_the_inline_map(inline: RunResult) -> None:
    _assert_every_config_succeeded(inline, INLINE_CONFIGS)
    assert inline.run_level.states == list(RUN_LEVEL_STATES)
    assert _map_runs(inline) == [] and inline.execution.child_histories == []


@pytest.mark.parametrize("path", ["inline", "distributed"])
def test_a_short_workload_costs_seven_transitions_per_config_on_both_paths(
    path: str, request: pytest.FixtureRequest
) -> None:
    result: RunResult = request.getfixturevalue(path)
    for config_id, counts in result.per_config.items():
        assert counts.states == HAPPY_PATH, (config_id, counts.states)
        assert counts.billed <= SHORT_WORKLOAD_TRANSITIONS, (config_id, counts)
