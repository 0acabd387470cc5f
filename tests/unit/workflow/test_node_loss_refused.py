"""A run of a request with a node loss is refused before anything is written: the workflow does not
remove nodes yet, and a measurement around a removal that never happens would read as no pause."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import workflow_fakes as wf

from storagebench.core.errors import InvalidRequestError
from storagebench.core.state import PlanResult

Plan = Callable[..., PlanResult]
CONTROLLER: dict[str, Any] = {"role": "controller", "count": 2, "instance_type": "c5.large"}


def test_a_node_loss_run_is_refused_naming_the_field(plan: Plan, fakes: Any) -> None:
    document = wf.request_doc(
        configs=[
            {
                "id": "vsan",
                "instance_type": "c5.large",
                "nodes": [CONTROLLER],
                "targets": [{"id": "vsan", "kind": "local", "path": "/mnt/vsan"}],
            }
        ],
        workloads=[{"profile": "std-randwrite-4k", "node_loss": {"role": "controller", "after_s": 30}}],
        repetitions=1,
    )
    document.pop("baseline", None)
    with pytest.raises(InvalidRequestError, match=r"workloads\[0\]\.node_loss: the workflow does not remove"):
        plan(document)
    assert plan(wf.request_doc()).run_id == "run-1"
