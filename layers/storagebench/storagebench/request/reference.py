"""The request's field reference, in Markdown, generated from its JSON Schema and the catalog.

One table per part of a request (the request, a config, each target kind, a workload, ...): every
field with its type, default, allowed values or range (from the schema the API publishes, the
same model that validates) and, where AWS sets the limit, the rule with its source (from
``catalog/catalog.json``, whose every value names the page it was read from). ``PAGE`` holds the
output between two markers; ``make field-reference`` (``scripts/field_reference.py``) rewrites it
and a unit test fails when it differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from storagebench.catalog import load_catalog
from storagebench.catalog.models import Catalog
from storagebench.request import model as request_model
from storagebench.request.errors import PATTERN_HELP
from storagebench.request.prewarm import INITIALIZE_DOCS
from storagebench.request.tags import MAX_USER_TAGS

BEGIN = "<!-- field-reference:begin -->"
END = "<!-- field-reference:end -->"
REGENERATE = "make field-reference"
PAGE = "docs/request-reference.md"  # the page that holds it, from the repository's root

Schema = dict[str, Any]

# Where each part of a request is documented: (heading, JSON Schema definition, how it is reached).
PARTS: list[tuple[str, str | None, str]] = [
    ("The request", None, "the document itself"),
    ("A config", "Config", "`configs[]`"),
    ("Its root volume", "RootVolume", "`configs[].root_volume` and `configs[].nodes[].root_volume`"),
    (
        "A node group",
        "NodeGroup",
        "`configs[].nodes[]`: servers launched with the config (targets: `ebs` or `instance_store` only)",
    ),
    ("Target `ebs`", "EbsTarget", "`configs[].targets[]` with `kind: ebs`"),
    ("Target `instance_store`", "InstanceStoreTarget", "`configs[].targets[]` with `kind: instance_store`"),
    ("Target `efs`", "EfsTarget", "`configs[].targets[]` with `kind: efs`"),
    ("Target `fsx_lustre`", "FsxLustreTarget", "`configs[].targets[]` with `kind: fsx_lustre`"),
    ("Target `nfs`", "NfsTarget", "`configs[].targets[]` with `kind: nfs`"),
    ("Target `file_gateway`", "FileGatewayTarget", "`configs[].targets[]` with `kind: file_gateway`"),
    (
        "A File Gateway disk",
        "GatewayVolume",
        "`configs[].targets[].root_volume` and `cache_volumes[]` of a `file_gateway` target",
    ),
    ("Target `local`", "LocalTarget", "`configs[].targets[]` with `kind: local` (local runs)"),
    ("A workload", "WorkloadRef", "`workloads[]`"),
    (
        "Adaptive repetitions",
        "AdaptiveRepetitions",
        "`repetitions` and `workloads[].repetitions` given as an object instead of a count",
    ),
    ("Steady state", "SteadyState", "`workloads[].steady_state` (fio's own steady-state detection)"),
    ("Node loss", "NodeLossSpec", "`workloads[].node_loss` (a node of the topology removed mid-run)"),
    ("Prewarm", "Prewarm", "`prewarm`"),
    ("Timing", "Timing", "`timing`"),
]

GATEWAY_DOCS = "https://docs.aws.amazon.com/filegateway/latest/files3/Requirements.html"
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def _cell(text: str) -> str:
    """Table-safe Markdown: pipes escaped, ``<kind>`` not read as an HTML tag, one line."""
    return " ".join(_TAG_START.sub("&lt;", text.replace("|", "\\|")).split())


def _source(catalog: Catalog, key: str) -> str:
    source = catalog.sources[key]
    return f"[{source.title}]({source.url})"


def _n(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"


# ------------------------------------------------------------------------- AWS rules per field


def _ebs_rule(catalog: Catalog, field: str) -> str:
    parts = []
    for name, spec in catalog.ebs.items():
        if field == "size_gib":
            parts.append(f"{name} {_n(spec.size_gib.min)}..{_n(spec.size_gib.max)}")
            source = spec.size_gib.source
        elif field == "iops" and spec.iops is not None:
            ratio = f", {_n(spec.iops.max_per_gib)}/GiB" if spec.iops.max_per_gib else ""
            needed = " (required)" if spec.iops.required else ""
            parts.append(f"{name} {_n(spec.iops.min)}..{_n(spec.iops.max)}{ratio}{needed}")
            source = spec.iops.source
        elif field == "throughput_mibps" and spec.throughput_mibps is not None:
            rule = spec.throughput_mibps
            per = f", {rule.max_per_iops:g} per IOPS" if rule.max_per_iops else ""
            parts.append(f"{name} {_n(rule.min)}..{_n(rule.max)}{per}")
            source = rule.source
    others = {"iops": "other types: not provisionable", "throughput_mibps": "other types: not provisionable"}
    tail = f"; {others[field]}" if field in others else ""
    return f"{'; '.join(parts)}{tail} ({_source(catalog, source)})"


def _efs_rule(catalog: Catalog) -> str:
    rule = catalog.efs.provisioned_mibps
    return (
        f"{_n(rule.min)}..{_n(rule.max)} MiB/s, with `throughput_mode: provisioned` only "
        f"({_source(catalog, rule.source)})"
    )


def _fsx_capacity(catalog: Catalog) -> str:
    parts = []
    for name, rule in catalog.fsx_lustre.items():
        allowed = ", ".join(_n(c) for c in rule.capacity_gib_allowed)
        parts.append(
            f"{name} {allowed} or multiples of {_n(rule.capacity_gib_step)} up to {_n(rule.capacity_gib_max)}"
        )
    return f"{'; '.join(parts)} ({_source(catalog, 'fsx-createfilesystem')})"


def _fsx_per_unit(catalog: Catalog) -> str:
    parts = []
    for name, rule in catalog.fsx_lustre.items():
        choices = "/".join(str(v) for v in rule.per_unit_mibps_per_tib)
        parts.append(f"{name} {choices}" if choices else f"{name}: none (fixed)")
    return f"MB/s per TiB: {'; '.join(parts)} ({_source(catalog, 'fsx-createfilesystem')})"


def _instance_types(catalog: Catalog) -> str:
    return (
        f"one of the catalog's {len(catalog.instances)} types ({', '.join(sorted(catalog.instances))}); "
        f"another is refused with the closest known ones ({_source(catalog, 'ec2-instance-types')})"
    )


Rule = Callable[[Catalog], str]
RULES: dict[tuple[str, str], Rule] = {
    ("Config", "instance_type"): _instance_types,
    ("Config", "targets"): lambda c: (
        f"at most {request_model.MAX_DATA_VOLUMES} EBS data volumes in all (/dev/sdf to /dev/sdz); "
        "one `file_gateway` per config"
    ),
    ("Config", "ebs_optimized"): lambda c: (
        f"types optimised by default cannot turn it off ({_source(c, 'ebs-optimized')})"
    ),
    ("Config", "clients"): lambda c: (
        "more than 1: every target a shared kind (efs, fsx_lustre, nfs, file_gateway, local)"
    ),
    ("Config", "nodes"): lambda c: "at most 32 nodes in all; roles unique and not `client`",
    ("NodeGroup", "instance_type"): _instance_types,
    ("NodeGroup", "ports"): lambda c: "`tcp/` or `udp/` and a port or range in 1..65535",
    ("RootVolume", "type"): lambda c: "not `st1` or `sc1` (HDD volumes cannot boot)",
    ("RootVolume", "size_gib"): lambda c: _ebs_rule(c, "size_gib"),
    ("RootVolume", "iops"): lambda c: _ebs_rule(c, "iops"),
    ("RootVolume", "throughput_mibps"): lambda c: _ebs_rule(c, "throughput_mibps"),
    ("EbsTarget", "size_gib"): lambda c: _ebs_rule(c, "size_gib"),
    ("EbsTarget", "iops"): lambda c: _ebs_rule(c, "iops"),
    ("EbsTarget", "throughput_mibps"): lambda c: _ebs_rule(c, "throughput_mibps"),
    ("EbsTarget", "initialization_rate_mibps"): lambda c: "100..300 MiB/s, with `snapshot_id` only",
    ("EbsTarget", "layout"): lambda c: "`jbod` needs `count` >= 2 and `filesystem: raw`",
    ("EbsTarget", "raid_chunk_kib"): lambda c: "a `raid0` stripe only (`count` >= 2)",
    ("InstanceStoreTarget", "count"): lambda c: (
        f"at most the instance's devices; the type must have an instance store "
        f"({_source(c, 'ec2-instance-store')})"
    ),
    ("EfsTarget", "provisioned_throughput_mibps"): _efs_rule,
    ("EfsTarget", "performance_mode"): lambda c: (
        f"`maxIO` is not available with `one_zone` or elastic throughput ({_source(c, 'efs-performance')})"
    ),
    ("FsxLustreTarget", "storage_capacity_gib"): _fsx_capacity,
    ("FsxLustreTarget", "per_unit_storage_throughput"): _fsx_per_unit,
    ("FileGatewayTarget", "gateway_instance_type"): lambda c: (
        f"x86_64 with >= {request_model.GATEWAY_MIN_VCPUS} vCPUs and >= "
        f"{request_model.GATEWAY_MIN_MEMORY_GIB} GiB, from the catalog "
        f"([File Gateway requirements]({GATEWAY_DOCS}))"
    ),
    ("FileGatewayTarget", "root_volume"): lambda c: (
        f">= {request_model.GATEWAY_ROOT_MIN_GIB} GiB, not HDD ([File Gateway requirements]({GATEWAY_DOCS}))"
    ),
    ("FileGatewayTarget", "cache_volumes"): lambda c: (
        f"each >= {request_model.GATEWAY_CACHE_MIN_GIB} GiB, "
        f"{_n(request_model.GATEWAY_CACHE_MAX_TOTAL_GIB)} GiB in all "
        f"([File Gateway requirements]({GATEWAY_DOCS}))"
    ),
    ("GatewayVolume", "size_gib"): lambda c: _ebs_rule(c, "size_gib"),
    ("GatewayVolume", "iops"): lambda c: _ebs_rule(c, "iops"),
    ("GatewayVolume", "throughput_mibps"): lambda c: _ebs_rule(c, "throughput_mibps"),
    ("Prewarm", "volumes"): lambda c: (
        f"only volumes from snapshots (or copies) need initialisation ([Initialize Amazon EBS volumes]"
        f"({INITIALIZE_DOCS})); not with `method: none`"
    ),
    ("Prewarm", "sample_gib"): lambda c: "at most an eighth of each volume is read; not with `method: none`",
    ("Timing", "command_timeout_h"): lambda c: "at most `max_run_hours`; SSM allows 48 h",
    ("BenchmarkRequest", "baseline"): lambda c: "a config's `id`",
    ("BenchmarkRequest", "tags"): lambda c: (
        f"at most {MAX_USER_TAGS}: storagebench's own tags and the user's stay within AWS's 50 per resource"
    ),
}


# ------------------------------------------------------------------------- schema to cells


def _definition_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(prop: Schema) -> str:
    if "$ref" in prop:
        return f"object ({_definition_name(prop['$ref'])})"
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    if "anyOf" in prop:
        kinds = [_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds) + (
            " or null" if any(p.get("type") == "null" for p in prop["anyOf"]) else ""
        )
    kind = prop.get("type", "any")
    if kind == "array":
        items = prop.get("items", {})
        if "discriminator" in items:
            return "list of targets (by `kind`)"
        return f"list of {_type(items)}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"object of {_type(prop['additionalProperties'])}"
    return str(kind)


def _allowed(prop: Schema) -> str:
    if "anyOf" in prop:
        return "; ".join(a for p in prop["anyOf"] if p.get("type") != "null" and (a := _allowed(p)))
    found: list[str] = []
    if "enum" in prop:
        found.append(", ".join(f"`{v}`" for v in prop["enum"]))
    low = prop.get("minimum", prop.get("exclusiveMinimum"))
    high = prop.get("maximum", prop.get("exclusiveMaximum"))
    low_sign = ">" if "exclusiveMinimum" in prop else ">="
    high_sign = "<" if "exclusiveMaximum" in prop else "<="
    if low is not None and high is not None and low_sign == ">=" and high_sign == "<=":
        found.append(f"{_n(low)}..{_n(high)}")
    else:
        if low is not None:
            found.append(f"{low_sign} {_n(low)}")
        if high is not None:
            found.append(f"{high_sign} {_n(high)}")
    if "pattern" in prop:
        found.append(PATTERN_HELP.get(prop["pattern"], f"matching `{prop['pattern']}`"))
    if "maxLength" in prop:
        found.append(f"at most {_n(prop['maxLength'])} characters")
    if "minItems" in prop or "maxItems" in prop:
        found.append(f"{prop.get('minItems', 0)}..{prop.get('maxItems', 'any')} items")
    if "maxProperties" in prop:
        found.append(f"at most {prop['maxProperties']} entries")
    items = prop.get("items")
    if isinstance(items, dict) and "discriminator" not in items and "$ref" not in items:
        inner = _allowed(items)
        if inner:
            found.append(f"each {inner}")
    return "; ".join(found)


def _default(name: str, prop: Schema, required: list[str]) -> str:
    if name in required:
        return "**required**"
    if "default" in prop:
        return f"`{json.dumps(prop['default'])}`"
    kind = prop.get("type")
    if kind == "array":
        return "`[]`"
    if kind == "object":
        return "`{}`"
    return "its defaults"


def _table(definition: str, schema: Schema, catalog: Catalog) -> list[str]:
    model = "BenchmarkRequest" if definition == "" else definition
    node = schema if definition == "" else schema["$defs"][definition]
    required = node.get("required", [])
    lines = [
        "| field | type | default | allowed | AWS or storagebench rule | what it is |",
        "|---|---|---|---|---|---|",
    ]
    for name, prop in node["properties"].items():
        rule = RULES.get((model, name))
        cells = [
            f"`{name}`",
            _type(prop),
            _default(name, prop, required),
            _allowed(prop),
            rule(catalog) if rule is not None else "",
            prop.get("description", ""),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _ebs_types(catalog: Catalog) -> list[str]:
    lines = [
        "| EBS `type` | size GiB | provisioned IOPS | provisioned MiB/s | source |",
        "|---|---|---|---|---|",
    ]
    for name, spec in catalog.ebs.items():
        iops = "-"
        if spec.iops is not None:
            ratio = f", {_n(spec.iops.max_per_gib)} per GiB" if spec.iops.max_per_gib else ""
            iops = f"{_n(spec.iops.min)}..{_n(spec.iops.max)}{ratio}" + (
                " (required)" if spec.iops.required else ""
            )
        throughput = "-"
        if spec.throughput_mibps is not None:
            rule = spec.throughput_mibps
            per = f", {rule.max_per_iops:g} per IOPS" if rule.max_per_iops else ""
            throughput = f"{_n(rule.min)}..{_n(rule.max)}{per}"
        cells = [
            f"`{name}`",
            f"{_n(spec.size_gib.min)}..{_n(spec.size_gib.max)}",
            iops,
            throughput,
            _source(catalog, spec.size_gib.source),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def field_reference(schema: Schema | None = None) -> str:
    """The Markdown section (without the markers) for this schema, by default the request's."""
    schema = request_model.BenchmarkRequest.model_json_schema() if schema is None else schema
    catalog = load_catalog()
    out = [
        f"Generated from `storagebench schema` and the catalog by `{REGENERATE}`; do not edit by hand.",
        "`validate` checks every rule below and reports all problems at once, each with its field path.",
        "",
    ]
    for heading, definition, where in PARTS:
        out += [f"#### {heading}", "", f"{where[0].upper()}{where[1:]}.", ""]
        out += _table(definition or "", schema, catalog)
        out.append("")
    out += [
        "#### EBS volume types",
        "",
        "What `type` allows for `size_gib`, `iops` and `throughput_mibps`.",
        "",
    ]
    out += _ebs_types(catalog)
    return "\n".join(out).rstrip() + "\n"


class ReferenceMarkersError(ValueError):
    """The page lacks the markers between which the reference goes."""


def with_reference(page: str, reference: str) -> str:
    """``page`` with the text between the markers replaced by ``reference``."""
    if page.count(BEGIN) != 1 or page.count(END) != 1 or page.index(BEGIN) > page.index(END):
        raise ReferenceMarkersError(f"{PAGE} needs one {BEGIN} line and, after it, one {END} line")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{reference}{END}{tail}"
