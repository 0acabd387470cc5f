"""The one threshold syntax, WORKLOAD[:DIRECTION]:METRIC OP VALUE: what it reads, where it says it
cannot, and a request's ``requirements`` checked with it."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.analysis.stats import HEADLINE_METRICS
from storagebench.request import RequestError, parse_request
from storagebench.request.requirements import (
    METRICS,
    Requirement,
    RequirementError,
    parse_requirement,
    split_joined,
)

WORKLOADS = ["std-randread-4k", "std-seqread-1m"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("std-randread-4k:iops>=3500", Requirement("std-randread-4k", None, "iops", ">=", 3500)),
        ("std-randread-4k:read:p95_ms<2", Requirement("std-randread-4k", "read", "p95_ms", "<", 2)),
        ("std-seqread-1m:mibps>=500", Requirement("std-seqread-1m", None, "mibps", ">=", 500)),
        (
            "  std-randread-4k : write : p99_ms <= 0.5 ",
            Requirement("std-randread-4k", "write", "p99_ms", "<=", 0.5),
        ),
        ("std-randread-4k:mixed:iops>1e4", Requirement("std-randread-4k", "mixed", "iops", ">", 10_000)),
        ("std-randread-4k:lat_mean_ms<.25", Requirement("std-randread-4k", None, "lat_mean_ms", "<", 0.25)),
        ("std-randread-4k:p50_ms<1", Requirement("std-randread-4k", None, "p50_ms", "<", 1)),
    ],
)
def test_requirements_that_read(text: str, expected: Requirement) -> None:
    assert parse_requirement(text, WORKLOADS) == expected


def test_the_canonical_spelling_reads_back_the_same() -> None:
    parsed = parse_requirement(" std-randread-4k : read : p95_ms < 2.50 ")
    assert parsed.text == "std-randread-4k:read:p95_ms<2.5"
    assert parse_requirement(parsed.text) == parsed


def test_every_metric_reads_a_statistic_the_repetition_summaries_have() -> None:
    assert {"iops", "mibps", "lat_mean_ms", "p50_ms", "p95_ms", "p99_ms"} <= set(METRICS)
    assert all(m.stat in HEADLINE_METRICS for m in METRICS.values())


@pytest.mark.parametrize(
    ("text", "position", "problem", "allowed", "suggestion"),
    [
        ("std-randread-4k:iop>=3500", 16, "unknown metric 'iop'", "metrics: iops, mibps", "iops"),
        ("std-randread-4k:p95<2", 16, "unknown metric 'p95'", "metrics:", "p95_ms"),
        ("std-randread-4k:bw>=100", 16, "unknown metric 'bw'", "metrics:", "mibps"),
        ("std-randread-4k:reed:iops>=1", 16, "unknown direction 'reed'", "directions: read, write", "read"),
        (
            "std-randred-4k:iops>=1",
            0,
            "unknown workload 'std-randred-4k'",
            "workloads: std-randread-4k, std-seqread-1m",
            "std-randread-4k",
        ),
        ("iops>=3500", 0, "no workload", "WORKLOAD[:DIRECTION]:METRIC OP VALUE", None),
        ("std-randread-4k:iops=3500", 20, "'=' is not a comparison", "OP is one of < <= > >=", None),
        ("std-randread-4k:iops=>3500", 20, "'=>' is not a comparison", "OP is one of", ">="),
        ("std-randread-4k:iops", 20, "no comparison", "OP is one of < <= > >=", None),
        ("std-randread-4k:iops>=", 22, "no value after '>='", "a number", None),
        (
            "std-randread-4k:p95_ms<2ms",
            23,
            "'2ms' is not a number",
            "the unit is in the metric's name (p95_ms: ms)",
            None,
        ),
        ("std-randread-4k:iops>=3,500", 22, "'3,500' is not a number", "a non-negative plain number", None),
        ("std-randread-4k:iops>=-1", 22, "'-1' is not a number", "non-negative", None),
        ("a:b:c:iops>1", 5, "too many ':'", "WORKLOAD[:DIRECTION]:METRIC", None),
        (":iops>1", 0, "no workload before ':'", "WORKLOAD", None),
        ("Std:iops>1", 0, "'Std' is not a workload id", "lowercase letters", None),
        ("   ", 0, "empty", "WORKLOAD", None),
    ],
)
def test_a_requirement_that_does_not_read_names_where_what_and_what_is_allowed(
    text: str, position: int, problem: str, allowed: str, suggestion: str | None
) -> None:
    with pytest.raises(RequirementError) as caught:
        parse_requirement(text, WORKLOADS)
    error = caught.value
    assert (error.text, error.position, error.problem, error.suggestion) == (
        text,
        position,
        problem,
        suggestion,
    )
    assert allowed in error.allowed
    message = str(error)
    assert message.startswith(f"{text!r}, character {position + 1}: {problem}")
    if suggestion:
        assert message.endswith(f"did you mean {suggestion}?")


def test_without_known_workloads_any_workload_id_reads() -> None:
    assert parse_requirement("anything-1:iops>1").workload == "anything-1"


def test_a_repeated_query_parameter_joined_with_commas_splits_back() -> None:
    assert split_joined("a:iops>1,b:read:p95_ms<2") == ["a:iops>1", "b:read:p95_ms<2"]
    assert split_joined("a:iops>1") == ["a:iops>1"]


# ------------------------------------------------------------------------------ in a request


def test_a_request_carries_requirements_on_its_workloads(minimal: dict[str, Any]) -> None:
    minimal["requirements"] = ["std-randread-4k:iops>=3000", "std-randread-4k:read:p95_ms<2"]
    assert parse_request(minimal).requirements == minimal["requirements"]


def test_a_request_without_requirements_has_none(minimal: dict[str, Any]) -> None:
    assert parse_request(minimal).requirements == []


def test_a_requirement_on_a_workload_the_request_does_not_run_is_located(minimal: dict[str, Any]) -> None:
    minimal["requirements"] = ["std-randread-4k:iops>=3000", "std-seqread-1m:mibps>=100"]
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    [error] = caught.value.errors
    assert error.path == "requirements[1]" and error.value == "std-seqread-1m:mibps>=100"
    assert "unknown workload 'std-seqread-1m'; workloads: std-randread-4k" in error.message


def test_a_requirement_that_does_not_read_is_reported_with_the_other_problems_in_one_pass(
    minimal: dict[str, Any],
) -> None:
    minimal["requirements"] = ["std-randread-4k:iop>=3000"]
    minimal["repetitions"] = 0
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    found = {e.path: e.message for e in caught.value.errors}
    assert set(found) == {"repetitions", "requirements[0]"}
    assert found["requirements[0]"].startswith("character 17: unknown metric 'iop'")
    assert found["requirements[0]"].endswith("did you mean iops?")


def test_requirements_name_the_ids_a_request_gives_its_workloads(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "std-randread-4k", "id": "oltp"}]
    minimal["requirements"] = ["oltp:iops>=3000"]
    assert parse_request(minimal).requirements == ["oltp:iops>=3000"]
    minimal["requirements"] = ["std-randread-4k:iops>=3000"]
    with pytest.raises(RequestError, match="unknown workload 'std-randread-4k'; workloads: oltp"):
        parse_request(minimal)
