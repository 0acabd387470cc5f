"""A cost delta against a total that lacks a price is never a number: None, and the reason instead."""

from __future__ import annotations

from typing import Any

import pytest
from reference_book import ReferenceBook

from storagebench.costs.compare import compare
from storagebench.costs.cost_delta import monthly_cost_delta
from storagebench.costs.document import cost_document
from storagebench.costs.monthly import price_request
from storagebench.request import BenchmarkRequest, parse_request


def two_configs(baseline_type: str = "c5.4xlarge", other_type: str = "m5.large") -> BenchmarkRequest:
    target: dict[str, Any] = {"kind": "ebs", "type": "gp3", "size_gib": 100}
    return parse_request(
        {
            "name": "delta",
            "configs": [
                {"id": "base", "instance_type": baseline_type, "targets": [target]},
                {"id": "other", "instance_type": other_type, "targets": [target]},
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )


def book_without(instance: str) -> ReferenceBook:
    book = ReferenceBook()
    del book.instances[instance]  # the book has no price for it: the total leaves it out
    return book


def test_a_baseline_missing_its_instance_price_gives_no_delta_and_says_why() -> None:
    costs = price_request(two_configs(), book_without("c5.4xlarge"))
    delta = monthly_cost_delta(costs["other"], costs["base"])
    # the baseline's total is storage alone: a number would read "+..." against a lower bound
    assert costs["other"].monthly_usd > costs["base"].monthly_usd
    assert delta.pct is None and delta.reason is not None
    assert "the baseline base has no price for EC2 c5.4xlarge" in delta.reason
    assert "lower bound" in delta.reason


def test_a_config_missing_its_own_price_gives_no_delta_either() -> None:
    costs = price_request(two_configs(), book_without("m5.large"))
    delta = monthly_cost_delta(costs["other"], costs["base"])
    assert delta.pct is None and delta.reason is not None
    assert "config other has no price for EC2 m5.large" in delta.reason and "baseline" not in delta.reason


def test_complete_figures_give_the_percentage() -> None:
    costs = price_request(two_configs(), ReferenceBook())
    delta = monthly_cost_delta(costs["other"], costs["base"])
    expected = (costs["other"].monthly_usd - costs["base"].monthly_usd) / costs["base"].monthly_usd * 100
    assert delta.reason is None and delta.pct == pytest.approx(expected)


def test_the_cost_document_carries_null_and_the_reason() -> None:
    document, _ = cost_document(two_configs(), book_without("c5.4xlarge"))
    base, other = document["configs"]
    assert other["delta_monthly_pct"] is None and "c5.4xlarge" in other["delta_monthly_reason"]
    assert base["delta_monthly_reason"] is None  # the baseline is not compared with itself
    complete, _ = cost_document(two_configs(), ReferenceBook())
    assert complete["configs"][1]["delta_monthly_pct"] is not None
    assert complete["configs"][1]["delta_monthly_reason"] is None


def test_the_comparison_and_its_verdict_print_no_percentage_against_an_incomplete_baseline() -> None:
    request = two_configs()
    comparison = compare(request, price_request(request, book_without("c5.4xlarge")), [])
    other = comparison.config("other")
    assert other.delta_monthly_pct is None and other.delta_monthly_reason is not None
    assert other.verdict.startswith("cost not comparable (the baseline base has no price for EC2 c5.4xlarge")
    assert "%" not in other.verdict.split(";")[0] and "more expensive" not in other.verdict
