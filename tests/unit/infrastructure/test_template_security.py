"""template.yaml's security promises, read from the template itself (no AWS).

Least privilege: whatever the stack's roles may delete or stop must carry the stack's tag
(``aws:ResourceTag``), whatever they create must be created with it (``aws:RequestTag``), no
statement grants a whole service; every function logs to a group with a retention; the bucket,
table and security groups keep their defaults; the nightly schedule starts this state machine
with events/nightly.json and can do nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import GATEWAY_VARIABLES, Guardrails
from storagebench.planning.preview import preview_request
from storagebench.request import parse_request
from storagebench_local.cfn import load_template

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
STACK_TAG = "storagebench:stack"
STACK_NAME = {"Ref": "AWS::StackName"}
# Deleting, stopping or changing something: only on what carries the stack's tag.
DESTRUCTIVE = re.compile(
    r"^(ec2:(Terminate|Delete|Detach|Modify|Stop|Reboot)|elasticfilesystem:(Delete|Update|Put)"
    r"|fsx:(Delete|Update)|storagegateway:(Delete|Update|Remove|Shutdown|Disable))"
)
# EFS deletes a mount target's network interface with the caller's rights; it carries no tag,
# so the stack's subnet bounds it instead.
SUBNET_BOUND = {"ec2:DeleteNetworkInterface"}
CREATES_TAGGED = {
    "ec2:RunInstances",
    "ec2:CreateVolume",
    "elasticfilesystem:CreateFileSystem",
    "fsx:CreateFileSystem",
    "storagegateway:ActivateGateway",
    "ec2:CreatePlacementGroup",
}
# RunInstances also names what it uses but does not create: those take no request tag (a config's own
# security and placement groups are conditioned on their resource tag, tests/iam evaluates it).
UNTAGGED_LAUNCH_INPUTS = (
    "image/",
    "snapshot/",
    "subnet/",
    "security-group/",
    "placement-group/",
    "network-interface/",
    "key-pair/",
)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _statements() -> Iterator[tuple[str, dict[str, Any]]]:
    """(resource, statement) for every inline statement of every role and function."""
    for name, resource in RESOURCES.items():
        properties = resource.get("Properties") or {}
        if resource["Type"] == "AWS::IAM::Role":
            for policy in properties.get("Policies") or []:
                for statement in policy["PolicyDocument"]["Statement"]:
                    yield name, statement
        elif resource["Type"] in ("AWS::Serverless::Function", "AWS::Serverless::StateMachine"):
            for declared in properties.get("Policies") or []:
                # a conditional policy is [condition, policy, AWS::NoValue]: check the policy
                policy = (
                    declared["Fn::If"][1] if isinstance(declared, dict) and "Fn::If" in declared else declared
                )
                for statement in (policy.get("Statement") or []) if isinstance(policy, dict) else []:
                    yield name, statement


def _allows(statement: dict[str, Any]) -> list[str]:
    return [str(a) for a in _list(statement.get("Action"))] if statement.get("Effect") == "Allow" else []


def _condition(statement: dict[str, Any], operator: str, key: str) -> Any:
    return ((statement.get("Condition") or {}).get(operator) or {}).get(key)


def _resource_texts(statement: dict[str, Any]) -> list[str]:
    texts = []
    for resource in _list(statement.get("Resource")):
        texts.append(
            resource["Fn::Sub"]
            if isinstance(resource, dict) and "Fn::Sub" in resource
            else json.dumps(resource)
        )
    return texts


def test_the_template_has_statements_to_check() -> None:
    assert len(list(_statements())) > 20


def test_no_statement_grants_a_whole_service() -> None:
    for name, statement in _statements():
        for action in _allows(statement):
            assert action != "*" and not action.endswith(":*"), f"{name}: {action} grants a whole service"
            assert not action.startswith("iam:") or action in (
                "iam:PassRole",
                "iam:CreateServiceLinkedRole",
            ), f"{name}: {action}"


def test_destructive_actions_need_the_stack_tag() -> None:
    seen = set()
    for name, statement in _statements():
        for action in _allows(statement):
            if action in SUBNET_BOUND:
                assert _condition(statement, "ArnEquals", "ec2:Subnet"), (
                    f"{name}: {action} outside the subnet"
                )
            elif DESTRUCTIVE.match(action):
                seen.add(action)
                tag = _condition(statement, "StringEquals", f"aws:ResourceTag/{STACK_TAG}")
                assert tag == STACK_NAME, f"{name}: {action} without aws:ResourceTag/{STACK_TAG}"
                assert all(r.strip('"') != "*" for r in _resource_texts(statement)), name
    assert {
        "ec2:TerminateInstances",
        "ec2:DeleteVolume",
        "fsx:DeleteFileSystem",
        "storagegateway:DeleteGateway",
        "storagegateway:DeleteFileShare",
    } <= seen


def test_creates_need_the_stack_tag_in_the_request() -> None:
    seen = set()
    for name, statement in _statements():
        for action in _allows(statement):
            if action not in CREATES_TAGGED:
                continue
            seen.add(action)
            inputs = [
                r for r in _resource_texts(statement) if r.split(":")[-1].startswith(UNTAGGED_LAUNCH_INPUTS)
            ]
            if action in ("ec2:RunInstances", "ec2:CreateVolume") and inputs:  # what it reads, not creates
                assert inputs == _resource_texts(statement), (
                    f"{name}: launch inputs mixed with created resources"
                )
                continue
            tag = _condition(statement, "StringEquals", f"aws:RequestTag/{STACK_TAG}")
            assert tag == STACK_NAME, f"{name}: {action} without aws:RequestTag/{STACK_TAG}"
    assert {
        "ec2:RunInstances",
        "ec2:CreateVolume",  # a node group's Multi-Attach volume
        "elasticfilesystem:CreateFileSystem",
        "fsx:CreateFileSystem",
        "storagegateway:ActivateGateway",
    } <= seen


def test_tags_are_only_written_while_creating() -> None:
    for name, statement in _statements():
        actions = _allows(statement)
        if "ec2:CreateTags" in actions:
            assert _condition(statement, "StringEquals", "ec2:CreateAction"), (
                f"{name}: ec2:CreateTags at any time"
            )
        if "elasticfilesystem:TagResource" in actions:
            assert _condition(statement, "StringEquals", "elasticfilesystem:CreateAction"), name
        if "storagegateway:AddTagsToResource" in actions:
            assert _condition(statement, "StringEquals", f"aws:RequestTag/{STACK_TAG}") == STACK_NAME, name
        if "fsx:TagResource" in actions:
            assert _condition(statement, "StringEquals", f"aws:RequestTag/{STACK_TAG}") == STACK_NAME, name


def test_commands_run_only_on_the_stacks_instances() -> None:
    for name, statement in _statements():
        if "ssm:SendCommand" in _allows(statement) and any(
            ":instance/" in r for r in _resource_texts(statement)
        ):
            assert _condition(statement, "StringEquals", f"ssm:resourceTag/{STACK_TAG}") == STACK_NAME, name


def test_every_function_logs_to_a_group_with_the_retention() -> None:
    functions = [n for n, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"]
    assert len(functions) >= 9
    for name in functions:
        logging = RESOURCES[name]["Properties"].get("LoggingConfig") or {}
        group = (logging.get("LogGroup") or {}).get("Ref")
        assert group in RESOURCES, f"{name}: LoggingConfig.LogGroup must !Ref an AWS::Logs::LogGroup"
        assert RESOURCES[group]["Type"] == "AWS::Logs::LogGroup"
        assert RESOURCES[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, group


def test_the_instance_role_reaches_only_its_own_prefix() -> None:
    """An instance writes and reads runs/<run>/<config>/instances/<its aws:userid>/ alone: no other
    instance's output, no request.json or plan.json, nothing the workflow trusts."""
    statements = [s for n, s in _statements() if n == "InstanceRole"]
    s3 = [s for s in statements if any(a.startswith("s3:") for a in _allows(s))]
    object_access = [s for s in s3 if set(_allows(s)) & {"s3:PutObject", "s3:GetObject"}]
    assert [(sorted(_allows(s)), _resource_texts(s)) for s in object_access] == [
        (["s3:GetObject", "s3:PutObject"], ["${ArtifactsBucket.Arn}/runs/*/*/instances/${!aws:userid}/*"])
    ]
    # the fence: the same prefix with a third segment before it (nested in another instance's) is denied
    denied = [
        (sorted(str(a) for a in _list(s.get("Action"))), _resource_texts(s))
        for s in statements
        if s.get("Effect") == "Deny"
    ]
    assert denied == [
        (["s3:GetObject", "s3:PutObject"], ["${ArtifactsBucket.Arn}/runs/*/*/*/instances/${!aws:userid}/*"])
    ]
    other = {a for s in s3 if s not in object_access for a in _allows(s)}
    assert other == {"s3:GetEncryptionConfiguration"}  # SSM's agent checks it before uploading output
    assert not any(a.startswith(("s3:Delete", "s3:List")) for s in statements for a in _allows(s))
    managed = RESOURCES["InstanceRole"]["Properties"]["ManagedPolicyArns"]
    assert managed == [{"Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"}]


