"""Metrics while disabled (local mode, the tests) print nothing, however many invocations run.

Powertools keeps a disabled flush's metrics and prints the set once one metric holds 100 values:
an in-process handler's 100th invocation wrote EMF into stdout (seen as "Extra data" when a test
read a CLI's JSON while the API it called ran in the same process).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from storagebench.observability import MetricUnit, metrics


@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> str:
    metrics.add_metric(name="Probe", unit=MetricUnit.Count, value=1)
    return "ok"


def test_a_disabled_metric_set_is_forgotten_at_each_flush(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    for _ in range(150):
        assert handler({}, None) == "ok"
    assert capsys.readouterr().out == ""


def test_an_enabled_flush_still_prints_each_invocation_s_metrics(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    handler({}, None)
    handler({}, None)
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [blob["Probe"] for blob in blobs] == [[1.0], [1.0]]  # one value each: cleared between
