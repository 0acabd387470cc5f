"""template.yaml against the code it must agree with for issue 11's exactly once and stopping: the
schedule group Plan claims for, the nightly Input's occurrence, and the window SweepRun waits."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from storagebench.request import parse_request
from storagebench.workflow.ports import IN_FLIGHT_S
from storagebench.workflow.run_ids import schedule_group
from storagebench_local.cfn import load_template

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
NIGHTLY = TEMPLATE["Parameters"]["NightlySuite"]


def _timeout(function: str) -> int:
    properties = RESOURCES[function]["Properties"]
    return int(properties.get("Timeout", TEMPLATE["Globals"]["Function"]["Timeout"]))


def test_plan_claims_for_the_group_the_template_creates() -> None:
    assert RESOURCES["ScheduleGroup"]["Properties"]["Name"] == {"Fn::Sub": "${AWS::StackName}-schedules"}
    assert schedule_group("${AWS::StackName}") == "${AWS::StackName}-schedules"
    assert RESOURCES["NightlySchedule"]["Properties"]["GroupName"] == {"Ref": "ScheduleGroup"}


def test_the_nightly_input_carries_the_occurrence_the_scheduler_fills_in() -> None:
    default = json.loads(NIGHTLY["Default"])
    assert default["scheduled"] == {
        "schedule_arn": "<aws.scheduler.schedule-arn>",
        "scheduled_time": "<aws.scheduler.scheduled-time>",
    }
    arn = "arn:aws:scheduler:eu-west-1:123456789012:schedule/sb-schedules/sb-NightlySchedule-1A2B"
    started = NIGHTLY["Default"].replace("<aws.scheduler.schedule-arn>", arn)
    request = parse_request(
        json.loads(started.replace("<aws.scheduler.scheduled-time>", "2030-01-02T02:00:00Z"))
    )
    assert request.scheduled is not None and request.scheduled.schedule_arn == arn


def test_a_nightly_suite_without_the_occurrence_is_refused_at_deploy() -> None:
    pattern = NIGHTLY["AllowedPattern"]
    assert re.fullmatch(pattern, NIGHTLY["Default"])
    bare = json.dumps(json.loads((ROOT / "events" / "nightly.json").read_text()), separators=(",", ":"))
    assert not re.fullmatch(pattern, bare)
    assert "scheduled" in NIGHTLY["ConstraintDescription"]


def test_sweep_run_waits_out_every_step_that_creates_resources() -> None:
    """Provision creates file systems, gateways and the instance; CheckReady creates gateway shares.
    An invocation of either lives at most its Timeout after the stop; SweepRun fits both sweeps."""
    assert max(_timeout("ProvisionFunction"), _timeout("CheckReadyFunction")) + 30 <= IN_FLIGHT_S
    assert _timeout("SweepRunFunction") >= IN_FLIGHT_S + 300


def test_the_api_may_mark_a_run_stopping_reserve_spend_and_write_nothing_else() -> None:
    """``ApiService.stop_run`` updates the run item (RUN#<run>) before StopExecution, and a start
    reserves its share of the day's budget (SPEND#<day>); the API's role otherwise only reads."""
    policies = RESOURCES["ApiFunction"]["Properties"]["Policies"]
    assert {"DynamoDBReadPolicy": {"TableName": {"Ref": "ResultsTable"}}} in policies
    writes = [
        s
        for p in policies
        if isinstance(p, dict) and "Statement" in p
        for s in p["Statement"]
        if any(
            str(a).startswith("dynamodb:")
            for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        )
    ]
    assert writes == [
        {
            "Sid": "MarkRunsStopping",
            "Effect": "Allow",
            "Action": "dynamodb:UpdateItem",
            "Resource": {"Fn::GetAtt": ["ResultsTable", "Arn"]},
            "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["RUN#*"]}},
        },
        {
            "Sid": "ReserveTheDaysSpend",
            "Effect": "Allow",
            "Action": "dynamodb:UpdateItem",
            "Resource": {"Fn::GetAtt": ["ResultsTable", "Arn"]},
            "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["SPEND#*"]}},
        },
    ]
