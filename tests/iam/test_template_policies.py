"""The renderer of template.yaml's IAM (template_policies) renders every role and fails loudly.

No evaluator needed: these check that what test_policies_evaluated and test_recorded_calls evaluate
is the template's IAM, all of it, as IAM reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from storagebench_local.template import TemplateError, UnresolvedReferenceError

from .published_policies import SAM_POLICY_TEMPLATES
from .template_policies import (
    REPO,
    SAM_ROLE_OWNERS,
    PolicyRenderError,
    StackValues,
    raw_template,
    render,
    uses_policy_variables,
)

SAM_VENV = REPO / ".venv-sam"
SAM_TRANSLATOR_TEMPLATES = (
    "lib/python3.*/site-packages/samtranslator/policy_templates_data/policy_templates.json"
)


def _template(tmp_path: Path, resources: dict[str, Any]) -> Path:
    path = tmp_path / "template.yaml"
    path.write_text(json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": resources}))
    return path


def _function(policies: Any) -> dict[str, Any]:
    return {
        "Type": "AWS::Serverless::Function",
        "Properties": {"CodeUri": "x/", "Handler": "app.handler", "Policies": policies},
    }


def test_every_role_of_the_template_is_rendered() -> None:
    resources = raw_template()["Resources"]
    owners = {k for k, v in resources.items() if v["Type"] in (*SAM_ROLE_OWNERS, "AWS::IAM::Role")}
    rendered = render()
    assert set(rendered.roles) == owners
    assert len(owners) >= 15
    for role in rendered.roles.values():
        assert role.policies, f"{role.owner}: no policy rendered"
        for policy in role.policies:
            assert policy.document["Version"] == "2012-10-17"
            assert "Fn::" not in json.dumps(policy.document), f"{policy.name}: an intrinsic left"
    assert set(rendered.bucket_policies) == {StackValues().artifacts_bucket, StackValues().share_bucket}


def test_function_roles_get_what_sam_gives_them() -> None:
    rendered = render()
    plan = [p.name for p in rendered.role("PlanFunction").policies]
    assert plan[:2] == [
        "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
        "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",  # Globals: Tracing Active
    ]
    crud = rendered.role("PlanFunction").policies[2]
    assert crud.source == "sam-template:DynamoDBCrudPolicy"
    table = f"arn:aws:dynamodb:us-east-1:123456789012:table/{StackValues().results_table}"
    assert crud.document["Statement"][0]["Resource"] == [table, table + "/index/*"]
    activator = [p.name for p in rendered.role("ActivatorFunction").policies]
    assert "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole" in activator
    invoke = rendered.role("BenchmarkStateMachine").policies[0].document["Statement"][0]
    assert invoke["Resource"] == "arn:aws:lambda:us-east-1:123456789012:function:PlanFunction*"


def test_parameters_are_overridable_and_conditions_follow_them() -> None:
    default = render()
    launch = _statement(default, "ProvisionFunction", "LaunchOnlyStackTaggedInstancesOfAllowedTypes")
    assert launch["Condition"]["StringLike"] == {"ec2:InstanceType": ["*"]}
    typed = render(StackValues(parameters={"AllowedInstanceTypes": ["c5.large", "m5.*"]}))
    launch = _statement(typed, "ProvisionFunction", "LaunchOnlyStackTaggedInstancesOfAllowedTypes")
    assert launch["Condition"]["StringLike"] == {"ec2:InstanceType": ["c5.large", "m5.*"]}
    assert not any(
        "EncryptVolumesWithTheStackKey" in json.dumps(p.document) for p in _policies(default, "Provision")
    )
    key = "arn:aws:kms:us-east-1:123456789012:key/0f0f0f0f-1111-2222-3333-444444444444"
    keyed = render(StackValues(parameters={"EbsKmsKeyArn": key}))
    assert _statement(keyed, "ProvisionFunction", "EncryptVolumesWithTheStackKey")["Resource"] == key


def _policies(rendered: Any, owner_prefix: str) -> list[Any]:
    return [
        p for owner, role in rendered.roles.items() if owner.startswith(owner_prefix) for p in role.policies
    ]


def _statement(rendered: Any, owner: str, sid: str) -> dict[str, Any]:
    for policy in rendered.role(owner).policies:
        for statement in policy.document["Statement"]:
            if statement.get("Sid") == sid:
                return dict(statement)
    raise AssertionError(f"{owner}: no statement {sid}")


def test_documents_with_policy_variables_declare_the_2012_version() -> None:
    """IAM reads a document without Version as 2008-10-17, where ${aws:userid} is literal text (the
    instance could then reach no prefix at all): the renderer writes such a variable as the literal
    ${$}{...}, which no document of the template may contain."""
    rendered = render()
    documents = {p.name: p.document for role in rendered.roles.values() for p in role.policies}
    documents |= {f"{r.owner} trust": r.trust_policy for r in rendered.roles.values() if r.trust_policy}
    documents |= {
        p.name: p.document for p in (*rendered.bucket_policies.values(), *rendered.key_policies.values())
    }
    literal = sorted(name for name, document in documents.items() if "${$}{" in json.dumps(document))
    assert not literal, f"policy variables in documents without Version 2012-10-17: {literal}"
    assert uses_policy_variables(rendered.role("InstanceRole").policies[1].document)


def test_a_2008_document_keeps_its_variables_literal(tmp_path: Path) -> None:
    statement = {"Effect": "Allow", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::b/${aws:userid}/*"}
    path = _template(tmp_path, {"F": _function([{"Statement": [statement]}])})
    document = render(template_path=path).role("F").policies[-1].document
    assert document["Statement"][0]["Resource"] == "arn:aws:s3:::b/${$}{aws:userid}/*"
    current = _template(tmp_path, {"F": _function([{"Version": "2012-10-17", "Statement": [statement]}])})
    assert render(template_path=current).role("F").policies[-1].document["Statement"][0]["Resource"] == (
        "arn:aws:s3:::b/${aws:userid}/*"
    )


@pytest.mark.parametrize(
    ("policies", "error"),
    [
        ([{"SQSPollerPolicy": {"QueueName": "q"}}], PolicyRenderError),  # a SAM template not vendored
        (["AmazonS3FullAccess"], PolicyRenderError),  # a managed policy without its document
        (
            [{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": {"Ref": "Nowhere"}}]}],
            UnresolvedReferenceError,
        ),
        (
            [
                {
                    "Statement": [
                        {"Effect": "Allow", "Action": "s3:*", "Resource": {"Fn::Cidr": ["10.0.0.0/8", 1, 8]}}
                    ]
                }
            ],
            TemplateError,
        ),
        ([{"NotAPolicy": 1, "Other": 2}], PolicyRenderError),
    ],
)
def test_what_cannot_be_rendered_fails_by_name(tmp_path: Path, policies: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        render(template_path=_template(tmp_path, {"F": _function(policies)}))


def test_a_role_sam_does_not_create_is_refused(tmp_path: Path) -> None:
    function = _function([])
    function["Properties"]["Role"] = "arn:aws:iam::123456789012:role/elsewhere"
    with pytest.raises(PolicyRenderError, match="Role"):
        render(template_path=_template(tmp_path, {"F": function}))


def test_the_sam_policy_templates_are_samtranslators() -> None:
    """The vendored definitions are those of the aws-sam-translator ``make sam-validate`` installs."""
    found = sorted(SAM_VENV.glob(SAM_TRANSLATOR_TEMPLATES))
    if not found:
        message = (
            f".venv-sam/{SAM_TRANSLATOR_TEMPLATES} is missing (make sam-validate installs SAM CLI there)"
        )
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    templates = json.loads(found[-1].read_text(encoding="utf-8"))["Templates"]
    for name, definition in SAM_POLICY_TEMPLATES.items():
        assert templates[name]["Definition"] == definition, name
