"""A recorded AWS call (storagebench_local.aws_calls) as the authorization requests IAM makes for it.

One entry per operation the code uses, (botocore service, operation) -> the IAM action(s), resource
ARN(s) and request context AWS evaluates: the resource's tags as they were at the call (recorded
``facts``), the request's tags (``TagSpecifications``, ``Tags``), and the service's own keys where the
template's conditions read them (ec2:InstanceType, ec2:MetadataHttpTokens, ec2:Owner, ec2:CreateAction,
ec2:Subnet, elasticfilesystem:CreateAction, s3:prefix, ssm:resourceTag, iam:PassedToService,
kms:ViaService). ``aws:userid``, ``aws:PrincipalArn`` and ``aws:SecureTransport`` come with every
request (evaluator.Request.of).

An operation missing from ``TABLE`` raises ``UnknownOperationError``: a new code path must say here what
IAM checks for it before its calls count as allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from storagebench_local.aws_calls import AwsCall


class UnknownOperationError(KeyError):
    """A recorded operation the table does not map (add it to TABLE)."""


@dataclass(frozen=True)
class Check:
    action: str
    resource: str
    context: dict[str, str | list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Stack:
    """What the mapping needs to know of the stack the calls were made in."""

    account: str
    region: str
    instance_role_arn: str  # the role of the instance profile RunInstances passes

    def arn(self, service: str, resource: str, *, account: bool = True) -> str:
        return f"arn:aws:{service}:{self.region}:{self.account if account else ''}:{resource}"


Mapper = Callable[[AwsCall, Stack], list[Check]]


# ------------------------------------------------------------------------------ context helpers


def _tags(pairs: Any) -> dict[str, str]:
    return {str(t["Key"]): str(t.get("Value", "")) for t in pairs or []}


def request_tags(tags: Mapping[str, str]) -> dict[str, str | list[str]]:
    context: dict[str, str | list[str]] = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
    if tags:
        context["aws:TagKeys"] = list(tags)
    return context


def resource_tags(
    call: AwsCall, resource_id: str, prefix: str = "aws:ResourceTag"
) -> dict[str, str | list[str]]:
    facts = call.facts.get(resource_id)
    if facts is None or "error" in facts:
        raise ValueError(f"{call.describe()}: no tags were recorded for {resource_id}: {facts}")
    return {f"{prefix}/{k}": v for k, v in (facts.get("tags") or {}).items()}


def _fact(call: AwsCall, resource_id: str, name: str) -> Any:
    facts = call.facts.get(resource_id) or {}
    if name not in facts:
        raise ValueError(f"{call.describe()}: {name} of {resource_id} was not recorded: {facts}")
    return facts[name]


# ------------------------------------------------------------------------------ per service


def _anywhere(action: str) -> Mapper:
    """An action that takes no resource-level permission: IAM authorises it on "*"."""
    return lambda call, stack: [Check(action, "*")]


def _table_arn(stack: Stack, table: str, index: str | None = None) -> str:
    return stack.arn("dynamodb", f"table/{table}" + (f"/index/{index}" if index else ""))


def _dynamodb(action: str) -> Mapper:
    def checks(call: AwsCall, stack: Stack) -> list[Check]:
        return [Check(action, _table_arn(stack, call.params["TableName"], call.params.get("IndexName")))]

    return checks


def _dynamodb_batch(action: str) -> Mapper:
    def checks(call: AwsCall, stack: Stack) -> list[Check]:
        return [Check(action, _table_arn(stack, table)) for table in call.params["RequestItems"]]

    return checks


def _dynamodb_transact(call: AwsCall, stack: Stack) -> list[Check]:
    actions = {
        "Put": "PutItem",
        "Update": "UpdateItem",
        "Delete": "DeleteItem",
        "ConditionCheck": "ConditionCheckItem",
    }
    found = []
    for item in call.params["TransactItems"]:
        ((kind, body),) = item.items()
        found.append(Check(f"dynamodb:{actions[kind]}", _table_arn(stack, body["TableName"])))
    return found


def _object(bucket: str, key: str) -> str:
    return f"arn:aws:s3:::{bucket}/{key}"


def _s3_object(action: str) -> Mapper:
    return lambda call, stack: [Check(action, _object(call.params["Bucket"], call.params["Key"]))]


def _s3_list(call: AwsCall, stack: Stack) -> list[Check]:
    context: dict[str, str | list[str]] = {}
    if "Prefix" in call.params:
        context["s3:prefix"] = str(call.params["Prefix"])
    return [Check("s3:ListBucket", f"arn:aws:s3:::{call.params['Bucket']}", context)]


def _s3_delete_objects(call: AwsCall, stack: Stack) -> list[Check]:
    bucket = call.params["Bucket"]
    return [Check("s3:DeleteObject", _object(bucket, o["Key"])) for o in call.params["Delete"]["Objects"]]


def _s3_copy(call: AwsCall, stack: Stack) -> list[Check]:
    source = call.params["CopySource"]
    if isinstance(source, dict):
        source = f"{source['Bucket']}/{source['Key']}"
    return [
        Check("s3:GetObject", f"arn:aws:s3:::{str(source).lstrip('/')}"),
        Check("s3:PutObject", _object(call.params["Bucket"], call.params["Key"])),
    ]


def _ec2(stack: Stack, kind: str, resource_id: str) -> str:
    return stack.arn("ec2", f"{kind}/{resource_id}", account=kind not in ("image", "snapshot"))


def _run_instances(call: AwsCall, stack: Stack) -> list[Check]:
    """RunInstances authorises every resource it creates or uses (Service Authorization Reference),
    and CreateTags for the tags it writes while launching, and PassRole for the instance profile."""
    p = call.params
    tagged = {str(s["ResourceType"]): _tags(s.get("Tags")) for s in p.get("TagSpecifications") or []}
    instance: dict[str, str | list[str]] = {
        **request_tags(tagged.get("instance", {})),
        "ec2:InstanceType": p["InstanceType"],
    }
    tokens = (p.get("MetadataOptions") or {}).get("HttpTokens")
    if tokens:
        instance["ec2:MetadataHttpTokens"] = str(tokens)
    if "Arn" in (p.get("IamInstanceProfile") or {}):
        instance["ec2:InstanceProfile"] = str(p["IamInstanceProfile"]["Arn"])
    checks = [Check("ec2:RunInstances", _ec2(stack, "instance", "*"), instance)]
    for mapping in p.get("BlockDeviceMappings") or []:
        ebs = mapping.get("Ebs")
        if ebs is None:
            continue
        volume: dict[str, str | list[str]] = {**request_tags(tagged.get("volume", {}))}
        if "VolumeType" in ebs:
            volume["ec2:VolumeType"] = str(ebs["VolumeType"])
        if "VolumeSize" in ebs:
            volume["ec2:VolumeSize"] = str(ebs["VolumeSize"])
        if "Encrypted" in ebs:
            volume["ec2:Encrypted"] = "true" if ebs["Encrypted"] else "false"
        checks.append(Check("ec2:RunInstances", _ec2(stack, "volume", "*"), volume))
        if ebs.get("KmsKeyId"):
            via: dict[str, str | list[str]] = {"kms:ViaService": f"ec2.{stack.region}.amazonaws.com"}
            for action in ("kms:CreateGrant", "kms:GenerateDataKeyWithoutPlaintext", "kms:Decrypt"):
                checks.append(Check(action, str(ebs["KmsKeyId"]), via))
    image = str(p["ImageId"])
    alias = _fact(call, image, "owner_alias")
    owner = alias if alias in ("amazon", "aws-marketplace") else str(_fact(call, image, "owner"))
    checks.append(Check("ec2:RunInstances", _ec2(stack, "image", image), {"ec2:Owner": owner}))
    # an image's snapshots are its publisher's (the launch policy reads their ec2:Owner)
    checks += [
        Check("ec2:RunInstances", _ec2(stack, "snapshot", s), {"ec2:Owner": owner})
        for s in _fact(call, image, "snapshots")
    ]
    subnet = _ec2(stack, "subnet", str(p["SubnetId"]))
    checks.append(Check("ec2:RunInstances", subnet))
    checks += [  # the stack's groups (by ARN in the policy) and a config's own (by its tags)
        Check("ec2:RunInstances", _ec2(stack, "security-group", g), resource_tags(call, str(g)))
        for g in p.get("SecurityGroupIds") or []
    ]
    placement = (p.get("Placement") or {}).get("GroupName")
    if placement:
        checks.append(
            Check(
                "ec2:RunInstances", _ec2(stack, "placement-group", placement), resource_tags(call, placement)
            )
        )
    checks.append(Check("ec2:RunInstances", _ec2(stack, "network-interface", "*"), {"ec2:Subnet": subnet}))
    if p.get("KeyName"):
        checks.append(Check("ec2:RunInstances", _ec2(stack, "key-pair", str(p["KeyName"]))))
    if (p.get("InstanceMarketOptions") or {}).get("MarketType") == "spot":  # a one-time Spot request
        spot_request = request_tags(tagged.get("spot-instances-request", {}))
        checks.append(Check("ec2:RunInstances", _ec2(stack, "spot-instances-request", "*"), spot_request))
    for kind, tags in tagged.items():
        context = {**request_tags(tags), "ec2:CreateAction": "RunInstances"}
        checks.append(Check("ec2:CreateTags", _ec2(stack, kind, "*"), context))
    if p.get("IamInstanceProfile"):
        checks.append(
            Check("iam:PassRole", stack.instance_role_arn, {"iam:PassedToService": "ec2.amazonaws.com"})
        )
    return checks


def _ec2_on_tagged(action: str, kind: str, ids: str) -> Mapper:
    def checks(call: AwsCall, stack: Stack) -> list[Check]:
        values = call.params[ids]
        return [
            Check(action, _ec2(stack, kind, str(i)), resource_tags(call, str(i)))
            for i in (values if isinstance(values, list) else [values])
        ]

    return checks


def _create_tags(call: AwsCall, stack: Stack) -> list[Check]:
    """CreateTags on existing resources (not while launching: no ec2:CreateAction)."""
    kinds = {"i-": "instance", "vol-": "volume"}
    found = []
    for resource in call.params["Resources"]:
        kind = next((k for prefix, k in kinds.items() if str(resource).startswith(prefix)), None)
        if kind is None:
            raise UnknownOperationError(f"{call.describe()}: CreateTags on {resource} is not mapped")
        context = {**resource_tags(call, resource), **request_tags(_tags(call.params.get("Tags")))}
        found.append(Check("ec2:CreateTags", _ec2(stack, kind, resource), context))
    return found


def _ec2_create_tagged(action: str, kind: str, resource_type: str, name: str | None = None) -> Mapper:
    """A create whose tags come with it (TagSpecifications): the new resource, with the request's
    tags, and CreateTags on it with ec2:CreateAction; CreateSecurityGroup is authorised on its VPC too."""
    verb = action.removeprefix("ec2:")

    def checks(call: AwsCall, stack: Stack) -> list[Check]:
        p = call.params
        specs = p.get("TagSpecifications") or []
        tags = request_tags(
            next((_tags(t.get("Tags")) for t in specs if t["ResourceType"] == resource_type), {})
        )
        resource = _ec2(stack, kind, str(p[name]) if name else "*")
        found = [Check(action, resource, tags)]
        if "VpcId" in p:
            found.append(Check(action, _ec2(stack, "vpc", str(p["VpcId"]))))
        if tags:
            found.append(Check("ec2:CreateTags", resource, {**tags, "ec2:CreateAction": verb}))
        return found

    return checks


def _delete_placement_group(call: AwsCall, stack: Stack) -> list[Check]:
    name = str(call.params["GroupName"])
    return [
        Check("ec2:DeletePlacementGroup", _ec2(stack, "placement-group", name), resource_tags(call, name))
    ]


def _delete_interface(call: AwsCall, stack: Stack) -> list[Check]:
    interface = str(call.params["NetworkInterfaceId"])
    subnet = _ec2(stack, "subnet", str(_fact(call, interface, "subnet")))
    return [
        Check(
            "ec2:DeleteNetworkInterface", _ec2(stack, "network-interface", interface), {"ec2:Subnet": subnet}
        )
    ]


def _parameter(call: AwsCall, stack: Stack) -> list[Check]:
    name = str(call.params["Name"])
    name = name if name.startswith("/") else "/" + name
    public = name.startswith("/aws/service/")  # AWS's public parameters: no account in their ARN
    return [Check("ssm:GetParameter", stack.arn("ssm", f"parameter{name}", account=not public))]


def _document(stack: Stack, name: str) -> str:
    return stack.arn("ssm", f"document/{name}", account=not name.startswith("AWS-"))


def _send_command(call: AwsCall, stack: Stack) -> list[Check]:
    """The document and every instance. SSM writes the command's output with the instance's role
    (recorded as the instance's own PutObject), so the output bucket is no check of the sender's."""
    checks = [Check("ssm:SendCommand", _document(stack, str(call.params["DocumentName"])))]
    for instance in call.params.get("InstanceIds") or []:
        context = resource_tags(call, str(instance), "ssm:resourceTag")
        checks.append(Check("ssm:SendCommand", _ec2(stack, "instance", str(instance)), context))
    if call.params.get("Targets"):
        raise UnknownOperationError(f"{call.describe()}: SendCommand by Targets is not mapped")
    return checks


def _invoke(call: AwsCall, stack: Stack) -> list[Check]:
    name = str(call.params["FunctionName"])
    arn = name if name.startswith("arn:") else stack.arn("lambda", f"function:{name}")
    return [Check("lambda:InvokeFunction", arn)]


def _efs_file_system(stack: Stack, file_system: str) -> str:
    return stack.arn("elasticfilesystem", f"file-system/{file_system}")


def _efs_describe(action: str) -> Mapper:
    def checks(call: AwsCall, stack: Stack) -> list[Check]:
        file_system = call.params.get("FileSystemId")
        return [Check(action, _efs_file_system(stack, str(file_system)) if file_system else "*")]

    return checks


def _efs_create(call: AwsCall, stack: Stack) -> list[Check]:
    tags = request_tags(_tags(call.params.get("Tags")))
    context = {**tags, "elasticfilesystem:Encrypted": "true" if call.params.get("Encrypted") else "false"}
    checks = [Check("elasticfilesystem:CreateFileSystem", "*", context)]
    if tags:  # tags sent with CreateFileSystem are authorised as TagResource
        context = {**tags, "elasticfilesystem:CreateAction": "CreateFileSystem"}
        checks.append(Check("elasticfilesystem:TagResource", _efs_file_system(stack, "*"), context))
    return checks


def _efs_tagged(action: str) -> Mapper:
    def checks(call: AwsCall, stack: Stack) -> list[Check]:
        file_system = str(call.params["FileSystemId"])
        return [Check(action, _efs_file_system(stack, file_system), resource_tags(call, file_system))]

    return checks


def _efs_mount_target(call: AwsCall, stack: Stack) -> list[Check]:
    file_system = str(call.params["FileSystemId"])
    checks = [
        Check(
            "elasticfilesystem:CreateMountTarget",
            _efs_file_system(stack, file_system),
            resource_tags(call, file_system),
        )
    ]
    # EFS creates the mount target's interface with the caller's rights
    checks.append(Check("ec2:CreateNetworkInterface", _ec2(stack, "network-interface", "*")))
    checks.append(Check("ec2:CreateNetworkInterface", _ec2(stack, "subnet", str(call.params["SubnetId"]))))
    checks += [
        Check("ec2:CreateNetworkInterface", _ec2(stack, "security-group", str(g)))
        for g in call.params.get("SecurityGroups") or []
    ]
    return checks


def _efs_delete_mount_target(call: AwsCall, stack: Stack) -> list[Check]:
    target = str(call.params["MountTargetId"])
    file_system = str(_fact(call, target, "file_system"))
    return [
        Check(
            "elasticfilesystem:DeleteMountTarget",
            _efs_file_system(stack, file_system),
            resource_tags(call, file_system),
        )
    ]


def _fsx_create(call: AwsCall, stack: Stack) -> list[Check]:
    tags = request_tags(_tags(call.params.get("Tags")))
    resource = stack.arn("fsx", "file-system/*")
    checks = [Check("fsx:CreateFileSystem", resource, tags)]
    if tags:
        checks.append(Check("fsx:TagResource", resource, tags))
    return checks


def _fsx_delete(call: AwsCall, stack: Stack) -> list[Check]:
    file_system = str(call.params["FileSystemId"])
    return [
        Check(
            "fsx:DeleteFileSystem",
            stack.arn("fsx", f"file-system/{file_system}"),
            resource_tags(call, file_system),
        )
    ]


def _create_volume(call: AwsCall, stack: Stack) -> list[Check]:
    """CreateVolume (a node group's Multi-Attach volume): the new volume with the request's tags and
    its type, size and encryption, CreateTags on it with ec2:CreateAction, the snapshot it reads (its
    owner is not recorded: the template allows this account's alone, so an unrecorded one is denied),
    and the stack key through EC2 when it names one."""
    p = call.params
    tags = request_tags(
        next(
            (_tags(t.get("Tags")) for t in p.get("TagSpecifications") or [] if t["ResourceType"] == "volume"),
            {},
        )
    )
    volume: dict[str, str | list[str]] = {
        **tags,
        "ec2:VolumeType": str(p["VolumeType"]),
        "ec2:VolumeSize": str(p["Size"]),
        "ec2:Encrypted": "true" if p.get("Encrypted") else "false",
    }
    checks = [Check("ec2:CreateVolume", _ec2(stack, "volume", "*"), volume)]
    if p.get("SnapshotId"):
        checks.append(Check("ec2:CreateVolume", _ec2(stack, "snapshot", str(p["SnapshotId"]))))
    if tags:
        checks.append(
            Check("ec2:CreateTags", _ec2(stack, "volume", "*"), {**tags, "ec2:CreateAction": "CreateVolume"})
        )
    if p.get("KmsKeyId"):
        via: dict[str, str | list[str]] = {"kms:ViaService": f"ec2.{stack.region}.amazonaws.com"}
        for action in ("kms:CreateGrant", "kms:GenerateDataKeyWithoutPlaintext", "kms:Decrypt"):
            checks.append(Check(action, str(p["KmsKeyId"]), via))
    return checks


def _attach_volume(call: AwsCall, stack: Stack) -> list[Check]:
    """AttachVolume is authorised on the instance and on the volume, each with its own tags."""
    instance, volume = str(call.params["InstanceId"]), str(call.params["VolumeId"])
    return [
        Check("ec2:AttachVolume", _ec2(stack, "instance", instance), resource_tags(call, instance)),
        Check("ec2:AttachVolume", _ec2(stack, "volume", volume), resource_tags(call, volume)),
    ]


def _states(action: str, parameter: str) -> Mapper:
    return lambda call, stack: [Check(action, str(call.params[parameter]))]


TABLE: dict[tuple[str, str], Mapper] = {
    # DynamoDB: the results table and its indexes
    **{
        ("dynamodb", op): _dynamodb(f"dynamodb:{op}")
        for op in ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "DescribeTable")
    },
    ("dynamodb", "BatchWriteItem"): _dynamodb_batch("dynamodb:BatchWriteItem"),
    ("dynamodb", "BatchGetItem"): _dynamodb_batch("dynamodb:BatchGetItem"),
    ("dynamodb", "TransactWriteItems"): _dynamodb_transact,
    # S3: objects by key, listings by prefix
    ("s3", "PutObject"): _s3_object("s3:PutObject"),
    ("s3", "GetObject"): _s3_object("s3:GetObject"),
    ("s3", "HeadObject"): _s3_object("s3:GetObject"),
    ("s3", "DeleteObject"): _s3_object("s3:DeleteObject"),
    ("s3", "DeleteObjects"): _s3_delete_objects,
    ("s3", "CopyObject"): _s3_copy,
    ("s3", "CreateMultipartUpload"): _s3_object("s3:PutObject"),
    ("s3", "UploadPart"): _s3_object("s3:PutObject"),
    ("s3", "CompleteMultipartUpload"): _s3_object("s3:PutObject"),
    ("s3", "AbortMultipartUpload"): _s3_object("s3:AbortMultipartUpload"),
    ("s3", "ListObjectsV2"): _s3_list,
    ("s3", "ListObjects"): _s3_list,
    ("s3", "GetBucketEncryption"): lambda call, stack: [
        Check("s3:GetEncryptionConfiguration", f"arn:aws:s3:::{call.params['Bucket']}")
    ],
    # EC2
    **{
        ("ec2", op): _anywhere(f"ec2:{op}")
        for op in (
            "DescribeInstances",
            "DescribeInstanceStatus",
            "DescribeVolumes",
            "DescribeVolumeStatus",
            "DescribeImages",
            "DescribeSubnets",
            "DescribeNetworkInterfaces",
            "DescribeSecurityGroups",
            "DescribeVpcs",
            "DescribeTags",
            "DescribeSpotPriceHistory",
            "DescribePlacementGroups",
        )
    },
    # a config's own security group and placement group (adapters.aws.network)
    ("ec2", "CreateSecurityGroup"): _ec2_create_tagged(
        "ec2:CreateSecurityGroup", "security-group", "security-group"
    ),
    ("ec2", "CreatePlacementGroup"): _ec2_create_tagged(
        "ec2:CreatePlacementGroup", "placement-group", "placement-group", "GroupName"
    ),
    **{
        ("ec2", op): _ec2_on_tagged(f"ec2:{op}", "security-group", "GroupId")
        for op in (
            "AuthorizeSecurityGroupIngress",
            "AuthorizeSecurityGroupEgress",
            "RevokeSecurityGroupIngress",
            "RevokeSecurityGroupEgress",
            "DeleteSecurityGroup",
        )
    },
    ("ec2", "DeletePlacementGroup"): _delete_placement_group,
    ("ec2", "RunInstances"): _run_instances,
    ("ec2", "TerminateInstances"): _ec2_on_tagged("ec2:TerminateInstances", "instance", "InstanceIds"),
    ("ec2", "DeleteVolume"): _ec2_on_tagged("ec2:DeleteVolume", "volume", "VolumeId"),
    (
        "ec2",
        "CreateVolume",
    ): _create_volume,  # a node group's Multi-Attach volume (adapters.aws.shared_volumes)
    ("ec2", "AttachVolume"): _attach_volume,
    ("ec2", "CreateTags"): _create_tags,
    ("ec2", "DeleteNetworkInterface"): _delete_interface,
    # SSM
    ("ssm", "GetParameter"): _parameter,
    ("ssm", "SendCommand"): _send_command,
    ("ssm", "GetDocument"): lambda call, stack: [
        Check("ssm:GetDocument", _document(stack, str(call.params["Name"])))
    ],
    **{
        ("ssm", op): _anywhere(f"ssm:{op}")
        for op in ("ListCommands", "CancelCommand", "GetCommandInvocation", "DescribeInstanceInformation")
    },
    # Step Functions, Lambda, SNS, pricing
    **{
        ("stepfunctions", op): _anywhere(f"states:{op}")
        for op in ("SendTaskHeartbeat", "SendTaskSuccess", "SendTaskFailure")
    },
    ("stepfunctions", "StartExecution"): _states("states:StartExecution", "stateMachineArn"),
    ("stepfunctions", "DescribeExecution"): _states("states:DescribeExecution", "executionArn"),
    ("stepfunctions", "StopExecution"): _states("states:StopExecution", "executionArn"),
    ("lambda", "Invoke"): _invoke,
    ("sns", "Publish"): lambda call, stack: [Check("sns:Publish", str(call.params["TopicArn"]))],
    ("pricing", "GetProducts"): _anywhere("pricing:GetProducts"),
    # EFS and FSx
    ("efs", "DescribeFileSystems"): _efs_describe("elasticfilesystem:DescribeFileSystems"),
    ("efs", "DescribeMountTargets"): _efs_describe("elasticfilesystem:DescribeMountTargets"),
    ("efs", "CreateFileSystem"): _efs_create,
    ("efs", "CreateMountTarget"): _efs_mount_target,
    ("efs", "DeleteMountTarget"): _efs_delete_mount_target,
    ("efs", "DeleteFileSystem"): _efs_tagged("elasticfilesystem:DeleteFileSystem"),
    ("efs", "PutFileSystemPolicy"): _efs_tagged("elasticfilesystem:PutFileSystemPolicy"),
    ("fsx", "DescribeFileSystems"): _anywhere("fsx:DescribeFileSystems"),
    ("fsx", "CreateFileSystem"): _fsx_create,
    ("fsx", "DeleteFileSystem"): _fsx_delete,
}


def checks_of(call: AwsCall, stack: Stack) -> list[Check]:
    """The authorization requests of one call (raises UnknownOperationError for an unmapped operation)."""
    mapper = TABLE.get((call.service, call.operation))
    if mapper is None:
        raise UnknownOperationError(
            f"{call.describe()}: no entry for ({call.service!r}, {call.operation!r}) in TABLE"
        )
    return mapper(call, stack)


def all_checks(calls: list[AwsCall], stack: Stack) -> Iterator[tuple[AwsCall, Check]]:
    for call in calls:
        for check in checks_of(call, stack):
            yield call, check
