"""template.yaml's trust boundary, evaluated: calls that must be allowed and calls that must be denied.

Every case names the role (the session of a function's, the instance's or a service's), the action,
the resource ARN and the request context (resource tags, request tags, tag keys, instance type, image
owner, metadata options, create action, S3 prefix, caller id, transport...), and is decided by a real
policy evaluator (evaluator.py) over the template's rendered policies (template_policies.py): the
role's identity policies, the bucket's or key's policy, the role's trust policy.

The must-deny cases are the trust boundary: deleting or terminating what is untagged or another
stack's; launching untagged, of a type outside AllowedInstanceTypes, from another publisher's image,
without IMDSv2; tagging an existing resource into the stack; an instance touching another instance's
prefix or the documents the workflow trusts; commands to instances of no stack or another one; the
API and the schedules starting or stopping what is not this stack's. The must-allow cases are the
same calls done right, so a denial is never "everything is denied".

``test_every_condition_is_decided_both_ways`` enumerates every Condition of the template (each
operator and key of each statement of each identity, bucket, key and trust policy) and fails unless
one must-allow and one must-deny case turn on it: a new condition needs its two cases here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.support.runs import work_item

from storagebench.core.state import StepTiming
from storagebench.workflow.artifact_keys import export_key, run_export_prefix, work_items_key

from .evaluator import DENIALS, Decision, Request, StatementMatch, evaluate, version
from .template_policies import RenderedTemplate, ResourcePolicy, StackValues, render

V = StackValues()
STACK = V.stack_name
OTHER_STACK = "someone-elses-stack"
A, R = V.account, V.region
OTHER_ACCOUNT = "999988887777"
TAG = "storagebench:stack"
ALLOWED_TYPES = ["c5.large", "m5.large"]
KMS_KEY = f"arn:aws:kms:{R}:{A}:key/0f0f0f0f-1111-2222-3333-444444444444"
VARIANTS: dict[str, StackValues] = {
    "default": V,
    "types": StackValues(parameters={"AllowedInstanceTypes": ALLOWED_TYPES}),
    "kms": StackValues(parameters={"EbsKmsKeyArn": KMS_KEY}),
}


def ec2(resource: str, *, account: bool = True) -> str:
    return f"arn:aws:ec2:{R}:{A if account else ''}:{resource}"


INSTANCE = ec2("instance/i-0123456789abcdef0")
VOLUME = ec2("volume/vol-0123456789abcdef0")
NEW_INSTANCE = ec2("instance/*")  # RunInstances authorises the instance and volumes it creates so
NEW_VOLUME = ec2("volume/*")
NEW_SPOT_REQUEST = ec2("spot-instances-request/*")  # a Spot launch's one-time request
IMAGE = ec2("image/ami-0123456789abcdef0", account=False)
SNAPSHOT = ec2("snapshot/snap-0123456789abcdef0", account=False)
STACK_SUBNET = ec2(f"subnet/{V.subnet_id}")
OTHER_SUBNET = ec2("subnet/subnet-0ffffffffffffffff")
ENI = ec2("network-interface/eni-0123456789abcdef0")
EFS = f"arn:aws:elasticfilesystem:{R}:{A}:file-system/fs-0123456789abcdef0"
FSX = f"arn:aws:fsx:{R}:{A}:file-system/fs-0123456789abcdef0"
GATEWAY = f"arn:aws:storagegateway:{R}:{A}:gateway/sgw-12A3456B"
SHARE = f"arn:aws:storagegateway:{R}:{A}:share/share-AB12CD34"
BUCKET = f"arn:aws:s3:::{V.artifacts_bucket}"
SHARE_BUCKET = f"arn:aws:s3:::{V.share_bucket}"
STATE_MACHINE = V.state_machine_arn
OTHER_STATE_MACHINE = f"arn:aws:states:{R}:{A}:stateMachine:someone-elses-workflow"
INSTANCE_ROLE_ID = V.instance_role_id
I1, I2 = "i-0aaaaaaaaaaaaaaa1", "i-0bbbbbbbbbbbbbbb2"
INSTANCE_ROLE, SHARE_ROLE = V.role_arn("InstanceRole"), V.role_arn("ShareRole")
PLAIN_HTTP = {"aws:SecureTransport": "false"}


def lambda_arn(name: str) -> str:
    return f"arn:aws:lambda:{R}:{A}:function:{name}"


def obj(key: str, bucket: str = BUCKET) -> str:
    return f"{bucket}/{key}"


def prefix_of(instance: str, run: str = "r1", config: str = "c1", role_id: str = INSTANCE_ROLE_ID) -> str:
    return f"runs/{run}/{config}/instances/{role_id}:{instance}/"


def export_of(run: str = "r1", config: str = "c1", suite: str = "nightly") -> str:
    """Where Collect writes a config's rows: the key artifact_keys.export_key gives the workflow."""
    timing = StepTiming(ready_poll_s=1, ready_timeout_s=1, heartbeat_s=1, command_timeout_s=1)
    item = work_item(run, config, suite, R, "2026-11-25T02:00:00Z", "2026-11-25T08:00:00Z", timing=timing)
    return export_key(item)


def resource_tags(stack: str | None) -> dict[str, Any]:
    return {} if stack is None else {f"aws:ResourceTag/{TAG}": stack}


def request_tags(stack: str | None, *extra_keys: str) -> dict[str, Any]:
    tags = {f"aws:RequestTag/{key}": "x" for key in extra_keys}
    if stack is not None:
        tags[f"aws:RequestTag/{TAG}"] = stack
    keys = ([TAG] if stack is not None else []) + list(extra_keys)
    return {**tags, "aws:TagKeys": keys} if keys else {}


LAUNCH = {"ec2:InstanceType": "c5.large", "ec2:MetadataHttpTokens": "required"}


@dataclass(frozen=True)
class Case:
    expect: str  # allow | deny
    label: str
    role: str  # the logical id of the role, function or state machine
    action: str
    resource: str
    context: dict[str, Any] = field(default_factory=dict)
    session: str = "session"  # the role session; an instance's is its id
    variant: str = "default"
    service: str | None = (
        None  # a service principal assuming ``role`` or using a key: its trust or key policy
    )

    def request(self, rendered: RenderedTemplate) -> Request:
        if self.service is None:
            return Request.of(
                self.label, rendered, self.role, self.session, self.action, self.resource, self.context
            )
        policy: ResourcePolicy | None
        if self.action == "sts:AssumeRole":
            role = rendered.role(self.role)
            assert role.trust_policy is not None
            policy = ResourcePolicy(f"{self.role}.AssumeRolePolicyDocument", role.arn, role.trust_policy)
        else:
            policy = rendered.resource_policy(self.resource)
            assert policy is not None, self.resource
        return Request(self.label, self.service, self.action, self.resource, self.context, (), policy, A)


