"""The dry run's and Plan's vCPU quota verdict: refused over a quota, warned at 80 %, a quota not read
warned about, local mode only told; and Plan refusing before anything is recorded or launched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.errors import GuardrailError
from storagebench.core.guardrails import Guardrails
from storagebench.planning.preview import RunPreview, preview_request
from storagebench.quotas.models import QuotaNotReadError, ServiceQuota
from storagebench.quotas.ports import QuotaPolicy
from storagebench.request import parse_request

EVENTS = Path(__file__).resolve().parents[3] / "events"
STANDARD = "L-1216C47A"
NAME = "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"
# virtual-san: 3 configs, 3 at once under these limits; $455 upper bound under the default $500
LIMITS = Guardrails(max_concurrency=3, max_concurrent_instances=20)


class Reader:
    """A QuotaReader answering ``values`` (code -> vCPUs); any other code is not read."""

    def __init__(self, values: dict[str, float], source: str = "stub account") -> None:
        self.values = values
        self.source = source
        self.asked: list[str] = []

    def vcpu_quota(self, code: str) -> ServiceQuota:
        self.asked.append(code)
        if code not in self.values:
            raise QuotaNotReadError(code, "us-east-1", "access denied: AccessDeniedException: not allowed")
        return ServiceQuota.model_validate(
            {"ServiceCode": "ec2", "QuotaCode": code, "QuotaName": NAME, "Value": self.values[code]}
        )


def _vsan() -> Any:
    return parse_request(json.loads((EVENTS / "virtual-san.json").read_text(encoding="utf-8")))


def _preview(values: dict[str, float], refuse: bool = True) -> RunPreview:
    return preview_request(_vsan(), LIMITS, quotas=QuotaPolicy(Reader(values), refuse=refuse))


def test_without_a_policy_nothing_is_read() -> None:
    preview = preview_request(_vsan(), LIMITS)
    assert preview.vcpu_quotas is None and preview.allowed


def test_a_need_over_the_quota_is_refused_naming_the_quota_its_value_and_the_need() -> None:
    preview = _preview({STANDARD: 1000})
    [problem] = preview.problems
    assert problem.limit == f"{NAME} ({STANDARD})" and problem.limit_value == 1000 and problem.value == 1536
    assert problem.message.startswith("1,536 vCPUs needed at once (3 config(s) at once; per config: ")
    assert "i3en-controllers 864, r5b-io2-controllers 576, io2-direct 96" in problem.message
    assert f"quota {STANDARD} of 1,000 vCPUs (stub account)" in problem.message
    assert "or run at most 1 config(s) at once (max_concurrency)" in problem.message
    assert preview.vcpu_quotas is not None
    [line] = preview.vcpu_quotas.lines
    assert (line.status, line.needed_vcpus, line.quota_vcpus, line.fitting_configs) == ("over", 1536, 1000, 1)


def test_a_quota_not_even_the_largest_config_fits_says_so() -> None:
    [problem] = _preview({STANDARD: 5}).problems
    assert problem.message.endswith(
        f"request an increase of {STANDARD} to at least 1,536 (Service Quotas): even i3en-controllers "
        "alone needs 864"
    )


def test_a_need_of_80_percent_or_more_is_a_warning() -> None:
    preview = _preview({STANDARD: 1536 / 0.8})
    assert preview.allowed
    assert preview.vcpu_quotas is not None and preview.vcpu_quotas.lines[0].status == "near"
    [note] = [n for n in preview.notes if n.startswith("vCPU quota")]
    assert note.startswith(
        f"vCPU quota {STANDARD} ({NAME}): 1,536 vCPUs needed at once are 80 % of its 1,920"
    )


def test_a_need_under_80_percent_says_nothing() -> None:
    preview = _preview({STANDARD: 1921})
    assert preview.allowed and preview.vcpu_quotas is not None
    assert preview.vcpu_quotas.lines[0].status == "ok"
    assert not [n for n in preview.notes if "quota" in n]


def test_a_quota_not_read_is_a_warning_not_a_refusal() -> None:
    preview = _preview({})
    assert preview.allowed
    [note] = [n for n in preview.notes if "quota" in n]
    assert note == (
        f"quota not read: {STANDARD} in us-east-1: access denied: AccessDeniedException: not allowed; the "
        f"1,536 on-demand vCPUs the run needs at once under {STANDARD} ({NAME}) are not checked"
    )


def test_local_mode_only_says_what_a_stack_would_refuse() -> None:
    preview = _preview({STANDARD: 5}, refuse=False)
    assert preview.allowed
    [note] = [n for n in preview.notes if n.startswith("vCPU quota")]
    assert "1,536 vCPUs needed at once, more than its 5 (stub account); local mode launches nothing" in note


# ------------------------------------------------------------------------------------ Plan


def test_plan_refuses_a_run_over_a_quota_before_recording_it(tmp_path: Path) -> None:
    from storagebench.workflow.steps.plan import plan_run

    fakes = wf.make_fakes(tmp_path / "artifacts", LIMITS)
    document = json.loads((EVENTS / "virtual-san.json").read_text(encoding="utf-8"))
    fakes.services.quotas = Reader({STANDARD: 1000})
    with pytest.raises(
        GuardrailError, match=r"configs: 1,536 vCPUs needed at once .* quota L-1216C47A of 1,000"
    ):
        plan_run(document, "run-1", "2026-11-21T17:00:00.000Z", fakes.services)
    assert fakes.store.runs == {} and fakes.artifacts.documents == {}
    fakes.services.quotas = Reader({STANDARD: 2000})
    planned = plan_run(document, "run-2", "2026-11-21T17:00:00.000Z", fakes.services)
    assert planned.max_concurrency == 3
