"""template.yaml as local mode reads it: functions, the state machine's ASL, the results table."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from storagebench_local.template import (
    LOCAL_ACCOUNT_ID,
    FunctionSpec,
    Template,
    TemplateError,
    UnresolvedReferenceError,
    repo_template_path,
)

pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra: pip install -e '.[local]')")

REPO = Path(__file__).resolve().parents[3]
REAL_TEMPLATE = REPO / "template.yaml"
REAL_ASL = REPO / "statemachines" / "benchmark.asl.json"
FIXTURE = """
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  Stage: {Type: String, Default: dev}
  Subnet: {Type: String}
  Types: {Type: CommaDelimitedList, Default: "m5.large, c5.xlarge"}
  Limit: {Type: Number, Default: 4}
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
  IsDev: !Not [!Condition IsProd]
Mappings:
  Sizes:
    dev: {Memory: 256}
Globals:
  Function:
    Runtime: python3.13
    Timeout: 30
    MemorySize: !FindInMap [Sizes, !Ref Stage, Memory]
    Layers: [!Ref Layer]
    Environment:
      Variables:
        TABLE: !Ref Table
        STACK: !Ref AWS::StackName
        REGION_AZ: !Select [1, !GetAZs ""]
        TYPES: !Join [",", !Ref Types]
        LIMIT: !Ref Limit
        SHARED: from-globals
        PROD_ONLY: !If [IsProd, "yes", !Ref AWS::NoValue]
Resources:
  Layer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: layer/}
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-results"
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions:
        - {AttributeName: PK, AttributeType: S}
        - {AttributeName: G, AttributeType: S}
      KeySchema: [{AttributeName: PK, KeyType: HASH}]
      GlobalSecondaryIndexes:
        - IndexName: ByG
          KeySchema: [{AttributeName: G, KeyType: HASH}]
          Projection: {ProjectionType: KEYS_ONLY}
          ContributorInsightsSpecification: {Enabled: true}
      StreamSpecification: {StreamViewType: NEW_IMAGE}
      PointInTimeRecoverySpecification: {PointInTimeRecoveryEnabled: true}
      SSESpecification: {SSEEnabled: true}
      TimeToLiveSpecification: {AttributeName: ttl, Enabled: true}
      Tags: [{Key: app, Value: x}]
  Bucket:
    Type: AWS::S3::Bucket
  First:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/first/
      Handler: app.handler
      Environment:
        Variables:
          SHARED: from-first
          BUCKET_ARN: !GetAtt Bucket.Arn
          SUBNET: !Ref Subnet
          PEER: !GetAtt Second.Arn
          FLAG: !If [IsDev, true, false]
  Second:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/second
      Handler: main.lambda_handler
      Timeout: 5
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: statemachines/flow.asl.json
      DefinitionSubstitutions:
        FirstArn: !GetAtt First.Arn
        SecondName: !Ref Second
        Literal: plain-string
        Retries: 3
        Queue: !Sub "https://sqs.${AWS::Region}.amazonaws.com/${AWS::AccountId}/q"
  Inline:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Only
        States:
          Only: {Type: Task, Resource: "${Fn}", End: true}
      DefinitionSubstitutions:
        Fn: !GetAtt Second.Arn
  Broken:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: statemachines/flow.asl.json
      DefinitionSubstitutions:
        FirstArn: !GetAtt Bucket.Arn