def allow(label: str, role: str, action: str, resource: str, **kwargs: Any) -> Case:
    return Case("allow", label, role, action, resource, **kwargs)


def deny(label: str, role: str, action: str, resource: str, **kwargs: Any) -> Case:
    return Case("deny", label, role, action, resource, **kwargs)


def stacks_only(shared: dict[str, Any], allowed: str, untagged: str, another: str) -> Iterator[Case]:
    """The action allowed on the stack's resource (tagged with it), denied on an untagged one and on
    another stack's: the three cases' labels in that order."""
    return case_table(
        shared,
        ("allow", allowed, resource_tags(STACK)),
        ("deny", untagged),
        ("deny", another, resource_tags(OTHER_STACK)),
    )


def owned(what: str) -> tuple[str, str, str]:
    """The labels of ``stacks_only``'s cases: ``what`` on the stack's, an untagged and another stack's one."""
    return f"{what} on the stack's", f"{what} on an untagged one", f"{what} on another stack's"


def whose(template: str, ours: str = "the stack's") -> tuple[str, str, str]:
    """The labels of ``stacks_only``'s cases: ``template`` with "{}" read as ``ours``, "an untagged"
    and "another stack's"."""
    first, second, third = (
        template.replace("{}", owner) for owner in (ours, "an untagged", "another stack's")
    )
    return first, second, third


def case_table(shared: dict[str, Any], *rows: tuple[Any, ...]) -> Iterator[Case]:
    """Cases from rows of (expected, label, role, action, resource, context): a column every row
    shares is given once, by name, in ``shared`` (as are the session, the template's variant and
    the service principal), and a row without a context has none."""
    columns = [name for name in ("role", "action", "resource") if name not in shared]
    for expect, label, *values in rows:
        fields = dict(zip(columns, values[: len(columns)], strict=True))
        context = {"context": values[len(columns)]} if len(values) > len(columns) else {}
        yield Case(expect, label, **fields, **context, **shared)


# ------------------------------------------------------------------------------ the cases


def _releasing() -> Iterator[Case]:
    """Cleanup, SweepRun, the janitor (and Finalize, for instances and volumes) delete the stack's only."""
    targets = [
        ("ec2:TerminateInstances", INSTANCE),
        ("ec2:DeleteVolume", VOLUME),
        ("elasticfilesystem:DeleteFileSystem", EFS),
        ("elasticfilesystem:DeleteMountTarget", EFS),
        ("fsx:DeleteFileSystem", FSX),
        ("storagegateway:DeleteGateway", GATEWAY),
        ("storagegateway:DeleteFileShare", SHARE),
    ]
    roles = {
        "CleanupFunction": targets,
        "SweepRunFunction": targets,
        "JanitorFunction": targets,
        "FinalizeFunction": [
            t for t in targets if t[0].startswith("ec2:") or t[0].startswith("storagegateway:")
        ],
    }
    for role, actions in roles.items():
        for action, resource in actions:
            what = f"{role} {action}"
            yield from stacks_only({"role": role, "action": action, "resource": resource}, *owned(what))
    for role in ("CleanupFunction", "SweepRunFunction", "JanitorFunction"):
        action = "ec2:DeleteNetworkInterface"
        yield from case_table(
            {"role": role, "action": action, "resource": ENI},
            ("allow", f"{role} {action} in the stack's subnet", {"ec2:Subnet": STACK_SUBNET}),
            ("deny", f"{role} {action} in another subnet", {"ec2:Subnet": OTHER_SUBNET}),
        )
    yield from case_table(
        {"role": "CleanupFunction", "action": "ec2:StopInstances", "resource": INSTANCE},
        ("deny", "CleanupFunction cannot stop instances", resource_tags(STACK)),
    )


