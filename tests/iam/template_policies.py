"""template.yaml's IAM, rendered for a policy evaluator.

``render(StackValues(...))`` returns, with every intrinsic function resolved to fixed test values
(an account, a region, a stack name, physical names and ids):

* ``roles``: every ``AWS::IAM::Role`` (by its logical id) and the role SAM creates for every
  ``AWS::Serverless::Function`` and ``AWS::Serverless::StateMachine`` (by the function's or state
  machine's logical id), each with its identity policies - inline documents, SAM policy templates
  expanded, managed policies (published_policies) - and its trust policy;
* ``bucket_policies`` (by bucket name) and ``key_policies`` (by key ARN): the resource policies.

Intrinsics resolve with ``storagebench_local.template`` (the resolver local mode runs the template
with, over the YAML loader of ``storagebench_local.cfn``): a reference ``StackValues`` does not answer
raises ``UnresolvedReferenceError``, an intrinsic the resolver does not know ``TemplateError``, a policy
item this module does not know ``PolicyRenderError``. Nothing is skipped silently.

IAM reads a document without ``"Version": "2012-10-17"`` as version 2008-10-17, where ``${aws:userid}``
and the other policy variables are literal text. Evaluators substitute them whatever the version, so
such a document's variables are rendered escaped (``${$}{aws:userid}``, the 2012-10-17 spelling of the
literal), and the evaluator then sees what IAM does.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storagebench_local.template import Template

from .published_policies import MANAGED_POLICIES, SAM_POLICY_TEMPLATES

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "template.yaml"
SAM_ROLE_OWNERS = ("AWS::Serverless::Function", "AWS::Serverless::StateMachine")
CURRENT_VERSION = "2012-10-17"
_VARIABLE = re.compile(r"\$\{(?![*?$]\})")  # ${name}, not the ${*} ${?} ${$} escapes


class PolicyRenderError(ValueError):
    """A policy item the renderer does not know how to expand."""


def _role_id(name: str) -> str:
    """A role id of the form IAM gives (AROA + 17 upper-case characters), stable per name."""
    return "AROA" + hashlib.sha256(name.encode()).hexdigest()[:17].upper()


@dataclass(frozen=True)
class StackValues:
    """What a deployed stack's intrinsics evaluate to. The defaults stand for a stack named
    ``storagebench``; ``parameters`` overrides template parameters (``AllowedInstanceTypes``, ...)."""

    stack_name: str = "storagebench"
    account: str = "123456789012"
    region: str = "us-east-1"
    artifacts_bucket: str = "storagebench-artifactsbucket-0test"
    share_bucket: str = "storagebench-sharebucket-0test"
    results_table: str = "storagebench-ResultsTable-0TEST"
    vpc_id: str = "vpc-0a1b2c3d4e5f60718"
    subnet_id: str = "subnet-0a1b2c3d4e5f60718"
    instance_security_group: str = "sg-0aaaaaaaaaaaaaaa1"
    gateway_security_group: str = "sg-0aaaaaaaaaaaaaaa3"
    activator_security_group: str = "sg-0aaaaaaaaaaaaaaa4"
    agent_document: str = "storagebench-AgentDocument-0TEST"
    instance_role_id: str = "AROAINSTANCEROLE0TEST"
    state_machine_name: str = "storagebench-benchmark"
    notification_key_id: str = "1234abcd-12ab-34cd-56ef-1234567890ab"
    parameters: Mapping[str, Any] = field(default_factory=dict)

    @property
    def partition(self) -> str:
        return "aws"

    def arn(self, service: str, resource: str, *, region: bool = True, account: bool = True) -> str:
        return (
            f"arn:{self.partition}:{service}:{self.region if region else ''}:"
            f"{self.account if account else ''}:{resource}"
        )

    def role_name(self, logical_id: str) -> str:
        return f"{self.stack_name}-{logical_id}-0TEST"

    def role_arn(self, logical_id: str) -> str:
        return self.arn("iam", f"role/{self.role_name(logical_id)}", region=False)

    def role_id(self, logical_id: str) -> str:
        return self.instance_role_id if logical_id == "InstanceRole" else _role_id(self.role_name(logical_id))

    @property
    def state_machine_arn(self) -> str:
        return self.arn("states", f"stateMachine:{self.state_machine_name}")

    def mapping(self, template: Template) -> dict[str, Any]:
        """Resource references and parameters, as ``Template.resolve`` takes them."""
        values: dict[str, Any] = {
            "VpcId": self.vpc_id,
            "SubnetId": self.subnet_id,
            "ArtifactsBucket": self.artifacts_bucket,
            "ArtifactsBucket.Arn": f"arn:{self.partition}:s3:::{self.artifacts_bucket}",
            "ShareBucket": self.share_bucket,
            "ShareBucket.Arn": f"arn:{self.partition}:s3:::{self.share_bucket}",
            "ResultsTable": self.results_table,
            "ResultsTable.Arn": self.arn("dynamodb", f"table/{self.results_table}"),
            "AgentDocument": self.agent_document,
            "InstanceSecurityGroup": self.instance_security_group,
            "GatewaySecurityGroup": self.gateway_security_group,
            "ActivatorSecurityGroup": self.activator_security_group,
            "InstanceProfile.Arn": self.arn(
                "iam", f"instance-profile/{self.stack_name}-InstanceProfile-0TEST", region=False
            ),
            "BenchmarkStateMachine": self.state_machine_arn,
            "BenchmarkStateMachine.Name": self.state_machine_name,
            "NotificationTopic": self.arn("sns", f"{self.stack_name}-NotificationTopic-0TEST"),
            "NotificationKey.Arn": self.arn("kms", f"key/{self.notification_key_id}"),
            "ScheduleGroup": f"{self.stack_name}-schedules",
        }
        for logical_id, resource in template.resources.items():
            if resource.get("Type") == "AWS::IAM::Role":
                values[f"{logical_id}.Arn"] = self.role_arn(logical_id)
                values[f"{logical_id}.RoleId"] = self.role_id(logical_id)
                values[logical_id] = self.role_name(logical_id)
        values.update(self.parameters)
        return values


@dataclass(frozen=True)
class IdentityPolicy:
    name: str  # unique per role: "<owner>/<policy>", or the managed policy's ARN
    document: dict[str, Any]
    source: str  # inline | sam-template:<Name> | managed


@dataclass(frozen=True)
class Role:
    owner: str  # the logical id of the role, function or state machine
    owner_type: str
    name: str
    arn: str
    role_id: str
    policies: tuple[IdentityPolicy, ...]
    trust_policy: dict[str, Any] | None

    def session_arn(self, session: str) -> str:
        account = self.arn.split(":")[4]
        return f"arn:aws:sts::{account}:assumed-role/{self.name}/{session}"

    def userid(self, session: str) -> str:
        """``aws:userid`` of a session of this role: "<role id>:<session name>"."""
        return f"{self.role_id}:{session}"


@dataclass(frozen=True)
class ResourcePolicy:
    name: str  # the logical id of the bucket policy or key
    target: str  # the bucket's name or the key's ARN
    document: dict[str, Any]


@dataclass(frozen=True)
class RenderedTemplate:
    values: StackValues
    roles: dict[str, Role]
    bucket_policies: dict[str, ResourcePolicy]  # by bucket name
    key_policies: dict[str, ResourcePolicy]  # by key ARN

    def role(self, owner: str) -> Role:
        if owner not in self.roles:
            raise KeyError(f"no role for {owner!r}; the template's are {', '.join(sorted(self.roles))}")
        return self.roles[owner]

    def resource_policy(self, arn: str) -> ResourcePolicy | None:
        """The resource policy IAM evaluates with a request on ``arn`` (a bucket's, a key's), if any.

        A KMS key the template does not declare (the EbsKmsKeyArn parameter's) has the key policy KMS
        gives a key by default, which lets the account's IAM policies grant its use: without a key
        policy allowing it, no identity policy can.
        """
        if arn.startswith("arn:aws:s3:::"):
            return self.bucket_policies.get(arn.split(":::", 1)[1].split("/", 1)[0])
        if arn in self.key_policies:
            return self.key_policies[arn]
        if arn.startswith(f"arn:aws:kms:{self.values.region}:{self.values.account}:key/"):
            root = f"arn:aws:iam::{self.values.account}:root"
            statement = {
                "Sid": "Enable IAM User Permissions",
                "Effect": "Allow",
                "Principal": {"AWS": root},
                "Action": "kms:*",
                "Resource": "*",
            }
            return ResourcePolicy(
                "default key policy", arn, {"Version": CURRENT_VERSION, "Statement": [statement]}
            )
        return None


# ------------------------------------------------------------------------------ rendering


def _versioned(document: Any, where: str) -> dict[str, Any]:
    """The document as IAM reads it (see the module docstring on 2008-10-17)."""
    if not isinstance(document, dict) or "Statement" not in document:
        raise PolicyRenderError(f"{where}: not a policy document: {document!r}")
    rendered = copy.deepcopy(document)
    if rendered.get("Version") == CURRENT_VERSION:
        return rendered
    if rendered.get("Version") not in (None, "2008-10-17"):
        raise PolicyRenderError(f"{where}: unknown policy Version {rendered.get('Version')!r}")

    def literal(value: Any) -> Any:
        if isinstance(value, str):
            return _VARIABLE.sub("${$}{", value)
        if isinstance(value, list):
            return [literal(v) for v in value]
        if isinstance(value, dict):
            return {k: literal(v) for k, v in value.items()}
        return value

    statements = rendered["Statement"] if isinstance(rendered["Statement"], list) else [rendered["Statement"]]
    for statement in statements:
        for element in ("Resource", "NotResource", "Condition"):
            if element in statement:
                statement[element] = literal(statement[element])
    return {"Version": CURRENT_VERSION, "Statement": statements}


def uses_policy_variables(document: dict[str, Any]) -> bool:
    """Whether a (template) document names a policy variable in a Resource or Condition."""
    statements = document["Statement"] if isinstance(document["Statement"], list) else [document["Statement"]]
    return any(
        _VARIABLE.search(text)
        for statement in statements
        for element in ("Resource", "NotResource", "Condition")
        for text in _texts(statement.get(element))
    )


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def _managed(arn: Any, where: str) -> IdentityPolicy:
    if not isinstance(arn, str):
        raise PolicyRenderError(f"{where}: a managed policy must be a name or an ARN, not {arn!r}")
    full = arn if arn.startswith("arn:") else f"arn:aws:iam::aws:policy/{arn}"
    if full not in MANAGED_POLICIES:
        known = [a for a in MANAGED_POLICIES if a.rsplit("/", 1)[-1] == arn]
        if len(known) != 1:
            raise PolicyRenderError(
                f"{where}: managed policy {arn!r} has no document in tests/iam/published_policies.py"
            )
        full = known[0]
    return IdentityPolicy(full, _versioned(MANAGED_POLICIES[full], full), "managed")


def _sam_item(
    template: Template, mapping: dict[str, Any], owner: str, index: int, item: Any
) -> IdentityPolicy:
    where = f"{owner}.Policies[{index}]"
    if isinstance(item, str):
        return _managed(item, where)
    if isinstance(item, dict) and "Statement" in item:
        return IdentityPolicy(f"{owner}/Policies[{index}]", _versioned(item, where), "inline")
    if isinstance(item, dict) and len(item) == 1:
        ((name, arguments),) = item.items()
        if name not in SAM_POLICY_TEMPLATES:
            raise PolicyRenderError(
                f"{where}: SAM policy template {name!r} is not in tests/iam/published_policies.py"
            )
        if not isinstance(arguments, dict):
            raise PolicyRenderError(f"{where}: {name} takes a mapping of parameters, not {arguments!r}")
        expanded = template.resolve(SAM_POLICY_TEMPLATES[name], {**mapping, **arguments})
        return IdentityPolicy(
            f"{owner}/Policies[{index}] {name}", _versioned(expanded, where), f"sam-template:{name}"
        )
    raise PolicyRenderError(f"{where}: not a managed policy, a policy template or a document: {item!r}")


def _sam_role(template: Template, values: StackValues, mapping: dict[str, Any], owner: str) -> Role:
    resource = template.resources[owner]
    kind = str(resource["Type"])
    if kind == "AWS::Serverless::Function":
        properties = template.function_properties(owner)  # Globals merged as SAM merges them
    else:
        properties = dict(resource.get("Properties") or {})
    for unsupported in ("Role", "PermissionsBoundary", "RolePath"):
        if unsupported in properties:
            raise PolicyRenderError(f"{owner}: {unsupported} is not rendered (a role SAM does not create)")
    policies: list[IdentityPolicy] = []
    if kind == "AWS::Serverless::Function":
        policies.append(_managed("service-role/AWSLambdaBasicExecutionRole", f"{owner} (SAM)"))
        tracing = template.resolve(properties.get("Tracing"), mapping)
        if tracing and tracing != "Disabled":
            policies.append(_managed("AWSXrayWriteOnlyAccess", f"{owner} (SAM, Tracing)"))
        if properties.get("VpcConfig"):
            policies.append(
                _managed("service-role/AWSLambdaVPCAccessExecutionRole", f"{owner} (SAM, VpcConfig)")
            )
    declared = template.resolve(properties.get("Policies") or [], mapping)  # Fn::If, AWS::NoValue dropped
    if isinstance(declared, str | dict):
        declared = [declared]
    for index, item in enumerate(declared):
        policies.append(_sam_item(template, mapping, owner, index, item))
    if kind == "AWS::Serverless::StateMachine":
        tracing = template.resolve(properties.get("Tracing") or {}, mapping)
        if isinstance(tracing, dict) and tracing.get("Enabled") is True:
            policies.append(_managed("AWSXrayWriteOnlyAccess", f"{owner} (SAM, Tracing)"))
    role_owner = f"{owner}Role"  # the logical id SAM gives the role it creates
    service = "lambda.amazonaws.com" if kind == "AWS::Serverless::Function" else "states.amazonaws.com"
    trust = {
        "Version": CURRENT_VERSION,
        "Statement": [{"Effect": "Allow", "Principal": {"Service": [service]}, "Action": ["sts:AssumeRole"]}],
    }
    return Role(
        owner,
        kind,
        values.role_name(role_owner),
        values.role_arn(role_owner),
        values.role_id(role_owner),
        tuple(policies),
        trust,
    )


def _iam_role(template: Template, values: StackValues, mapping: dict[str, Any], owner: str) -> Role:
    properties = template.resolve(template.resources[owner].get("Properties") or {}, mapping)
    for unsupported in ("PermissionsBoundary",):
        if unsupported in properties:
            raise PolicyRenderError(f"{owner}: {unsupported} is not rendered")
    policies = [
        _managed(arn, f"{owner}.ManagedPolicyArns") for arn in properties.get("ManagedPolicyArns") or []
    ]
    for policy in properties.get("Policies") or []:
        name = f"{owner}/{policy['PolicyName']}"
        policies.append(IdentityPolicy(name, _versioned(policy["PolicyDocument"], name), "inline"))
    trust = _versioned(properties["AssumeRolePolicyDocument"], f"{owner}.AssumeRolePolicyDocument")
    return Role(
        owner,
        "AWS::IAM::Role",
        values.role_name(owner),
        values.role_arn(owner),
        values.role_id(owner),
        tuple(policies),
        trust,
    )


def render(values: StackValues | None = None, template_path: Path = TEMPLATE) -> RenderedTemplate:
    values = values or StackValues()
    template = Template(
        template_path, region=values.region, account_id=values.account, stack_name=values.stack_name
    )
    mapping = values.mapping(template)
    roles: dict[str, Role] = {}
    buckets: dict[str, ResourcePolicy] = {}
    keys: dict[str, ResourcePolicy] = {}
    for logical_id, resource in template.resources.items():
        kind = resource.get("Type")
        if kind == "AWS::IAM::Role":
            roles[logical_id] = _iam_role(template, values, mapping, logical_id)
        elif kind in SAM_ROLE_OWNERS:
            roles[logical_id] = _sam_role(template, values, mapping, logical_id)
        elif kind == "AWS::S3::BucketPolicy":
            properties = template.resolve(resource["Properties"], mapping)
            bucket = str(properties["Bucket"])
            buckets[bucket] = ResourcePolicy(
                logical_id, bucket, _versioned(properties["PolicyDocument"], logical_id)
            )
        elif kind == "AWS::KMS::Key":
            properties = template.resolve(resource["Properties"], mapping)
            key = str(mapping[f"{logical_id}.Arn"])
            keys[key] = ResourcePolicy(logical_id, key, _versioned(properties["KeyPolicy"], logical_id))
        elif kind in (
            "AWS::IAM::Policy",
            "AWS::IAM::ManagedPolicy",
            "AWS::SQS::QueuePolicy",
            "AWS::SNS::TopicPolicy",
        ):
            raise PolicyRenderError(f"{logical_id}: {kind} is not rendered yet (add it to render())")
    return RenderedTemplate(values, roles, buckets, keys)


def raw_template(template_path: Path = TEMPLATE) -> dict[str, Any]:
    """The template as loaded (long-form intrinsics, nothing resolved)."""
    return Template(template_path).data