"""

ASL = {
    "StartAt": "A",
    "States": {
        "A": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "${FirstArn}", "Payload": {"name": "${SecondName}"}},
            "Retry": [{"ErrorEquals": ["X"], "MaxAttempts": 0}],
            "Next": "B",
        },
        "B": {"Type": "Pass", "Result": {"literal": "${Literal}", "queue": "${Queue}"}, "End": True},
    },
}


def write_fixture(tmp_path: Path, asl_text: str | None = None) -> Template:
    (tmp_path / "template.yaml").write_text(FIXTURE)
    machines = tmp_path / "statemachines"
    machines.mkdir()
    text = (
        asl_text
        if asl_text is not None
        else json.dumps(ASL, indent=2).replace('"MaxAttempts": 0', '"MaxAttempts": ${Retries}')
    )
    (machines / "flow.asl.json").write_text(text)
    return Template(tmp_path / "template.yaml", region="eu-west-1", stack_name="stack")


@pytest.fixture
def template(tmp_path: Path) -> Template:
    return write_fixture(tmp_path)


MAPPING: dict[str, Any] = {"Table": "my-table", "Bucket.Arn": "arn:aws:s3:::b", "Subnet": "subnet-9"}


# ---------------------------------------------------------------------- functions
def test_functions_merge_globals_and_resolve_intrinsics(template: Template, tmp_path: Path) -> None:
    first, second = template.functions(MAPPING)
    assert isinstance(first, FunctionSpec)
    logical_id, code_dir, handler, environment = first
    assert logical_id == "First"
    assert code_dir == (tmp_path / "functions" / "first").resolve()
    assert code_dir.is_absolute()
    assert handler == "app.handler"
    assert environment == {
        "TABLE": "my-table",
        "STACK": "stack",
        "REGION_AZ": "eu-west-1b",
        "TYPES": "m5.large,c5.xlarge",
        "LIMIT": "4",
        "SHARED": "from-first",  # the function's own value wins over Globals
        "BUCKET_ARN": "arn:aws:s3:::b",
        "SUBNET": "subnet-9",
        "PEER": f"arn:aws:lambda:eu-west-1:{LOCAL_ACCOUNT_ID}:function:Second",
        "FLAG": "true",
        # PROD_ONLY resolved to AWS::NoValue: no variable at all
    }
    assert second.handler == "main.lambda_handler"
    assert second.code_dir == (tmp_path / "functions" / "second").resolve()
    assert second.environment["SHARED"] == "from-globals"
    assert "BUCKET_ARN" not in second.environment


def test_function_properties_merge_like_sam(template: Template) -> None:
    first = template.function_properties("First")
    second = template.function_properties("Second")
    assert first["Timeout"] == 30
    assert second["Timeout"] == 5
    assert first["Layers"] == [{"Ref": "Layer"}]
    assert template.resolve(first["MemorySize"]) == 256
    assert template.function_ids() == ["First", "Second"]


def test_unresolved_variables_are_left_out_unless_strict(template: Template) -> None:
    specs = template.functions({})
    assert "TABLE" not in specs[0].environment
    assert specs[0].environment["STACK"] == "stack"
    assert set(template.unresolved) == {"Bucket.Arn", "Subnet", "Table"}
    with pytest.raises(UnresolvedReferenceError) as raised:
        template.functions({"Table": "t"}, strict=True)
    assert raised.value.names == ["Bucket.Arn", "Subnet"]
    message = str(raised.value)
    assert "Subnet: a parameter without Default, for SUBNET" in message
    assert "Bucket.Arn: !GetAtt of a AWS::S3::Bucket, for BUCKET_ARN" in message
    assert "pass them in the mapping" in message


def test_the_mapping_answers_refs_getatts_parameters_and_pseudo_parameters(template: Template) -> None:
    resolve = template.resolve
    mapping = {"AWS::StackName": "other", "Stage": "prod", "Queue.Arn": "arn:q", "shared-vpc": "vpc-1"}
    assert resolve({"Ref": "AWS::StackName"}, mapping) == "other"
    assert resolve({"Fn::If": ["IsProd", "p", "d"]}, mapping) == "p"
    assert resolve({"Fn::If": ["IsProd", "p", "d"]}) == "d"
    assert resolve({"Fn::GetAtt": ["Queue", "Arn"]}, mapping) == "arn:q"
    assert resolve({"Fn::ImportValue": "shared-vpc"}, mapping) == "vpc-1"
    assert resolve({"Ref": "Types"}) == ["m5.large", "c5.xlarge"]


def test_sub_forms(template: Template) -> None:
    resolve = template.resolve
    assert resolve({"Fn::Sub": "${AWS::StackName}-${AWS::Region}"}) == "stack-eu-west-1"
    assert resolve({"Fn::Sub": "${First.Arn}"}).endswith(":function:First")
    assert resolve({"Fn::Sub": ["${A}/${B}", {"A": "x", "B": {"Ref": "Stage"}}]}) == "x/dev"
    assert resolve({"Fn::Sub": "${!Literal}-${AWS::Partition}"}) == "${Literal}-aws"
    assert resolve({"Fn::Split": [",", {"Fn::Join": [",", ["a", "b"]]}]}) == ["a", "b"]
    assert resolve({"Fn::Base64": "hi"}) == "aGk="
    assert resolve({"Fn::Length": [1, 2, 3]}) == 3
    assert resolve({"Fn::ToJsonString": {"a": [1]}}) == '{"a":[1]}'
    assert resolve({"Fn::And": [{"Condition": "IsDev"}, {"Fn::Or": [True, False]}]}) is True
    assert resolve({"Fn::FindInMap": ["Sizes", "prod", "Memory", {"DefaultValue": 1}]}) == 1
    assert resolve({"Key": {"Ref": "AWS::NoValue"}, "Other": 1}) == {"Other": 1}


def test_resolution_errors_are_clear(template: Template) -> None:
    with pytest.raises(UnresolvedReferenceError, match="Nope: !Ref Nope: no such parameter or resource"):
        template.resolve({"Ref": "Nope"})
    with pytest.raises(TemplateError, match="condition 'Missing' is not declared"):
        template.resolve({"Fn::If": ["Missing", 1, 2]})
    with pytest.raises(TemplateError, match="Fn::Cidr is not supported"):
        template.resolve({"Fn::Cidr": ["10.0.0.0/16", 2, 8]})
    with pytest.raises(
        TemplateError, match="no AWS::Serverless::Function or AWS::Lambda::Function named 'Table'"
    ):
        template.function_properties("Table")


# ---------------------------------------------------------------------- state machine
def test_state_machine_substitutions_resolve(template: Template) -> None:
    definition = json.loads(template.state_machine("Machine"))
    task = definition["States"]["A"]
    assert task["Parameters"]["FunctionName"] == f"arn:aws:lambda:eu-west-1:{LOCAL_ACCOUNT_ID}:function:First"
    assert task["Parameters"]["Payload"]["name"] == "Second"
    assert task["Retry"][0]["MaxAttempts"] == 3  # a number substituted unquoted stays a number
    assert definition["States"]["B"]["Result"] == {
        "literal": "plain-string",
        "queue": f"https://sqs.eu-west-1.amazonaws.com/{LOCAL_ACCOUNT_ID}/q",
    }


def test_state_machine_region_and_account_override(template: Template) -> None:
    text = template.state_machine("Machine", region="us-west-2", account="111122223333")
    assert "arn:aws:lambda:us-west-2:111122223333:function:First" in text
    assert (
        template.state_machine_definition_path("Machine")
        == template.directory / "statemachines/flow.asl.json"
    )


def test_inline_definition(template: Template) -> None:
    definition = json.loads(template.state_machine("Inline"))
    assert definition["States"]["Only"]["Resource"].endswith(":function:Second")
    assert template.state_machine_definition_path("Inline") is None


def test_unresolvable_substitution_is_an_error(template: Template) -> None:
    with pytest.raises(UnresolvedReferenceError, match=r"Bucket\.Arn: .*for substitution \$\{FirstArn\}"):
        template.state_machine("Broken")
    # ... unless the mapping answers it
    assert template.state_machine_substitutions("Broken", {"Bucket.Arn": "arn:aws:s3:::b"}) == {
        "FirstArn": "arn:aws:s3:::b"
    }


def test_placeholder_left_in_the_definition_is_an_error(tmp_path: Path) -> None:
    template = write_fixture(
        tmp_path,
        json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "Result": "${Unknown}", "End": True}}}),
    )
    with pytest.raises(TemplateError, match=r"\$\{Unknown\} left in the definition"):
        template.state_machine("Machine")


def test_definition_that_is_not_json_after_substitution(tmp_path: Path) -> None:
    template = write_fixture(tmp_path, '{"StartAt": ${Literal}}')
    with pytest.raises(TemplateError, match="not valid JSON after substitution"):
        template.state_machine("Machine")


def test_missing_definition_file(template: Template) -> None:
    (template.directory / "statemachines" / "flow.asl.json").unlink()
    with pytest.raises(TemplateError, match="does not exist"):
        template.state_machine("Machine")


# ---------------------------------------------------------------------- tables
def test_table_kwargs_keep_the_schema_and_drop_cloudformation_only_properties(template: Template) -> None:
    kwargs = template.table_kwargs("Table", "local-results")
    assert kwargs == {
        "TableName": "local-results",
        "AttributeDefinitions": [
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "G", "AttributeType": "S"},
        ],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "ByG",
                "KeySchema": [{"AttributeName": "G", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    }
    with pytest.raises(TemplateError, match="no AWS::DynamoDB::Table named 'Bucket'"):
        template.table_kwargs("Bucket", "x")


# ---------------------------------------------------------------------- the real template.yaml
@pytest.fixture(scope="module")
def real() -> Template:
    return Template(REAL_TEMPLATE)


def test_repo_template_path_is_the_checkout_template() -> None:
    assert repo_template_path() == REAL_TEMPLATE
    assert Template().path == REAL_TEMPLATE


def stack_values(real: Template) -> dict[str, str]:
    """A value for each stack resource the functions' environment names (the template grows)."""
    real.functions({})
    return {name: f"local-{name}" for name in real.unresolved}