def _launching() -> Iterator[Case]:
    """Provision launches tagged instances of allowed types, IMDSv2 only, from known publishers' images."""
    role, run = "ProvisionFunction", "ec2:RunInstances"
    tagged = request_tags(STACK, "storagebench:run-id", "Name")
    imdsv1 = {**tagged, **LAUNCH, "ec2:MetadataHttpTokens": "optional"}
    yield from case_table(
        {"role": role, "action": run, "resource": NEW_INSTANCE},
        ("allow", "RunInstances: a tagged IMDSv2 instance", {**tagged, **LAUNCH}),
        ("deny", "RunInstances: without the stack tag", {**LAUNCH}),
        ("deny", "RunInstances: with another stack's tag", {**request_tags(OTHER_STACK), **LAUNCH}),
        ("deny", "RunInstances: IMDSv1 allowed (HttpTokens optional)", imdsv1),
    )
    m5, p4d = ({**LAUNCH, "ec2:InstanceType": t} for t in ("m5.large", "p4d.24xlarge"))
    yield from case_table(
        {"role": role, "action": run, "resource": NEW_INSTANCE, "variant": "types"},
        ("allow", "RunInstances: a type in AllowedInstanceTypes=c5.large,m5.large", {**tagged, **m5}),
        ("deny", "RunInstances: a type outside AllowedInstanceTypes", {**tagged, **p4d}),
    )
    yield from case_table(
        {"role": role, "action": run, "resource": NEW_VOLUME},
        ("allow", "RunInstances: tagged volumes", request_tags(STACK)),
        ("deny", "RunInstances: untagged volumes"),
    )
    for owner in ("amazon", "099720109477", "136693071363", "309956199498", A):
        yield allow(f"RunInstances: an image of {owner}", role, run, IMAGE, context={"ec2:Owner": owner})
    yield from case_table(
        {"role": role, "action": run, "resource": IMAGE},
        ("deny", "RunInstances: an image of another owner", {"ec2:Owner": OTHER_ACCOUNT}),
        ("deny", "RunInstances: a marketplace image", {"ec2:Owner": "aws-marketplace"}),
    )
    # a volume restored from a snapshot: the images' publishers' (an AMI's root) or the account's;
    # another account's public snapshot would put its data on a benchmark instance (issue 27, 5)
    for owner in ("amazon", "099720109477", A):
        yield allow(f"RunInstances: a snapshot of {owner}", role, run, SNAPSHOT, context={"ec2:Owner": owner})
    yield from case_table(
        {"role": role, "action": run},
        ("deny", "RunInstances: a snapshot of another owner", SNAPSHOT, {"ec2:Owner": OTHER_ACCOUNT}),
        ("allow", "RunInstances: in the stack's subnet", STACK_SUBNET),
        ("deny", "RunInstances: in another subnet", OTHER_SUBNET),
        ("allow", "RunInstances: the instances' group", ec2(f"security-group/{V.instance_security_group}")),
        ("deny", "RunInstances: another group", ec2("security-group/sg-0fffffffffffffff0")),
    )
    tags = "ec2:CreateTags"
    at_launch = {**tagged, "ec2:CreateAction": "RunInstances"}
    others, copying = request_tags(OTHER_STACK), {**tagged, "ec2:CreateAction": "CopyVolumes"}
    theirs_launch = {**others, "ec2:CreateAction": "RunInstances"}
    sir = ec2("spot-instances-request/sir-0123abcd")
    to_ec2, to_lambda = ({"iam:PassedToService": f"{s}.amazonaws.com"} for s in ("ec2", "lambda"))
    yield from case_table(
        {"role": role},
        ("allow", "CreateTags while launching an instance", tags, NEW_INSTANCE, at_launch),
        ("allow", "CreateTags while launching its volumes", tags, NEW_VOLUME, at_launch),
        ("deny", "CreateTags: tagging an existing instance into the stack", tags, INSTANCE, tagged),
        ("deny", "CreateTags: tagging an existing volume into the stack", tags, VOLUME, tagged),
        ("deny", "CreateTags while launching, with another stack's tag", tags, NEW_INSTANCE, theirs_launch),
        ("deny", "CreateTags while copying a volume (no create the stack makes)", tags, NEW_VOLUME, copying),
        ("allow", "RunInstances: a Spot launch's tagged request", run, NEW_SPOT_REQUEST, tagged),
        ("deny", "RunInstances: an untagged Spot request", run, NEW_SPOT_REQUEST),
        ("deny", "RunInstances: a Spot request with another stack's tag", run, NEW_SPOT_REQUEST, others),
        ("allow", "CreateTags while launching a Spot request", tags, NEW_SPOT_REQUEST, at_launch),
        ("deny", "CreateTags: tagging an existing Spot request into the stack", tags, sir, tagged),
        ("deny", "Provision cannot terminate", "ec2:TerminateInstances", INSTANCE, resource_tags(STACK)),
        ("allow", "PassRole: the instance role to EC2", "iam:PassRole", INSTANCE_ROLE, to_ec2),
        ("deny", "PassRole: the instance role to Lambda", "iam:PassRole", INSTANCE_ROLE, to_lambda),
        ("deny", "Provision cannot pass the share role", "iam:PassRole", SHARE_ROLE, to_ec2),
    )
    linked = f"arn:aws:iam::{A}:role/aws-service-role/fsx.amazonaws.com/AWSServiceRoleForAmazonFSx"
    yield from case_table(
        {"role": role, "action": "iam:CreateServiceLinkedRole", "resource": linked},
        ("allow", "CreateServiceLinkedRole for FSx", {"iam:AWSServiceName": "fsx.amazonaws.com"}),
    )
    spot_linked = f"arn:aws:iam::{A}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"
    for_spot, for_emr = ({"iam:AWSServiceName": f"{s}.amazonaws.com"} for s in ("spot", "elasticmapreduce"))
    yield from case_table(
        {"role": role, "action": "iam:CreateServiceLinkedRole"},
        ("allow", "CreateServiceLinkedRole for EC2 Spot", spot_linked, for_spot),
        ("deny", "CreateServiceLinkedRole for another service", linked, for_emr),
    )
    grant = "kms:CreateGrant"
    yield from case_table(
        {"role": role, "action": grant, "resource": KMS_KEY, "variant": "kms"},
        ("allow", "EBS key used through EC2", {"kms:ViaService": f"ec2.{R}.amazonaws.com"}),
        ("deny", "EBS key used directly", {"kms:ViaService": f"s3.{R}.amazonaws.com"}),
    )


SECURITY_GROUP = ec2("security-group/sg-0123456789abcdef0")  # a config's own (adapters.aws.network)
STACK_GROUP = ec2(f"security-group/{V.instance_security_group}")  # the stack's, made by CloudFormation
PLACEMENT_GROUP = ec2("placement-group/sb-0123456789abcdef0123456789abcdef")
STACK_VPC = ec2(f"vpc/{V.vpc_id}")
OTHER_VPC = ec2("vpc/vpc-0fffffffffffffff0")


def _networks() -> Iterator[Case]:
    """A config's own security group and placement group: created tagged in the stack's VPC, its rules
    and the launch into it only on the stack's groups, deleted by every releasing role, the stack's."""
    role = "ProvisionFunction"
    tagged = request_tags(STACK, "storagebench:run-id", "Name")
    creates = [
        ("ec2:CreateSecurityGroup", SECURITY_GROUP, "CreateSecurityGroup"),
        ("ec2:CreatePlacementGroup", PLACEMENT_GROUP, "CreatePlacementGroup"),
    ]
    for action, resource, verb in creates:
        yield from case_table(
            {"role": role, "action": action, "resource": resource},
            ("allow", f"{verb}: a tagged group", tagged),
            ("deny", f"{verb}: an untagged group"),
            ("deny", f"{verb}: another stack's group", request_tags(OTHER_STACK)),
        )
        at_create = {**tagged, "ec2:CreateAction": verb}
        others_at_create = {**request_tags(OTHER_STACK), "ec2:CreateAction": verb}
        yield from case_table(
            {"role": role, "action": "ec2:CreateTags", "resource": resource},
            ("allow", f"CreateTags while {verb}", at_create),
            ("deny", f"CreateTags: tagging an existing group into the stack ({verb})", tagged),
            ("deny", f"CreateTags while {verb}, with another stack's tag", others_at_create),
        )
    yield from case_table(
        {"role": role, "action": "ec2:CreateSecurityGroup"},
        ("allow", "CreateSecurityGroup: in the stack's VPC", STACK_VPC),
        ("deny", "CreateSecurityGroup: in another VPC", OTHER_VPC),
    )
    rules = [
        "ec2:AuthorizeSecurityGroupIngress",
        "ec2:AuthorizeSecurityGroupEgress",
        "ec2:RevokeSecurityGroupIngress",
        "ec2:RevokeSecurityGroupEgress",
    ]
    for action in rules:
        verb = action.removeprefix("ec2:")
        yield from case_table(
            {"role": role, "action": action},
            ("allow", f"{verb}: the stack's group", SECURITY_GROUP, resource_tags(STACK)),
            ("deny", f"{verb}: an untagged group", SECURITY_GROUP),
            ("deny", f"{verb}: another stack's group", SECURITY_GROUP, resource_tags(OTHER_STACK)),
            ("deny", f"{verb}: the stack's own instance group (CloudFormation's)", STACK_GROUP),
        )
    run = "ec2:RunInstances"
    for what, resource in (("security group", SECURITY_GROUP), ("placement group", PLACEMENT_GROUP)):
        labels = whose("RunInstances: into {} " + what, ours="the config's")
        yield from stacks_only({"role": role, "action": run, "resource": resource}, *labels)
    releasing = (
        "ProvisionFunction",
        "CleanupFunction",
        "SweepRunFunction",
        "JanitorFunction",
        "FinalizeFunction",
    )
    for releaser in releasing:
        for action, resource in (
            ("ec2:DeleteSecurityGroup", SECURITY_GROUP),
            ("ec2:DeletePlacementGroup", PLACEMENT_GROUP),
        ):
            what = f"{releaser} {action}"
            yield from stacks_only({"role": releaser, "action": action, "resource": resource}, *owned(what))
    yield from case_table(
        {"role": "CheckReadyFunction", "action": "ec2:DeleteSecurityGroup", "resource": SECURITY_GROUP},
        ("deny", "CheckReady cannot delete a config's group", resource_tags(STACK)),
    )


