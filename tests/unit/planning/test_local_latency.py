"""Every emulated EBS volume in a local plan carries its type's service time from the catalog."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.agent.twin.model import ServiceTime
from storagebench.catalog import load_catalog
from storagebench.catalog.envelope import emulation_latency
from storagebench.planning import LocalOptions, build_plan, local_targets
from storagebench.protocol.plan import check_plan
from storagebench.request import BenchmarkRequest, parse_request

NO_STRIPE = LocalOptions(can_stripe=False)
STRIPE = LocalOptions(can_stripe=True)
# One valid target per catalog volume type (HDD types start at 125 GiB; io1/io2 need IOPS).
TARGETS: dict[str, dict[str, Any]] = {
    "gp2": {"size_gib": 100},
    "gp3": {"size_gib": 100},
    "io1": {"size_gib": 100, "iops": 4000},
    "io2": {"size_gib": 100, "iops": 4000},
    "st1": {"size_gib": 500},
    "sc1": {"size_gib": 500},
    "standard": {"size_gib": 100},
}


def request(targets: list[dict[str, Any]]) -> BenchmarkRequest:
    return parse_request(
        {
            "name": "latency-test",
            "configs": [{"id": "cfg", "instance_type": "c5.4xlarge", "targets": targets}],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )


def test_every_catalog_type_is_covered() -> None:
    assert set(TARGETS) == set(load_catalog().ebs)


@pytest.mark.parametrize("volume_type", sorted(TARGETS))
def test_a_volume_carries_its_type_latency(volume_type: str) -> None:
    req = request([{"kind": "ebs", "type": volume_type, **TARGETS[volume_type]}])
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    (emulation,) = spec["emulate"]
    catalog = load_catalog().ebs[volume_type].latency
    assert catalog is not None
    assert emulation["latency"] == emulation_latency(volume_type)
    assert emulation["latency"]["source"] == catalog.source
    assert [m["p50_ms"] for m in emulation["latency"]["modes"]] == [m.p50_ms for m in catalog.modes]


def test_every_emulated_target_of_a_plan_carries_latency_the_twin_accepts() -> None:
    targets = [{"kind": "ebs", "type": t, **TARGETS[t]} for t in sorted(TARGETS)]
    # ... and a stripe: 8 targets, the most a config takes.
    targets.append({"kind": "ebs", "type": "gp2", "size_gib": 100, "count": 2})
    req = request(targets)
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0], STRIPE))
    check_plan(plan)
    emulated = [(t["id"], e) for t in plan["targets"] for e in t.get("emulate", [])]
    assert len(emulated) == len(TARGETS) + 2
    for target_id, emulation in emulated:
        assert "latency" in emulation, target_id
        volume_type = emulation["volume_type"]
        assert emulation["latency"] == emulation_latency(volume_type), target_id
        ServiceTime.from_spec(emulation["latency"], seed=3)  # the twin reads it as it stands


def test_stripe_members_each_carry_the_member_latency() -> None:
    req = request([{"kind": "ebs", "type": "gp3", "size_gib": 100, "count": 3}])
    (spec,) = local_targets(req.configs[0], STRIPE)
    assert [e["latency"] for e in spec["emulate"]] == [emulation_latency("gp3")] * 3


def test_summed_stripe_keeps_the_member_service_time() -> None:
    # Striping adds rate, not speed: the summed device's limits triple, its per-I/O latency does not.
    req = request([{"kind": "ebs", "type": "io2", "size_gib": 100, "iops": 4000, "count": 3}])
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    (merged,) = spec["emulate"]
    assert "raid0-summed" in merged["volume_type"]
    assert merged["limits"]["iops"] == 3 * 4000
    assert merged["latency"] == emulation_latency("io2")


def test_jbod_members_each_carry_latency() -> None:
    req = request(
        [{"kind": "ebs", "type": "st1", "size_gib": 500, "count": 2, "layout": "jbod", "filesystem": "raw"}]
    )
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    assert [e["latency"] for e in spec["emulate"]] == [emulation_latency("st1")] * 2