def test_the_workflow_reads_instance_output_only_from_instance_prefixes() -> None:
    """Collect and RecordFailure read what instances wrote only below instances/<principal>/."""
    for function, kind in (("CollectFunction", "agent"), ("RecordFailureFunction", "ssm")):
        statements = [s for n, s in _statements() if n == function]
        reads = [r for s in statements if "s3:GetObject" in _allows(s) for r in _resource_texts(s)]
        assert f"${{ArtifactsBucket.Arn}}/runs/*/instances/*/{kind}/*" in reads, function
        assert "${ArtifactsBucket.Arn}/runs/*" not in reads, function
        listed = [
            _condition(s, "StringLike", "s3:prefix") for s in statements if "s3:ListBucket" in _allows(s)
        ]
        assert listed == [[f"runs/*/instances/*/{kind}/*"]], function
    token = [
        _resource_texts(s)
        for n, s in _statements()
        if n == "StartAgentFunction" and s.get("Sid") == "TaskTokenInTheInstancePrefix"
    ]
    assert token == [["${ArtifactsBucket.Arn}/runs/*/instances/*/task-token"]]


def test_the_task_token_is_not_a_command_parameter() -> None:
    parameters = RESOURCES["AgentDocument"]["Properties"]["Content"]["parameters"]
    assert "TaskToken" not in parameters
    assert set(parameters) >= {"TaskTokenUri", "TaskTokenSha256"}
    # a digest, or empty on a node of a multi-machine config (which reports to nobody)
    assert parameters["TaskTokenSha256"]["allowedPattern"] == "^([0-9a-f]{64})?$"
    assert parameters["TaskTokenUri"]["allowedPattern"].startswith("^(s3://")