def _file_systems() -> Iterator[Case]:
    role = "ProvisionFunction"
    # EFS's CreateFileSystem takes no resource-level permission: IAM authorises it on "*"
    for action, resource in (("elasticfilesystem:CreateFileSystem", "*"), ("fsx:CreateFileSystem", FSX)):
        yield from case_table(
            {"role": role, "action": action, "resource": resource},
            ("allow", f"{action} tagged", request_tags(STACK, "Name")),
            ("deny", f"{action} untagged"),
            ("deny", f"{action} with another stack's tag", request_tags(OTHER_STACK)),
        )
    efs_tag = "elasticfilesystem:TagResource"
    created = {**request_tags(STACK, "Name"), "elasticfilesystem:CreateAction": "CreateFileSystem"}
    yield from case_table(
        {"role": role, "action": efs_tag, "resource": EFS},
        ("allow", "EFS TagResource while creating", created),
        ("deny", "EFS TagResource on an existing file system", request_tags(STACK)),
    )
    other = {**request_tags(OTHER_STACK), "elasticfilesystem:CreateAction": "CreateFileSystem"}
    yield deny("EFS TagResource while creating, another stack's tag", role, efs_tag, EFS, context=other)
    fsx_tag = "fsx:TagResource"
    run_tagged = request_tags(STACK, "storagebench:run-id", "Name")
    yield from case_table(
        {"role": role, "action": fsx_tag, "resource": FSX},
        ("allow", "FSx TagResource with storagebench keys", run_tagged),
        ("allow", "FSx TagResource with the request's own tags", request_tags(STACK, "Owner")),
        ("deny", "FSx TagResource with an aws: key", request_tags(STACK, "aws:cloudformation:x")),
        ("deny", "FSx TagResource with another stack's tag", request_tags(OTHER_STACK)),
    )
    for role in ("ProvisionFunction", "CheckReadyFunction"):
        action = "elasticfilesystem:CreateMountTarget"
        yield from stacks_only({"role": role, "action": action, "resource": EFS}, *owned(f"{role} {action}"))
        # issue 27 #7: the mount target joins the config's own group (tagged), no other group
        interface = "ec2:CreateNetworkInterface"
        group = ec2("security-group/sg-0123456789abcdef0")
        labels = whose(role + " mount target interface in {} group", ours="a config's")
        yield from stacks_only({"role": role, "action": interface, "resource": group}, *labels)
        policy = "elasticfilesystem:PutFileSystemPolicy"
        yield from stacks_only({"role": role, "action": policy, "resource": EFS}, *owned(f"{role} {policy}"))


def _gateways() -> Iterator[Case]:
    role = "CheckReadyFunction"
    activate = "storagegateway:ActivateGateway"
    yield from case_table(
        {"role": role, "action": activate, "resource": "*"},
        ("allow", "ActivateGateway tagged", request_tags(STACK, "Name")),
        ("deny", "ActivateGateway untagged"),
        ("deny", "ActivateGateway with another stack's tag", request_tags(OTHER_STACK)),
    )
    for action in (
        "storagegateway:AddCache",
        "storagegateway:CreateNFSFileShare",
        "storagegateway:ListLocalDisks",
    ):
        yield from case_table(
            {"role": role, "action": action, "resource": GATEWAY},
            ("allow", f"{action} on the stack's gateway", resource_tags(STACK)),
            ("deny", f"{action} on another stack's gateway", resource_tags(OTHER_STACK)),
        )
    add = "storagegateway:AddTagsToResource"
    owner_tagged = request_tags(STACK, "Owner")
    to_gateway, to_ec2 = ({"iam:PassedToService": f"{s}.amazonaws.com"} for s in ("storagegateway", "ec2"))
    yield from case_table(
        {"role": role},
        ("allow", "AddTagsToResource with the stack's keys", add, SHARE, request_tags(STACK, "Name")),
        ("allow", "AddTagsToResource with the request's own tags", add, GATEWAY, owner_tagged),
        ("deny", "AddTagsToResource with an aws: key", add, GATEWAY, request_tags(STACK, "aws:x")),
        ("deny", "AddTagsToResource with another stack's tag", add, GATEWAY, request_tags(OTHER_STACK)),
        ("allow", "PassRole: the share role to Storage Gateway", "iam:PassRole", SHARE_ROLE, to_gateway),
        ("deny", "PassRole: the share role to EC2", "iam:PassRole", SHARE_ROLE, to_ec2),
        ("allow", "invoke the activator", "lambda:InvokeFunction", lambda_arn("ActivatorFunction")),
        ("deny", "invoke another function", "lambda:InvokeFunction", lambda_arn("SweepRunFunction")),
    )


def _commands() -> Iterator[Case]:
    role, send = "StartAgentFunction", "ssm:SendCommand"
    others = {f"ssm:resourceTag/{TAG}": OTHER_STACK}
    yield from case_table(
        {"role": role, "action": send},
        ("allow", "SendCommand to the stack's instance", INSTANCE, {f"ssm:resourceTag/{TAG}": STACK}),
        ("deny", "SendCommand to an untagged instance", INSTANCE),
        ("deny", "SendCommand to another stack's instance", INSTANCE, others),
        ("allow", "SendCommand of the agent document", f"arn:aws:ssm:{R}:{A}:document/{V.agent_document}"),
        ("deny", "SendCommand of another document", f"arn:aws:ssm:{R}:{A}:document/someone-elses-shell"),
    )
    yield from case_table(
        {"role": "InstanceRole", "action": send, "resource": INSTANCE, "session": I1},
        ("deny", "the instance cannot send commands", {f"ssm:resourceTag/{TAG}": STACK}),
    )


