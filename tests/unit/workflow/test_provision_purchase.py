"""Provision buys each launch as the config's purchase says, and records what EC2 reports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.guardrails import Guardrails
from storagebench.core.state import ConfigState, LaunchSpec, Resources
from storagebench.workflow.steps import provision as provision_step

StateOf = Callable[..., ConfigState]


class MarketReportingCompute:
    """The fake compute, reporting the market it was asked for and a zone, as EC2 does."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def launch(self, spec: LaunchSpec) -> Resources:
        launched: Resources = self.inner.launch(spec)
        return launched.model_copy(update={"market": spec.market, "availability_zone": "us-east-1d"})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def provision(state_of: StateOf, fakes: Any, document: Any, *, attempt: int = 1) -> ConfigState:
    fakes.services.compute = MarketReportingCompute(fakes.compute)
    state = state_of("alpha", document)
    state.item.attempt = attempt
    return provision_step.provision(state, fakes.services)


@pytest.mark.parametrize(
    ("request_purchase", "config_purchase", "stack", "attempt", "market"),
    [
        (None, None, "on-demand", 1, "on-demand"),
        ("spot", None, "on-demand", 1, "spot"),
        ("spot", "on-demand", "on-demand", 1, "on-demand"),  # the config's own wins
        (None, "spot-then-on-demand", "on-demand", 1, "spot"),
        (None, "spot-then-on-demand", "on-demand", 2, "on-demand"),  # relaunched after an interruption
        (None, None, "spot", 3, "spot"),  # the stack's DefaultPurchase, Spot again after interruptions
    ],
)
def test_each_launch_is_bought_as_the_purchase_says_and_recorded(
    state_of: StateOf,
    fakes: Any,
    request_purchase: str | None,
    config_purchase: str | None,
    stack: Any,
    attempt: int,
    market: str,
) -> None:
    document = wf.request_doc(**({"purchase": request_purchase} if request_purchase else {}))
    if config_purchase:
        next(c for c in document["configs"] if c["id"] == "alpha")["purchase"] = config_purchase
    fakes.services.guardrails = Guardrails(default_purchase=stack)
    state = provision(state_of, fakes, document, attempt=attempt)
    (spec,) = fakes.compute.launches
    assert spec.market == market
    assert state.resources.market == market
    assert state.resources.availability_zone == "us-east-1d"
    (stored, _) = fakes.store.configs[0]
    assert stored.resources.market == market  # the record says how the attempt was bought
