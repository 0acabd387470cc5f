"""The planning guardrails and the dry run's preview (planning.preview), shared by Plan and the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.planning.preview import preview_request
from storagebench.request import parse_request
from storagebench.workflow.settings import Guardrails

REPO = Path(__file__).resolve().parents[3]


def request(**changes: Any) -> Any:
    document = json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    document.update(changes)
    return parse_request(document)


def test_the_estimate_prices_every_config_for_max_run_hours_with_the_snapshot() -> None:
    preview = preview_request(request(timing={"max_run_hours": 2, "command_timeout_h": 1}), Guardrails())
    estimate = preview.estimate
    assert estimate.hours == 2 and "timing.max_run_hours" in estimate.duration_basis
    assert estimate.price_source == "snapshot" and estimate.price_date and estimate.complete
    assert estimate.total_usd == pytest.approx(sum(c.run_usd for c in preview.configs))
    config = preview.configs[0]
    assert config.run_usd == pytest.approx(config.monthly_usd * 2 / 730)
    assert all(c.steps for c in preview.configs) and preview.problems == []


def test_twice_the_hours_is_twice_the_estimate() -> None:
    one = preview_request(
        request(timing={"max_run_hours": 3, "command_timeout_h": 1}), Guardrails()
    ).estimate.total_usd
    two = preview_request(
        request(timing={"max_run_hours": 6, "command_timeout_h": 1}), Guardrails()
    ).estimate.total_usd
    assert two == pytest.approx(2 * one)


def test_each_limit_names_its_parameter_its_value_and_the_requests() -> None:
    limits = Guardrails(
        max_run_cost_usd=1, max_run_hours=10, max_configs_per_run=1, allowed_instance_types=("m7g.large",)
    )
    preview = preview_request(request(), limits)
    problems = {p.limit: p for p in preview.problems}
    assert set(problems) == {"MaxRunCostUsd", "MaxRunHours", "MaxConfigsPerRun", "AllowedInstanceTypes"}
    assert problems["MaxRunHours"].value == 24 and problems["MaxRunHours"].limit_value == 10
    assert (
        "24 h" in problems["MaxRunHours"].message
        and "at most 10 h (MaxRunHours)" in problems["MaxRunHours"].message
    )
    cost = problems["MaxRunCostUsd"]
    assert cost.value == pytest.approx(preview.estimate.total_usd, abs=0.01) and "$1.00" in cost.message
    fields = [p.field for p in preview.problems if p.limit == "AllowedInstanceTypes"]
    assert fields == ["configs[0].instance_type", "configs[1].instance_type", "configs[2].instance_type"]
    assert not preview.allowed and "MaxRunCostUsd" in preview.problem_text()


def test_a_request_within_every_limit_is_allowed() -> None:
    total = preview_request(request(), Guardrails()).estimate.total_usd
    assert preview_request(request(), Guardrails(max_run_cost_usd=total + 0.01, max_run_hours=24)).allowed
    assert not preview_request(request(), Guardrails(max_run_cost_usd=total - 0.01)).allowed


@pytest.mark.parametrize(
    ("requested", "stack", "instances", "expected"),
    [(None, 8, 2, 2), (3, 8, 20, 3), (3, 8, 1, 1), (None, 2, 20, 2)],
)
def test_concurrency_is_capped_to_the_instances_allowed_at_once(
    requested: int | None, stack: int, instances: int, expected: int
) -> None:
    preview = preview_request(
        request(max_concurrency=requested),
        Guardrails(max_concurrency=stack, max_concurrent_instances=instances),
    )
    assert preview.max_concurrency == preview.concurrent_instances == expected
    assert preview.allowed
    capped = any("MaxConcurrentInstances" in note for note in preview.notes)
    assert capped == (instances < min(requested or stack, stack, 3))


def test_a_region_the_snapshot_lacks_is_estimated_with_us_east_1_and_says_so() -> None:
    preview = preview_request(request(region="eu-west-1"), Guardrails())
    assert preview.estimate.priced_region == "us-east-1" and preview.estimate.total_usd > 0
    assert any("no eu-west-1 prices" in note for note in preview.estimate.notes)


def test_the_new_guardrails_come_from_the_environment_and_are_checked() -> None:
    limits = Guardrails.from_env(
        {"MAX_CONCURRENT_INSTANCES": "6", "MAX_RUN_COST_USD": "12.5", "MAX_RUN_HOURS": "8"}
    )
    assert (limits.max_concurrent_instances, limits.max_run_cost_usd, limits.max_run_hours) == (6, 12.5, 8)
    with pytest.raises(ValueError, match=r"stack setting max_run_hours: .*got '169'"):
        Guardrails.from_env({"MAX_RUN_HOURS": "169"})
    with pytest.raises(ValueError, match="stack setting max_run_cost_usd"):
        Guardrails.from_env({"MAX_RUN_COST_USD": "nan"})


def test_the_template_parameters_match_the_guardrails() -> None:
    pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra)")
    from storagebench.local.cfn import load_template

    template = load_template(REPO / "template.yaml")
    parameters = template["Parameters"]
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    for parameter, variable, name in (
        ("MaxConcurrentInstances", "MAX_CONCURRENT_INSTANCES", "max_concurrent_instances"),
        ("MaxRunCostUsd", "MAX_RUN_COST_USD", "max_run_cost_usd"),
        ("MaxRunHours", "MAX_RUN_HOURS", "max_run_hours"),
    ):
        assert variables[variable] == {"Ref": parameter}
        assert parameters[parameter]["Default"] == Guardrails.model_fields[name].default
        bounds = {type(m).__name__: m for m in Guardrails.model_fields[name].metadata}
        assert parameters[parameter]["MaxValue"] == bounds["Le"].le
        low = bounds.get("Ge")
        assert parameters[parameter]["MinValue"] == (low.ge if low else parameters[parameter]["MinValue"])
        assert parameters[parameter]["MinValue"] > 0