def _bucket() -> Iterator[Case]:
    """Who reads and writes what in the artifacts bucket."""
    listing = "s3:ListBucket"
    prefixes = {
        "StartAgentFunction": ("agent/0.1.0/", "runs/r1/"),
        "CollectFunction": (prefix_of(I1) + "agent/", "runs/r1/"),
        "RecordFailureFunction": (prefix_of(I1) + "ssm/", prefix_of(I1) + "agent/"),
        "FinalizeFunction": ("runs/r1/", "agent/"),
        "ApiFunction": ("runs/r1/", "agent/"),
        # release reads the request (a deleted one must answer 404, so it goes by the state)
        "CleanupFunction": ("runs/r1/", "agent/"),
        "SweepRunFunction": ("runs/r1/", "agent/"),
    }
    for role, (inside, outside) in prefixes.items():
        yield from case_table(
            {"role": role, "action": listing, "resource": BUCKET},
            ("allow", f"{role} lists {inside}", {"s3:prefix": inside}),
            ("deny", f"{role} lists {outside}", {"s3:prefix": outside}),
        )
    get, put = "s3:GetObject", "s3:PutObject"
    yield allow("Plan writes the request", "PlanFunction", put, obj("runs/r1/request.json"))
    for role in ("CleanupFunction", "SweepRunFunction"):  # release: which gateways a config has
        yield from case_table(
            {"role": role},
            ("allow", f"{role} reads the request", get, obj("runs/r1/request.json")),
            ("deny", f"{role} reads no agent output", get, obj(prefix_of(I1) + "agent/manifest.json")),
            ("deny", f"{role} writes no request", put, obj("runs/r1/request.json")),
        )
    # past 40 configs the Distributed Map reads its items from S3: Plan must be able to write them
    request, token = obj("runs/r1/request.json"), obj(prefix_of(I1) + "task-token")
    agent_x, agent_fio, ssm_x = (obj(prefix_of(I1) + key) for key in ("agent/x", "agent/fio.json", "ssm/x"))
    stray_export, spot_prices = obj("exports/suite=x/c1.jsonl"), "ec2:DescribeSpotPriceHistory"
    start_agent, record_failure = "StartAgentFunction", "RecordFailureFunction"
    json_export = obj(export_of().removesuffix(".jsonl") + ".json")
    yield from case_table(
        {},
        ("allow", "Plan writes the work items", "PlanFunction", put, obj("runs/r1/work-items.json")),
        ("deny", "Plan writes no plan of a config", "PlanFunction", put, obj("runs/r1/c1/plan.json")),
        ("deny", "Plan over plain HTTP (bucket policy)", "PlanFunction", put, request, PLAIN_HTTP),
        ("allow", "StartAgent writes the task token", start_agent, put, token),
        ("deny", "StartAgent cannot forge agent output", start_agent, put, agent_x),
        ("allow", "StartAgent writes the plan", start_agent, put, obj("runs/r1/c1/plan.json")),
        ("deny", "StartAgent cannot rewrite the request", start_agent, put, request),
        ("allow", "Collect reads the agent's output", "CollectFunction", get, agent_fio),
        ("deny", "Collect cannot read task tokens", "CollectFunction", get, token),
        ("allow", "Collect writes a config's export", "CollectFunction", put, obj(export_of())),
        ("deny", "Collect cannot write outside the export layout", "CollectFunction", put, stray_export),
        ("deny", "Collect writes exports as JSON Lines only", "CollectFunction", put, json_export),
        ("deny", "Collect cannot rewrite the request", "CollectFunction", put, request),
        ("deny", "Finalize cannot write exports", "FinalizeFunction", put, obj(export_of())),
        ("allow", "Finalize reads Spot prices paid", "FinalizeFunction", spot_prices, "*"),
        ("deny", "Provision does not read Spot prices", "ProvisionFunction", spot_prices, "*"),
        ("deny", "the API cannot write exports", "ApiFunction", put, obj(export_of())),
    )
    run_exports = run_export_prefix("nightly", "2026-11-25T02:00:00Z", "r1")  # export_of()'s run
    assert export_of().startswith(run_exports)
    yield from case_table(
        {"role": "ApiFunction", "action": listing, "resource": BUCKET},
        ("allow", "the API lists a run's exports", {"s3:prefix": run_exports}),
        ("deny", "the API cannot list every export", {"s3:prefix": "exports/"}),
    )
    yield from case_table(
        {},
        ("allow", "the API presigns a run's exports", "ApiFunction", get, obj(export_of())),
        ("deny", "the API reads exports as JSON Lines only", "ApiFunction", get, json_export),
        ("deny", "the API cannot read the agent's output", "ApiFunction", get, agent_x),
        ("allow", "RecordFailure reads SSM's output", record_failure, get, ssm_x),
        ("deny", "RecordFailure cannot read task tokens", record_failure, get, token),
        ("allow", "Finalize reads a config's series", "FinalizeFunction", get, obj("runs/r1/c1/series.json")),
        ("deny", "Finalize cannot read task tokens", "FinalizeFunction", get, token),
        ("allow", "the API presigns reports", "ApiFunction", get, obj("runs/r1/report.html")),
        ("deny", "the API cannot read requests", "ApiFunction", get, obj("runs/r1/request.json")),
    )
    share = obj("runs/r1/c1/x", SHARE_BUCKET)
    yield from case_table(
        {"role": "CleanupFunction", "action": "s3:DeleteObject", "resource": share},
        ("allow", "Cleanup deletes share data"),
        ("deny", "Cleanup over plain HTTP (share bucket policy)", PLAIN_HTTP),
    )


