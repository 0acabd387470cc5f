"""workloads[].node_loss: a node of the topology removed mid-run, refused at its field when the
configs or the workload cannot take it, and planned onto the workload's measured fio phase."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.requests import controllers, virtual_san

from storagebench.planning.steps import plan_steps
from storagebench.request import RequestError, parse_request

CONTROLLER = controllers(2, ports=["tcp/4420"])
LOSS = {"role": "controller", "index": 1, "after_s": 60}


def request_with(workload: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {
        "name": "ctrl-loss",
        "region": "us-east-1",
        "configs": [virtual_san(**{"nodes": [CONTROLLER], **config})],
        "workloads": [workload],
        "repetitions": 1,
    }


def problems(document: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    return {e.path: str(e) for e in caught.value.errors}


def test_a_controller_loss_is_planned_on_the_measured_fio_phase() -> None:
    request = parse_request(request_with({"profile": "std-randwrite-4k", "node_loss": LOSS}))
    steps = plan_steps(request, request.configs[0])
    assert steps
    for step in steps:
        fio = [p for p in step["phases"] if p["engine"] == "fio"]
        # the profile's 10 s ramp: the node goes ramp_s + at_s after the primary's word
        assert fio[-1]["node_loss"] == {"role": "controller", "index": 1, "at_s": 60.0, "ramp_s": 10.0}


def test_without_a_loss_no_phase_carries_one() -> None:
    request = parse_request(request_with({"profile": "std-randwrite-4k"}))
    assert all("node_loss" not in p for s in plan_steps(request, request.configs[0]) for p in s["phases"])


@pytest.mark.parametrize(
    ("workload", "config", "path", "fragments"),
    [
        (
            {"profile": "std-randwrite-4k", "node_loss": {**LOSS, "role": "chunk"}},
            {},
            "workloads[0].node_loss.role",
            ["'chunk'", "config vsan (configs[0])", "its roles: controller"],
        ),
        (
            {"profile": "std-randwrite-4k", "node_loss": LOSS},
            {"nodes": []},
            "workloads[0].node_loss.role",
            ["has no 'controller' nodes", "none: the config has no nodes"],
        ),
        (
            {"profile": "std-randwrite-4k", "node_loss": {**LOSS, "index": 2}},
            {},
            "workloads[0].node_loss.index",
            ["2", "2 controller nodes: index 0 to 1"],
        ),
        (
            {"profile": "std-randwrite-4k", "node_loss": {**LOSS, "after_s": 178}},
            {},
            "workloads[0].node_loss.after_s",
            ["178", "allowed: 1 to 176 s (the runtime 180 s less 4 s"],
        ),
        (
            {"profile": "std-randwrite-4k", "scale": 0.01, "node_loss": LOSS},
            {},
            "workloads[0].node_loss.after_s",
            ["leaves no room"],
        ),
        (
            {"suite": "standard", "node_loss": LOSS},
            {},
            "workloads[0].node_loss",
            ["not a suite"],
        ),
        (
            {"profile": "dd-seq-write-1m-dsync", "node_loss": LOSS},
            {},
            "workloads[0].node_loss",
            ["a dd workload", "fio's rate logs"],
        ),
        (
            {"profile": "std-randwrite-4k", "node_loss": LOSS},
            {"clients": 2},
            "workloads[0].node_loss",
            ["2 clients", "from one client"],
        ),
    ],
)
def test_bad_node_losses_name_the_field_the_value_and_what_is_allowed(
    workload: dict[str, Any], config: dict[str, Any], path: str, fragments: list[str]
) -> None:
    found = problems(request_with(workload, **config))
    assert path in found, found
    for fragment in fragments:
        assert fragment in found[path], found[path]


def test_the_loss_is_one_step_per_config_and_the_last() -> None:
    document = request_with(
        {"profile": "std-randwrite-4k", "node_loss": LOSS, "params": {"bs": ["4k", "8k"]}}
    )
    document["repetitions"] = 3
    document["workloads"].append({"profile": "std-randread-4k"})
    document["configs"][0]["targets"].append({"id": "other", "kind": "local", "path": "/mnt/other"})
    document["order"] = "interleaved"
    found = problems(document)
    assert (
        "a node is removed once per run" in found["repetitions"]
    )  # the request sets it: refused where it is set
    assert "no swept (list) params" in found["workloads[0].params"]
    assert "make this workload the last (it is 1 of 2)" in found["workloads[0].node_loss"]
    assert "on 2 targets (vsan, other)" in found["workloads[0].targets"]
    assert "use sequential" in found["order"]


def test_one_node_loss_per_request() -> None:
    document = request_with({"profile": "std-randwrite-4k", "node_loss": LOSS})
    document["workloads"].insert(0, {"profile": "std-randread-4k", "node_loss": LOSS})
    assert "one node loss per request" in problems(document)["workloads[1].node_loss"]


def test_a_config_the_workload_does_not_run_on_needs_no_controllers() -> None:
    document = request_with({"profile": "std-randwrite-4k", "targets": ["vsan"], "node_loss": LOSS})
    document["configs"].append(
        {
            "id": "io2-direct",
            "instance_type": "c5.4xlarge",
            "targets": [{"id": "data", "kind": "ebs", "type": "io2", "size_gib": 500, "iops": 16000}],
        }
    )
    request = parse_request(document)
    assert plan_steps(request, request.configs[1]) == []
    del document["workloads"][0]["targets"]
    assert "has no 'controller' nodes" in problems(document)["workloads[0].node_loss.role"]


def test_the_virtual_san_event_loses_a_controller_on_its_shared_multipath_layout_alone() -> None:
    """The study's controller loss, on the layout that survives it: controllers sharing Multi-Attach
    volumes that the client reaches through each of them (an LVM stripe over per-controller volumes,
    as the i3en layout has, would stall for good)."""
    from pathlib import Path

    from storagebench.request import load_request
    from storagebench.request.plan_size import runs_on

    request = load_request(Path(__file__).resolve().parents[3] / "events" / "virtual-san.json")
    (losing,) = [w for w in request.workloads if w.node_loss is not None]
    assert losing.node_loss is not None and (losing.node_loss.role, losing.node_loss.index) == (
        "controller",
        0,
    )
    runs = [c for c in request.configs if any(runs_on(losing, t) for t in c.targets)]
    assert [c.id for c in runs] == ["r5b-io2-controllers"]
    (group,) = runs[0].nodes
    assert group.targets and all(t.kind == "ebs" and t.multi_attach for t in group.targets)
    assert group.count == 5 and group.targets[0].count == 5  # every volume reachable through every controller
    assert "nvme connect" in (runs[0].setup or "") and "multipath" in (runs[0].setup or "")
    assert request.workloads[-1] is losing  # last: the steps after a loss would be skipped
