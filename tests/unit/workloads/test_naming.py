"""Override naming: a workload with overridden params is named by them, deterministically."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.planning.steps import plan_steps
from storagebench.protocol.sla import answer_text
from storagebench.request import RequestError, parse_request
from storagebench.request.requirements import parse_requirement, split_joined
from storagebench.workloads import check_params, get_profile
from storagebench.workloads.naming import requested_name, workload_name


def name(profile: str, params: dict[str, Any]) -> str:
    found = get_profile(profile)
    return workload_name(found, check_params(found, params))


def test_no_override_or_a_default_value_keeps_the_profile_name() -> None:
    assert name("std-randread-4k", {}) == "std-randread-4k"
    assert name("std-randread-4k", {"bs": "4k", "iodepth": "auto", "numjobs": 4}) == "std-randread-4k"


def test_overrides_are_sorted_and_spelled_canonically() -> None:
    assert name("std-randread-4k", {"bs": 8192}) == "std-randread-4k[bs=8k]"
    one = name("std-randread-4k", {"runtime": "1m", "numjobs": [4, 8, 16], "bs": "64KiB"})
    other = name("std-randread-4k", {"bs": "64k", "numjobs": [4, 8, 16], "runtime": 60})
    assert one == other == "std-randread-4k[bs=64k,numjobs=4|8|16,runtime=60s]"
    assert name("sla-randread-4k", {"sla_ms": 0.5, "sla_percentile": 95}) == (
        "sla-randread-4k[sla_ms=0.5,sla_percentile=95]"
    )


def test_text_values_are_named_by_a_digest() -> None:
    first = name("fio-custom", {"job_file": "[a]\nrw=randread\n"})
    second = name("fio-custom", {"job_file": "[a]\nrw=randwrite\n"})
    assert first.startswith("fio-custom[job_file=sha256-") and first.endswith("]")
    assert first != second and "\n" not in first


def test_requested_name_leaves_bad_params_to_the_model() -> None:
    assert requested_name("std-randread-4k", {"bs": "8k"}) == "std-randread-4k[bs=8k]"
    assert requested_name("std-randread-4k", {"bs": "huge"}) == "std-randread-4k"
    assert requested_name("no-such-profile", {"bs": "8k"}) == "no-such-profile"


def request(workloads: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "configs": [
            {
                "id": "a",
                "instance_type": "c5.4xlarge",
                "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}],
            }
        ],
        "workloads": workloads,
        **extra,
    }


def test_two_overrides_of_one_profile_do_not_collide_and_name_every_output() -> None:
    parsed = parse_request(
        request(
            [
                {"profile": "std-randread-4k", "params": {"bs": "8k"}},
                {"profile": "std-randread-4k", "params": {"bs": "64k"}},
                {"profile": "std-randread-4k"},
                {"profile": "std-randread-4k", "params": {"bs": "16k"}, "id": "mine"},
            ],
            requirements=["std-randread-4k[bs=8k]:iops>=100"],
        )
    )
    ids = [w.id for w in parsed.resolved_workloads()]
    assert ids == ["std-randread-4k[bs=8k]", "std-randread-4k[bs=64k]", "std-randread-4k", "mine"]
    steps = plan_steps(parsed, parsed.configs[0])
    assert sorted({step["workload"] for step in steps}) == sorted(ids)
    assert len({step["id"] for step in steps}) == len(steps)


def test_the_same_overrides_twice_still_collide() -> None:
    with pytest.raises(RequestError, match="already used by workloads\\[0\\]"):
        parse_request(
            request(
                [
                    {"profile": "std-randread-4k", "params": {"bs": "8k"}},
                    {"profile": "std-randread-4k", "params": {"bs": 8192}},
                ]
            )
        )


def test_requirements_name_an_overridden_workload_and_split_around_its_commas() -> None:
    text = "std-randread-4k[bs=8k,numjobs=8]:read:p99_ms<2"
    assert parse_requirement(text, ["std-randread-4k[bs=8k,numjobs=8]"]).workload == (
        "std-randread-4k[bs=8k,numjobs=8]"
    )
    assert split_joined(f"{text},std-seqread-1m:mibps>=100") == [text, "std-seqread-1m:mibps>=100"]


def test_an_sla_search_answer_reads_as_one_line() -> None:
    result = {
        "percentile": 99.0,
        "target_us": 1000.0,
        "low_iops": 100,
        "met": True,
        "answer": {"iops": 5581.2, "latency_us": 987.0, "rate_iops": 5600},
        "bracket": [5600, 5880],
        "probes": [{}] * 9,
        "stopped": "within-tolerance",
    }
    assert answer_text(result) == (
        "SLA p99 <= 1 ms: sustained 5,581 IOPS (p99 0.987 ms at a rate of 5,600); "
        "the limit lies below 5,880 IOPS (9 probes, within-tolerance)"
    )