def test_launches_mirror_the_guardrails_instance_types_and_imdsv2() -> None:
    [instances] = [
        s
        for n, s in _statements()
        if n == "ProvisionFunction" and s.get("Sid") == "LaunchOnlyStackTaggedInstancesOfAllowedTypes"
    ]
    assert _resource_texts(instances) == [
        "arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:instance/*"
    ]
    assert _condition(instances, "StringLike", "ec2:InstanceType") == {"Ref": "AllowedInstanceTypes"}
    assert _condition(instances, "StringEquals", "ec2:MetadataHttpTokens") == "required"
    assert _condition(instances, "StringEquals", "aws:RequestTag/storagebench:stack") == {
        "Ref": "AWS::StackName"
    }


def test_bucket_table_and_groups_keep_their_defaults() -> None:
    bucket = RESOURCES["ArtifactsBucket"]["Properties"]
    assert set(bucket["PublicAccessBlockConfiguration"].values()) == {True}
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert any(
        rule["Status"] == "Enabled" and rule["ExpirationInDays"]
        for rule in bucket["LifecycleConfiguration"]["Rules"]
    )
    (deny,) = RESOURCES["ArtifactsBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"][:1]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    table = RESOURCES["ResultsTable"]["Properties"]
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["SSESpecification"]["SSEEnabled"] is True
    assert (
        "SecurityGroupIngress" not in RESOURCES["InstanceSecurityGroup"]["Properties"]
    )  # no SSH, nothing in
    for name, resource in RESOURCES.items():
        if resource["Type"] == "AWS::EC2::SecurityGroupIngress":
            assert resource["Properties"]["GroupId"] != {"Ref": "InstanceSecurityGroup"}, name


