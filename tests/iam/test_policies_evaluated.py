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
            yield allow(f"{what} on the stack's", role, action, resource, context=resource_tags(STACK))
            yield deny(f"{what} on an untagged one", role, action, resource)
            yield deny(
                f"{what} on another stack's", role, action, resource, context=resource_tags(OTHER_STACK)
            )
    for role in ("CleanupFunction", "SweepRunFunction", "JanitorFunction"):
        action = "ec2:DeleteNetworkInterface"
        yield allow(
            f"{role} {action} in the stack's subnet", role, action, ENI, context={"ec2:Subnet": STACK_SUBNET}
        )
        yield deny(
            f"{role} {action} in another subnet", role, action, ENI, context={"ec2:Subnet": OTHER_SUBNET}
        )
    yield deny(
        "CleanupFunction cannot stop instances",
        "CleanupFunction",
        "ec2:StopInstances",
        INSTANCE,
        context=resource_tags(STACK),
    )


def _launching() -> Iterator[Case]:
    """Provision launches tagged instances of allowed types, IMDSv2 only, from known publishers' images."""
    role, run = "ProvisionFunction", "ec2:RunInstances"
    tagged = request_tags(STACK, "storagebench:run-id", "Name")
    yield allow(
        "RunInstances: a tagged IMDSv2 instance", role, run, NEW_INSTANCE, context={**tagged, **LAUNCH}
    )
    yield deny("RunInstances: without the stack tag", role, run, NEW_INSTANCE, context={**LAUNCH})
    yield deny(
        "RunInstances: with another stack's tag",
        role,
        run,
        NEW_INSTANCE,
        context={**request_tags(OTHER_STACK), **LAUNCH},
    )
    yield deny(
        "RunInstances: IMDSv1 allowed (HttpTokens optional)",
        role,
        run,
        NEW_INSTANCE,
        context={**tagged, **LAUNCH, "ec2:MetadataHttpTokens": "optional"},
    )
    yield allow(
        "RunInstances: a type in AllowedInstanceTypes=c5.large,m5.large",
        role,
        run,
        NEW_INSTANCE,
        context={**tagged, **LAUNCH, "ec2:InstanceType": "m5.large"},
        variant="types",
    )
    yield deny(
        "RunInstances: a type outside AllowedInstanceTypes",
        role,
        run,
        NEW_INSTANCE,
        context={**tagged, **LAUNCH, "ec2:InstanceType": "p4d.24xlarge"},
        variant="types",
    )
    yield allow("RunInstances: tagged volumes", role, run, NEW_VOLUME, context=request_tags(STACK))
    yield deny("RunInstances: untagged volumes", role, run, NEW_VOLUME)
    for owner in ("amazon", "099720109477", "136693071363", "309956199498", A):
        yield allow(f"RunInstances: an image of {owner}", role, run, IMAGE, context={"ec2:Owner": owner})
    yield deny(
        "RunInstances: an image of another owner", role, run, IMAGE, context={"ec2:Owner": OTHER_ACCOUNT}
    )
    yield deny(
        "RunInstances: a marketplace image", role, run, IMAGE, context={"ec2:Owner": "aws-marketplace"}
    )
    # a volume restored from a snapshot: the images' publishers' (an AMI's root) or the account's;
    # another account's public snapshot would put its data on a benchmark instance (issue 27, 5)
    for owner in ("amazon", "099720109477", A):
        yield allow(f"RunInstances: a snapshot of {owner}", role, run, SNAPSHOT, context={"ec2:Owner": owner})
    yield deny(
        "RunInstances: a snapshot of another owner", role, run, SNAPSHOT, context={"ec2:Owner": OTHER_ACCOUNT}
    )
    yield allow("RunInstances: in the stack's subnet", role, run, STACK_SUBNET)
    yield deny("RunInstances: in another subnet", role, run, OTHER_SUBNET)
    yield allow(
        "RunInstances: the instances' group", role, run, ec2(f"security-group/{V.instance_security_group}")
    )
    yield deny("RunInstances: another group", role, run, ec2("security-group/sg-0fffffffffffffff0"))
    tags = "ec2:CreateTags"
    at_launch = {**tagged, "ec2:CreateAction": "RunInstances"}
    yield allow("CreateTags while launching an instance", role, tags, NEW_INSTANCE, context=at_launch)
    yield allow("CreateTags while launching its volumes", role, tags, NEW_VOLUME, context=at_launch)
    yield deny(
        "CreateTags: tagging an existing instance into the stack", role, tags, INSTANCE, context=tagged
    )
    yield deny("CreateTags: tagging an existing volume into the stack", role, tags, VOLUME, context=tagged)
    yield deny(
        "CreateTags while launching, with another stack's tag",
        role,
        tags,
        NEW_INSTANCE,
        context={**request_tags(OTHER_STACK), "ec2:CreateAction": "RunInstances"},
    )
    yield deny(
        "CreateTags while copying a volume (no create the stack makes)",
        role,
        tags,
        NEW_VOLUME,
        context={**tagged, "ec2:CreateAction": "CopyVolumes"},
    )
    yield allow("RunInstances: a Spot launch's tagged request", role, run, NEW_SPOT_REQUEST, context=tagged)
    yield deny("RunInstances: an untagged Spot request", role, run, NEW_SPOT_REQUEST)
    yield deny(
        "RunInstances: a Spot request with another stack's tag",
        role,
        run,
        NEW_SPOT_REQUEST,
        context=request_tags(OTHER_STACK),
    )
    yield allow("CreateTags while launching a Spot request", role, tags, NEW_SPOT_REQUEST, context=at_launch)
    yield deny(
        "CreateTags: tagging an existing Spot request into the stack",
        role,
        tags,
        ec2("spot-instances-request/sir-0123abcd"),
        context=tagged,
    )
    yield deny(
        "Provision cannot terminate", role, "ec2:TerminateInstances", INSTANCE, context=resource_tags(STACK)
    )
    yield allow(
        "PassRole: the instance role to EC2",
        role,
        "iam:PassRole",
        V.role_arn("InstanceRole"),
        context={"iam:PassedToService": "ec2.amazonaws.com"},
    )
    yield deny(
        "PassRole: the instance role to Lambda",
        role,
        "iam:PassRole",
        V.role_arn("InstanceRole"),
        context={"iam:PassedToService": "lambda.amazonaws.com"},
    )
    yield deny(
        "Provision cannot pass the share role",
        role,
        "iam:PassRole",
        V.role_arn("ShareRole"),
        context={"iam:PassedToService": "ec2.amazonaws.com"},
    )
    linked = f"arn:aws:iam::{A}:role/aws-service-role/fsx.amazonaws.com/AWSServiceRoleForAmazonFSx"
    yield allow(
        "CreateServiceLinkedRole for FSx",
        role,
        "iam:CreateServiceLinkedRole",
        linked,
        context={"iam:AWSServiceName": "fsx.amazonaws.com"},
    )
    spot_linked = f"arn:aws:iam::{A}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"
    yield allow(
        "CreateServiceLinkedRole for EC2 Spot",
        role,
        "iam:CreateServiceLinkedRole",
        spot_linked,
        context={"iam:AWSServiceName": "spot.amazonaws.com"},
    )
    yield deny(
        "CreateServiceLinkedRole for another service",
        role,
        "iam:CreateServiceLinkedRole",
        linked,
        context={"iam:AWSServiceName": "elasticmapreduce.amazonaws.com"},
    )
    grant = "kms:CreateGrant"
    yield allow(
        "EBS key used through EC2",
        role,
        grant,
        KMS_KEY,
        context={"kms:ViaService": f"ec2.{R}.amazonaws.com"},
        variant="kms",
    )
    yield deny(
        "EBS key used directly",
        role,
        grant,
        KMS_KEY,
        context={"kms:ViaService": f"s3.{R}.amazonaws.com"},
        variant="kms",
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
        yield allow(f"{verb}: a tagged group", role, action, resource, context=tagged)
        yield deny(f"{verb}: an untagged group", role, action, resource)
        yield deny(
            f"{verb}: another stack's group", role, action, resource, context=request_tags(OTHER_STACK)
        )
        at_create = {**tagged, "ec2:CreateAction": verb}
        yield allow(f"CreateTags while {verb}", role, "ec2:CreateTags", resource, context=at_create)
        yield deny(
            f"CreateTags: tagging an existing group into the stack ({verb})",
            role,
            "ec2:CreateTags",
            resource,
            context=tagged,
        )
        yield deny(
            f"CreateTags while {verb}, with another stack's tag",
            role,
            "ec2:CreateTags",
            resource,
            context={**request_tags(OTHER_STACK), "ec2:CreateAction": verb},
        )
    yield allow("CreateSecurityGroup: in the stack's VPC", role, "ec2:CreateSecurityGroup", STACK_VPC)
    yield deny("CreateSecurityGroup: in another VPC", role, "ec2:CreateSecurityGroup", OTHER_VPC)
    rules = [
        "ec2:AuthorizeSecurityGroupIngress",
        "ec2:AuthorizeSecurityGroupEgress",
        "ec2:RevokeSecurityGroupIngress",
        "ec2:RevokeSecurityGroupEgress",
    ]
    for action in rules:
        verb = action.removeprefix("ec2:")
        yield allow(f"{verb}: the stack's group", role, action, SECURITY_GROUP, context=resource_tags(STACK))
        yield deny(f"{verb}: an untagged group", role, action, SECURITY_GROUP)
        yield deny(
            f"{verb}: another stack's group", role, action, SECURITY_GROUP, context=resource_tags(OTHER_STACK)
        )
        yield deny(f"{verb}: the stack's own instance group (CloudFormation's)", role, action, STACK_GROUP)
    run = "ec2:RunInstances"
    for what, resource in (("security group", SECURITY_GROUP), ("placement group", PLACEMENT_GROUP)):
        yield allow(
            f"RunInstances: into the config's {what}", role, run, resource, context=resource_tags(STACK)
        )
        yield deny(f"RunInstances: into an untagged {what}", role, run, resource)
        yield deny(
            f"RunInstances: into another stack's {what}",
            role,
            run,
            resource,
            context=resource_tags(OTHER_STACK),
        )
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
            yield allow(f"{what} on the stack's", releaser, action, resource, context=resource_tags(STACK))
            yield deny(f"{what} on an untagged one", releaser, action, resource)
            yield deny(
                f"{what} on another stack's", releaser, action, resource, context=resource_tags(OTHER_STACK)
            )
    yield deny(
        "CheckReady cannot delete a config's group",
        "CheckReadyFunction",
        "ec2:DeleteSecurityGroup",
        SECURITY_GROUP,
        context=resource_tags(STACK),
    )


def _file_systems() -> Iterator[Case]:
    role = "ProvisionFunction"
    # EFS's CreateFileSystem takes no resource-level permission: IAM authorises it on "*"
    for action, resource in (("elasticfilesystem:CreateFileSystem", "*"), ("fsx:CreateFileSystem", FSX)):
        yield allow(f"{action} tagged", role, action, resource, context=request_tags(STACK, "Name"))
        yield deny(f"{action} untagged", role, action, resource)
        yield deny(
            f"{action} with another stack's tag", role, action, resource, context=request_tags(OTHER_STACK)
        )
    efs_tag = "elasticfilesystem:TagResource"
    created = {**request_tags(STACK, "Name"), "elasticfilesystem:CreateAction": "CreateFileSystem"}
    yield allow("EFS TagResource while creating", role, efs_tag, EFS, context=created)
    yield deny("EFS TagResource on an existing file system", role, efs_tag, EFS, context=request_tags(STACK))
    other = {**request_tags(OTHER_STACK), "elasticfilesystem:CreateAction": "CreateFileSystem"}
    yield deny("EFS TagResource while creating, another stack's tag", role, efs_tag, EFS, context=other)
    fsx_tag = "fsx:TagResource"
    yield allow(
        "FSx TagResource with storagebench keys",
        role,
        fsx_tag,
        FSX,
        context=request_tags(STACK, "storagebench:run-id", "Name"),
    )
    yield allow(
        "FSx TagResource with the request's own tags",
        role,
        fsx_tag,
        FSX,
        context=request_tags(STACK, "Owner"),
    )
    yield deny(
        "FSx TagResource with an aws: key",
        role,
        fsx_tag,
        FSX,
        context=request_tags(STACK, "aws:cloudformation:x"),
    )
    yield deny(
        "FSx TagResource with another stack's tag", role, fsx_tag, FSX, context=request_tags(OTHER_STACK)
    )
    for role in ("ProvisionFunction", "CheckReadyFunction"):
        action = "elasticfilesystem:CreateMountTarget"
        yield allow(f"{role} {action} on the stack's", role, action, EFS, context=resource_tags(STACK))
        yield deny(f"{role} {action} on an untagged one", role, action, EFS)
        yield deny(
            f"{role} {action} on another stack's", role, action, EFS, context=resource_tags(OTHER_STACK)
        )
        # issue 27 #7: the mount target joins the config's own group (tagged), no other group
        interface = "ec2:CreateNetworkInterface"
        group = ec2("security-group/sg-0123456789abcdef0")
        yield allow(
            f"{role} mount target interface in a config's group",
            role,
            interface,
            group,
            context=resource_tags(STACK),
        )
        yield deny(f"{role} mount target interface in an untagged group", role, interface, group)
        yield deny(
            f"{role} mount target interface in another stack's group",
            role,
            interface,
            group,
            context=resource_tags(OTHER_STACK),
        )
        policy = "elasticfilesystem:PutFileSystemPolicy"
        yield allow(f"{role} {policy} on the stack's", role, policy, EFS, context=resource_tags(STACK))
        yield deny(f"{role} {policy} on an untagged one", role, policy, EFS)
        yield deny(
            f"{role} {policy} on another stack's", role, policy, EFS, context=resource_tags(OTHER_STACK)
        )


def _gateways() -> Iterator[Case]:
    role = "CheckReadyFunction"
    activate = "storagegateway:ActivateGateway"
    yield allow("ActivateGateway tagged", role, activate, "*", context=request_tags(STACK, "Name"))
    yield deny("ActivateGateway untagged", role, activate, "*")
    yield deny(
        "ActivateGateway with another stack's tag", role, activate, "*", context=request_tags(OTHER_STACK)
    )
    for action in (
        "storagegateway:AddCache",
        "storagegateway:CreateNFSFileShare",
        "storagegateway:ListLocalDisks",
    ):
        yield allow(f"{action} on the stack's gateway", role, action, GATEWAY, context=resource_tags(STACK))
        yield deny(
            f"{action} on another stack's gateway", role, action, GATEWAY, context=resource_tags(OTHER_STACK)
        )
    add = "storagegateway:AddTagsToResource"
    yield allow(
        "AddTagsToResource with the stack's keys", role, add, SHARE, context=request_tags(STACK, "Name")
    )
    yield allow(
        "AddTagsToResource with the request's own tags",
        role,
        add,
        GATEWAY,
        context=request_tags(STACK, "Owner"),
    )
    yield deny("AddTagsToResource with an aws: key", role, add, GATEWAY, context=request_tags(STACK, "aws:x"))
    yield deny(
        "AddTagsToResource with another stack's tag", role, add, GATEWAY, context=request_tags(OTHER_STACK)
    )
    yield allow(
        "PassRole: the share role to Storage Gateway",
        role,
        "iam:PassRole",
        V.role_arn("ShareRole"),
        context={"iam:PassedToService": "storagegateway.amazonaws.com"},
    )
    yield deny(
        "PassRole: the share role to EC2",
        role,
        "iam:PassRole",
        V.role_arn("ShareRole"),
        context={"iam:PassedToService": "ec2.amazonaws.com"},
    )
    yield allow("invoke the activator", role, "lambda:InvokeFunction", lambda_arn("ActivatorFunction"))
    yield deny("invoke another function", role, "lambda:InvokeFunction", lambda_arn("SweepRunFunction"))


def _commands() -> Iterator[Case]:
    role, send = "StartAgentFunction", "ssm:SendCommand"
    yield allow(
        "SendCommand to the stack's instance", role, send, INSTANCE, context={f"ssm:resourceTag/{TAG}": STACK}
    )
    yield deny("SendCommand to an untagged instance", role, send, INSTANCE)
    yield deny(
        "SendCommand to another stack's instance",
        role,
        send,
        INSTANCE,
        context={f"ssm:resourceTag/{TAG}": OTHER_STACK},
    )
    yield allow(
        "SendCommand of the agent document", role, send, f"arn:aws:ssm:{R}:{A}:document/{V.agent_document}"
    )
    yield deny(
        "SendCommand of another document", role, send, f"arn:aws:ssm:{R}:{A}:document/someone-elses-shell"
    )
    yield deny(
        "the instance cannot send commands",
        "InstanceRole",
        send,
        INSTANCE,
        context={f"ssm:resourceTag/{TAG}": STACK},
        session=I1,
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
        yield allow(f"{role} lists {inside}", role, listing, BUCKET, context={"s3:prefix": inside})
        yield deny(f"{role} lists {outside}", role, listing, BUCKET, context={"s3:prefix": outside})
    get, put = "s3:GetObject", "s3:PutObject"
    yield allow("Plan writes the request", "PlanFunction", put, obj("runs/r1/request.json"))
    for role in ("CleanupFunction", "SweepRunFunction"):  # release: which gateways a config has
        yield allow(f"{role} reads the request", role, get, obj("runs/r1/request.json"))
        yield deny(f"{role} reads no agent output", role, get, obj(prefix_of(I1) + "agent/manifest.json"))
        yield deny(f"{role} writes no request", role, put, obj("runs/r1/request.json"))
    # past 40 configs the Distributed Map reads its items from S3: Plan must be able to write them
    yield allow("Plan writes the work items", "PlanFunction", put, obj("runs/r1/work-items.json"))
    yield deny("Plan writes no plan of a config", "PlanFunction", put, obj("runs/r1/c1/plan.json"))
    yield deny(
        "Plan over plain HTTP (bucket policy)",
        "PlanFunction",
        put,
        obj("runs/r1/request.json"),
        context={"aws:SecureTransport": "false"},
    )
    yield allow(
        "StartAgent writes the task token", "StartAgentFunction", put, obj(prefix_of(I1) + "task-token")
    )
    yield deny(
        "StartAgent cannot forge agent output", "StartAgentFunction", put, obj(prefix_of(I1) + "agent/x")
    )
    yield allow("StartAgent writes the plan", "StartAgentFunction", put, obj("runs/r1/c1/plan.json"))
    yield deny(
        "StartAgent cannot rewrite the request", "StartAgentFunction", put, obj("runs/r1/request.json")
    )
    yield allow(
        "Collect reads the agent's output", "CollectFunction", get, obj(prefix_of(I1) + "agent/fio.json")
    )
    yield deny("Collect cannot read task tokens", "CollectFunction", get, obj(prefix_of(I1) + "task-token"))
    yield allow("Collect writes a config's export", "CollectFunction", put, obj(export_of()))
    yield deny(
        "Collect cannot write outside the export layout",
        "CollectFunction",
        put,
        obj("exports/suite=x/c1.jsonl"),
    )
    yield deny(
        "Collect writes exports as JSON Lines only",
        "CollectFunction",
        put,
        obj(export_of().removesuffix(".jsonl") + ".json"),
    )
    yield deny("Collect cannot rewrite the request", "CollectFunction", put, obj("runs/r1/request.json"))
    yield deny("Finalize cannot write exports", "FinalizeFunction", put, obj(export_of()))
    yield allow("Finalize reads Spot prices paid", "FinalizeFunction", "ec2:DescribeSpotPriceHistory", "*")
    yield deny(
        "Provision does not read Spot prices", "ProvisionFunction", "ec2:DescribeSpotPriceHistory", "*"
    )
    yield deny("the API cannot write exports", "ApiFunction", put, obj(export_of()))
    run_exports = run_export_prefix("nightly", "2026-11-25T02:00:00Z", "r1")  # export_of()'s run
    assert export_of().startswith(run_exports)
    yield allow(
        "the API lists a run's exports", "ApiFunction", listing, BUCKET, context={"s3:prefix": run_exports}
    )
    yield deny(
        "the API cannot list every export", "ApiFunction", listing, BUCKET, context={"s3:prefix": "exports/"}
    )
    yield allow("the API presigns a run's exports", "ApiFunction", get, obj(export_of()))
    yield deny(
        "the API reads exports as JSON Lines only",
        "ApiFunction",
        get,
        obj(export_of().removesuffix(".jsonl") + ".json"),
    )
    yield deny("the API cannot read the agent's output", "ApiFunction", get, obj(prefix_of(I1) + "agent/x"))
    yield allow(
        "RecordFailure reads SSM's output", "RecordFailureFunction", get, obj(prefix_of(I1) + "ssm/x")
    )
    yield deny(
        "RecordFailure cannot read task tokens",
        "RecordFailureFunction",
        get,
        obj(prefix_of(I1) + "task-token"),
    )
    yield allow("Finalize reads a config's series", "FinalizeFunction", get, obj("runs/r1/c1/series.json"))
    yield deny("Finalize cannot read task tokens", "FinalizeFunction", get, obj(prefix_of(I1) + "task-token"))
    yield allow("the API presigns reports", "ApiFunction", get, obj("runs/r1/report.html"))
    yield deny("the API cannot read requests", "ApiFunction", get, obj("runs/r1/request.json"))
    share = obj("runs/r1/c1/x", SHARE_BUCKET)
    yield allow("Cleanup deletes share data", "CleanupFunction", "s3:DeleteObject", share)
    yield deny(
        "Cleanup over plain HTTP (share bucket policy)",
        "CleanupFunction",
        "s3:DeleteObject",
        share,
        context={"aws:SecureTransport": "false"},
    )


def _instance() -> Iterator[Case]:
    """The instance reaches its own prefix (runs/*/instances/<role id>:<its id>/) and nothing else."""
    role = "InstanceRole"
    get, put = "s3:GetObject", "s3:PutObject"
    mine, other = prefix_of(I1), prefix_of(I2)
    yield allow("instance i-1 writes its prefix", role, put, obj(mine + "agent/fio.json"), session=I1)
    yield allow("instance i-1 reads its task token", role, get, obj(mine + "task-token"), session=I1)
    yield allow(
        "instance i-1 writes SSM's output to its prefix", role, put, obj(mine + "ssm/cmd/stdout"), session=I1
    )
    yield deny(
        "instance i-1 writes instance i-2's prefix", role, put, obj(other + "agent/fio.json"), session=I1
    )
    yield deny(
        "instance i-1 reads instance i-2's task token", role, get, obj(other + "task-token"), session=I1
    )
    yield deny(
        "instance i-1 writes under another role id",
        role,
        put,
        obj(prefix_of(I1, role_id="AROAOTHERROLE00000") + "x"),
        session=I1,
    )
    # The prefix is a fence: a wildcard before it spans '/', so the instance's own prefix must not be
    # reachable nested inside another's (issue 27, 1) nor at another depth of the run's tree.
    nested = other + "agent/x/" + mine.split("/", 3)[3]  # runs/r1/c1/instances/<i-2>/agent/x/instances/<i-1>/
    yield deny("instance i-1 writes inside i-2's prefix", role, put, obj(nested + "y"), session=I1)
    yield deny("instance i-1 reads inside i-2's prefix", role, get, obj(nested + "task-token"), session=I1)
    yield deny(
        "instance i-1 writes its prefix at the run's depth",
        role,
        put,
        obj("runs/r1/" + mine.split("/", 3)[3] + "x"),
        session=I1,
    )
    yield deny("instance i-1 reads the run's request", role, get, obj("runs/r1/request.json"), session=I1)
    yield deny("instance i-1 reads another run's request", role, get, obj("runs/r2/request.json"), session=I1)
    yield deny("instance i-1 reads another run's plan", role, get, obj("runs/r2/c1/plan.json"), session=I1)
    yield deny("instance i-1 rewrites its config's plan", role, put, obj("runs/r1/c1/plan.json"), session=I1)
    yield deny("instance i-1 writes the series", role, put, obj("runs/r1/c1/series.json"), session=I1)
    yield deny("instance i-1 writes its config's export", role, put, obj(export_of()), session=I1)
    yield deny("instance i-1 reads the exports", role, get, obj(export_of()), session=I1)
    yield deny("instance i-1 writes a report", role, put, obj("runs/r1/report.html"), session=I1)
    yield deny("instance i-1 reads the agent", role, get, obj("agent/0.1.0/x.pyz"), session=I1)
    yield deny(
        "instance i-1 over plain HTTP",
        role,
        put,
        obj(mine + "agent/x"),
        session=I1,
        context={"aws:SecureTransport": "false"},
    )
    yield allow(
        "the instance checks the bucket's encryption",
        role,
        "s3:GetEncryptionConfiguration",
        BUCKET,
        session=I1,
    )
    yield allow("the instance reports to Step Functions", role, "states:SendTaskSuccess", "*", session=I1)


def _workflow() -> Iterator[Case]:
    """What the tags and names imply: the stack's state machine, functions and executions only."""
    start, stop = "states:StartExecution", "states:StopExecution"
    execution = f"arn:aws:states:{R}:{A}:execution:{V.state_machine_name}:r1"
    other_execution = f"arn:aws:states:{R}:{A}:execution:someone-elses-workflow:r1"
    for role in ("ApiFunction", "SchedulerRole"):
        yield allow(f"{role} starts the stack's runs", role, start, STATE_MACHINE)
        yield deny(f"{role} cannot start another state machine", role, start, OTHER_STATE_MACHINE)
    for role in ("ApiFunction", "JanitorFunction"):
        yield allow(f"{role} stops the stack's runs", role, stop, execution)
        yield deny(f"{role} cannot stop another state machine's runs", role, stop, other_execution)
    yield allow(
        "the API hands a stopped run to SweepRun",
        "ApiFunction",
        "lambda:InvokeFunction",
        lambda_arn("SweepRunFunction"),
    )
    yield deny(
        "the API cannot invoke Provision",
        "ApiFunction",
        "lambda:InvokeFunction",
        lambda_arn("ProvisionFunction"),
    )
    table, update = V.arn("dynamodb", f"table/{V.results_table}"), "dynamodb:UpdateItem"
    yield allow(
        "the API marks a run STOPPING before it stops the execution",
        "ApiFunction",
        update,
        table,
        context={"dynamodb:LeadingKeys": ["RUN#r1"]},
    )
    yield allow(
        "the API reserves the day's spend (the stack's budget)",
        "ApiFunction",
        update,
        table,
        context={"dynamodb:LeadingKeys": ["SPEND#2030-01-02"]},
    )
    yield deny(
        "the API cannot write a scheduled occurrence's claim",
        "ApiFunction",
        update,
        table,
        context={
            "dynamodb:LeadingKeys": [
                f"OCCURRENCE#arn:aws:scheduler:{R}:{A}:schedule/g/n@2030-01-02T02:00:00Z"
            ]
        },
    )
    yield allow(
        "the janitor schedule invokes the janitor",
        "JanitorScheduleRole",
        "lambda:InvokeFunction",
        lambda_arn("JanitorFunction"),
    )
    yield deny(
        "the janitor schedule cannot invoke SweepRun",
        "JanitorScheduleRole",
        "lambda:InvokeFunction",
        lambda_arn("SweepRunFunction"),
    )
    yield allow(
        "the state machine invokes its steps",
        "BenchmarkStateMachine",
        "lambda:InvokeFunction",
        lambda_arn("CollectFunction"),
    )
    yield deny(
        "the state machine cannot invoke the API",
        "BenchmarkStateMachine",
        "lambda:InvokeFunction",
        lambda_arn("ApiFunction"),
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
        yield allow(
            f"{service} assumes {role}",
            role,
            assume,
            arn,
            service=service,
            context={"aws:SourceAccount": A, "aws:SourceArn": source},
        )
        yield deny(
            f"{service} assumes {role} for another source",
            role,
            assume,
            arn,
            service=service,
            context={"aws:SourceAccount": A, "aws:SourceArn": elsewhere},
        )
        yield deny(
            f"{service} assumes {role} for another account",
            role,
            assume,
            arn,
            service=service,
            context={"aws:SourceAccount": OTHER_ACCOUNT, "aws:SourceArn": source},
        )
    key = V.arn("kms", f"key/{V.notification_key_id}")
    yield allow(
        "CloudWatch alarms encrypt for the topic",
        "NotificationKey",
        "kms:GenerateDataKey",
        key,
        service="cloudwatch.amazonaws.com",
        context={"aws:SourceAccount": A},
    )
    yield deny(
        "another account's alarms cannot use the key",
        "NotificationKey",
        "kms:GenerateDataKey",
        key,
        service="cloudwatch.amazonaws.com",
        context={"aws:SourceAccount": OTHER_ACCOUNT},
    )


def _distributed_map() -> Iterator[Case]:
    """Past 40 configs the state machine runs one child execution of itself per config: it starts,
    follows and stops those children and reads the work items Plan wrote, and nothing more."""
    role, get = "BenchmarkStateMachine", "s3:GetObject"
    child = f"arn:aws:states:{R}:{A}:execution:{V.state_machine_name}/configs:0f1e2d3c-child"
    run = f"arn:aws:states:{R}:{A}:execution:{V.state_machine_name}:r1"
    others_child = f"arn:aws:states:{R}:{A}:execution:someone-elses-workflow/configs:0f1e2d3c-child"
    yield allow(
        "the Distributed Map starts children of its state machine",
        role,
        "states:StartExecution",
        STATE_MACHINE,
    )
    yield deny(
        "the Distributed Map cannot start another state machine",
        role,
        "states:StartExecution",
        OTHER_STATE_MACHINE,
    )
    for action in ("states:DescribeExecution", "states:StopExecution"):
        verb = action.removeprefix("states:")
        yield allow(f"the Distributed Map calls {verb} on its children", role, action, child)
        yield deny(f"the state machine cannot {verb} another machine's children", role, action, others_child)
    yield deny("the state machine cannot stop a run (the API's job)", role, "states:StopExecution", run)
    yield allow("the Distributed Map reads a run's work items", role, get, obj(work_items_key("r1")))
    yield deny("the state machine cannot read a run's request", role, get, obj("runs/r1/request.json"))
    yield deny("the state machine cannot read an agent's output", role, get, obj(prefix_of(I1) + "agent/x"))
    yield deny("the state machine cannot write work items", role, "s3:PutObject", obj(work_items_key("r1")))


def _quotas() -> Iterator[Case]:
    """Plan and the API's dry run read the account's EC2 vCPU quotas (planning.quota_preview): any EC2
    quota of the stack's Region, AWS's defaults, and nothing else of Service Quotas."""
    standard = f"arn:aws:servicequotas:{R}:{A}:ec2/L-1216C47A"
    aws_default = f"arn:aws:servicequotas:{R}::ec2/L-1216C47A"  # AWS's own quotas carry no account
    get, default = "servicequotas:GetServiceQuota", "servicequotas:GetAWSDefaultServiceQuota"
    for role in ("PlanFunction", "ApiFunction"):
        yield allow(f"{role} reads the Standard On-Demand vCPU quota", role, get, standard)
        yield allow(
            f"{role} reads a Spot vCPU quota", role, get, f"arn:aws:servicequotas:{R}:{A}:ec2/L-34B43A08"
        )
        yield allow(f"{role} reads an EC2 quota's AWS default ARN", role, get, aws_default)
        yield allow(f"{role} reads AWS's default of a quota", role, default, "*")
        yield deny(
            f"{role} cannot read another service's quota",
            role,
            get,
            f"arn:aws:servicequotas:{R}:{A}:vpc/L-F678F1CE",
        )
        yield deny(
            f"{role} cannot read another Region's quota",
            role,
            get,
            f"arn:aws:servicequotas:eu-west-1:{A}:ec2/L-1216C47A",
        )
        yield deny(
            f"{role} cannot ask for a quota increase",
            role,
            "servicequotas:RequestServiceQuotaIncrease",
            standard,
        )
    yield deny("Provision does not read quotas", "ProvisionFunction", get, standard)
    yield deny("Provision does not read AWS's default quotas", "ProvisionFunction", default, "*")


def _multi_attach() -> Iterator[Case]:
    """A node group's Multi-Attach volume: Provision creates it (io1/io2, the stack's tag, this
    account's snapshot) and tags it while creating it; CheckReady attaches the stack's volume to the
    stack's instance, through the stack key when it names one (adapters.aws.shared_volumes)."""
    role, create, tags = "ProvisionFunction", "ec2:CreateVolume", "ec2:CreateTags"
    tagged = request_tags(STACK, "storagebench:run-id", "Name")
    io2 = {"ec2:VolumeType": "io2"}
    yield allow("CreateVolume: a tagged io2 volume", role, create, NEW_VOLUME, context={**tagged, **io2})
    yield allow(
        "CreateVolume: a tagged io1 volume",
        role,
        create,
        NEW_VOLUME,
        context={**tagged, "ec2:VolumeType": "io1"},
    )
    yield deny("CreateVolume: an untagged io2 volume", role, create, NEW_VOLUME, context=io2)
    yield deny(
        "CreateVolume: with another stack's tag",
        role,
        create,
        NEW_VOLUME,
        context={**request_tags(OTHER_STACK), **io2},
    )
    yield deny(
        "CreateVolume: a gp3 volume outside a launch",
        role,
        create,
        NEW_VOLUME,
        context={**tagged, "ec2:VolumeType": "gp3"},
    )
    yield allow(
        "CreateVolume: from this account's snapshot", role, create, SNAPSHOT, context={"ec2:Owner": A}
    )
    yield deny(
        "CreateVolume: from another account's snapshot",
        role,
        create,
        SNAPSHOT,
        context={"ec2:Owner": OTHER_ACCOUNT},
    )
    yield allow(
        "CreateTags while creating a Multi-Attach volume",
        role,
        tags,
        NEW_VOLUME,
        context={**tagged, "ec2:CreateAction": "CreateVolume"},
    )
    yield deny(
        "CreateTags while creating a volume, with another stack's tag",
        role,
        tags,
        NEW_VOLUME,
        context={**request_tags(OTHER_STACK), "ec2:CreateAction": "CreateVolume"},
    )
    checking, attach = "CheckReadyFunction", "ec2:AttachVolume"
    for what, resource in (("instance", INSTANCE), ("volume", VOLUME)):
        yield allow(
            f"AttachVolume: the stack's {what}", checking, attach, resource, context=resource_tags(STACK)
        )
        yield deny(f"AttachVolume: an untagged {what}", checking, attach, resource)
        yield deny(
            f"AttachVolume: another stack's {what}",
            checking,
            attach,
            resource,
            context=resource_tags(OTHER_STACK),
        )
    yield deny("Provision does not attach volumes", role, attach, VOLUME, context=resource_tags(STACK))
    yield allow(
        "CheckReady: the EBS key used through EC2 for an attachment",
        checking,
        "kms:CreateGrant",
        KMS_KEY,
        context={"kms:ViaService": f"ec2.{R}.amazonaws.com"},
        variant="kms",
    )
    yield deny(
        "CheckReady: the EBS key used directly",
        checking,
        "kms:CreateGrant",
        KMS_KEY,
        context={"kms:ViaService": f"s3.{R}.amazonaws.com"},
        variant="kms",
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