def _instance() -> Iterator[Case]:
    """The instance reaches its own prefix (runs/*/instances/<role id>:<its id>/) and nothing else."""
    role = "InstanceRole"
    get, put = "s3:GetObject", "s3:PutObject"
    mine, other = prefix_of(I1), prefix_of(I2)
    other_role = obj(prefix_of(I1, role_id="AROAOTHERROLE00000") + "x")
    yield from case_table(
        {"role": role, "session": I1},
        ("allow", "instance i-1 writes its prefix", put, obj(mine + "agent/fio.json")),
        ("allow", "instance i-1 reads its task token", get, obj(mine + "task-token")),
        ("allow", "instance i-1 writes SSM's output to its prefix", put, obj(mine + "ssm/cmd/stdout")),
        ("deny", "instance i-1 writes instance i-2's prefix", put, obj(other + "agent/fio.json")),
        ("deny", "instance i-1 reads instance i-2's task token", get, obj(other + "task-token")),
        ("deny", "instance i-1 writes under another role id", put, other_role),
    )
    # The prefix is a fence: a wildcard before it spans '/', so the instance's own prefix must not be
    # reachable nested inside another's (issue 27, 1) nor at another depth of the run's tree.
    nested = other + "agent/x/" + mine.split("/", 3)[3]  # runs/r1/c1/instances/<i-2>/agent/x/instances/<i-1>/
    run_depth = obj("runs/r1/" + mine.split("/", 3)[3] + "x")
    yield from case_table(
        {"role": role, "session": I1},
        ("deny", "instance i-1 writes inside i-2's prefix", put, obj(nested + "y")),
        ("deny", "instance i-1 reads inside i-2's prefix", get, obj(nested + "task-token")),
        ("deny", "instance i-1 writes its prefix at the run's depth", put, run_depth),
        ("deny", "instance i-1 reads the run's request", get, obj("runs/r1/request.json")),
        ("deny", "instance i-1 reads another run's request", get, obj("runs/r2/request.json")),
        ("deny", "instance i-1 reads another run's plan", get, obj("runs/r2/c1/plan.json")),
        ("deny", "instance i-1 rewrites its config's plan", put, obj("runs/r1/c1/plan.json")),
        ("deny", "instance i-1 writes the series", put, obj("runs/r1/c1/series.json")),
        ("deny", "instance i-1 writes its config's export", put, obj(export_of())),
        ("deny", "instance i-1 reads the exports", get, obj(export_of())),
        ("deny", "instance i-1 writes a report", put, obj("runs/r1/report.html")),
        ("deny", "instance i-1 reads the agent", get, obj("agent/0.1.0/x.pyz")),
        ("deny", "instance i-1 over plain HTTP", put, obj(mine + "agent/x"), PLAIN_HTTP),
        ("allow", "the instance checks the bucket's encryption", "s3:GetEncryptionConfiguration", BUCKET),
        ("allow", "the instance reports to Step Functions", "states:SendTaskSuccess", "*"),
    )


def _workflow() -> Iterator[Case]:
    """What the tags and names imply: the stack's state machine, functions and executions only."""
    start, stop = "states:StartExecution", "states:StopExecution"
    execution = f"arn:aws:states:{R}:{A}:execution:{V.state_machine_name}:r1"
    other_execution = f"arn:aws:states:{R}:{A}:execution:someone-elses-workflow:r1"
    for role in ("ApiFunction", "SchedulerRole"):
        yield from case_table(
            {"role": role, "action": start},
            ("allow", f"{role} starts the stack's runs", STATE_MACHINE),
            ("deny", f"{role} cannot start another state machine", OTHER_STATE_MACHINE),
        )
    for role in ("ApiFunction", "JanitorFunction"):
        yield from case_table(
            {"role": role, "action": stop},
            ("allow", f"{role} stops the stack's runs", execution),
            ("deny", f"{role} cannot stop another state machine's runs", other_execution),
        )
    invoke = "lambda:InvokeFunction"
    yield from case_table(
        {"role": "ApiFunction", "action": invoke},
        ("allow", "the API hands a stopped run to SweepRun", lambda_arn("SweepRunFunction")),
        ("deny", "the API cannot invoke Provision", lambda_arn("ProvisionFunction")),
    )
    table, update = V.arn("dynamodb", f"table/{V.results_table}"), "dynamodb:UpdateItem"
    claim = f"OCCURRENCE#arn:aws:scheduler:{R}:{A}:schedule/g/n@2030-01-02T02:00:00Z"
    keys = ("RUN#r1", "SPEND#2030-01-02", claim)
    run_key, spend_key, claim_key = ({"dynamodb:LeadingKeys": [key]} for key in keys)
    yield from case_table(
        {"role": "ApiFunction", "action": update, "resource": table},
        ("allow", "the API marks a run STOPPING before it stops the execution", run_key),
        ("allow", "the API reserves the day's spend (the stack's budget)", spend_key),
        ("deny", "the API cannot write a scheduled occurrence's claim", claim_key),
    )
    schedule, machine = "JanitorScheduleRole", "BenchmarkStateMachine"
    yield from case_table(
        {"action": invoke},
        ("allow", "the janitor schedule invokes the janitor", schedule, lambda_arn("JanitorFunction")),
        ("deny", "the janitor schedule cannot invoke SweepRun", schedule, lambda_arn("SweepRunFunction")),
        ("allow", "the state machine invokes its steps", machine, lambda_arn("CollectFunction")),
        ("deny", "the state machine cannot invoke the API", machine, lambda_arn("ApiFunction")),
    )


def _services() -> Iterator[Case]:
    """Trust and key policies: the stack's schedules, gateways and alarms only (confused deputy)."""
    assume = "sts:AssumeRole"
    schedules = f"arn:aws:scheduler:{R}:{A}:schedule"
    trusts = {
        "SchedulerRole": (
            "scheduler.amazonaws.com",
            f"{schedules}/{STACK}-schedules/nightly",
            f"{schedules}/default/someone-elses",
        ),
        "JanitorScheduleRole": (
            "scheduler.amazonaws.com",
            f"{schedules}/default/{STACK}-janitor",
            f"{schedules}/default/someone-elses",
        ),
        "ShareRole": (
            "storagegateway.amazonaws.com",
            f"arn:aws:storagegateway:{R}:{A}:gateway/sgw-12A3456B",
            f"arn:aws:storagegateway:{R}:{OTHER_ACCOUNT}:gateway/sgw-12A3456B",
        ),
    }
    for role, (service, source, elsewhere) in trusts.items():
        arn = V.role_arn(role)
        elsewhere_in_account = {"aws:SourceAccount": A, "aws:SourceArn": elsewhere}
        in_other_account = {"aws:SourceAccount": OTHER_ACCOUNT, "aws:SourceArn": source}
        yield from case_table(
            {"role": role, "action": assume, "resource": arn, "service": service},
            ("allow", f"{service} assumes {role}", {"aws:SourceAccount": A, "aws:SourceArn": source}),
            ("deny", f"{service} assumes {role} for another source", elsewhere_in_account),
            ("deny", f"{service} assumes {role} for another account", in_other_account),
        )
    key = V.arn("kms", f"key/{V.notification_key_id}")
    yield from case_table(
        {
            "role": "NotificationKey",
            "action": "kms:GenerateDataKey",
            "resource": key,
            "service": "cloudwatch.amazonaws.com",
        },
        ("allow", "CloudWatch alarms encrypt for the topic", {"aws:SourceAccount": A}),
        ("deny", "another account's alarms cannot use the key", {"aws:SourceAccount": OTHER_ACCOUNT}),
    )


