"""The ``purchase`` field (request and config) and the market of each launch it implies."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails
from storagebench.request import RequestError, parse_request
from storagebench.request.purchase import PURCHASES, effective_purchase, market_for


@pytest.mark.parametrize(
    ("purchase", "interruptions", "market"),
    [
        ("on-demand", 0, "on-demand"),
        ("on-demand", 2, "on-demand"),
        ("spot", 0, "spot"),
        ("spot", 1, "spot"),  # a relaunch after an interruption stays on Spot
        ("spot", 5, "spot"),
        ("spot-then-on-demand", 0, "spot"),
        ("spot-then-on-demand", 1, "on-demand"),  # on-demand after the first interruption
        ("spot-then-on-demand", 3, "on-demand"),
    ],
)
def test_market_of_each_launch(purchase: Any, interruptions: int, market: str) -> None:
    assert market_for(purchase, interruptions) == market


def test_market_for_refuses_what_no_request_can_hold() -> None:
    with pytest.raises(ValueError, match="allowed are spot, on-demand, spot-then-on-demand"):
        market_for("reserved", 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="0 or more"):
        market_for("spot", -1)


def test_the_nearest_purchase_wins() -> None:
    assert effective_purchase("spot", "on-demand", "on-demand") == "spot"
    assert effective_purchase(None, "spot-then-on-demand", "on-demand") == "spot-then-on-demand"
    assert effective_purchase(None, None, "spot") == "spot"
    assert effective_purchase(None, None) == "on-demand"


def test_request_and_config_hold_a_purchase(minimal: dict[str, Any]) -> None:
    minimal["purchase"] = "spot-then-on-demand"
    minimal["configs"][0]["purchase"] = "spot"
    request = parse_request(minimal)
    assert request.purchase == "spot-then-on-demand"
    assert request.configs[0].purchase == "spot"


def test_purchase_is_unset_by_default(minimal: dict[str, Any]) -> None:
    request = parse_request(minimal)
    assert request.purchase is None and request.configs[0].purchase is None


@pytest.mark.parametrize(
    ("where", "path"), [((), "purchase"), (("configs", 0), "configs[0].purchase")], ids=["request", "config"]
)
def test_bad_purchase_names_field_value_and_what_is_allowed(
    minimal: dict[str, Any], where: tuple[Any, ...], path: str
) -> None:
    target: Any = minimal
    for key in where:
        target = target[key]
    target["purchase"] = "reserved"
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    [error] = caught.value.errors
    assert error.path == path
    assert error.value == "reserved"
    for allowed in PURCHASES:
        assert allowed in error.message
    assert '(got "reserved")' in str(error)


def test_purchase_is_in_the_json_schema() -> None:
    from storagebench.request.model import BenchmarkRequest

    schema = BenchmarkRequest.model_json_schema()
    top = schema["properties"]["purchase"]
    config = schema["$defs"]["Config"]["properties"]["purchase"]
    for field in (top, config):
        assert "Spot" in field["description"]
        values = {v for option in field["anyOf"] for v in option.get("enum", [])}
        assert values == set(PURCHASES)


def test_stack_default_purchase_from_its_parameter() -> None:
    assert Guardrails.from_env({}).default_purchase == "on-demand"
    assert Guardrails.from_env({"DEFAULT_PURCHASE": "spot-then-on-demand"}).default_purchase == (
        "spot-then-on-demand"
    )
    with pytest.raises(ValueError, match=r"default_purchase: one of spot, on-demand, spot-then-on-demand"):
        Guardrails.from_env({"DEFAULT_PURCHASE": "cheap"})


def test_the_stack_parameter_reaches_every_function_with_the_same_values() -> None:
    from pathlib import Path

    from storagebench_local.cfn import load_template

    template = load_template(Path(__file__).resolve().parents[3] / "template.yaml")
    parameter = template["Parameters"]["DefaultPurchase"]
    assert parameter["Default"] == "on-demand"
    assert sorted(parameter["AllowedValues"]) == sorted(PURCHASES)
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["DEFAULT_PURCHASE"] == {"Ref": "DefaultPurchase"}