def test_real_functions(real: Template) -> None:
    values = stack_values(real)
    specs = real.functions(values, strict=True)
    names = [spec.logical_id for spec in specs]
    assert len(names) == len(set(names)) >= 8
    for spec in specs:
        # the directories may not exist yet while the functions are being written: check the data
        assert spec.code_dir.is_absolute()
        assert spec.code_dir.parent == REPO / "functions"
        assert spec.handler == "app.handler"
        assert spec.environment["RESULTS_TABLE"] == "local-ResultsTable"
        assert spec.environment["STACK_NAME"] == "storagebench-local"
        assert spec.environment["INSTANCE_PROFILE_ARN"] == "local-InstanceProfile.Arn"
        assert spec.environment["MAX_CONCURRENCY"].isdigit()
        properties = real.function_properties(spec.logical_id)
        assert int(properties["Timeout"]) >= 1
        assert int(real.resolve(properties["MemorySize"])) >= 128


def test_real_functions_name_every_missing_stack_value(real: Template) -> None:
    with pytest.raises(UnresolvedReferenceError) as raised:
        real.functions({}, strict=True)
    assert raised.value.names == sorted(stack_values(real))
    assert {"ResultsTable", "ArtifactsBucket", "SubnetId", "InstanceProfile.Arn"} <= set(raised.value.names)


