"""Invalid requests: every problem located at its field, with the value given and what is allowed.

The table, ``tests/support/data/invalid_requests.yaml``, is one row a case: operations that edit a
minimal valid request (one c5.4xlarge config, one gp3 100 GiB target, one ``std-randread-4k``
workload) into an invalid one, and the one error it must produce. One test body runs every row; the
tests after it check what a row cannot (several problems at once, documents and files, FieldError).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from storagebench.request import FieldError, RequestError, load_request, parse_request

TABLE = Path(__file__).resolve().parents[2] / "support" / "data" / "invalid_requests.yaml"
OPERATIONS = ("set", "remove", "append")

# Pydantic wording that must never reach a user.
LEAKS = ("Value error", "discriminator", "Extra inputs", "string_pattern", "literal_error", "tagged-union")


def steps_of(path: str) -> list[str | int]:
    """``configs[0].targets`` -> ``["configs", 0, "targets"]``."""
    steps: list[str | int] = []
    for part in path.split("."):
        name, *indexes = part.replace("]", "").split("[")
        steps += [name, *(int(index) for index in indexes)]
    return steps


def apply(document: dict[str, Any], operation: list[Any]) -> None:
    """One row's operation: ``["set", path, value]``, ``["remove", path]`` or ``["append", path, value]``.
    Every step of the path must exist (a row that removes nothing fails here, not silently)."""
    kind, path, *value = operation
    *parents, last = steps_of(path)
    holder: Any = document
    for step in parents:
        holder = holder[step]
    if kind == "set":
        holder[last] = value[0]
    elif kind == "remove":
        del holder[last]
    elif kind == "append":
        holder[last].append(value[0])
    else:
        raise ValueError(f"{TABLE.name}: edit operation {kind!r} is not one of {', '.join(OPERATIONS)}")


def load_cases() -> list[Any]:
    rows = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    return [pytest.param(row, id=row["id"]) for row in rows]


CASES = load_cases()


def second_config(document: dict[str, Any], **fields: Any) -> None:
    """Append config ``b``: c5.4xlarge with one gp3 100 GiB target unless ``fields`` say otherwise."""
    target = {"kind": "ebs", "type": "gp3", "size_gib": 100}
    document["configs"].append({"id": "b", "instance_type": "c5.4xlarge", "targets": [target], **fields})


def errors_of(document: Any) -> list[FieldError]:
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    return caught.value.errors


PREFIX = "configs[0].targets[0]"
GATEWAY: dict[str, Any] = {
    "kind": "file_gateway",
    "gateway_instance_type": "c5.4xlarge",
    "root_volume": {"type": "gp3", "size_gib": 80},
    "cache_volumes": [{"type": "gp3", "size_gib": 150}],
}


@pytest.mark.parametrize("row", CASES)
def test_invalid_request(minimal: dict[str, Any], row: dict[str, Any]) -> None:
    for operation in row["edit"]:
        apply(minimal, operation)
    path = row["path"]
    errors = errors_of(minimal)
    assert [e.path for e in errors] == [path], [str(e) for e in errors]
    error = errors[0]
    for fragment in row["message"]:
        assert fragment in error.message, (fragment, str(error))
    for leak in LEAKS:
        assert leak not in error.message
    if row.get("missing"):
        assert "value" not in row, row["id"]
        assert error.as_dict()["value"] is None
        assert "(got" not in str(error)
    else:
        value = row["value"]
        assert error.value == value
        shown = json.dumps(value)
        if isinstance(value, str | int | float | bool) and len(shown) <= 80:
            assert f"(got {shown})" in str(error)
    assert str(error).startswith(f"{path}: ")


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 40


# --------------------------------------------------------------------------- several problems at once


def test_two_field_problems_in_different_configs_are_both_reported(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"][0]["iops"] = 1
    second_config(minimal, targets=[{"kind": "ebs", "type": "st1", "size_gib": 100}])
    errors = errors_of(minimal)
    assert [e.path for e in errors] == ["configs[0].targets[0].iops", "configs[1].targets[0].size_gib"]


def test_top_level_and_nested_problems_are_both_reported(minimal: dict[str, Any]) -> None:
    minimal["region"] = "mars-1"
    minimal["configs"][0]["targets"][0]["size_gib"] = 0
    minimal["workloads"][0]["scale"] = 0
    assert sorted(e.path for e in errors_of(minimal)) == [
        "configs[0].targets[0].size_gib",
        "region",
        "workloads[0].scale",
    ]


def test_one_file_gateway_per_config(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [{**GATEWAY, "id": "a"}, {**GATEWAY, "id": "b"}]
    errors = errors_of(minimal)
    assert [e.path for e in errors] == ["configs[0].targets[1].kind"]
    assert "one file gateway per config (targets[0] is one)" in errors[0].message


def test_gateway_cache_total_is_at_most_64_tib(minimal: dict[str, Any]) -> None:
    disks = [{"type": "sc1", "size_gib": 16_384}] * 5
    minimal["configs"][0]["targets"] = [{**GATEWAY, "cache_volumes": disks}]
    errors = errors_of(minimal)
    assert [(e.path, e.value) for e in errors] == [("configs[0].targets[0].cache_volumes", 81_920)]
    assert "at most 65,536 GiB in all" in errors[0].message


def test_field_problem_and_baseline_are_both_reported(minimal: dict[str, Any]) -> None:
    minimal["baseline"] = "zz"
    minimal["configs"][0]["targets"][0]["iops"] = 1
    assert sorted(e.path for e in errors_of(minimal)) == ["baseline", "configs[0].targets[0].iops"]


def test_duplicate_config_ids_reported_with_a_field_problem(minimal: dict[str, Any]) -> None:
    second_config(minimal, id="a", targets=[{"kind": "ebs", "type": "io1", "size_gib": 100}])
    assert sorted(e.path for e in errors_of(minimal)) == ["configs[1].id", "configs[1].targets[0].iops"]


def test_every_problem_in_one_target(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {
            "kind": "ebs",
            "type": "gp3",
            "size_gib": 8,
            "iops": 5000,
            "throughput_mibps": 2000,
            "initialization_rate_mibps": 200,
            "layout": "jbod",
            "count": 2,
        }
    ]
    assert sorted(e.path for e in errors_of(minimal)) == [
        f"{PREFIX}.initialization_rate_mibps",
        f"{PREFIX}.iops",
        f"{PREFIX}.layout",
        f"{PREFIX}.throughput_mibps",
    ]


def test_every_bad_param_is_reported(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {
            "profile": "std-randread-4k",
            "params": {"bs": "4x", "iodepth": 0, "colour": "red", "runtime": [1, 2]},
        }
    ]
    assert sorted(e.path for e in errors_of(minimal)) == [
        "workloads[0].params.bs",
        "workloads[0].params.colour",
        "workloads[0].params.iodepth",
        "workloads[0].params.runtime",
    ]


def test_request_error_message_lists_every_problem(minimal: dict[str, Any]) -> None:
    minimal["region"] = "mars-1"
    minimal["repetitions"] = 0
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    text = str(caught.value)
    assert text.startswith("invalid benchmark request (2 problems):\n")
    assert '  region: must be an AWS region code such as us-east-1 (got "mars-1")' in text
    assert "  repetitions: must be >= 1 (got 0)" in text


def test_one_problem_is_singular(minimal: dict[str, Any]) -> None:
    minimal["region"] = "mars-1"
    with pytest.raises(RequestError, match=r"^invalid benchmark request \(1 problem\):"):
        parse_request(minimal)


def test_duplicate_suite_is_reported_at_the_second_reference(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"suite": "standard"}, {"profile": "std-randread-4k"}]
    errors = errors_of(minimal)
    assert [(e.path, e.value) for e in errors] == [("workloads[1].id", "std-randread-4k")]


def test_unknown_profile_without_close_match_has_no_hint(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "zzzz"}]
    (error,) = errors_of(minimal)
    assert error.path == "workloads[0].profile"
    assert "did you mean" not in error.message
    assert "unknown workload profile 'zzzz'" in error.message


def test_workload_reference_problems_reported_alongside_a_field_problem(minimal: dict[str, Any]) -> None:
    minimal["region"] = "mars-1"
    minimal["workloads"] = [
        {"profile": "std-randread-4k", "targets": ["nope"]},
        {"profile": "std-randread-4k"},
    ]
    assert sorted(e.path for e in errors_of(minimal)) == [
        "region",
        "workloads[0].targets[0]",
        "workloads[1].id",
    ]


def test_bad_sweep_members_are_named(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "std-randread-4k", "params": {"iodepth": [1, 0, "x"]}}]
    errors = errors_of(minimal)
    assert [e.path for e in errors] == ["workloads[0].params.iodepth[1]", "workloads[0].params.iodepth[2]"]
    assert [e.value for e in errors] == [0, "x"]


# --------------------------------------------------------------------------- rules the model misses


def test_fio_custom_without_job_file_is_invalid(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "fio-custom"}]
    errors = errors_of(minimal)
    assert [e.path for e in errors] == ["workloads[0].params.job_file"]
    assert "required" in errors[0].message


def test_command_without_command_is_invalid(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "command"}]
    errors = errors_of(minimal)
    assert [e.path for e in errors] == ["workloads[0].params.command"]


@pytest.mark.parametrize("volume_type", ["st1", "sc1"])
def test_hdd_root_volume_is_invalid(minimal: dict[str, Any], volume_type: str) -> None:
    minimal["configs"][0]["root_volume"] = {"type": volume_type, "size_gib": 125}
    assert [e.path for e in errors_of(minimal)] == ["configs[0].root_volume.type"]


# --------------------------------------------------------------------------- documents and files


@pytest.mark.parametrize("document", [[], "request", 3, None, True, [{"name": "x"}]])
def test_non_object_document(document: Any) -> None:
    (error,) = errors_of(document)
    assert error.path == "(request)"
    assert error.message == "must be a JSON object"
    assert error.as_dict() == {
        "path": "(request)",
        "value": document,
        "message": "must be a JSON object",
        "missing": False,
    }


def test_load_request_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"name": "t",\n  "configs": [,]\n}', encoding="utf-8")
    with pytest.raises(RequestError) as caught:
        load_request(path)
    (error,) = caught.value.errors
    assert error.path == str(path)
    assert error.message.startswith("not valid JSON at line 2 column 15:")
    assert error.as_dict()["value"] is None
    assert "(got" not in str(error)


def test_load_request_trailing_comma(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "name": "t",\n}\n', encoding="utf-8")
    # 3.11 reports the closing brace (line 3 column 1), 3.13 the comma itself (line 2 column 14).
    with pytest.raises(RequestError, match=r"not valid JSON at line [23] column \d+"):
        load_request(path)


def test_load_request_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text("", encoding="utf-8")
    with pytest.raises(RequestError, match=r"not valid JSON at line 1 column 1"):
        load_request(path)


def test_load_request_non_object(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(RequestError) as caught:
        load_request(path)
    assert [(e.path, e.message) for e in caught.value.errors] == [("(request)", "must be a JSON object")]


def test_load_request_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(RequestError) as caught:
        load_request(path)
    (error,) = caught.value.errors
    assert error.path == str(path)
    assert error.message == "cannot read the file: No such file or directory"


def test_load_request_reports_field_errors(tmp_path: Path, minimal: dict[str, Any]) -> None:
    minimal["region"] = "mars-1"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(minimal), encoding="utf-8")
    with pytest.raises(RequestError) as caught:
        load_request(path)
    assert [e.path for e in caught.value.errors] == ["region"]


# --------------------------------------------------------------------------- FieldError


def test_field_error_as_dict_shape(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"][0]["iops"] = 1
    (error,) = errors_of(minimal)
    assert error.as_dict() == {
        "path": "configs[0].targets[0].iops",
        "value": 1,
        "message": "gp3 allows 3,000..50,000 IOPS for 100 GiB (500 per GiB, at most 80,000)",
        "missing": False,
    }
    json.dumps(error.as_dict())


def test_field_error_as_dict_for_a_missing_value(minimal: dict[str, Any]) -> None:
    del minimal["name"]
    (error,) = errors_of(minimal)
    assert error.as_dict() == {"path": "name", "value": None, "message": "required", "missing": True}
    assert str(error) == "name: required"


def test_field_error_as_dict_keeps_json_values(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"suite": "standard", "params": {"bs": "4k"}}]
    (error,) = errors_of(minimal)
    assert error.as_dict()["value"] == {"bs": "4k"}


def test_field_error_as_dict_reprs_what_json_cannot_hold() -> None:
    error = FieldError("x", {1, 2}, "bad")
    assert error.as_dict() == {"path": "x", "value": "{1, 2}", "message": "bad", "missing": False}


def test_field_error_str_truncates_long_values() -> None:
    text = str(FieldError("command", "y" * 200, "too long"))
    assert text.startswith('command: too long (got "yyyy')
    assert text.endswith("...)")
    assert len(text) < 120