def _distributed_map() -> Iterator[Case]:
    """Past 40 configs the state machine runs one child execution of itself per config: it starts,
    follows and stops those children and reads the work items Plan wrote, and nothing more."""
    role, get = "BenchmarkStateMachine", "s3:GetObject"
    child = f"arn:aws:states:{R}:{A}:execution:{V.state_machine_name}/configs:0f1e2d3c-child"
    run = f"arn:aws:states:{R}:{A}:execution:{V.state_machine_name}:r1"
    others_child = f"arn:aws:states:{R}:{A}:execution:someone-elses-workflow/configs:0f1e2d3c-child"
    yield from case_table(
        {"role": role, "action": "states:StartExecution"},
        ("allow", "the Distributed Map starts children of its state machine", STATE_MACHINE),
        ("deny", "the Distributed Map cannot start another state machine", OTHER_STATE_MACHINE),
    )
    for action in ("states:DescribeExecution", "states:StopExecution"):
        verb = action.removeprefix("states:")
        yield from case_table(
            {"role": role, "action": action},
            ("allow", f"the Distributed Map calls {verb} on its children", child),
            ("deny", f"the state machine cannot {verb} another machine's children", others_child),
        )
    yield from case_table(
        {"role": role},
        ("deny", "the state machine cannot stop a run (the API's job)", "states:StopExecution", run),
        ("allow", "the Distributed Map reads a run's work items", get, obj(work_items_key("r1"))),
        ("deny", "the state machine cannot read a run's request", get, obj("runs/r1/request.json")),
        ("deny", "the state machine cannot read an agent's output", get, obj(prefix_of(I1) + "agent/x")),
        ("deny", "the state machine cannot write work items", "s3:PutObject", obj(work_items_key("r1"))),
    )


def _quotas() -> Iterator[Case]:
    """Plan and the API's dry run read the account's EC2 vCPU quotas (planning.quota_preview): any EC2
    quota of the stack's Region, AWS's defaults, and nothing else of Service Quotas."""
    standard = f"arn:aws:servicequotas:{R}:{A}:ec2/L-1216C47A"
    aws_default = f"arn:aws:servicequotas:{R}::ec2/L-1216C47A"  # AWS's own quotas carry no account
    get, default = "servicequotas:GetServiceQuota", "servicequotas:GetAWSDefaultServiceQuota"
    spot = f"arn:aws:servicequotas:{R}:{A}:ec2/L-34B43A08"
    vpc = f"arn:aws:servicequotas:{R}:{A}:vpc/L-F678F1CE"
    elsewhere = f"arn:aws:servicequotas:eu-west-1:{A}:ec2/L-1216C47A"
    increase = "servicequotas:RequestServiceQuotaIncrease"
    for role in ("PlanFunction", "ApiFunction"):
        yield from case_table(
            {"role": role},
            ("allow", f"{role} reads the Standard On-Demand vCPU quota", get, standard),
            ("allow", f"{role} reads a Spot vCPU quota", get, spot),
            ("allow", f"{role} reads an EC2 quota's AWS default ARN", get, aws_default),
            ("allow", f"{role} reads AWS's default of a quota", default, "*"),
            ("deny", f"{role} cannot read another service's quota", get, vpc),
            ("deny", f"{role} cannot read another Region's quota", get, elsewhere),
            ("deny", f"{role} cannot ask for a quota increase", increase, standard),
        )
    yield from case_table(
        {"role": "ProvisionFunction"},
        ("deny", "Provision does not read quotas", get, standard),
        ("deny", "Provision does not read AWS's default quotas", default, "*"),
    )


def _multi_attach() -> Iterator[Case]:
    """A node group's Multi-Attach volume: Provision creates it (io1/io2, the stack's tag, this
    account's snapshot) and tags it while creating it; CheckReady attaches the stack's volume to the
    stack's instance, through the stack key when it names one (adapters.aws.shared_volumes)."""
    role, create, tags = "ProvisionFunction", "ec2:CreateVolume", "ec2:CreateTags"
    tagged = request_tags(STACK, "storagebench:run-id", "Name")
    io2 = {"ec2:VolumeType": "io2"}
    io1, gp3 = {"ec2:VolumeType": "io1"}, {"ec2:VolumeType": "gp3"}
    others, by_create_volume = request_tags(OTHER_STACK), {"ec2:CreateAction": "CreateVolume"}
    tagged_at_create, theirs = {**tagged, **by_create_volume}, {**others, **by_create_volume}
    other_owner = {"ec2:Owner": OTHER_ACCOUNT}
    yield from case_table(
        {"role": role},
        ("allow", "CreateVolume: a tagged io2 volume", create, NEW_VOLUME, {**tagged, **io2}),
        ("allow", "CreateVolume: a tagged io1 volume", create, NEW_VOLUME, {**tagged, **io1}),
        ("deny", "CreateVolume: an untagged io2 volume", create, NEW_VOLUME, io2),
        ("deny", "CreateVolume: with another stack's tag", create, NEW_VOLUME, {**others, **io2}),
        ("deny", "CreateVolume: a gp3 volume outside a launch", create, NEW_VOLUME, {**tagged, **gp3}),
        ("allow", "CreateVolume: from this account's snapshot", create, SNAPSHOT, {"ec2:Owner": A}),
        ("deny", "CreateVolume: from another account's snapshot", create, SNAPSHOT, other_owner),
        ("allow", "CreateTags while creating a Multi-Attach volume", tags, NEW_VOLUME, tagged_at_create),
        ("deny", "CreateTags while creating a volume, with another stack's tag", tags, NEW_VOLUME, theirs),
    )
    checking, attach = "CheckReadyFunction", "ec2:AttachVolume"
    for what, resource in (("instance", INSTANCE), ("volume", VOLUME)):
        labels = whose("AttachVolume: {} " + what)
        yield from stacks_only({"role": checking, "action": attach, "resource": resource}, *labels)
    yield deny("Provision does not attach volumes", role, attach, VOLUME, context=resource_tags(STACK))
    via_ec2 = {"kms:ViaService": f"ec2.{R}.amazonaws.com"}
    yield from case_table(
        {"role": checking, "action": "kms:CreateGrant", "resource": KMS_KEY, "variant": "kms"},
        ("allow", "CheckReady: the EBS key used through EC2 for an attachment", via_ec2),
        ("deny", "CheckReady: the EBS key used directly", {"kms:ViaService": f"s3.{R}.amazonaws.com"}),
    )


