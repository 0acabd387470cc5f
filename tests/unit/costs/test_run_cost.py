"""The cost of a benchmark run from measured durations, transitions and Lambda time."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from reference_book import ReferenceBook
from tests.support.requests import controllers, virtual_san

from storagebench.core.state import ConfigState
from storagebench.costs.monthly import monthly_cost
from storagebench.costs.run_cost import (
    RUN_LEVEL_TRANSITIONS,
    ConfigTransitions,
    ConfigUsage,
    FileSystemUsage,
    LambdaUsage,
    VolumeUsage,
    count_transitions,
    other_machine_usages,
    run_cost,
    seconds_between,
    transitions_from_state,
    transitions_from_states,
    usage_for_config,
)
from storagebench.request import EfsTarget, FsxLustreTarget, load_request

EVENTS = Path(__file__).resolve().parents[3] / "events"
SECONDS_PER_MONTH = 730 * 3600


def book() -> Any:
    return ReferenceBook()


def by_name(cost: Any, name: str, config_id: str | None = None) -> float:
    return float(
        sum(
            c.usd
            for c in cost.components
            if c.name == name and (config_id is None or c.config_id == config_id)
        )
    )


# ----------------------------------------------------------------------------- infrastructure


def test_study1_alpha_for_two_hours() -> None:
    alpha = load_request(EVENTS / "file-gateway-io1-vs-gp2.json").config("alpha-io1")
    cost = run_cost([usage_for_config(alpha, 7200)], book())
    assert by_name(cost, "gateway-instance") == pytest.approx(2 * 0.68)  # the c5.4xlarge appliance
    assert by_name(cost, "instance") == pytest.approx(2 * 0.085)  # the c5.large client
    volumes = 80 * 0.125 + 4_000 * 0.065 + 512 * 0.125 + 1_500 * 0.065  # $431.50 a month
    volumes += 8 * 0.08  # the client's gp3 root
    ebs = by_name(cost, "ebs-storage") + by_name(cost, "ebs-iops")
    assert ebs == pytest.approx(volumes * 7200 / SECONDS_PER_MONTH)
    assert cost.total_usd == pytest.approx(1.36 + 0.17 + 432.14 * 2 / 730)
    assert cost.by_config == pytest.approx({"alpha-io1": cost.total_usd})
    assert cost.orchestration_usd == 0
    appliance = next(c for c in cost.components if c.name == "gateway-instance")
    assert (appliance.target_id, appliance.quantity, appliance.unit) == ("share", 7200, "s")
    storage = next(
        c for c in cost.components if c.name == "ebs-storage" and c.target_id == "share/gateway-cache"
    )
    assert (storage.quantity, storage.unit) == (512 * 7200, "GB-s")  # volume GB-seconds
    assert (storage.price_usd, storage.price_unit) == (0.125, "GB-Mo")
    assert cost.price_source == "snapshot" and cost.price_date == "2026-11-21"


def test_instances_and_volumes_bill_at_least_60_seconds() -> None:
    usage = ConfigUsage(
        config_id="quick",
        instance_type="c5.large",
        instance_seconds=10,
        volumes=[VolumeUsage(volume_type="gp2", size_gib=100, seconds=5)],
    )
    cost = run_cost([usage], book())
    assert by_name(cost, "instance") == pytest.approx(0.085 * 60 / 3600)
    assert by_name(cost, "ebs-storage") == pytest.approx(100 * 0.10 * 60 / SECONDS_PER_MONTH)
    never = ConfigUsage(config_id="never", instance_type="c5.large", instance_seconds=0)
    assert run_cost([never], book()).total_usd == 0


def test_file_systems_bill_every_started_hour() -> None:
    fsx = FsxLustreTarget(id="l", kind="fsx_lustre", deployment_type="SCRATCH_2", storage_capacity_gib=1200)
    efs = EfsTarget(id="e", kind="efs", throughput_mode="bursting", storage_gib_hint=1024)
    usage = ConfigUsage(
        config_id="fs",
        instance_type="c5.2xlarge",
        instance_seconds=3601,
        file_systems=[FileSystemUsage(target=fsx, seconds=3601), FileSystemUsage(target=efs, seconds=1800)],
    )
    cost = run_cost([usage], book())
    assert by_name(cost, "fsx-storage") == pytest.approx(1200 * 0.14 * 2 / 730)  # 1 h 1 s -> 2 hours
    assert by_name(cost, "efs-storage") == pytest.approx(1024 * 0.30 * 1 / 730)  # 30 min -> 1 hour
    fsx_line = next(c for c in cost.components if c.name == "fsx-storage")
    assert (fsx_line.quantity, fsx_line.unit) == (2400, "GB-h")
    assert "2 started hour(s)" in fsx_line.detail


def test_efs_elastic_bytes_and_measured_storage() -> None:
    efs = EfsTarget(id="e", kind="efs", throughput_mode="elastic")
    usage = ConfigUsage(
        config_id="efs",
        instance_type="c5.large",
        instance_seconds=3600,
        file_systems=[FileSystemUsage(target=efs, seconds=3600, stored_gib=50, read_gb=10, written_gb=5)],
    )
    cost = run_cost([usage], book())
    assert by_name(cost, "efs-elastic") == pytest.approx(10 * 0.03 + 5 * 0.06)
    assert by_name(cost, "efs-storage") == pytest.approx(50 * 0.30 / 730)


def test_efs_without_a_size_says_storage_was_not_priced() -> None:
    efs = EfsTarget(id="e", kind="efs", throughput_mode="bursting")
    usage = ConfigUsage("efs", "c5.large", 3600, file_systems=[FileSystemUsage(target=efs, seconds=3600)])
    cost = run_cost([usage], book())
    assert by_name(cost, "efs-storage") == 0
    assert any("EFS storage not priced" in n for n in cost.notes)


def test_usage_for_config_covers_root_members_and_file_systems() -> None:
    request = load_request(EVENTS / "genomics-file-systems.json")
    usage = usage_for_config(
        request.config("efs-standard"), 86_400, file_system_seconds=90_000, efs_stored_gib={"shared": 1000}
    )
    assert [v.target_id for v in usage.volumes] == ["root"]
    assert usage.file_systems[0].seconds == 90_000 and usage.file_systems[0].stored_gib == 1000
    card = load_request(EVENTS / "report-card.json").config("io1")
    members = usage_for_config(card, 60).volumes
    assert [(v.target_id, v.member) for v in members] == [("root", None), ("db", 0), ("db", 1), ("db", 2)]


def test_a_run_of_a_virtual_san_pays_for_every_controller() -> None:
    # An hour of the config, billed per second, is its monthly bill prorated: controllers included.
    config = load_request(EVENTS / "virtual-san.json").config("r5b-io2-controllers")
    usages = [usage_for_config(config, 3600), *other_machine_usages(config, 3600)]
    assert [u.instance_type for u in usages] == ["r5n.24xlarge"] + ["r5b.24xlarge"] * 5  # 100 Gbps client
    # the 5 Multi-Attach volumes all 5 controllers share, billed once (on the first)
    assert [[v.target_id for v in u.volumes] for u in usages[1:]] == [["root", *["controller:data"] * 5]] + [
        ["root"]
    ] * 4
    cost = run_cost(usages, book())
    assert cost.infrastructure_usd == pytest.approx(monthly_cost(config, book()).for_hours(1).usd)
    assert cost.infrastructure_usd == pytest.approx(82145.60 / 730)


def test_extra_clients_pay_their_instance_and_root_not_the_shared_target_again() -> None:
    config = load_request(EVENTS / "genomics-shared-clients.json").config("efs-standard-8clients")
    extra = other_machine_usages(config, 600)
    assert len(extra) == 7 and all(not u.file_systems and len(u.volumes) == 1 for u in extra)


# ----------------------------------------------------------------------------- transitions


def test_transition_counts_per_config_and_run() -> None:
    count = count_transitions([ConfigTransitions("a", polls=4), ConfigTransitions("b", polls=6)])
    # Provision + 3 per poll + RunAgent + Collect + Cleanup
    assert count.per_config == {"a": 1 + 12 + 3, "b": 1 + 18 + 3}
    assert count.run_level == RUN_LEVEL_TRANSITIONS == 3  # Plan, the Map state, Finalize
    assert count.total == 16 + 22 + 3
    assert count_transitions([ConfigTransitions("a", polls=4)], map_overhead_per_config=2).total == 16 + 2 + 3
    failed = ConfigTransitions("f", polls=0, reached_agent=False)  # Provision, RecordFailure, Cleanup
    assert failed.count() == 3
    assert (
        ConfigTransitions("r", polls=2, reached_agent=True, agent_failed=True, retries=2).count()
        == 1 + 6 + 3 + 1 + 2
    )


def _state(config_id: str, **updates: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "item": {
            "run_id": "r1",
            "config_id": config_id,
            "suite": "s",
            "region": "us-east-1",
            "started_at": "2026-11-21T00:00:00Z",
            "expires_at": "2026-11-22T00:00:00Z",
            "timing": {
                "ready_poll_s": 15,
                "ready_timeout_s": 900,
                "heartbeat_s": 300,
                "command_timeout_s": 3600,
            },
            "artifacts_prefix": f"runs/r1/{config_id}/",
        }
    }
    state.update(updates)
    return state


def test_transitions_from_stored_config_states() -> None:
    ok = _state("ok", ready={"state": "ready", "reason": "ready", "polls": 5})
    provision_failed = _state("p", errors=[{"step": "provision", "error": "E", "cause": "c"}])
    never_ready = _state(
        "n",
        ready={"state": "waiting", "reason": "waiting", "polls": 2},
        errors=[{"step": "ready", "error": "NotReady", "cause": "c"}],
    )
    agent_failed = _state(
        "a",
        ready={"state": "ready", "reason": "ready", "polls": 1},
        errors=[{"step": "agent", "error": "States.HeartbeatTimeout", "cause": "c"}],
        caught_cleanup={"Error": "E", "Cause": "c"},
    )
    assert transitions_from_state(ok).count() == 1 + 15 + 3
    assert transitions_from_state(ConfigState.model_validate(ok)).count() == 19
    assert transitions_from_state(provision_failed).count() == 3
    assert transitions_from_state(never_ready).count() == 1 + 6 + 2 + 1 + 1  # + the failing Wait/CheckReady
    assert (
        transitions_from_state(agent_failed).count() == 1 + 3 + 3 + 1 + 1
    )  # RecordAgentFailure, CleanupFailed
    count = transitions_from_states([ok, provision_failed, never_ready, agent_failed])
    assert count.total == 19 + 3 + 11 + 9 + 3
    assert any("floor" in n for n in count.notes)


# ----------------------------------------------------------------------------- orchestration


def test_step_functions_and_lambda() -> None:
    lambdas = [
        LambdaUsage("provision", invocations=100, memory_mb=512, avg_duration_ms=200),
        LambdaUsage("collect", invocations=10, memory_mb=1024, avg_duration_ms=1000, architecture="arm64"),
    ]
    cost = run_cost([], book(), transitions=count_transitions([ConfigTransitions("a", 4)]), lambdas=lambdas)
    assert cost.transitions == 19
    assert by_name(cost, "stepfunctions") == pytest.approx(19 * 0.000025)
    # 100 x 0.5 GB x 0.2 s = 10 GB-s; 10 x 1 GB x 1 s = 10 GB-s (arm64)
    assert by_name(cost, "lambda-compute") == pytest.approx(10 * 0.0000166667 + 10 * 0.0000133334)
    assert by_name(cost, "lambda-requests") == pytest.approx(110 * 0.0000002)
    assert cost.orchestration_usd == pytest.approx(cost.total_usd)
    assert cost.infrastructure_usd == 0
    assert any("free tiers" in n for n in cost.notes)
    assert run_cost([], book(), transitions=41).transitions == 41


def test_missing_prices_are_named() -> None:
    cost = run_cost(
        [ConfigUsage("x", "c5.large", 60)],
        ReferenceBook(missing=frozenset({"sfn", "instance"})),
        transitions=10,
    )
    assert cost.total_usd == 0
    assert len(cost.missing_prices) == 2


def test_bad_durations_are_refused() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        run_cost([ConfigUsage("x", "c5.large", -1)], book())
    assert seconds_between("2026-11-21T10:00:00+00:00", "2026-11-21T12:30:00+00:00") == 9000
    with pytest.raises(ValueError, match="before"):
        seconds_between("2026-11-21T12:00:00+00:00", "2026-11-21T10:00:00+00:00")


def _controllers(multi_attach: bool) -> Any:
    from storagebench.request.model import Config

    data = {
        "id": "data",
        "kind": "ebs",
        "type": "io2",
        "size_gib": 500,
        "iops": 16000,
        "count": 2,
        "layout": "jbod",
        "filesystem": "raw",
        "multi_attach": multi_attach,
    }
    return Config.model_validate(virtual_san([controllers(3, targets=[data])], placement="cluster"))


def test_a_multi_attach_volume_is_priced_once_for_the_group_monthly_and_by_the_run() -> None:
    """Three controllers share two io2 volumes: two volumes billed, not six."""
    volume = 500 * 0.125 + 16000 * 0.065
    shared, own = _controllers(True), _controllers(False)
    shared_month, own_month = monthly_cost(shared, book()), monthly_cost(own, book())
    assert own_month.monthly_usd - shared_month.monthly_usd == pytest.approx(4 * volume)
    data = [c for c in shared_month.components if c.target_id == "controller:data"]
    assert data and all(c.count == 1 and c.node == "controller" for c in data)
    assert math.fsum(c.monthly_usd for c in data) == pytest.approx(2 * volume)
    said = "Multi-Attach, one volume attached to all 3 nodes, priced once"
    assert any(said in n for n in shared_month.notes)
    extra = other_machine_usages(shared, 3600)
    assert [[v.target_id for v in u.volumes] for u in extra] == [
        ["root", "controller:data", "controller:data"],
        ["root"],
        ["root"],
    ]
    run = run_cost([usage_for_config(shared, 3600), *extra], book())
    assert run.infrastructure_usd == pytest.approx(shared_month.for_hours(1).usd)
