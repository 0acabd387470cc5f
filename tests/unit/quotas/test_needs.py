"""The vCPUs a request needs at once per EC2 quota: clients, nodes, appliances, Spot, concurrency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.catalog import load_catalog
from storagebench.quotas.needs import vcpu_needs
from storagebench.request import parse_request

EVENTS = Path(__file__).resolve().parents[3] / "events"
STANDARD, STANDARD_SPOT = "L-1216C47A", "L-34B43A08"


def _event(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    return document


def _configs(**a_changes: Any) -> list[dict[str, Any]]:
    """Config a on a c5.4xlarge (16 vCPUs) and b on an m5.large (2), each with a 100 GiB gp3 volume;
    ``a_changes`` are set on a."""

    def gp3() -> list[dict[str, Any]]:
        return [{"kind": "ebs", "type": "gp3", "size_gib": 100}]

    return [
        {"id": "a", "instance_type": "c5.4xlarge", "targets": gp3(), **a_changes},
        {"id": "b", "instance_type": "m5.large", "targets": gp3()},
    ]


def _request(**changes: Any) -> Any:
    document = {
        "name": "quota-needs",
        "region": "us-east-1",
        "configs": _configs(),
        "workloads": [{"suite": "standard"}],
        **changes,
    }
    return parse_request(document)


def test_the_virtual_san_event_needs_1536_on_demand_standard_vcpus_at_once() -> None:
    request = parse_request(_event("virtual-san.json"))
    needs, notes = vcpu_needs(request, 3, "on-demand")
    assert notes == []
    [need] = needs
    assert (need.code, need.market, need.group) == (STANDARD, "on-demand", "Standard")
    # clients 3 x r5b.24xlarge (96), 5 r5b.24xlarge and 8 i3en.24xlarge controllers (96 each)
    assert need.per_config == {"io2-direct": 96, "r5b-io2-controllers": 576, "i3en-controllers": 864}
    assert need.vcpus_at_once == 1536 and need.configs_at_once == 3
    assert need.name == "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"


def test_at_once_is_the_largest_configs_the_concurrency_runs_together() -> None:
    request = parse_request(_event("virtual-san.json"))
    assert vcpu_needs(request, 1, "on-demand")[0][0].vcpus_at_once == 864
    assert vcpu_needs(request, 2, "on-demand")[0][0].vcpus_at_once == 864 + 576
    need = vcpu_needs(request, 3, "on-demand")[0][0]
    assert [need.fitting(q) for q in (95, 864, 1439, 1440, 1536)] == [0, 1, 1, 2, 3]


def test_a_spot_config_draws_on_the_spot_quota_only() -> None:
    request = _request(configs=_configs(purchase="spot"))
    needs = {n.code: n for n in vcpu_needs(request, 2, "on-demand")[0]}
    assert needs[STANDARD_SPOT].per_config == {"a": 16} and needs[STANDARD_SPOT].market == "spot"
    assert needs[STANDARD].per_config == {"b": 2}
    assert needs[STANDARD_SPOT].name == "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests"


def test_the_stacks_default_purchase_counts_and_spot_then_on_demand_draws_on_both() -> None:
    spot = {n.code: n.per_config for n in vcpu_needs(_request(), 2, "spot")[0]}
    assert spot == {STANDARD_SPOT: {"a": 16, "b": 2}}
    both = {
        n.code: n.per_config for n in vcpu_needs(_request(purchase="spot-then-on-demand"), 2, "on-demand")[0]
    }
    assert both == {STANDARD_SPOT: {"a": 16, "b": 2}, STANDARD: {"a": 16, "b": 2}}


def test_nodes_and_clients_of_a_config_of_several_machines_are_on_demand() -> None:
    request = parse_request({**_event("virtual-san.json"), "purchase": "spot"})
    needs = vcpu_needs(request, 3, "on-demand")[0]
    # io2-direct is one machine: Spot; the controller configs stay on-demand, clients included
    assert {n.code: n.per_config for n in needs} == {
        STANDARD: {"r5b-io2-controllers": 576, "i3en-controllers": 864},
        STANDARD_SPOT: {"io2-direct": 96},
    }


def test_extra_clients_count_each() -> None:
    document = _event("genomics-shared-clients.json")
    request = parse_request(document)
    needs = vcpu_needs(request, len(request.configs), "on-demand")[0]
    expected: dict[str, int] = {}
    for config in request.configs:
        vcpus = config.clients * load_catalog().instances[config.instance_type].vcpus
        vcpus += sum(g.count * load_catalog().instances[g.instance_type].vcpus for g in config.nodes)
        expected[config.id] = vcpus
    assert any(c.clients > 1 for c in request.configs)
    assert {n.code: n.per_config for n in needs} == {STANDARD: expected}


def test_a_file_gateway_appliance_counts_on_demand() -> None:
    request = parse_request(_event("file-gateway-io1-vs-gp2.json"))
    per_config = {n.code: n.per_config for n in vcpu_needs(request, 4, "spot")[0]}
    gateway = next(c for c in request.configs if any(t.kind == "file_gateway" for t in c.targets))
    assert gateway.id in per_config[STANDARD]  # its appliance, though the clients buy Spot


@pytest.mark.parametrize(
    ("instance_type", "group"),
    [
        ("r5b.24xlarge", "Standard"),
        ("im4gn.large", "Standard"),
        ("c7g.large", "Standard"),
        ("inf2.xlarge", "Inf"),
        ("trn1.32xlarge", "Trn"),
        ("dl1.24xlarge", "DL"),
        ("hpc7g.16xlarge", "HPC"),
        ("vt1.3xlarge", "G and VT"),
        ("g5.xlarge", "G and VT"),
        ("p5.48xlarge", "P"),
        ("x2idn.32xlarge", "X"),
        ("f1.2xlarge", "F"),
        ("u7i-12tb.224xlarge", "High Memory"),
    ],
)
def test_the_longest_family_prefix_names_the_group(instance_type: str, group: str) -> None:
    found = load_catalog().vcpu_quotas.group_of(instance_type)
    assert found is not None and found.group == group


def test_every_catalog_instance_type_has_a_quota_group() -> None:
    quotas = load_catalog().vcpu_quotas
    assert all(quotas.group_of(name) is not None for name in load_catalog().instances)


def test_a_prefix_in_two_groups_is_refused_naming_both() -> None:
    from pydantic import ValidationError

    from storagebench.catalog.quota_models import VcpuQuotas

    document = load_catalog().vcpu_quotas.model_dump()
    document["groups"][1]["prefixes"].append("c")
    with pytest.raises(ValidationError, match="prefix 'c' is in both Standard and F"):
        VcpuQuotas.model_validate(document)
