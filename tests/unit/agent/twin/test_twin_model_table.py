"""One model, two implementations: the shared table holds the compiled twin to agent/twin/model.py.

``tests/data/twin/model-table.json`` is what ``scripts/twin_model_table.py`` writes from the Python
model: traces of I/Os (bursts at the limit, late arrivals, sequential merges, gp2 and st1 credits
running out and coming back, a bimodal latency, service shorter than the overhead) with every
I/O's start and service time, the counters and the burst events. The Python model must still write
exactly that table, and ``storagebench-twin replay`` must reproduce every figure to the bit.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from native_twin import native_twin
from tests.support.modules import script

from storagebench.agent.twin.model import replay

ROOT = Path(__file__).resolve().parents[4]
TABLE = ROOT / "tests" / "data" / "twin" / "model-table.json"
table = script("twin_model_table").table

SHARED = json.loads(TABLE.read_text())
CASES = SHARED["cases"]


def native_replay(document: dict[str, Any]) -> dict[str, Any]:
    command = [str(native_twin()), "replay"]
    done = subprocess.run(
        command, input=json.dumps(document), capture_output=True, text=True, timeout=60, check=False
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_the_table_is_what_the_python_model_writes() -> None:
    assert table() == SHARED, "the model changed: make twin-model-table, then make the port agree"


def test_the_table_covers_what_the_model_does() -> None:
    events = {event[1] for case in CASES for event in case["expected"]["events"]}
    assert events == {"burst-exhausted", "burst-restored"}
    assert any(case["spec"]["limits"].get("credit_unit") == "mib" for case in CASES)
    assert any(len(case["spec"]["latency"]["modes"]) > 1 for case in CASES)
    assert any(0 in case["expected"]["services"] for case in CASES)  # clamped below the overhead
    assert any(case["spec"]["limits"].get("pacing_slots") == 0 for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_python_replay_reproduces_the_table(case: dict[str, Any]) -> None:
    answer = replay(case["spec"], case["seed"], case["ios"], case["overhead_s"])
    assert json.loads(json.dumps(answer)) == case["expected"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_compiled_twin_reproduces_the_table_to_the_bit(case: dict[str, Any]) -> None:
    document = {key: case[key] for key in ("spec", "seed", "overhead_s", "ios")}
    answer = native_replay(document)
    expected = case["expected"]
    assert answer.keys() == expected.keys()
    for key in ("ios", "operations", "bytes", "credits", "events"):
        assert answer[key] == expected[key], key
    for key in ("starts", "services"):
        assert len(answer[key]) == len(expected[key]), key
        pairs = zip(answer[key], expected[key])  # noqa: B905 - runs under Python 3.9 (lengths checked above)
        mismatched = [i for i, (a, b) in enumerate(pairs) if a != b]
        assert mismatched == [], f"{key} differ first at I/O {mismatched[:1]}"


@pytest.mark.parametrize("bad", SHARED["bad_specs"], ids=[bad["field"] for bad in SHARED["bad_specs"]])
def test_both_refuse_a_bad_spec_naming_the_field(bad: dict[str, Any]) -> None:
    answer = native_replay({"spec": bad["spec"], "seed": 1, "ios": []})
    assert bad["field"] in answer["error"]
    assert answer["error"].startswith(bad["field"])
