"""The CloudFormation YAML loader: every short-form tag becomes CloudFormation's long form."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench_local.cfn import SHORT_FORM_TAGS, TemplateSyntaxError, load_template, loads

pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra: pip install -e '.[local]')")

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("!Ref Bucket", {"Ref": "Bucket"}),
        ("!Ref AWS::StackName", {"Ref": "AWS::StackName"}),
        ("!GetAtt Role.Arn", {"Fn::GetAtt": ["Role", "Arn"]}),
        ("!GetAtt Db.Endpoint.Address", {"Fn::GetAtt": ["Db", "Endpoint.Address"]}),
        ("!GetAtt [Role, Arn]", {"Fn::GetAtt": ["Role", "Arn"]}),
        ('!Sub "${AWS::StackName}-x"', {"Fn::Sub": "${AWS::StackName}-x"}),
        ('!Sub ["${A}-${B}", {A: !Ref X, B: b}]', {"Fn::Sub": ["${A}-${B}", {"A": {"Ref": "X"}, "B": "b"}]}),
        ('!Join [",", !Ref List]', {"Fn::Join": [",", {"Ref": "List"}]}),
        ("!Select [0, !GetAZs '']", {"Fn::Select": [0, {"Fn::GetAZs": ""}]}),
        ('!Split [",", "a,b"]', {"Fn::Split": [",", "a,b"]}),
        ("!If [IsProd, 1, !Ref AWS::NoValue]", {"Fn::If": ["IsProd", 1, {"Ref": "AWS::NoValue"}]}),
        ("!Equals [!Ref Env, prod]", {"Fn::Equals": [{"Ref": "Env"}, "prod"]}),
        ("!Not [!Condition IsProd]", {"Fn::Not": [{"Condition": "IsProd"}]}),
        ("!And [!Condition A, !Condition B]", {"Fn::And": [{"Condition": "A"}, {"Condition": "B"}]}),
        ("!Or [!Condition A, !Equals [a, b]]", {"Fn::Or": [{"Condition": "A"}, {"Fn::Equals": ["a", "b"]}]}),
        ("!FindInMap [M, !Ref AWS::Region, Ami]", {"Fn::FindInMap": ["M", {"Ref": "AWS::Region"}, "Ami"]}),
        ("!Base64 hello", {"Fn::Base64": "hello"}),
        ('!Base64 {"Fn::Sub": "x"}', {"Fn::Base64": {"Fn::Sub": "x"}}),
        ("!ImportValue shared-vpc", {"Fn::ImportValue": "shared-vpc"}),
        ('!ImportValue {"Fn::Sub": "${Net}-vpc"}', {"Fn::ImportValue": {"Fn::Sub": "${Net}-vpc"}}),
        ("!GetAZs us-east-1", {"Fn::GetAZs": "us-east-1"}),
        ("!Condition IsProd", {"Condition": "IsProd"}),
    ],
)
def test_short_forms_become_long_forms(yaml_text: str, expected: object) -> None:
    assert loads(f"Value: {yaml_text}\n")["Value"] == expected


def test_every_listed_tag_is_understood() -> None:
    for tag in SHORT_FORM_TAGS:
        argument = "A.B" if tag == "!GetAtt" else "x"
        loaded = loads(f"Value: {tag} {argument}\n")["Value"]
        assert isinstance(loaded, dict)
        assert next(iter(loaded)) == SHORT_FORM_TAGS[tag]


def test_nested_tags_inside_long_forms_and_lists() -> None:
    text = """
Resources:
  Fn:
    Properties:
      Environment:
        Variables:
          TABLE: !Ref Table
          LIST: !Join ["", [!Sub "${AWS::Region}", "-", !GetAtt Q.Arn]]
"""
    variables = loads(text)["Resources"]["Fn"]["Properties"]["Environment"]["Variables"]
    assert variables["TABLE"] == {"Ref": "Table"}
    assert variables["LIST"] == {
        "Fn::Join": ["", [{"Fn::Sub": "${AWS::Region}"}, "-", {"Fn::GetAtt": ["Q", "Arn"]}]]
    }


def test_timestamps_stay_strings() -> None:
    assert loads("AWSTemplateFormatVersion: 2010-09-09\n")["AWSTemplateFormatVersion"] == "2010-09-09"


def test_json_templates_load_too() -> None:
    assert (
        loads('{"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}')["Resources"]["B"]["Type"]
        == "AWS::S3::Bucket"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Value: !GetAtt NoDot\n", "Resource.Attribute"),
        ("A: 1\nA: 2\n", "duplicate key 'A'"),
        ("- a\n- b\n", "mapping at the top level"),
        ("A: [unclosed\n", "<string>"),
        ("Value: !Bogus x\n", "!Bogus"),
        # YAML allows one tag per node: CloudFormation documents this very restriction
        ("Value: !ImportValue !Sub '${Net}-vpc'\n", "found '<tag>'"),
    ],
)
def test_errors_say_what_and_where(text: str, message: str) -> None:
    with pytest.raises(TemplateSyntaxError, match=message.replace("[", r"\[")):
        loads(text)


def test_merge_keys_may_be_overridden() -> None:
    assert loads("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\n")["other"] == {"x": 1, "y": 3}


def test_the_real_template_loads() -> None:
    template = load_template(REPO / "template.yaml")
    assert template["Transform"] == "AWS::Serverless-2016-10-31"
    results = template["Resources"]["ResultsTable"]
    assert results["Type"] == "AWS::DynamoDB::Table"
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["RESULTS_TABLE"] == {"Ref": "ResultsTable"}
    assert variables["INSTANCE_PROFILE_ARN"] == {"Fn::GetAtt": ["InstanceProfile", "Arn"]}
    substitutions = template["Resources"]["BenchmarkStateMachine"]["Properties"]["DefinitionSubstitutions"]
    assert substitutions["PlanFunctionArn"] == {"Fn::GetAtt": ["PlanFunction", "Arn"]}


def test_local_modules_import_neither_yaml_nor_moto_nor_boto3() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import storagebench_local.cfn, storagebench_local.template\n"
        "import storagebench_local.lambda_endpoint, storagebench_local.dynamodb_local\n"
        "print(sorted(m for m in ('yaml', 'moto', 'boto3', 'botocore') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