CASES: list[Case] = [
    *_releasing(),
    *_launching(),
    *_multi_attach(),
    *_networks(),
    *_file_systems(),
    *_gateways(),
    *_commands(),
    *_bucket(),
    *_instance(),
    *_workflow(),
    *_distributed_map(),
    *_services(),
    *_quotas(),
]
BY_LABEL = {case.label: case for case in CASES}
assert len(BY_LABEL) == len(CASES), "case labels must be unique"


# ------------------------------------------------------------------------------ evaluation


@pytest.fixture(scope="module")
def rendered() -> dict[str, RenderedTemplate]:
    return {name: render(values) for name, values in VARIANTS.items()}


@pytest.fixture(scope="module")
def decisions(evaluator: None, rendered: dict[str, RenderedTemplate]) -> dict[str, Decision]:
    requests = [case.request(rendered[case.variant]) for case in CASES]
    return {decision.request.label: decision for decision in evaluate(requests)}


def _check(case: Case, decision: Decision) -> None:
    assert decision.error is None, decision.explain()
    assert not decision.ignored_context_keys, (
        "the evaluator ignored context keys the action does not define (the case tests nothing): "
        + decision.explain()
    )
    if case.expect == "allow":
        assert decision.allowed, "must be allowed:\n" + decision.explain()
    else:
        assert decision.decision in DENIALS, "must be denied:\n" + decision.explain()


@pytest.mark.parametrize("label", [c.label for c in CASES if c.expect == "allow"])
def test_must_allow(label: str, decisions: dict[str, Decision]) -> None:
    _check(BY_LABEL[label], decisions[label])


@pytest.mark.parametrize("label", [c.label for c in CASES if c.expect == "deny"])
def test_must_deny(label: str, decisions: dict[str, Decision]) -> None:
    _check(BY_LABEL[label], decisions[label])


# ------------------------------------------------------------------------------ coverage


@dataclass(frozen=True)
class ConditionUse:
    """One operator and key of one conditioned statement of one policy of the template."""

    policy: str  # an identity policy, a bucket or key policy (logical id), "<role>.AssumeRolePolicyDocument"
    kind: str  # identity | resource
    index: int  # 1-based, as the evaluator numbers statements
    sid: str | None
    effect: str
    operator: str
    key: str

    def __str__(self) -> str:
        return f"{self.policy} statement {self.sid or self.index} ({self.effect}): {self.operator} {self.key}"


def _conditions_of(name: str, kind: str, document: dict[str, Any]) -> Iterator[ConditionUse]:
    statements = document["Statement"] if isinstance(document["Statement"], list) else [document["Statement"]]
    for index, statement in enumerate(statements, start=1):
        for operator, keys in (statement.get("Condition") or {}).items():
            for key in keys:
                yield ConditionUse(
                    name, kind, index, statement.get("Sid"), statement["Effect"], operator, key
                )


def template_conditions(rendered: dict[str, RenderedTemplate]) -> set[ConditionUse]:
    """Every Condition of every variant's identity, bucket, key and trust policies."""
    found: set[ConditionUse] = set()
    for variant in rendered.values():
        for role in variant.roles.values():
            for identity in role.policies:
                found.update(_conditions_of(identity.name, "identity", identity.document))
            if role.trust_policy is not None and role.owner_type == "AWS::IAM::Role":
                found.update(
                    _conditions_of(f"{role.owner}.AssumeRolePolicyDocument", "resource", role.trust_policy)
                )
        for policy in (*variant.bucket_policies.values(), *variant.key_policies.values()):
            found.update(_conditions_of(policy.name, "resource", policy.document))
    return found


def _match(decision: Decision, use: ConditionUse) -> StatementMatch | None:
    for match in decision.statements:
        if match.policy_type != use.kind or match.index != use.index:
            continue
        name = (
            match.policy
            if use.kind == "identity"
            else (decision.request.resource_policy.name if decision.request.resource_policy else None)
        )
        if name == use.policy and match.applies:
            return match
    return None


def decides(decision: Decision, expect: str, use: ConditionUse) -> bool:
    """Whether this case turns on this condition: the statement applies to the request, and the
    decision follows from this condition holding (allow of an Allow, deny of a Deny) or from it
    alone failing (deny of an Allow, allow of a Deny)."""
    match = _match(decision, use)
    if match is None:
        return False
    failed = [(op.lower(), key.lower()) for op, key in match.failed_conditions]
    alone = failed == [(use.operator.lower(), use.key.lower())]
    if use.effect == "Allow":
        return (expect == "allow" and decision.allowed and not failed) or (
            expect == "deny" and decision.decision in DENIALS and alone
        )
    return (expect == "deny" and decision.decision == "ExplicitlyDenied" and not failed) or (
        expect == "allow" and decision.allowed and alone
    )


def test_every_condition_is_decided_both_ways(
    decisions: dict[str, Decision], rendered: dict[str, RenderedTemplate]
) -> None:
    uses = template_conditions(rendered)
    assert len(uses) > 40, "the template's conditions were not found"
    missing = []
    for use in sorted(uses, key=str):
        for expect in ("allow", "deny"):
            cases = [c for c in CASES if c.expect == expect and decides(decisions[c.label], expect, use)]
            if not cases:
                missing.append(f"no must-{expect} case turns on {use}")
    assert not missing, "conditions without their two cases (add them to CASES):\n" + "\n".join(missing)


def test_the_evaluator_substitutes_the_callers_userid(decisions: dict[str, Decision]) -> None:
    """The instance's prefix comes from ${aws:userid}: i-1's own path allowed, i-2's denied by it."""
    mine = decisions["instance i-1 writes its prefix"]
    theirs = decisions["instance i-1 writes instance i-2's prefix"]
    assert mine.allowed, mine.explain()
    assert [g.get("sid") for g in mine.grants] == ["OwnPrefixOnly"], mine.explain()
    assert mine.request.context["aws:userid"] == f"{INSTANCE_ROLE_ID}:{I1}"
    assert theirs.decision == "ImplicitlyDenied", theirs.explain()


def test_report(decisions: dict[str, Decision], rendered: dict[str, RenderedTemplate]) -> None:
    """The numbers, on the terminal with -s or in the junit properties."""
    allowed = sum(1 for c in CASES if c.expect == "allow")
    print(
        f"\nIAM cases evaluated by {version()}: {allowed} must-allow, {len(CASES) - allowed} must-deny; "
        f"{len(template_conditions(rendered))} template conditions, each decided both ways"
    )
