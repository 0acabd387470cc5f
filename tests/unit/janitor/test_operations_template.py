"""template.yaml's operations: the janitor's function, schedule and rights, the notification topic,
the dashboard and the alarms, checked against the metrics the code emits."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support.runs import run_summary

from storagebench.janitor.models import RESOURCE_KINDS, SweepReport
from storagebench.workflow.run_metrics import run_metrics
from storagebench_local.cfn import load_template

TEMPLATE = Path(__file__).resolve().parents[3] / "template.yaml"


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    document = load_template(TEMPLATE)
    return dict(document["Resources"])


def emitted_metrics() -> set[str]:
    """Every metric name the handlers emit in namespace storagebench."""
    names = set(SweepReport(stack="s", swept_at="t").counts())
    for status in ("SUCCEEDED", "PARTIAL", "FAILED"):
        summary = run_summary("r", "s", "t", "t", status=status, economics={"run_cost_usd": 1.0})
        names |= set(run_metrics(summary))
    return names | {"RunsAborted", "CleanupLeftovers"}  # SweepRun's and Cleanup's handlers


def dashboard(resources: dict[str, Any]) -> dict[str, Any]:
    body = resources["OperationsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    return dict(json.loads(re.sub(r"\$\{[^}]+\}", "PLACEHOLDER", body)))


def test_the_dashboard_is_json_and_draws_only_metrics_the_code_emits(resources: dict[str, Any]) -> None:
    widgets = dashboard(resources)["widgets"]
    drawn: set[str] = set()
    per_type: set[str] = set()
    states: set[str] = set()
    for widget in widgets:
        for metric in widget["properties"].get("metrics", []):
            names = [m for m in metric if isinstance(m, str)]
            if names[0] == "storagebench" or (
                names[0] == "." and widget["properties"]["metrics"][0][0] == "storagebench"
            ):
                drawn.add(names[1])
                if "ResourceType" in names:
                    per_type.add(names[names.index("ResourceType") + 1])
            else:
                states.add(names[1])
    assert drawn <= emitted_metrics(), drawn - emitted_metrics()
    assert {"RunCostUSD", "ConfigFailures", "LeaksSwept", "StuckRunsFailed"} <= drawn
    assert per_type == set(RESOURCE_KINDS)
    assert {"ExecutionsStarted", "ExecutionsSucceeded", "ExecutionsFailed"} <= states


def test_alarms_watch_failed_executions_and_leaks_and_notify_the_topic(resources: dict[str, Any]) -> None:
    failed = resources["ExecutionsFailedAlarm"]["Properties"]
    assert (failed["Namespace"], failed["MetricName"]) == ("AWS/States", "ExecutionsFailed")
    assert failed["Dimensions"] == [{"Name": "StateMachineArn", "Value": {"Ref": "BenchmarkStateMachine"}}]
    leaks = resources["LeaksSweptAlarm"]["Properties"]
    assert (leaks["Namespace"], leaks["MetricName"]) == ("storagebench", "LeaksSwept")
    assert "LeaksSwept" in emitted_metrics()
    # Powertools adds the service dimension to every metric: the alarm must name it to match
    assert leaks["Dimensions"] == [{"Name": "service", "Value": "storagebench"}]
    for name in ("ExecutionsFailedAlarm", "LeaksSweptAlarm", "JanitorErrorsAlarm"):
        alarm = resources[name]["Properties"]
        assert alarm["AlarmActions"] == [{"Ref": "NotificationTopic"}]
        assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")


def test_the_topic_is_encrypted_with_a_key_cloudwatch_may_use(resources: dict[str, Any]) -> None:
    topic = resources["NotificationTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Ref": "NotificationKey"}
    statements = resources["NotificationKey"]["Properties"]["KeyPolicy"]["Statement"]
    cloudwatch = next(s for s in statements if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"})
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    assert resources["NotificationEmailSubscription"]["Condition"] == "HasNotificationEmail"


def test_the_janitor_may_delete_only_what_carries_the_stack_tag(resources: dict[str, Any]) -> None:
    function = resources["JanitorFunction"]["Properties"]
    assert function["CodeUri"] == "functions/janitor/" and function["Handler"] == "app.handler"
    statements = [s for policy in function["Policies"] for s in policy["Statement"]]
    deleting = [
        s for s in statements if any(a.split(":")[1].startswith(("Delete", "Terminate")) for a in _actions(s))
    ]
    for statement in deleting:
        condition = statement["Condition"]
        assert condition.get("StringEquals") == {
            "aws:ResourceTag/storagebench:stack": {"Ref": "AWS::StackName"}
        } or "ec2:Subnet" in condition.get("ArnEquals", {}), statement
    assert all(
        s["Resource"] == "*" for s in statements if _actions(s)[0].split(":")[1].startswith("Describe")
    )
    schedule = resources["JanitorSchedule"]["Properties"]
    assert schedule["ScheduleExpression"] == {"Ref": "JanitorRate"}
    assert schedule["Target"]["Arn"] == {"Fn::GetAtt": ["JanitorFunction", "Arn"]}
    logs = resources["JanitorFunctionLogs"]["Properties"]
    assert logs["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)
