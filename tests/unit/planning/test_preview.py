"""The planning guardrails and the dry run's preview (planning.preview), shared by Plan and the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import GATEWAY_VARIABLES, Guardrails
from storagebench.planning.preview import preview_request
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.request import parse_request

REPO = Path(__file__).resolve().parents[3]


def request(**changes: Any) -> Any:
    document = json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    document.update(changes)
    return parse_request(document)


def test_the_estimate_prices_each_config_for_its_expected_hours_and_bounds_it_by_max_run_hours() -> None:
    preview = preview_request(request(timing={"max_run_hours": 2, "command_timeout_h": 1}), Guardrails())
    estimate = preview.estimate
    assert estimate.upper_bound_hours == 2 and "planning.duration" in estimate.duration_basis
    assert estimate.price_source == "snapshot" and estimate.price_date and estimate.complete
    assert estimate.total_usd == pytest.approx(sum(c.run_usd for c in preview.configs))
    assert estimate.upper_bound_usd == pytest.approx(sum(c.upper_bound_usd for c in preview.configs))
    expected = {c.config_id: c.hours for c in estimate.duration.configs}
    for config in preview.configs:
        assert config.expected_hours == pytest.approx(expected[config.id], abs=1e-6)
        # both run_usd and expected_hours are rounded to 6 decimals
        assert config.run_usd == pytest.approx(config.monthly_usd * config.expected_hours / 730, abs=2e-6)
        assert config.upper_bound_usd == pytest.approx(config.monthly_usd * 2 / 730)
    assert estimate.wall_hours == pytest.approx(max(expected.values()))  # all three at once
    assert all(c.steps for c in preview.configs) and preview.problems == []


def test_the_expected_cost_follows_the_workloads_and_the_upper_bound_the_deadline() -> None:
    short, long = (
        preview_request(
            request(repetitions=n, timing={"max_run_hours": h, "command_timeout_h": 1}), Guardrails()
        )
        for n, h in ((1, 3), (4, 6))
    )
    assert long.estimate.upper_bound_usd == pytest.approx(2 * short.estimate.upper_bound_usd)
    assert long.estimate.total_usd > short.estimate.total_usd
    assert long.estimate.wall_hours > short.estimate.wall_hours


def test_workloads_that_cannot_finish_before_the_deadline_are_refused_naming_the_fields() -> None:
    # The standard suite at scale 30: six workloads of 5,400 s, 2 repetitions: 18 h per config.
    slow = request(
        workloads=[{"suite": "standard", "scale": 30}],
        timing={"max_run_hours": 6, "command_timeout_h": 6},
        max_concurrency=1,
    )
    preview = preview_request(slow, Guardrails())
    (problem,) = [p for p in preview.problems if p.field == "timing.max_run_hours"]
    assert problem.limit == "MaxRunHours" and problem.limit_value == 6
    assert problem.value == pytest.approx(preview.estimate.wall_hours, abs=0.01) and problem.value > 6
    assert "timing.max_run_hours 6 h" in problem.message and "1 at once" in problem.message
    assert "MaxRunHours" in problem.message and "scale" in problem.message
    assert any("timing.command_timeout_h" in note for note in preview.notes)


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
    assert cost.value == pytest.approx(preview.estimate.upper_bound_usd, abs=0.01) and "$1.00" in cost.message
    assert "lived until timing.max_run_hours 24 h" in cost.message and "(expected $" in cost.message
    fields = [p.field for p in preview.problems if p.limit == "AllowedInstanceTypes"]
    assert fields == ["configs[0].instance_type", "configs[1].instance_type", "configs[2].instance_type"]
    assert not preview.allowed and "MaxRunCostUsd" in preview.problem_text()


def test_the_cost_limit_holds_the_upper_bound_not_the_expected_cost() -> None:
    estimate = preview_request(request(), Guardrails()).estimate
    assert estimate.total_usd < estimate.upper_bound_usd
    ceiling = estimate.upper_bound_usd
    assert preview_request(request(), Guardrails(max_run_cost_usd=ceiling + 0.01, max_run_hours=24)).allowed
    # a limit above the expected cost but below the upper bound no longer lets the run through
    refused = preview_request(request(), Guardrails(max_run_cost_usd=ceiling - 0.01))
    assert not refused.allowed and [p.limit for p in refused.problems] == ["MaxRunCostUsd"]


def test_an_instance_type_that_cannot_be_priced_is_refused_not_counted_as_zero() -> None:
    document = json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    document["configs"][0]["instance_type"] = "m7g.4xlarge"  # in the catalog; the book has no eu-west-3
    book = SnapshotPriceBook("eu-west-3")
    preview = preview_request(parse_request(document), Guardrails(max_run_cost_usd=1_000_000), book)
    (problem,) = [p for p in preview.problems if p.value == "m7g.4xlarge"]
    assert problem.field == "configs[0].instance_type" and problem.limit == "MaxRunCostUsd"
    assert "cannot be priced" in problem.message and "storagebench prices refresh" in problem.message
    assert not preview.allowed


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
    from storagebench_local.cfn import load_template

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


def _event(name: str) -> Any:
    return parse_request(json.loads((REPO / "events" / name).read_text(encoding="utf-8")))


def test_every_run_is_held_to_what_it_costs_until_its_deadline() -> None:
    # virtual-san's NVMe-oF directories have no catalog rate: its expected cost is only a floor;
    # either way the limit holds the clients and their 13 controllers kept until max_run_hours.
    preview = preview_request(_event("virtual-san.json"), Guardrails(max_run_cost_usd=400))
    assert not preview.estimate.duration.complete and preview.estimate.total_usd < 400
    (problem,) = preview.problems
    assert problem.limit == "MaxRunCostUsd" and problem.value == round(preview.estimate.upper_bound_usd, 2)
    # the study's 2-hour deadline keeps it under the stack's default limit ($500)
    by_default = preview_request(_event("virtual-san.json"), Guardrails())
    assert by_default.estimate.upper_bound_usd < 500 and by_default.allowed
    assert [c.machines for c in by_default.configs][1:] == [
        "r5n.24xlarge + 5 controller r5b.24xlarge",
        "r5n.24xlarge + 8 controller i3en.24xlarge",
    ]


def test_a_config_larger_than_the_instance_limit_says_what_to_raise() -> None:
    preview = preview_request(_event("virtual-san.json"), Guardrails(max_concurrent_instances=8))
    (problem,) = [p for p in preview.problems if p.limit == "MaxConcurrentInstances"]
    assert (problem.field, problem.value, problem.limit_value) == ("configs[2]", 9, 8)
    assert "raise it to at least 9" in problem.message and "1 client(s), 8 node(s)" in problem.message
    # the largest configs that fit together run at once: 9 + 6 instances, not 3 x 9
    fitting = preview_request(_event("virtual-san.json"), Guardrails(max_concurrent_instances=15))
    assert (fitting.max_concurrency, fitting.concurrent_instances) == (2, 15)
    # a timed run is held to its upper bound too, not to its expected cost
    nightly = preview_request(_event("nightly.json"), Guardrails(max_run_cost_usd=5))
    assert nightly.estimate.duration.complete and nightly.estimate.total_usd < 5
    assert nightly.estimate.upper_bound_usd > 5 and not nightly.allowed


def test_the_file_gateway_study_is_previewed_priced_and_checked_against_the_stack() -> None:
    limits = Guardrails(
        max_run_cost_usd=10_000,
        max_run_hours=168,
        allowed_instance_types=("c5.large",),
        max_concurrent_instances=4,
        unprovisionable_kinds={},  # a stack with the gateway settings
    )
    preview = preview_request(_event("file-gateway-io1-vs-gp2.json"), limits)
    problems = {(p.field, p.limit): p for p in preview.problems}
    # The appliance is an instance: the stack's allow-list applies to it as to the client.
    appliance = problems["configs[0].targets[0].gateway_instance_type", "AllowedInstanceTypes"]
    assert appliance.value == "c5.4xlarge" and "not allowed by this stack" in appliance.message
    assert len(preview.problems) == 2  # a stack with gateway settings provisions the kind
    # Two instances per config (client and appliance): 4 allowed at once runs both configs together.
    assert (preview.max_concurrency, preview.concurrent_instances) == (2, 4)
    assert preview.configs[0].targets == ["share (file_gateway c5.4xlarge, cache io1 512 GiB)"]
    assert preview.configs[1].monthly_usd == pytest.approx(555.60 + 62.05 + 0.64)
    gateway = preview.estimate.configs["configs"][1]
    assert gateway["delta_gateway_monthly_pct"] == pytest.approx(-40.12, abs=0.01)
    assert not preview.estimate.duration.complete  # the share's rate is not in the catalog


def test_gateway_appliances_count_against_concurrent_instances() -> None:
    preview = preview_request(_event("file-gateway-io1-vs-gp2.json"), Guardrails(max_concurrent_instances=3))
    assert (preview.max_concurrency, preview.concurrent_instances) == (1, 2)
    assert any("could run 4 instances; capped to 1" in note for note in preview.notes)


def test_a_stack_without_gateway_settings_refuses_the_kind_naming_what_is_unset() -> None:
    env = {"MAX_RUN_COST_USD": "10000", "MAX_RUN_HOURS": "168", "SHARE_BUCKET": "b"}
    preview = preview_request(_event("file-gateway-io1-vs-gp2.json"), Guardrails.from_env(env))
    refused = {(p.field, p.limit): p for p in preview.problems}[
        "configs[1].targets[0].kind", "ProvisionableKinds"
    ]
    assert refused.value == "file_gateway" and refused.limit_value == ["file_gateway"]
    assert "GATEWAY_SECURITY_GROUP_ID, SHARE_ROLE_ARN, ACTIVATOR_FUNCTION unset" in refused.message
    assert "SHARE_BUCKET" not in refused.message.split("(")[1]
    complete = dict.fromkeys(GATEWAY_VARIABLES, "x") | {"MAX_RUN_COST_USD": "10000", "MAX_RUN_HOURS": "168"}
    assert preview_request(_event("file-gateway-io1-vs-gp2.json"), Guardrails.from_env(complete)).allowed


def test_the_report_card_is_estimated_completely_and_names_its_unverified_price() -> None:
    request = parse_request(json.loads((REPO / "events" / "report-card.json").read_text(encoding="utf-8")))
    preview = preview_request(request, Guardrails(max_run_cost_usd=1000))
    assert preview.estimate.complete and not preview.problems
    assert preview.estimate.upper_bound_usd == pytest.approx(131.18, abs=0.01)
    [line] = [n for n in preview.estimate.notes if n.startswith("unverified price: ")]
    assert line.startswith(
        "unverified price: r3.4xlarge EBS-optimized fee ($0.10/Hrs) in magnetic, gp2, io1: "
    )
    assert "$0.05 per 1,000 Mbps" in line
