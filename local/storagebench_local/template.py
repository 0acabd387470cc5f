"""``template.yaml`` read for local mode: functions, the state machine's definition, the results table.

Local mode runs what the template declares, so nothing about the stack is written twice:

* ``Template.functions()`` lists every ``AWS::Serverless::Function`` with its code directory,
  handler and environment (``Globals`` merged the way SAM merges them, intrinsics resolved);
* ``Template.state_machine()`` returns the ASL text with its ``DefinitionSubstitutions`` applied
  (``!GetAtt Fn.Arn`` of a function becomes ``arn:aws:lambda:<region>:123456789012:function:<Fn>``,
  which the local Lambda endpoint serves under the name ``<Fn>``);
* ``Template.table_kwargs()`` turns an ``AWS::DynamoDB::Table`` into ``create_table`` arguments, so
  tests and local mode build the table from the template and its schema cannot drift.

Intrinsic functions resolve through a caller-supplied mapping first: ``{"ResultsTable": "t"}``
answers ``!Ref ResultsTable``, ``{"InstanceProfile.Arn": "arn:..."}`` answers ``!GetAtt
InstanceProfile.Arn``, ``{"SubnetId": "subnet-1"}`` a parameter and ``{"AWS::StackName": "x"}`` a
pseudo parameter. What the mapping does not answer falls back to the pseudo parameters of this
``Template`` (region, account, stack name), parameter ``Default`` values and, for functions, their
local name (``!Ref Fn`` -> ``Fn``) and ARN. Anything else raises ``UnresolvedReferenceError`` naming
every missing key at once.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from storagebench_local.cfn import load_template

__all__ = [
    "DEFAULT_REGION",
    "DEFAULT_STACK_NAME",
    "FUNCTION_TYPES",
    "LOCAL_ACCOUNT_ID",
    "FunctionSpec",
    "Template",
    "TemplateError",
    "UnresolvedReferenceError",
    "lambda_arn",
    "repo_template_path",
]

LOCAL_ACCOUNT_ID = "123456789012"  # moto's default account
DEFAULT_REGION = "us-east-1"
DEFAULT_STACK_NAME = "storagebench-local"
FUNCTION_TYPES = ("AWS::Serverless::Function", "AWS::Lambda::Function")
STATE_MACHINE_TYPES = ("AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine")
TABLE_TYPE = "AWS::DynamoDB::Table"

# create_table keeps these table properties; everything else (PointInTimeRecoverySpecification,
# SSESpecification, TimeToLiveSpecification, Tags, ContributorInsightsSpecification,
# DeletionProtectionEnabled, KinesisStreamSpecification, TableClass, ...) is CloudFormation's
# business or a separate API call, and DynamoDB Local ignores or refuses it.
_INDEX_KEYS = ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput")

log = logging.getLogger("storagebench_local.template")

_SUBSTITUTION = re.compile(r"\$\{([^}]*)\}")


class TemplateError(ValueError):
    """The template lacks something local mode needs, or holds something it cannot run."""


class UnresolvedReferenceError(TemplateError):
    """Intrinsic functions referred to values nobody supplied; ``names`` are the mapping keys to add."""

    def __init__(self, problems: Mapping[str, list[str]]) -> None:
        self.names = sorted(problems)
        lines = [f"  {name}: {'; '.join(sorted(set(uses)))}" for name, uses in sorted(problems.items())]
        super().__init__(
            "cannot resolve "
            + ", ".join(self.names)
            + " (pass them in the mapping, e.g. {"
            + ", ".join(f"{name!r}: ..." for name in self.names)
            + "}):\n"
            + "\n".join(lines)
        )


class FunctionSpec(NamedTuple):
    """One function as local mode runs it."""

    logical_id: str
    code_dir: Path  # absolute, from CodeUri
    handler: str  # "app.handler"
    environment: dict[str, str]  # Globals + the function's own variables, resolved


def lambda_arn(name: str, region: str = DEFAULT_REGION, account_id: str = LOCAL_ACCOUNT_ID) -> str:
    return f"arn:aws:lambda:{region}:{account_id}:function:{name}"


def repo_template_path() -> Path:
    """``template.yaml`` of the source checkout this package lives in, else of the working directory."""
    checkout = Path(__file__).resolve().parents[2] / "template.yaml"
    return checkout if checkout.is_file() else Path.cwd() / "template.yaml"


class _NoValue:
    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE = _NoValue()


class _Unresolved(Exception):  # noqa: N818 - internal signal, collected into UnresolvedReferenceError
    def __init__(self, name: str, why: str) -> None:
        super().__init__(name, why)
        self.name = name
        self.why = why


class _Resolver:
    """Evaluates intrinsic functions against a template, a mapping and pseudo parameters."""

    def __init__(
        self,
        template: Template,
        mapping: Mapping[str, Any] | None,
        region: str | None = None,
        account_id: str | None = None,
    ) -> None:
        self.template = template
        self.mapping = dict(mapping or {})
        self.region = region or template.region
        self.account_id = account_id or template.account_id

    # ------------------------------------------------------------------ references
    def ref(self, name: str) -> Any:
        if name in self.mapping:
            return self.mapping[name]
        pseudo = self.template.pseudo_parameters(self.region, self.account_id)
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in pseudo:
            return pseudo[name]
        if name.startswith("AWS::"):
            raise _Unresolved(name, f"unknown pseudo parameter !Ref {name}")
        parameters = self.template.parameters
        if name in parameters:
            declaration = parameters[name] if isinstance(parameters[name], dict) else {}
            if "Default" not in declaration:
                raise _Unresolved(name, "a parameter without Default")
            default = declaration["Default"]
            kind = str(declaration.get("Type", "String"))
            if kind == "CommaDelimitedList" or kind.startswith("List<"):
                return [item.strip() for item in str(default).split(",")] if default != "" else []
            return self._scalar(default)
        resource = self.template.resources.get(name)
        if resource is None:
            raise _Unresolved(name, f"!Ref {name}: no such parameter or resource")
        if resource.get("Type") in FUNCTION_TYPES:
            return name  # the local Lambda endpoint serves a function under its logical id
        raise _Unresolved(name, f"!Ref of a {resource.get('Type')} (its physical name)")

    def get_att(self, resource: str, attribute: str) -> Any:
        key = f"{resource}.{attribute}"
        if key in self.mapping:
            return self.mapping[key]
        declaration = self.template.resources.get(resource)
        if declaration is None:
            raise _Unresolved(key, f"!GetAtt {key}: no such resource")
        if declaration.get("Type") in FUNCTION_TYPES and attribute == "Arn":
            return lambda_arn(resource, self.region, self.account_id)
        raise _Unresolved(key, f"!GetAtt of a {declaration.get('Type')}")

    # ------------------------------------------------------------------ evaluation
    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [item for item in (self.resolve(v) for v in value) if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref" and isinstance(argument, str):
                return self.ref(argument)
            if key == "Condition" and isinstance(argument, str):
                return self.condition(argument)
            if key.startswith("Fn::"):
                return self.function(key, argument)
        resolved = {k: self.resolve(v) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}

    def function(self, name: str, argument: Any) -> Any:
        if name == "Fn::GetAtt":
            parts = self.resolve(argument)
            if isinstance(parts, str):
                parts = parts.split(".", 1)
            if not (isinstance(parts, list) and len(parts) == 2):
                raise TemplateError(f"Fn::GetAtt takes [resource, attribute], not {argument!r}")
            return self.get_att(str(parts[0]), str(parts[1]))
        if name == "Fn::Sub":
            return self.sub(argument)
        if name == "Fn::Join":
            delimiter, items = self._pair(name, argument)
            items = self.resolve(items)
            if not isinstance(items, list):
                raise TemplateError(f"Fn::Join needs a list, got {items!r}")
            return str(delimiter).join(self._scalar(item) for item in items)
        if name == "Fn::Select":
            index, items = self._pair(name, argument)
            items = self.resolve(items)
            index = int(self.resolve(index))
            if not isinstance(items, list) or not 0 <= index < len(items):
                raise TemplateError(f"Fn::Select index {index} out of range of {items!r}")
            return items[index]
        if name == "Fn::Split":
            delimiter, text = self._pair(name, argument)
            return self._scalar(self.resolve(text)).split(str(delimiter))
        if name == "Fn::If":
            if not (isinstance(argument, list) and len(argument) == 3):
                raise TemplateError(f"Fn::If takes [condition, if_true, if_false], not {argument!r}")
            return self.resolve(argument[1] if self.condition(str(argument[0])) else argument[2])
        if name in ("Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or"):
            return self.boolean(name, argument)
        if name == "Fn::FindInMap":
            keys = self.resolve(argument)
            if not (isinstance(keys, list) and len(keys) in (3, 4)):
                raise TemplateError(f"Fn::FindInMap takes [map, key, key], not {argument!r}")
            try:
                return self.template.data["Mappings"][keys[0]][keys[1]][keys[2]]
            except (KeyError, TypeError):
                if len(keys) == 4 and isinstance(keys[3], dict) and "DefaultValue" in keys[3]:
                    return keys[3]["DefaultValue"]
                raise TemplateError(f"Fn::FindInMap {keys!r}: no such entry in Mappings") from None
        if name == "Fn::Base64":
            return base64.b64encode(self._scalar(self.resolve(argument)).encode()).decode()
        if name == "Fn::GetAZs":
            region = self.resolve(argument) or self.region
            return [f"{region}{zone}" for zone in "abc"]
        if name == "Fn::ImportValue":
            export = self._scalar(self.resolve(argument))
            if export in self.mapping:
                return self.mapping[export]
            raise _Unresolved(export, "Fn::ImportValue (an export of another stack)")
        if name == "Fn::Length":
            items = self.resolve(argument)
            if not isinstance(items, list):
                raise TemplateError(f"Fn::Length needs a list, got {items!r}")
            return len(items)
        if name == "Fn::ToJsonString":
            return json.dumps(self.resolve(argument), separators=(",", ":"))
        raise TemplateError(f"{name} is not supported in local mode")

    def sub(self, argument: Any) -> str:
        if isinstance(argument, str):
            text, variables = argument, {}
        elif isinstance(argument, list) and len(argument) == 2 and isinstance(argument[1], dict):
            text, variables = argument[0], argument[1]
        else:
            raise TemplateError(f"Fn::Sub takes a string or [string, {{variables}}], not {argument!r}")
        if not isinstance(text, str):
            raise TemplateError(f"Fn::Sub's template must be a string, not {text!r}")

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"  # ${!Literal} stays literal
            name = name.strip()
            if name in variables:
                return self._scalar(self.resolve(variables[name]))
            resource, dot, attribute = name.partition(".")
            if dot and not resource.startswith("AWS::"):
                return self._scalar(self.get_att(resource, attribute))
            return self._scalar(self.ref(name))

        return _SUBSTITUTION.sub(replace, text)

    def condition(self, name: str) -> bool:
        conditions = self.template.data.get("Conditions") or {}
        if name not in conditions:
            raise TemplateError(f"condition {name!r} is not declared in Conditions")
        return self._truth(self.resolve(conditions[name]))

    def boolean(self, name: str, argument: Any) -> bool:
        if not isinstance(argument, list):
            raise TemplateError(f"{name} takes a list, not {argument!r}")
        if name == "Fn::Equals":
            if len(argument) != 2:
                raise TemplateError(f"Fn::Equals takes two values, not {argument!r}")
            left, right = (self.resolve(item) for item in argument)
            return self._scalar(left) == self._scalar(right) if not isinstance(left, list) else left == right
        values = [self._truth(self.resolve(item)) for item in argument]
        if name == "Fn::Not":
            if len(values) != 1:
                raise TemplateError(f"Fn::Not takes one condition, not {argument!r}")
            return not values[0]
        return all(values) if name == "Fn::And" else any(values)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _pair(name: str, argument: Any) -> tuple[Any, Any]:
        if not (isinstance(argument, list) and len(argument) == 2):
            raise TemplateError(f"{name} takes two arguments, not {argument!r}")
        return argument[0], argument[1]

    @staticmethod
    def _truth(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise TemplateError(f"a condition must be true or false, got {value!r}")

    @staticmethod
    def _scalar(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str | int | float):
            return str(value)
        raise TemplateError(f"expected a string, number or boolean, got {value!r}")


def _merge_globals(defaults: Any, own: Any) -> Any:
    """SAM's Globals rule: maps merge (the resource wins), lists concatenate, scalars are replaced."""
    if isinstance(defaults, dict) and isinstance(own, dict):
        merged = dict(defaults)
        for key, value in own.items():
            merged[key] = _merge_globals(defaults[key], value) if key in defaults else value
        return merged
    if isinstance(defaults, list) and isinstance(own, list):
        return defaults + own
    return own


