"""repetitions as a count or {min, max, ci_pct}, and steady_state: accepted, or refused naming the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.request.errors import RequestError
from storagebench.request.parse import parse_request
from storagebench.request.repetitions import AdaptiveRepetitions

DEMO = json.loads((Path(__file__).parents[3] / "events" / "local-demo.json").read_text())


def _with(**changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(DEMO)
    document.update(changes)
    return document


def test_adaptive_repetitions_are_accepted_on_the_request_and_on_a_workload() -> None:
    document = _with(repetitions={"min": 2, "max": 10, "ci_pct": 2})
    document["workloads"][0]["repetitions"] = {"min": 3, "max": 5, "ci_pct": 1.5}
    request = parse_request(document)
    assert request.repetitions == AdaptiveRepetitions(min=2, max=10, ci_pct=2.0)
    assert request.repetitions_of(request.resolved_workloads()[0]) == AdaptiveRepetitions(
        min=3, max=5, ci_pct=1.5
    )
    assert request.repetitions_of(request.resolved_workloads()[3]) == 1  # its own count wins


@pytest.mark.parametrize(
    ("value", "path", "fragment"),
    [
        ({"min": 5, "max": 3, "ci_pct": 2}, "repetitions.min", "must be at most max (3)"),
        ({"min": 1, "max": 3, "ci_pct": 2}, "repetitions.min", ">= 2"),
        ({"min": 2, "max": 3, "ci_pct": 0}, "repetitions.ci_pct", "> 0"),
        ({"min": 2, "max": 3, "ci_pct": 75}, "repetitions.ci_pct", "<= 50"),
        ({"min": 2, "max": 101, "ci_pct": 2}, "repetitions.max", "<= 100"),
        ({"min": 2, "max": 3, "precision": 2}, "repetitions.precision", "allowed here: min, max, ci_pct"),
        (0, "repetitions", ">= 1"),
        ("3", "repetitions", "a count (1..100) or an object with min, max and ci_pct"),
    ],
)
def test_bad_repetitions_name_the_field_and_what_is_allowed(value: Any, path: str, fragment: str) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request(_with(repetitions=value))
    errors = caught.value.errors
    assert [e.path for e in errors] == [path], [str(e) for e in errors]
    assert fragment in errors[0].message


def test_steady_state_becomes_fio_options() -> None:
    document = _with(repetitions=2)  # steady_state takes a count, not the demo's adaptive series
    document["workloads"][0]["steady_state"] = {
        "metric": "bw",
        "criterion": "deviation",
        "threshold_pct": 2.5,
        "duration_s": 60,
        "ramp_s": 10,
    }
    request = parse_request(document)
    steady = request.workloads[0].steady_state
    assert steady is not None
    assert steady.fio_options() == {"ss": "bw:2.5%", "ss_dur": "60", "ss_ramp": "10"}


def test_steady_state_does_not_mix_with_adaptive_repetitions_or_other_engines() -> None:
    document = _with(repetitions={"min": 2, "max": 4, "ci_pct": 2})
    document["workloads"][0]["steady_state"] = {}
    document["workloads"].append({"profile": "dd-seq-write-1m-dsync", "steady_state": {}, "repetitions": 1})
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    messages = {e.path: e.message for e in caught.value.errors}
    assert "adaptive repetitions" in messages["workloads[0].steady_state"]
    assert "needs fio jobs; dd-seq-write-1m-dsync is a dd workload" in messages["workloads[4].steady_state"]
