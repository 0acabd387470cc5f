"""A safe YAML loader for CloudFormation/SAM templates, short-form tags included.

``yaml.safe_load`` refuses ``!Ref`` and friends; ``load_template`` turns every short form into
the long form CloudFormation itself uses, so the rest of the code sees one shape only::

    !Ref X                    -> {"Ref": "X"}
    !GetAtt A.B               -> {"Fn::GetAtt": ["A", "B"]}   (the list form is kept as a list)
    !Sub "s" / !Sub [s, {}]   -> {"Fn::Sub": "s"} / {"Fn::Sub": ["s", {...}]}
    !Condition C              -> {"Condition": "C"}
    !Join, !Select, !If, !Equals, !Not, !And, !Or, !FindInMap, !Base64, !Split,
    !ImportValue, !GetAZs, !Cidr, !Length, !ToJsonString -> {"Fn::<Name>": <value>}

Timestamps stay strings (``AWSTemplateFormatVersion: 2010-09-09`` unquoted is a string to
CloudFormation), and a mapping with a duplicate key is an error (CloudFormation refuses it, YAML
would silently keep the last one).

PyYAML is imported on first use: nothing on a Lambda handler's import path loads this module.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["SHORT_FORM_TAGS", "TemplateSyntaxError", "load_template", "loads"]

# tag -> long-form key; !GetAtt, !Sub (scalar and list forms) and !Condition are special-cased.
SHORT_FORM_TAGS: dict[str, str] = {
    "!Ref": "Ref",
    "!Condition": "Condition",
    "!GetAtt": "Fn::GetAtt",
    "!Sub": "Fn::Sub",
    "!Join": "Fn::Join",
    "!Select": "Fn::Select",
    "!Split": "Fn::Split",
    "!If": "Fn::If",
    "!Equals": "Fn::Equals",
    "!Not": "Fn::Not",
    "!And": "Fn::And",
    "!Or": "Fn::Or",
    "!FindInMap": "Fn::FindInMap",
    "!Base64": "Fn::Base64",
    "!ImportValue": "Fn::ImportValue",
    "!GetAZs": "Fn::GetAZs",
    "!Cidr": "Fn::Cidr",
    "!Length": "Fn::Length",
    "!ToJsonString": "Fn::ToJsonString",
}


class TemplateSyntaxError(ValueError):
    """The file is not a YAML/JSON CloudFormation template (the message says where and why)."""


def _yaml() -> Any:
    return importlib.import_module("yaml")


@cache
def _loader_class() -> Any:
    yaml = _yaml()
    nodes = yaml.nodes

    # SafeLoader + CloudFormation short forms, string timestamps, no duplicate keys
    loader_class: Any = type("CloudFormationLoader", (yaml.SafeLoader,), {})

    def construct_value(loader: Any, node: Any) -> Any:
        if isinstance(node, nodes.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, nodes.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_mapping(node, deep=True)

    def short_form(key: str) -> Any:
        def construct(loader: Any, node: Any) -> dict[str, Any]:
            return {key: construct_value(loader, node)}

        return construct

    def construct_get_att(loader: Any, node: Any) -> dict[str, Any]:
        value = construct_value(loader, node)
        if isinstance(value, str):
            resource, dot, attribute = value.partition(".")
            if not dot or not resource or not attribute:
                raise yaml.constructor.ConstructorError(
                    None, None, f"!GetAtt {value!r} is not of the form Resource.Attribute", node.start_mark
                )
            return {"Fn::GetAtt": [resource, attribute]}
        return {"Fn::GetAtt": value}

    def construct_timestamp_as_string(loader: Any, node: Any) -> str:
        return str(loader.construct_scalar(node))

    def construct_mapping_no_duplicates(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # merged keys may be overridden, as YAML intends
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key!r} (first at line {seen[key].line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return dict(yaml.SafeLoader.construct_mapping(loader, node, deep=deep))

    loader_class.construct_mapping = construct_mapping_no_duplicates
    for tag, key in SHORT_FORM_TAGS.items():
        if tag != "!GetAtt":
            loader_class.add_constructor(tag, short_form(key))
    loader_class.add_constructor("!GetAtt", construct_get_att)
    loader_class.add_constructor("tag:yaml.org,2002:timestamp", construct_timestamp_as_string)
    return loader_class


def loads(text: str, source: str = "<string>") -> dict[str, Any]:
    """Parse a template's text (YAML or JSON) into a dict with long-form intrinsics."""
    yaml = _yaml()
    try:
        data = yaml.load(text, Loader=_loader_class())
    except yaml.YAMLError as error:
        raise TemplateSyntaxError(f"{source}: {error}") from error
    if not isinstance(data, dict):
        raise TemplateSyntaxError(
            f"{source}: a template is a mapping at the top level, not {type(data).__name__}"
        )
    return data


def load_template(path: str | Path) -> dict[str, Any]:
    """Read a CloudFormation/SAM template file (YAML or JSON) into a dict with long-form intrinsics."""
    path = Path(path)
    return loads(path.read_text(encoding="utf-8"), source=str(path))