class Template:
    """A SAM template as local mode reads it (see the module docstring)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        region: str = DEFAULT_REGION,
        account_id: str = LOCAL_ACCOUNT_ID,
        stack_name: str = DEFAULT_STACK_NAME,
    ) -> None:
        self.path = Path(path).resolve() if path is not None else repo_template_path()
        self.region = region
        self.account_id = account_id
        self.stack_name = stack_name
        self.data = load_template(self.path)
        resources = self.data.get("Resources")
        if not isinstance(resources, dict) or not resources:
            raise TemplateError(f"{self.path}: no Resources")
        self.resources: dict[str, dict[str, Any]] = resources
        self.parameters: dict[str, Any] = self.data.get("Parameters") or {}
        self.unresolved: dict[str, list[str]] = {}  # of the last functions() call: mapping key -> uses

    @property
    def directory(self) -> Path:
        return self.path.parent

    def pseudo_parameters(self, region: str | None = None, account_id: str | None = None) -> dict[str, Any]:
        region = region or self.region
        account_id = account_id or self.account_id
        return {
            "AWS::Region": region,
            "AWS::AccountId": account_id,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": self.stack_name,
            "AWS::StackId": f"arn:aws:cloudformation:{region}:{account_id}:stack/{self.stack_name}/local",
            "AWS::NotificationARNs": [],
        }

    def resolve(self, value: Any, mapping: Mapping[str, Any] | None = None) -> Any:
        """Evaluate the intrinsic functions in ``value`` (raises ``UnresolvedReferenceError``)."""
        try:
            return _Resolver(self, mapping).resolve(value)
        except _Unresolved as missing:
            raise UnresolvedReferenceError({missing.name: [missing.why]}) from None

    # ------------------------------------------------------------------ resources
    def resource(self, logical_id: str, types: tuple[str, ...] | None = None) -> dict[str, Any]:
        declaration = self.resources.get(logical_id)
        if declaration is None or (types is not None and declaration.get("Type") not in types):
            wanted = " or ".join(types) if types else "resource"
            known = sorted(k for k, v in self.resources.items() if types is None or v.get("Type") in types)
            raise TemplateError(
                f"{self.path.name}: no {wanted} named {logical_id!r} "
                f"(there are: {', '.join(known) or 'none'})"
            )
        return declaration

    def function_ids(self) -> list[str]:
        return [k for k, v in self.resources.items() if v.get("Type") in FUNCTION_TYPES]

    def function_arn(self, logical_id: str, region: str | None = None, account: str | None = None) -> str:
        return lambda_arn(logical_id, region or self.region, account or self.account_id)

    def function_properties(self, logical_id: str) -> dict[str, Any]:
        """The function's properties with ``Globals.Function`` merged in (unresolved)."""
        declaration = self.resource(logical_id, FUNCTION_TYPES)
        own = declaration.get("Properties") or {}
        if declaration.get("Type") != "AWS::Serverless::Function":
            return dict(own)
        defaults = (self.data.get("Globals") or {}).get("Function") or {}
        merged: dict[str, Any] = _merge_globals(defaults, own)
        return merged

    def functions(
        self, mapping: Mapping[str, Any] | None = None, *, strict: bool = False
    ) -> list[FunctionSpec]:
        """Every function: (logical_id, absolute code dir, handler, resolved environment), in template order.

        A variable whose value refers to something neither the mapping nor the template answers
        (a bucket's physical name, a parameter without Default) is left out of the environment,
        so code that needs it fails naming it (``AwsSettings.from_env``); ``self.unresolved``
        lists them. With ``strict=True`` they raise one ``UnresolvedReferenceError`` naming every
        missing mapping key instead.
        """
        resolver = _Resolver(self, mapping)
        problems: dict[str, list[str]] = {}
        specs: list[FunctionSpec] = []
        for logical_id in self.function_ids():
            properties = self.function_properties(logical_id)
            if properties.get("PackageType") == "Image" or "InlineCode" in properties:
                raise TemplateError(f"{logical_id}: only zip functions with a CodeUri run in local mode")
            code_uri = properties.get("CodeUri")
            if not isinstance(code_uri, str):
                raise TemplateError(f"{logical_id}: CodeUri must be a local directory, not {code_uri!r}")
            handler = properties.get("Handler")
            if not isinstance(handler, str) or "." not in handler:
                raise TemplateError(f"{logical_id}: Handler must be 'module.function', not {handler!r}")
            variables = ((properties.get("Environment") or {}).get("Variables")) or {}
            environment: dict[str, str] = {}
            for variable, value in variables.items():
                try:
                    resolved = resolver.resolve(value)
                except _Unresolved as missing:
                    problems.setdefault(missing.name, []).append(f"{missing.why}, for {variable}")
                    continue
                if resolved is NO_VALUE:
                    continue
                try:
                    environment[str(variable)] = _Resolver._scalar(resolved)
                except TemplateError:
                    raise TemplateError(
                        f"{logical_id}: environment variable {variable} resolves to {resolved!r}, "
                        "not a string"
                    ) from None
            specs.append(
                FunctionSpec(logical_id, (self.directory / code_uri).resolve(), handler, environment)
            )
        self.unresolved = {name: sorted(set(uses)) for name, uses in problems.items()}
        if problems and strict:
            raise UnresolvedReferenceError(problems)
        if problems:
            log.info("environment variables left unset (no value for %s)", ", ".join(sorted(problems)))
        return specs

    # ------------------------------------------------------------------ state machine
    def state_machine_substitutions(
        self,
        logical_id: str = "BenchmarkStateMachine",
        mapping: Mapping[str, Any] | None = None,
        *,
        region: str | None = None,
        account: str | None = None,
    ) -> dict[str, str]:
        """DefinitionSubstitutions resolved (``region``/``account`` override the template's for ARNs)."""
        properties = self.resource(logical_id, STATE_MACHINE_TYPES).get("Properties") or {}
        resolver = _Resolver(self, mapping, region, account)
        substitutions: dict[str, str] = {}
        problems: dict[str, list[str]] = {}
        for name, value in (properties.get("DefinitionSubstitutions") or {}).items():
            try:
                substitutions[str(name)] = _Resolver._scalar(resolver.resolve(value))
            except _Unresolved as missing:
                problems.setdefault(missing.name, []).append(f"{missing.why}, for substitution ${{{name}}}")
            except TemplateError as error:
                raise TemplateError(f"{logical_id}: DefinitionSubstitutions.{name}: {error}") from None
        if problems:
            raise UnresolvedReferenceError(problems)
        return substitutions

    def state_machine_definition_path(self, logical_id: str = "BenchmarkStateMachine") -> Path | None:
        """The ASL file of a state machine with a ``DefinitionUri``, None for an inline definition."""
        properties = self.resource(logical_id, STATE_MACHINE_TYPES).get("Properties") or {}
        uri = properties.get("DefinitionUri")
        if uri is None:
            return None
        if not isinstance(uri, str):
            raise TemplateError(f"{logical_id}: DefinitionUri must be a local file, not {uri!r}")
        return (self.directory / uri).resolve()

    def state_machine(
        self,
        logical_id: str = "BenchmarkStateMachine",
        mapping: Mapping[str, Any] | None = None,
        *,
        region: str | None = None,
        account: str | None = None,
    ) -> str:
        """The state machine's ASL text with ``${Name}`` DefinitionSubstitutions applied.

        Raises ``UnresolvedReferenceError`` for a substitution nobody can answer and
        ``TemplateError`` for a ``${Name}`` no substitution defines or a result that is not JSON.
        """
        properties = self.resource(logical_id, STATE_MACHINE_TYPES).get("Properties") or {}
        path = self.state_machine_definition_path(logical_id)
        if path is not None:
            if not path.is_file():
                raise TemplateError(f"{logical_id}: DefinitionUri {path} does not exist")
            text = path.read_text(encoding="utf-8")
            source = str(path)
        elif isinstance(properties.get("Definition"), dict):
            text = json.dumps(properties["Definition"], indent=2)
            source = f"{logical_id}.Definition"
        elif isinstance(properties.get("DefinitionString"), str):
            text = properties["DefinitionString"]
            source = f"{logical_id}.DefinitionString"
        else:
            raise TemplateError(f"{logical_id}: no DefinitionUri, Definition or DefinitionString")
        substitutions = self.state_machine_substitutions(logical_id, mapping, region=region, account=account)
        missing: list[str] = []

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in substitutions:
                return substitutions[name]
            missing.append(name)
            return match.group(0)

        text = _SUBSTITUTION.sub(replace, text)
        if missing:
            names = ", ".join(f"${{{name}}}" for name in dict.fromkeys(missing))
            raise TemplateError(
                f"{source}: {names} left in the definition: no DefinitionSubstitutions entry of "
                f"{logical_id} defines {'it' if len(set(missing)) == 1 else 'them'}"
            )
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            raise TemplateError(f"{source}: not valid JSON after substitution: {error}") from None
        return text

    # ------------------------------------------------------------------ tables
    def table_kwargs(
        self, logical_id: str, table_name: str, mapping: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """boto3 ``create_table`` arguments for an ``AWS::DynamoDB::Table``.

        Kept: AttributeDefinitions, KeySchema, BillingMode, ProvisionedThroughput, the indexes
        (IndexName, KeySchema, Projection, ProvisionedThroughput) and StreamSpecification. Dropped:
        what CloudFormation applies with other calls or DynamoDB Local ignores
        (PointInTimeRecoverySpecification, SSESpecification, TimeToLiveSpecification, Tags, ...).
        """
        properties = self.resolve(self.resource(logical_id, (TABLE_TYPE,)).get("Properties") or {}, mapping)
        for required in ("AttributeDefinitions", "KeySchema"):
            if required not in properties:
                raise TemplateError(f"{logical_id}: no {required}")
        kwargs: dict[str, Any] = {
            "TableName": table_name,
            "AttributeDefinitions": properties["AttributeDefinitions"],
            "KeySchema": properties["KeySchema"],
        }
        if "BillingMode" in properties:
            kwargs["BillingMode"] = properties["BillingMode"]
        if "ProvisionedThroughput" in properties:
            kwargs["ProvisionedThroughput"] = properties["ProvisionedThroughput"]
        for section in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            indexes = properties.get(section)
            if indexes:
                kwargs[section] = [{k: index[k] for k in _INDEX_KEYS if k in index} for index in indexes]
        stream = properties.get("StreamSpecification")
        if isinstance(stream, dict) and "StreamViewType" in stream:
            kwargs["StreamSpecification"] = {
                "StreamEnabled": True,
                "StreamViewType": stream["StreamViewType"],
            }
        return kwargs
