"""Every AWS call a local run makes is allowed by template.yaml's IAM, evaluated call by call.

One small local run (three configs on emulated gp3 volumes, one short fio workload; the agent of
one and the plan of another refused on purpose, so the failure paths run too) with the
recorder on (storagebench_local.aws_calls): each handler's calls as its SAM function's role, the
instance's calls as the instance role (aws:userid "<role id>:<instance id>"), the state machine's
Lambda invocations as its role. Each call becomes the authorization requests IAM makes for it
(call_checks.TABLE: an operation it does not know fails the test), with the resources' tags as they
were at the call; each request is evaluated by the real evaluator against the template rendered
with the local stack's names, and must be Allowed.

Markers: root, slow and fio (local mode emulates EBS with loop devices and cgroup throttling).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from storagebench.planning.local import LocalOptions
from storagebench.workflow.steps.sweep_run import cleanup_run
from storagebench_local.adapters.faults import Fault, FaultPlan
from storagebench_local.aws_calls import FUNCTION, INSTANCE, STATE_MACHINE, AwsCall, AwsCallRecorder
from storagebench_local.session import ACCOUNT, REGION, STACK, TOOLS, Execution, LocalSession

from .call_checks import Check, Stack, UnknownOperationError, checks_of
from .evaluator import Decision, Request, evaluate, version
from .template_policies import RenderedTemplate, StackValues, render

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.fio]

CONFIGS = ("gp3", "agent-refused", "plan-refused")


def _config(config_id: str) -> dict[str, Any]:
    return {
        "id": config_id,
        "instance_type": "c5.large",
        "targets": [{"kind": "ebs", "id": "main", "type": "gp3", "size_gib": 100}],
    }


REQUEST: dict[str, Any] = {
    "name": "iam-recorded",
    "configs": [_config(c) for c in CONFIGS],
    "prewarm": {"method": "none"},
    "workloads": [{"profile": "std-randread-4k", "scale": 0.01}],
    "repetitions": 1,
    "max_concurrency": len(CONFIGS),
    "timing": {"ready_poll_s": 1, "command_poll_s": 3},
}
# One config succeeds; the document refuses the agent of another (no heartbeat ever: RecordFailure
# reads what SSM kept of the command, which the SSM agent wrote to the instance's prefix); the agent
# refuses the plan of the third (it reports with SendTaskFailure).
FAULTS = (
    Fault("agent.run", "agent_checksum", config_id="agent-refused"),
    Fault("agent.run", "plan_checksum", config_id="plan-refused"),
)
LEAK_SETTLE_S = 15.0
# What the recording must show at least: the launch, the command, the release, the instance's own
# writes, reads and callbacks, and the state machine driving the handlers.
EXPECTED = {
    (FUNCTION, "ProvisionFunction", "ec2", "RunInstances"),
    (FUNCTION, "StartAgentFunction", "ssm", "SendCommand"),
    (FUNCTION, "StartAgentFunction", "s3", "PutObject"),
    (FUNCTION, "CollectFunction", "s3", "GetObject"),
    (FUNCTION, "CleanupFunction", "ec2", "TerminateInstances"),
    (FUNCTION, "FinalizeFunction", "s3", "PutObject"),
    (INSTANCE, "*", "s3", "PutObject"),
    (INSTANCE, "*", "s3", "GetObject"),
    (INSTANCE, "*", "stepfunctions", "SendTaskHeartbeat"),
    (INSTANCE, "*", "stepfunctions", "SendTaskSuccess"),
    (INSTANCE, "*", "stepfunctions", "SendTaskFailure"),
    (FUNCTION, "RecordFailureFunction", "s3", "GetObject"),
    (FUNCTION, "RecordFailureFunction", "s3", "ListObjectsV2"),
    (STATE_MACHINE, "BenchmarkStateMachine", "lambda", "Invoke"),
}
# Calls no principal of the stack makes: the session setting up what CloudFormation would (network,
# role, bucket, table, document, state machine, published images), starting and polling the
# execution, the SSM agent stand-in looking for terminated instances, and presigned GETs (recorded
# as the signer's GetObject when they were signed). Anything else unattributed is a handler's call
# the recorder missed: the test fails on it.
NO_PRINCIPAL = {
    "dynamodb.CreateTable",
    "dynamodb.DescribeTable",
    "dynamodb.ListTables",
    "ec2.CreateSecurityGroup",
    "ec2.CreateSubnet",
    "ec2.CreateVpc",
    "ec2.DescribeImages",
    "ec2.DescribeInstances",
    "ec2.RegisterImage",
    "ec2.CreateSnapshot",
    "ec2.CreateVolume",
    "ec2.CreateTags",
    "iam.AddRoleToInstanceProfile",
    "iam.CreateInstanceProfile",
    "iam.CreateRole",
    "s3.CreateBucket",
    "ssm.CreateDocument",
    "ssm.PutParameter",
    "stepfunctions.CreateStateMachine",
    "stepfunctions.DescribeExecution",
    "stepfunctions.GetExecutionHistory",
    "stepfunctions.ListExecutions",  # the session reading a Distributed Map's children
    "stepfunctions.ListMapRuns",
    "stepfunctions.StartExecution",
    "http:presigned:s3",
}


def _missing_requirements() -> str | None:
    if os.geteuid() != 0:
        return "needs root: local mode emulates EBS with loop devices, mkfs, mounts and cgroup throttling"
    for tool in ("fio", "losetup"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make setup installs it)"
    if not (TOOLS / "bin" / "ec2-metadata-mock").exists():
        return "ec2-metadata-mock is not built (make setup builds it)"
    return None


@dataclass
class Recorded:
    execution: Execution
    calls: list[AwsCall]
    unattributed: Counter[str]
    errors: list[str]
    values: StackValues
    run_s: float


@pytest.fixture(scope="module")
def recorded(evaluator: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    missing = _missing_requirements()
    if missing:  # as the other root tiers: skipped with the reason (the evaluator itself fails under CI)
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("iam-recorded")
    recorder = AwsCallRecorder(REGION, root / "aws-calls.jsonl")
    session = LocalSession(
        root,
        LocalOptions(capacity_bytes=512 << 20, knee_seconds=30.0),
        faults=FaultPlan(list(FAULTS)),
        use_dynamodb_local=False,  # the same calls, to moto's DynamoDB: no Java needed
        fast_retries=True,
        aws_calls=recorder,
    )
    started = time.monotonic()
    with session:
        execution = session.run(REQUEST)
        with recorder.aside():  # the test's own checks that nothing of the run is left
            deadline = time.monotonic() + LEAK_SETTLE_S
            while session.leaks(execution.run_id) and time.monotonic() < deadline:
                time.sleep(0.25)
            if session.leaks(execution.run_id) and session.services is not None:  # never leave a loop device
                cleanup_run(execution.run_id, list(CONFIGS), session.services)
        assert session.services is not None
        settings = session.services.compute.settings  # type: ignore[attr-defined]
        values = StackValues(
            stack_name=STACK,
            account=ACCOUNT,
            region=REGION,
            artifacts_bucket=settings.artifacts_bucket,
            results_table=settings.results_table,
            subnet_id=settings.subnet_id,
            instance_security_group=settings.security_group_id,
            agent_document=settings.agent_document,
            instance_role_id=settings.instance_role_id,
        )
    yield Recorded(
        execution,
        list(recorder.calls),
        Counter(recorder.unattributed),
        list(recorder.errors),
        values,
        time.monotonic() - started,
    )


def _role_and_session(rendered: RenderedTemplate, call: AwsCall) -> tuple[str, str]:
    if call.kind == INSTANCE:
        return "InstanceRole", call.principal  # an instance profile's session is named by the instance id
    return call.principal, call.principal


def _requests(recorded: Recorded) -> tuple[RenderedTemplate, list[tuple[AwsCall, Check, Request]]]:
    rendered = render(recorded.values)
    stack = Stack(recorded.values.account, recorded.values.region, recorded.values.role_arn("InstanceRole"))
    found: list[tuple[AwsCall, Check, Request]] = []
    for call in recorded.calls:
        role, session = _role_and_session(rendered, call)
        for check in checks_of(call, stack):
            label = f"{call.describe()}: {check.action} {check.resource}"
            found.append(
                (
                    call,
                    check,
                    Request.of(label, rendered, role, session, check.action, check.resource, check.context),
                )
            )
    return rendered, found


@pytest.fixture(scope="module")
def decisions(recorded: Recorded) -> list[tuple[AwsCall, Decision]]:
    _, requests = _requests(recorded)
    unique: dict[str, Request] = {}
    owners: dict[str, list[AwsCall]] = {}
    for call, _check, request in requests:
        key = json.dumps(
            [request.principal.rsplit("/", 1)[0], request.action, request.resource, dict(request.context)],
            sort_keys=True,
        )
        unique.setdefault(key, request)
        owners.setdefault(key, []).append(call)
    keys = list(unique)
    evaluated = evaluate([unique[k] for k in keys])
    return [(owners[k][0], d) for k, d in zip(keys, evaluated, strict=True)]


def test_the_run_took_the_paths_it_is_meant_to(recorded: Recorded) -> None:
    execution = recorded.execution
    assert execution.status == "SUCCEEDED", (execution.error, execution.cause)
    assert execution.output is not None
    statuses = {c["config_id"]: c["status"] for c in execution.output["configs"]}
    assert statuses == {"gp3": "succeeded", "agent-refused": "failed", "plan-refused": "failed"}, statuses


def test_the_recording_is_complete(recorded: Recorded) -> None:
    assert not recorded.errors, f"requests the recorder could not read: {recorded.errors}"
    seen = {(c.kind, c.principal, c.service, c.operation) for c in recorded.calls}
    seen |= {(c.kind, "*", c.service, c.operation) for c in recorded.calls if c.kind == INSTANCE}
    assert not EXPECTED - seen, f"the run made none of {sorted(EXPECTED - seen)}"
    ssm_output = [c for c in recorded.calls if c.via == "ssm-agent" and c.operation == "PutObject"]
    assert ssm_output, "the SSM agent wrote no command output as the instance"
    missed = sorted(set(recorded.unattributed) - NO_PRINCIPAL)
    assert not missed, (
        f"calls made on no principal's behalf the recorder knows of (a handler's, missed?): {missed}"
    )


def test_every_recorded_operation_is_mapped(recorded: Recorded) -> None:
    stack = Stack(recorded.values.account, recorded.values.region, recorded.values.role_arn("InstanceRole"))
    unknown = []
    for call in recorded.calls:
        try:
            checks_of(call, stack)
        except UnknownOperationError as error:
            unknown.append(str(error))
    assert not unknown, "operations call_checks.TABLE does not map:\n" + "\n".join(sorted(set(unknown)))


def test_every_recorded_call_is_allowed(
    recorded: Recorded, decisions: list[tuple[AwsCall, Decision]]
) -> None:
    refused = []
    for call, decision in decisions:
        if decision.error or decision.ignored_context_keys or not decision.allowed:
            refused.append(f"{decision.explain()}\n  params {json.dumps(call.params, sort_keys=True)[:600]}")
    assert not refused, f"{len(refused)} of {len(decisions)} recorded requests not allowed:\n" + "\n".join(
        refused
    )


def test_report(recorded: Recorded, decisions: list[tuple[AwsCall, Decision]], tmp_path: Path) -> None:
    by_principal = Counter(
        f"{c.kind} {c.principal if c.kind != INSTANCE else '<instance>'}" for c in recorded.calls
    )
    print(
        f"\nrecorded AWS calls: {len(recorded.calls)} "
        f"({', '.join(f'{k}: {v}' for k, v in sorted(by_principal.items()))}); "
        f"{len(decisions)} distinct authorization requests evaluated by {version()}, all allowed; "
        f"run and recording {recorded.run_s:.0f} s; "
        f"not a stack principal's: {sum(recorded.unattributed.values())}"
    )
