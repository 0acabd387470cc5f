"""The two Maps of statemachines/benchmark.asl.json run one per-config branch, and the route between
them, the Distributed Map's reading of the work items and the limits agree with Plan and the request.

scripts/asl_branches.py copies the inline Map's branch into the Distributed Map (``make asl-branches``);
scripts/statelint_asl.py is ``make lint``'s statelint, less its one gap (ReaderConfig.InputType).
"""

from __future__ import annotations

import copy
import json
import typing
from pathlib import Path
from typing import Any

import pytest
from tests.support.modules import script

from storagebench.core.guardrails import Guardrails
from storagebench.core.state import INLINE_MAP_MAX_CONFIGS, PlanResult
from storagebench.request.model import MAX_CONCURRENCY, MAX_CONFIGS, BenchmarkRequest
from storagebench.workflow.artifact_keys import work_items_key
from storagebench_local.cfn import load_template

REPO = Path(__file__).resolve().parents[3]
ASL = REPO / "statemachines" / "benchmark.asl.json"


asl_branches = script("asl_branches")


def definition() -> dict[str, Any]:
    return json.loads(ASL.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def states() -> dict[str, Any]:
    return definition()["States"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------- one branch


def test_the_distributed_branch_is_the_inline_one_in_step() -> None:
    """``make asl-branches`` leaves the file as it is: nobody edited the copy, nobody forgot to copy."""
    assert asl_branches.main(["--check", str(ASL)]) == 0


def test_the_copy_is_the_branch_state_for_state_under_child_names() -> None:
    inline = states()["Configs"]["ItemProcessor"]
    distributed = states()["DistributedConfigs"]["ItemProcessor"]
    assert distributed["StartAt"] == asl_branches.child_name(inline["StartAt"])
    assert list(distributed["States"]) == [asl_branches.child_name(n) for n in inline["States"]]
    names = set(inline["States"])
    for name, state in inline["States"].items():
        copied = distributed["States"][asl_branches.child_name(name)]
        transitions = [copied.get("Next"), copied.get("Default")]
        transitions += [c["Next"] for c in copied.get("Catch", []) + copied.get("Choices", [])]
        for target in filter(None, transitions):
            assert asl_branches.parent_name(target) in names, (name, target)  # never leaves the branch
        undone = json.loads(
            json.dumps(copied).replace(asl_branches.CHILD_SUFFIX + '"', '"')  # every renamed transition
        )
        assert undone == state, name
    assert distributed["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert inline["ProcessorConfig"] == {"Mode": "INLINE"}


def test_a_state_names_no_other_state_in_the_whole_machine_twice() -> None:
    names: list[str] = []

    def collect(node: dict[str, Any]) -> None:
        for name, state in node["States"].items():
            names.append(name)
            if state["Type"] == "Map":
                collect(state["ItemProcessor"])

    collect(definition())
    assert len(names) == len(set(names))


def test_the_check_fails_when_the_copy_drifts(tmp_path: Path) -> None:
    drifted = definition()
    drifted["States"]["Configs"]["ItemProcessor"]["States"]["Collect"]["Comment"] = "edited inline only"
    path = tmp_path / "benchmark.asl.json"
    path.write_text(asl_branches.render(drifted), encoding="utf-8")
    assert asl_branches.main(["--check", str(path)]) == 1
    assert asl_branches.main([str(path)]) == 0  # the fix: copy it over
    assert asl_branches.main(["--check", str(path)]) == 0
    copied = json.loads(path.read_text(encoding="utf-8"))["States"]["DistributedConfigs"]["ItemProcessor"]
    assert copied["States"]["CollectChild"]["Comment"] == "edited inline only"


def test_the_script_names_a_missing_map() -> None:
    broken = definition()
    del broken["States"]["DistributedConfigs"]
    with pytest.raises(asl_branches.BranchError, match=r"States\.DistributedConfigs: a Map state expected"):
        asl_branches.synced(broken)


def test_a_child_name_is_undone_only_for_a_child() -> None:
    assert asl_branches.parent_name(asl_branches.child_name("Provision")) == "Provision"
    with pytest.raises(asl_branches.BranchError, match="'Provision' of DistributedConfigs"):
        asl_branches.parent_name("Provision")


# ------------------------------------------------------------------------------- the route


def test_plan_routes_once_per_run_on_its_map_mode() -> None:
    assert states()["Plan"]["Next"] == "RouteConfigs"
    route = states()["RouteConfigs"]
    assert route["Type"] == "Choice" and route["Default"] == "Configs"
    (choice,) = route["Choices"]
    assert choice == {"Variable": "$.map_mode", "StringEquals": "distributed", "Next": "DistributedConfigs"}
    modes = typing.get_args(PlanResult.model_fields["map_mode"].annotation)
    assert set(modes) == {"inline", "distributed"}


def test_both_maps_start_from_the_plan_and_end_in_the_same_states() -> None:
    inline, distributed = states()["Configs"], states()["DistributedConfigs"]
    shared = ("MaxConcurrencyPath", "ItemSelector", "ResultPath", "Next", "Catch")
    assert {key: inline[key] for key in shared} == {key: distributed[key] for key in shared}
    assert inline["ItemsPath"] == "$.items" and "ItemsPath" not in distributed
    assert inline["MaxConcurrencyPath"].removeprefix("$.") in PlanResult.model_fields


def test_the_distributed_map_reads_the_work_items_plan_wrote() -> None:
    reader = states()["DistributedConfigs"]["ItemReader"]
    assert reader["Resource"] == "arn:${Partition}:states:::s3:getObject"
    assert reader["ReaderConfig"] == {"InputType": "JSON"}  # a JSON array of WorkItem documents
    assert reader["Parameters"] == {"Bucket": "${ArtifactsBucket}", "Key.$": "$.work_items_key"}
    assert "work_items_key" in PlanResult.model_fields
    machine = load_template(REPO / "template.yaml")["Resources"]["BenchmarkStateMachine"]["Properties"]
    assert machine["DefinitionSubstitutions"]["ArtifactsBucket"] == {"Ref": "ArtifactsBucket"}
    grants = [
        s
        for policy in machine["Policies"]
        if isinstance(policy, dict) and "Statement" in policy
        for s in policy["Statement"]
        if s.get("Sid") == "DistributedMapReadsWorkItems"
    ]
    (grant,) = grants
    pattern = grant["Resource"]["Fn::Sub"].removeprefix("${ArtifactsBucket.Arn}/")
    assert pattern == work_items_key("*")


def test_sweep_run_names_every_config_on_both_paths() -> None:
    payload = states()["SweepRun"]["Parameters"]["Payload"]
    assert payload["config_ids.$"] == "$.config_ids" and "config_ids" in PlanResult.model_fields


# ------------------------------------------------------------------------------- the limits


def test_past_the_inline_map_a_request_holds_up_to_max_configs() -> None:
    assert INLINE_MAP_MAX_CONFIGS == 40 < MAX_CONFIGS
    configs = BenchmarkRequest.model_fields["configs"].metadata
    assert any(getattr(m, "max_length", None) == MAX_CONFIGS for m in configs)
    ceiling = [m.le for m in Guardrails.model_fields["max_configs_per_run"].metadata if hasattr(m, "le")]
    assert ceiling == [MAX_CONFIGS]  # the stack may allow what a request may hold, no more
    parameter = load_template(REPO / "template.yaml")["Parameters"]["MaxConfigsPerRun"]
    assert parameter["MaxValue"] == MAX_CONFIGS


def test_concurrency_stays_within_the_guardrails_on_either_map() -> None:
    """Configs at once: never more than 40 (the Map's MaxConcurrencyPath reads the Plan's, which the
    stack's max_concurrency and max_concurrent_instances cap)."""
    request_ceiling = [
        m.le for m in BenchmarkRequest.model_fields["max_concurrency"].metadata if hasattr(m, "le")
    ]
    plan_ceiling = [m.le for m in PlanResult.model_fields["max_concurrency"].metadata if hasattr(m, "le")]
    stack_ceiling = [m.le for m in Guardrails.model_fields["max_concurrency"].metadata if hasattr(m, "le")]
    assert request_ceiling == plan_ceiling == stack_ceiling == [MAX_CONCURRENCY]


# ------------------------------------------------------------------------------- statelint


def test_statelint_passes_with_only_its_input_type_gap_dropped() -> None:
    pytest.importorskip("statelint.linter", reason="statelint (a dev extra) is not installed")
    statelint_asl = script("statelint_asl")
    text = ASL.read_text(encoding="utf-8")
    assert statelint_asl.problems(text) == []
    unknown = definition()
    unknown["States"]["DistributedConfigs"]["ItemReader"]["ReaderConfig"]["InputType"] = "XML"
    assert statelint_asl.problems(json.dumps(unknown))  # not a type AWS lists: still a problem
    broken = copy.deepcopy(definition())
    del broken["States"]["DistributedConfigs"]["ItemProcessor"]["States"]["CollectChild"]["Next"]
    assert statelint_asl.problems(json.dumps(broken))  # every other problem still fails
