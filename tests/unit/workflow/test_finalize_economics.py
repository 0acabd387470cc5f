"""Finalize prices the run: cost deltas and verdicts against the baseline, the run's own cost from
measured lifetimes, kept in full in the artifacts and summarised on the run item."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.state import AgentOutcome, ConfigResult, ConfigState
from storagebench.costs.compare import compare
from storagebench.costs.monthly import price_request
from storagebench.prices.models import PriceNotFound
from storagebench.prices.products import PriceKey
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.request import parse_request
from storagebench.workflow.artifact_keys import economics_key, report_key
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import cleanup
from storagebench.workflow.steps.collect import collect
from storagebench.workflow.steps.finalize import finalize
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.start_agent import start_agent

StateOf = Callable[..., ConfigState]


def finished(state_of: StateOf, fakes: Any, config_id: str) -> dict[str, Any]:
    """A config taken through every step to Cleanup, as the Map hands it to Finalize."""
    state = provision(state_of(config_id), fakes.services)
    state = check_ready(state, fakes.services)
    state = start_agent(state, "token", fakes.services)
    state = state.model_copy(update={"outcome": AgentOutcome(status="completed", exit_code=0)})
    config = parse_request(wf.request_doc()).config(config_id)
    directory = wf.agent_output_dir(fakes, state)
    wf.write_agent_output(directory, config_id, [str(t.id) for t in config.targets])
    state = collect(state, fakes.services)
    return cleanup(state, fakes.services).model_dump(mode="json")


@pytest.fixture
def summary(state_of: StateOf, fakes: Any) -> Any:
    entries = [finished(state_of, fakes, cid) for cid in ("alpha", "beta", "gamma")]
    fakes.clock.advance(3600)  # the fake launches at the run's start: every config lived an hour
    return finalize("run-1", "suite-a", wf.START_ISO, entries, fakes.services)


def test_finalize_stores_each_configs_cost_delta_and_verdict(summary: Any, fakes: Any) -> None:
    economics = summary.economics
    assert economics is not None and summary.economics_notes
    request = parse_request(wf.request_doc())
    book = SnapshotPriceBook(request.region)
    expected = compare(request, price_request(request, book), [])  # the same prices, the same deltas
    assert economics["baseline"] == "alpha" == expected.baseline
    by_id = {c["id"]: c for c in economics["configs"]}
    assert list(by_id) == ["alpha", "beta", "gamma"]
    for config in expected.configs:
        stored = by_id[config.config_id]
        assert stored["monthly_usd"] == pytest.approx(config.monthly_usd)
        assert stored["delta_monthly_pct"] == (
            None if config.delta_monthly_pct is None else pytest.approx(config.delta_monthly_pct)
        )
        assert stored["price_source"] == config.price_source and stored["price_date"] == config.price_date
    assert by_id["alpha"]["verdict"] == "baseline"
    assert "cheaper" in by_id["beta"]["verdict"] or "expensive" in by_id["beta"]["verdict"]
    assert fakes.store.runs["run-1"]["economics"] == economics  # on the run item: pattern 2 shows it


def test_the_run_cost_comes_from_the_measured_lifetimes(summary: Any, fakes: Any) -> None:
    full = fakes.artifacts.get_json(economics_key("run-1"))
    assert summary.economics["artifact"] == fakes.artifacts.uri(economics_key("run-1"))
    cost = full["run_cost"]
    instances = {c["config_id"]: c for c in cost["components"] if c["name"] == "instance"}
    assert {cid: c["quantity"] for cid, c in instances.items()} == {
        "alpha": 3600,
        "beta": 3600,
        "gamma": 3600,
    }
    book = SnapshotPriceBook("us-east-1")
    assert instances["gamma"]["usd"] == pytest.approx(
        book.price(PriceKey("ec2_instance_hour", ("i3en.large",))).usd
    )
    assert summary.economics["run_cost_usd"] == pytest.approx(math.fsum(c["usd"] for c in cost["components"]))
    assert summary.economics["orchestration_usd"] > 0
    assert cost["transitions"] >= 3 + 3 * 6  # Plan, Map, Finalize + at least 6 states per config
    per_config = {c["id"]: c["run_usd"] for c in summary.economics["configs"]}
    assert per_config["gamma"] == pytest.approx(cost["by_config"]["gamma"])


def test_a_config_that_never_launched_costs_nothing_for_the_run(state_of: StateOf, fakes: Any) -> None:
    entries = [
        finished(state_of, fakes, "alpha"),
        ConfigResult(run_id="run-1", config_id="beta", status="failed", records=0).model_dump(mode="json"),
    ]
    fakes.clock.advance(600)
    summary = finalize("run-1", "suite-a", wf.START_ISO, entries, fakes.services)
    by_id = {c["id"]: c for c in summary.economics["configs"]}
    assert by_id["beta"]["run_usd"] in (None, 0)
    assert by_id["alpha"]["run_usd"] > 0


def test_pricing_trouble_is_a_note_and_the_run_still_finishes(state_of: StateOf, fakes: Any) -> None:
    entries = [finished(state_of, fakes, "alpha")]

    def no_prices(region: str) -> Any:
        raise PriceNotFound(f"no prices for {region}")

    fakes.services.prices = no_prices
    summary = finalize("run-1", "suite-a", wf.START_ISO, entries, fakes.services)
    assert summary.economics is None
    assert summary.economics_notes == ["costs not computed: PriceNotFound: no prices for us-east-1"]
    assert fakes.store.finished == [summary] and summary.status == "SUCCEEDED"
    assert "economics" not in fakes.store.runs["run-1"]


def test_finalize_writes_the_report_with_the_final_status(summary: Any, fakes: Any) -> None:
    assert summary.report == {
        name: fakes.artifacts.uri(report_key("run-1", extension))
        for name, extension in (("html", "html"), ("markdown", "md"), ("csv", "csv"))
    }
    html, content_type = fakes.artifacts.texts[report_key("run-1", "html")]
    assert content_type == "text/html" and html.startswith("<!DOCTYPE html>")
    assert summary.status in html and "RUNNING" not in html  # written before the status, yet final
    for config in ("alpha", "beta", "gamma"):
        assert config in html
    by_id = {c["id"]: c for c in summary.economics["configs"]}
    assert by_id["beta"]["verdict"].split(",")[0] in html  # the stored verdict, not another one
    markdown, _ = fakes.artifacts.texts[report_key("run-1", "md")]
    table, _ = fakes.artifacts.texts[report_key("run-1", "csv")]
    assert "alpha" in markdown and table.splitlines()[0].startswith("run_id,")
    assert summary.report_notes == []
