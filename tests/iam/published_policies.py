"""Policy documents AWS publishes that template.yaml's roles receive without spelling them out.

* ``SAM_POLICY_TEMPLATES``: the SAM policy templates the template uses (``DynamoDBCrudPolicy: {TableName:
  ...}``), as aws-sam-translator 1.115.0 defines them (``samtranslator/policy_templates_data/
  policy_templates.json``, the translator SAM CLI 1.170.0 pins; ``make sam-validate`` installs it and
  test_template_policies compares these copies with it);
* ``MANAGED_POLICIES``: the AWS managed policies attached by the template (``ManagedPolicyArns``) or
  by SAM (every function's ``AWSLambdaBasicExecutionRole``, ``AWSXrayWriteOnlyAccess`` with
  ``Tracing``, ``AWSLambdaVPCAccessExecutionRole`` with ``VpcConfig``), as the AWS Managed Policy
  Reference shows their default versions.

A policy template or managed policy not listed here makes rendering fail, naming it: add it here
from its published definition.
"""

from __future__ import annotations

from typing import Any

_TABLE = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${tableName}"
_TABLE_NAME = {"tableName": {"Ref": "TableName"}}

SAM_POLICY_TEMPLATES: dict[str, dict[str, Any]] = {
    "DynamoDBCrudPolicy": {
        "Statement": [
            {
                "Action": [
                    "dynamodb:GetItem",
                    "dynamodb:DeleteItem",
                    "dynamodb:PutItem",
                    "dynamodb:Scan",
                    "dynamodb:Query",
                    "dynamodb:UpdateItem",
                    "dynamodb:BatchWriteItem",
                    "dynamodb:BatchGetItem",
                    "dynamodb:DescribeTable",
                    "dynamodb:ConditionCheckItem",
                ],
                "Effect": "Allow",
                "Resource": [
                    {"Fn::Sub": [_TABLE, _TABLE_NAME]},
                    {"Fn::Sub": [_TABLE + "/index/*", _TABLE_NAME]},
                ],
            }
        ]
    },
    "DynamoDBReadPolicy": {
        "Statement": [
            {
                "Action": [
                    "dynamodb:GetItem",
                    "dynamodb:Scan",
                    "dynamodb:Query",
                    "dynamodb:BatchGetItem",
                    "dynamodb:DescribeTable",
                ],
                "Effect": "Allow",
                "Resource": [
                    {"Fn::Sub": [_TABLE, _TABLE_NAME]},
                    {"Fn::Sub": [_TABLE + "/index/*", _TABLE_NAME]},
                ],
            }
        ]
    },
    "LambdaInvokePolicy": {
        "Statement": [
            {
                "Action": ["lambda:InvokeFunction"],
                "Effect": "Allow",
                "Resource": {
                    "Fn::Sub": [
                        "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${functionName}*",
                        {"functionName": {"Ref": "FunctionName"}},
                    ]
                },
            }
        ]
    },
}

_LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]

# ARN (partition "aws") -> default version's document
MANAGED_POLICIES: dict[str, dict[str, Any]] = {
    # v1
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": _LOGS, "Resource": "*"}],
    },
    # v3, edited 2024-01-05
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AWSLambdaVPCAccessExecutionPermissions",
                "Effect": "Allow",
                "Action": [
                    *_LOGS,
                    "ec2:CreateNetworkInterface",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeSubnets",
                    "ec2:DeleteNetworkInterface",
                    "ec2:AssignPrivateIpAddresses",
                    "ec2:UnassignPrivateIpAddresses",
                ],
                "Resource": "*",
            }
        ],
    },
    # v2, edited 2018-08-28
    "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "xray:PutTraceSegments",
                    "xray:PutTelemetryRecords",
                    "xray:GetSamplingRules",
                    "xray:GetSamplingTargets",
                    "xray:GetSamplingStatisticSummaries",
                ],
                "Resource": ["*"],
            }
        ],
    },
    # v2, edited 2019-05-23
    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "ssm:DescribeAssociation",
                    "ssm:GetDeployablePatchSnapshotForInstance",
                    "ssm:GetDocument",
                    "ssm:DescribeDocument",
                    "ssm:GetManifest",
                    "ssm:GetParameter",
                    "ssm:GetParameters",
                    "ssm:ListAssociations",
                    "ssm:ListInstanceAssociations",
                    "ssm:PutInventory",
                    "ssm:PutComplianceItems",
                    "ssm:PutConfigurePackageResult",
                    "ssm:UpdateAssociationStatus",
                    "ssm:UpdateInstanceAssociationStatus",
                    "ssm:UpdateInstanceInformation",
                ],
                "Resource": "*",
            },
            {
                "Effect": "Allow",
                "Action": [
                    "ssmmessages:CreateControlChannel",
                    "ssmmessages:CreateDataChannel",
                    "ssmmessages:OpenControlChannel",
                    "ssmmessages:OpenDataChannel",
                ],
                "Resource": "*",
            },
            {
                "Effect": "Allow",
                "Action": [
                    "ec2messages:AcknowledgeMessage",
                    "ec2messages:DeleteMessage",
                    "ec2messages:FailMessage",
                    "ec2messages:GetEndpoint",
                    "ec2messages:GetMessages",
                    "ec2messages:SendReply",
                ],
                "Resource": "*",
            },
        ],
    },
}
