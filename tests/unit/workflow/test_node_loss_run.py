"""A run of a request with a node loss: Plan accepts it, and StartAgent gives the node that goes
its removal in its own plan (the step and the moment after that phase's fio starts: the profile's
ramp plus ``after_s``), while every other machine's plan has none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_topology_steps import AddressedCompute
from tests.support import workflow_fakes as wf

from storagebench.core.state import ConfigState
from storagebench.protocol.plan import check_plan
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.start_agent import start_agent

StateOf = Callable[..., ConfigState]

VSAN: dict[str, Any] = {
    "id": "vsan",
    "instance_type": "c5.large",
    "nodes": [{"role": "controller", "count": 2, "instance_type": "c5.large", "ports": ["tcp/4420"]}],
    "targets": [{"id": "vsan", "kind": "local", "path": "/mnt/vsan"}],
}
LOSS: dict[str, Any] = {
    "profile": "std-randwrite-4k",
    "params": {"runtime": 30, "ramp_time": 2},
    "node_loss": {"role": "controller", "index": 1, "after_s": 10},
}


def _document() -> dict[str, Any]:
    document = wf.request_doc(configs=[VSAN], workloads=[LOSS], repetitions=1)
    document.pop("baseline", None)
    return document


@pytest.fixture
def started(fakes: Any, state_of: StateOf) -> tuple[Any, ConfigState]:
    compute = AddressedCompute()
    fakes.services.compute = compute
    fakes.compute = compute
    fakes.services.network = wf.FakeNetwork(group_id="sg-vsan")
    state = state_of("vsan", _document())
    ready = check_ready(provision(state, fakes.services), fakes.services)
    return fakes, start_agent(ready, "token", fakes.services)


def test_a_node_loss_run_is_planned(plan: Callable[..., Any]) -> None:
    planned = plan(_document())
    assert [item.config_id for item in planned.items] == ["vsan"]


def test_the_node_that_goes_gets_its_removal_in_its_own_plan(started: tuple[Any, ConfigState]) -> None:
    fakes, _ = started
    primary = fakes.agents.starts[0]
    primary_plan = primary.plan
    (step,) = primary_plan["steps"]
    (measured,) = [p for p in step["phases"] if "node_loss" in p]
    assert measured["node_loss"] == {"role": "controller", "index": 1, "at_s": 10.0, "ramp_s": 2.0}
    plans = {name: plan for name, _, plan, _ in fakes.agents.node_starts}
    assert set(plans) == {"controller-0", "controller-1"}
    assert "power_off" not in plans["controller-0"]
    # 2 s of ramp (fio's logs, on which after_s counts, start after it) + 10 s
    assert plans["controller-1"]["power_off"] == {"step": step["id"], "after_s": 12.0}
    check_plan(plans["controller-1"])  # the agent takes it
    assert "power_off" not in primary_plan


NBD_JOB = "[global]\nioengine=nbd\nuri=nbd://10.0.0.1:10809/\ntime_based=1\nruntime=12s\nramp_time=1500ms\n[w]\nrw=randwrite\nbs=4k\n"


def test_a_custom_nbd_job_takes_its_runtime_and_ramp_from_the_job_file(fakes: Any, state_of: StateOf) -> None:
    """fio's nbd engine reaches a volume the controllers serve (the local stand-in's path); the job
    file's runtime bounds after_s (12 s less 4 s) and its ramp is added to the node's moment."""
    document = _document()
    document["workloads"] = [
        {
            "profile": "fio-custom",
            "params": {"job_file": NBD_JOB},
            "node_loss": {"role": "controller", "after_s": 8},
        }
    ]
    compute = AddressedCompute()
    fakes.services.compute = compute
    fakes.compute = compute
    fakes.services.network = wf.FakeNetwork(group_id="sg-vsan")
    ready = check_ready(provision(state_of("vsan", document), fakes.services), fakes.services)
    start_agent(ready, "token", fakes.services)
    plans = {name: plan for name, _, plan, _ in fakes.agents.node_starts}
    assert plans["controller-0"]["power_off"]["after_s"] == 9.5
    document["workloads"][0]["node_loss"]["after_s"] = 8.5
    with pytest.raises(Exception, match=r"after_s.*allowed: 1 to 8 s \(the runtime 12 s"):
        state_of("vsan", document)
