"""The stack's budget (issue 27, 8): runs in progress and runs of one UTC day, each a sum of cost
upper bounds, against MaxConcurrentSpendUsd and MaxDailySpendUsd; refused with the figures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.api_events import call
from tests.support.api_stack import EVENTS, Stack
from tests.support.runs import run_summary

from storagebench.core.guardrails import Guardrails


def demo() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    return document


def _bound(stack: Stack) -> float:
    status, body, _ = call(stack.handler, "POST", "/runs", query={"dry_run": "true"}, json_body=demo())
    assert status == 200, body
    bound: float = body["preview"]["estimate"]["upper_bound_usd"]
    return bound


def _start(stack: Stack) -> tuple[int, dict[str, Any]]:
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    if status == 202:  # what Plan records when the execution begins: the run and its upper bound
        bound = _bound(stack)
        stack.store.start_run(
            body["run_id"],
            "local-demo",
            demo(),
            "2030-01-02T00:00:00Z",
            "2030-01-03T00:00:00Z",
            ["gp2"],
            cost_bound_usd=bound,
        )
    return status, body


def _finish(stack: Stack, run_id: str) -> None:
    stack.store.finish_run(run_summary(run_id, "local-demo", "2030-01-02T00:00:00Z", "2030-01-02T01:00:00Z"))


def test_runs_in_progress_and_of_the_day_are_held_to_the_stacks_budget(stack: Stack) -> None:
    bound = _bound(stack)
    # room for one run at a time, and for two in a day
    stack.service.guardrails = Guardrails(
        max_concurrent_spend_usd=bound * 1.5, max_daily_spend_usd=bound * 2.5
    )
    status, first = _start(stack)
    assert status == 202, first

    status, body = _start(stack)  # the first is still running
    assert status == 422 and body["error"]["code"] == "over_budget", body
    (refusal,) = body["error"]["details"]
    assert refusal["field"] == "MaxConcurrentSpendUsd" and refusal["allowed"] == pytest.approx(bound * 1.5)
    assert refusal["value"] == pytest.approx(2 * bound, abs=0.01)
    assert f"${bound:,.2f}" in body["error"]["message"] and "1 run(s) in progress" in body["error"]["message"]

    _finish(stack, first["run_id"])
    status, second = _start(stack)
    assert status == 202, second  # the day holds 2 x bound of its 2.5 x
    _finish(stack, second["run_id"])

    status, body = _start(stack)
    assert status == 422 and body["error"]["code"] == "over_budget", body
    (refusal,) = body["error"]["details"]
    assert refusal["field"] == "MaxDailySpendUsd" and refusal["value"] == pytest.approx(3 * bound, abs=0.02)
    assert len(stack.launcher.started) == 2  # nothing started past either budget


def test_a_run_whose_bound_alone_passes_the_day_is_refused(stack: Stack) -> None:
    bound = _bound(stack)
    stack.service.guardrails = Guardrails(max_daily_spend_usd=bound / 2)
    status, body = _start(stack)
    assert status == 422 and body["error"]["details"][0]["field"] == "MaxDailySpendUsd"
    assert stack.launcher.started == []


def test_a_replayed_key_reserves_nothing_more(stack: Stack) -> None:
    bound = _bound(stack)
    stack.service.guardrails = Guardrails(max_daily_spend_usd=bound * 1.5)
    keyed = {"content-type": "application/json", "idempotency-key": "k-budget"}
    assert call(stack.handler, "POST", "/runs", json_body=demo(), headers=keyed)[0] == 202
    assert call(stack.handler, "POST", "/runs", json_body=demo(), headers=keyed)[0] == 200  # replay
    # one reservation: a third run of the same bound fits the day's 1.5 x only if the replay took none
    stack.service.guardrails = Guardrails(max_daily_spend_usd=bound * 2.5)
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    assert status == 202, body