# The artifacts bucket is a stack resource: local mode names it (the Distributed Map reads work items there)
BUCKET = {"ArtifactsBucket": "storagebench-artifacts"}


def test_real_state_machine_substitutions(real: Template) -> None:
    substitutions = real.state_machine_substitutions(mapping=BUCKET)
    assert substitutions["ArtifactsBucket"] == "storagebench-artifacts"
    for logical_id in real.function_ids():
        if f"{logical_id}Arn" in substitutions:
            assert substitutions[f"{logical_id}Arn"] == real.function_arn(logical_id)


@pytest.mark.skipif(not REAL_ASL.is_file(), reason="statemachines/benchmark.asl.json does not exist yet")
def test_real_state_machine_definition(real: Template) -> None:
    text = real.state_machine(mapping=BUCKET)
    assert "${" not in text
    definition = json.loads(text)
    assert definition["StartAt"] in definition["States"]
    arns = set(re.findall(r"arn:aws:lambda:[^:]+:\d+:function:([A-Za-z0-9-_]+)", text))
    assert arns, "the definition invokes no function of the template"
    assert arns <= set(real.function_ids())


def test_real_results_table(real: Template) -> None:
    kwargs = real.table_kwargs("ResultsTable", "results")
    assert kwargs["TableName"] == "results"
    assert kwargs["KeySchema"] == [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ]
    assert {"PointInTimeRecoverySpecification", "SSESpecification"}.isdisjoint(kwargs)
    declared = {a["AttributeName"] for a in kwargs["AttributeDefinitions"]}
    used = {k["AttributeName"] for k in kwargs["KeySchema"]}
    for index in kwargs.get("GlobalSecondaryIndexes", []):
        assert set(index) <= {"IndexName", "KeySchema", "Projection", "ProvisionedThroughput"}
        used |= {k["AttributeName"] for k in index["KeySchema"]}
    assert declared == used  # DynamoDB refuses an attribute definition no key uses