def test_every_checkov_skip_says_why() -> None:
    for name, resource in RESOURCES.items():
        for skip in ((resource.get("Metadata") or {}).get("checkov") or {}).get("skip") or []:
            assert re.match(r"^CKV2?_AWS_\d+$", skip["id"]), (name, skip)
            assert len(str(skip.get("comment", ""))) >= 20, f"{name}: skip {skip['id']} needs its reason"


# ------------------------------------------------------------------------ the nightly schedule


def test_the_scheduler_role_may_only_start_this_state_machine() -> None:
    statements = [s for n, s in _statements() if n == "SchedulerRole"]
    assert statements == [
        {"Effect": "Allow", "Action": "states:StartExecution", "Resource": {"Ref": "BenchmarkStateMachine"}}
    ]
    trust = RESOURCES["SchedulerRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}


def test_the_nightly_schedule_starts_the_state_machine_with_the_nightly_suite() -> None:
    schedule = RESOURCES["NightlySchedule"]["Properties"]
    assert schedule["Target"]["Arn"] == {"Ref": "BenchmarkStateMachine"}
    assert schedule["Target"]["RoleArn"] == {"Fn::GetAtt": ["SchedulerRole", "Arn"]}
    assert schedule["Target"]["Input"] == {"Ref": "NightlySuite"}
    assert schedule["ScheduleExpression"] == {"Ref": "NightlyCron"}
    assert schedule["ScheduleExpressionTimezone"] == {"Ref": "NightlyTimezone"}
    assert schedule["State"] == {"Ref": "NightlyEnabled"}
    off, flexible = schedule["FlexibleTimeWindow"]["Fn::If"][1:]
    assert off == {"Mode": "OFF"}
    assert flexible == {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": {"Ref": "NightlyWindowMinutes"}}


@pytest.mark.parametrize("name", ["NightlyCron", "NightlyTimezone", "NightlyWindowMinutes", "NightlyEnabled"])
def test_nightly_parameters_have_defaults(name: str) -> None:
    assert "Default" in TEMPLATE["Parameters"][name]


def test_the_nightly_suite_default_is_events_nightly_json() -> None:
    declared = TEMPLATE["Parameters"]["NightlySuite"]
    default = declared["Default"]
    assert len(default.encode()) <= declared["MaxLength"] <= 4096  # CloudFormation's parameter limit
    on_disk = json.loads((ROOT / "events" / "nightly.json").read_text(encoding="utf-8"))
    scheduled = {
        "schedule_arn": "<aws.scheduler.schedule-arn>",
        "scheduled_time": "<aws.scheduler.scheduled-time>",
    }
    assert json.loads(default) == {**on_disk, "scheduled": scheduled}, (
        'regenerate NightlySuite\'s Default from events/nightly.json (compact JSON) plus its "scheduled"'
    )
    request = parse_request(on_disk)
    assert [c.id for c in request.configs] == ["gp2", "gp3", "io2"]


def _as_started(suite: str) -> Any:
    """The nightly Input as EventBridge Scheduler hands it to StartExecution (placeholders filled in)."""
    arn = "arn:aws:scheduler:us-east-1:123456789012:schedule/sb-schedules/NightlySchedule-x"
    filled = suite.replace("<aws.scheduler.schedule-arn>", arn)
    return json.loads(filled.replace("<aws.scheduler.scheduled-time>", "2030-01-02T02:00:00Z"))


def _default_stack_environment() -> dict[str, str]:
    """The functions' environment as a default deployment sets it: each parameter at its Default."""
    parameters = TEMPLATE["Parameters"]
    environment: dict[str, str] = {}
    for name, value in TEMPLATE["Globals"]["Function"]["Environment"]["Variables"].items():
        if isinstance(value, dict) and "Ref" in value and value["Ref"] in parameters:
            environment[name] = str(parameters[value["Ref"]].get("Default", ""))
        elif isinstance(value, dict) and "Fn::Join" in value:  # AllowedInstanceTypes, a list parameter
            separator, ref = value["Fn::Join"]
            environment[name] = separator.join(str(parameters[ref["Ref"]]["Default"]).split(","))
    return environment


def test_the_nightly_suite_passes_the_default_guardrails() -> None:
    """A default deployment must not refuse its own nightly run at Plan (every night, silently)."""
    environment = _default_stack_environment()
    assert {"MAX_RUN_COST_USD", "MAX_RUN_HOURS", "MAX_CONFIGS_PER_RUN"} <= environment.keys()
    nightly = parse_request(_as_started(TEMPLATE["Parameters"]["NightlySuite"]["Default"]))
    preview = preview_request(nightly, Guardrails.from_env(environment))
    assert preview.allowed, preview.problem_text()
    assert 0 < preview.estimate.total_usd <= Guardrails.from_env(environment).max_run_cost_usd


# ------------------------------------------------------------------------ File Gateway benchmarks


def test_every_function_gets_the_gateway_settings_so_the_guardrails_agree() -> None:
    variables = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    assert set(GATEWAY_VARIABLES) <= variables.keys()
    assert variables["ACTIVATOR_FUNCTION"] == {"Ref": "ActivatorFunction"}
    assert variables["SHARE_BUCKET"] == {"Ref": "ShareBucket"}


def _sources(group: str) -> set[tuple[str, int, str]]:
    """(protocol, port, source group) admitted into ``group``, inline and as separate rules."""
    rules = list(RESOURCES[group]["Properties"].get("SecurityGroupIngress") or [])
    rules += [
        r["Properties"]
        for r in RESOURCES.values()
        if r["Type"] == "AWS::EC2::SecurityGroupIngress" and r["Properties"]["GroupId"] == {"Ref": group}
    ]
    admitted = set()
    for rule in rules:
        assert "CidrIp" not in rule and "CidrIpv6" not in rule, f"{group}: {rule} admits addresses"
        assert rule["FromPort"] == rule["ToPort"], rule
        admitted.add((rule["IpProtocol"], rule["FromPort"], rule["SourceSecurityGroupId"]["Ref"]))
    return admitted


def test_the_appliance_admits_nfs_and_activation_only_from_the_client_and_the_activator() -> None:
    nfs = {(p, port, "InstanceSecurityGroup") for p in ("tcp", "udp") for port in (2049, 111, 20048)}
    http = {("tcp", 80, "InstanceSecurityGroup"), ("tcp", 80, "ActivatorSecurityGroup")}
    assert _sources("GatewaySecurityGroup") == nfs | http
    egress = RESOURCES["GatewaySecurityGroup"]["Properties"]["SecurityGroupEgress"]
    assert [(r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in egress] == [("tcp", 443, 443)]


def test_the_activator_runs_in_the_vpc_and_reaches_the_appliances_only() -> None:
    activator = RESOURCES["ActivatorFunction"]["Properties"]
    assert activator["VpcConfig"] == {
        "SubnetIds": [{"Ref": "SubnetId"}],
        "SecurityGroupIds": [{"Ref": "ActivatorSecurityGroup"}],
    }
    (egress,) = RESOURCES["ActivatorSecurityGroup"]["Properties"]["SecurityGroupEgress"]
    assert (egress["IpProtocol"], egress["FromPort"], egress["ToPort"]) == ("tcp", 80, 80)
    assert egress["DestinationSecurityGroupId"] == {"Ref": "GatewaySecurityGroup"}
    invokers = [
        n
        for n, s in _statements()
        if "lambda:InvokeFunction" in _allows(s)
        and s["Resource"] == {"Fn::GetAtt": ["ActivatorFunction", "Arn"]}
    ]
    assert invokers == ["CheckReadyFunction"]


def test_the_share_role_is_for_storage_gateway_on_the_share_bucket_only() -> None:
    (trust,) = RESOURCES["ShareRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "storagegateway.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    resources = [r for n, s in _statements() if n == "ShareRole" for r in _resource_texts(s)]
    assert set(resources) == {json.dumps({"Fn::GetAtt": ["ShareBucket", "Arn"]}), "${ShareBucket.Arn}/*"}
    for name, statement in _statements():
        if "iam:PassRole" in _allows(statement) and statement["Resource"] == {
            "Fn::GetAtt": ["ShareRole", "Arn"]
        }:
            assert _condition(statement, "StringEquals", "iam:PassedToService") == (
                "storagegateway.amazonaws.com"
            ), name


def test_the_share_bucket_keeps_the_artifacts_buckets_defaults() -> None:
    bucket = RESOURCES["ShareBucket"]["Properties"]
    assert set(bucket["PublicAccessBlockConfiguration"].values()) == {True}
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    (rule,) = bucket["LifecycleConfiguration"]["Rules"]
    assert rule["Status"] == "Enabled" and rule["ExpirationInDays"] == {"Ref": "ArtifactRetentionDays"}
    (deny,) = RESOURCES["ShareBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def _sid(function: str, sid: str) -> dict[str, Any]:
    return next(s for name, s in _statements() if name == function and s.get("Sid") == sid)


def test_provision_reads_exactly_the_image_parameters_validation_allows() -> None:
    from storagebench.catalog.images import SSM_PREFIXES, named_images

    granted = sorted(
        str(r["Fn::Sub"]).split(":parameter", 1)[1].removesuffix("*")
        for r in _list(_sid("ProvisionFunction", "ImageParameters")["Resource"])
    )
    assert granted == sorted(SSM_PREFIXES)
    for name, spec in named_images().items():  # every public parameter of the catalog is readable
        for parameter in spec.ssm_parameters.values():
            assert parameter.startswith(tuple(SSM_PREFIXES)), (name, parameter)


def test_images_are_launched_only_from_the_catalogs_publishers_or_the_account() -> None:
    from storagebench.catalog.images import named_images

    statement = _sid("ProvisionFunction", "LaunchImagesOfKnownPublishers")
    assert [str(r["Fn::Sub"]) for r in _list(statement["Resource"])] == [
        "arn:${AWS::Partition}:ec2:${AWS::Region}::image/*"
    ]
    owners = statement["Condition"]["StringEquals"]["ec2:Owner"]
    assert {"Ref": "AWS::AccountId"} in owners
    assert {o for spec in named_images().values() for o in spec.owners} <= {
        o for o in owners if isinstance(o, str)
    }
    other = [s for name, s in _statements() if name == "ProvisionFunction" and s is not statement]
    assert not any("image/" in str(s.get("Resource")) for s in other), "no unconditioned image grant"


def test_privileged_runs_have_their_own_route_and_are_off_by_default() -> None:
    parameter = TEMPLATE["Parameters"]["AllowPrivilegedRuns"]
    assert (parameter["Default"], sorted(parameter["AllowedValues"])) == ("false", ["false", "true"])
    variables = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["ALLOW_PRIVILEGED_RUNS"] == {"Ref": "AllowPrivilegedRuns"}
    events = RESOURCES["ApiFunction"]["Properties"]["Events"]
    routes = {(e["Properties"]["Method"], e["Properties"]["Path"]) for e in events.values()}
    # two routes, two execute-api resources: an administrator grants /runs/privileged on its own
    assert {("POST", "/runs"), ("POST", "/runs/privileged")} <= routes
