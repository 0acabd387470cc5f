"""A config's matrix: the expansion into configs, generated ids, invalid points (refused or skipped),
the shape checks of the matrix itself, and the origin each generated config carries."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.request import BenchmarkRequest, RequestError, parse_request
from storagebench.request.matrix import MAX_POINTS, expand_matrix, summarize_matrices
from storagebench.request.matrix_models import MatrixOrigin
from storagebench.request.model import MAX_CONFIGS

EVENTS = Path(__file__).resolve().parents[3] / "events"

GP3: dict[str, Any] = {
    "name": "gp3-sweep",
    "configs": [
        {
            "id": "gp3",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "gp3"}],
            "matrix": {"size_gib": [10, 500], "iops": [3000, 6000]},
        }
    ],
    "workloads": [{"profile": "std-randread-4k"}],
}


@pytest.fixture
def gp3() -> dict[str, Any]:
    return copy.deepcopy(GP3)


def problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    return [str(error) for error in caught.value.errors]


def example() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / "gp3-matrix.json").read_text(encoding="utf-8"))
    return document


# ----------------------------------------------------------------------------- expansion


def test_the_example_expands_into_the_valid_points_and_skips_the_others() -> None:
    request = parse_request(example())
    ids = [c.id for c in request.configs]
    assert len(ids) == 11 and len(request.matrix_skipped) == 7
    assert ids[:2] == ["gp3-20g-3000iops-250mibps", "gp3-100g-3000iops-250mibps"]
    assert "gp3-500g-40000iops-1000mibps" in ids
    skipped = {s.id: s for s in request.matrix_skipped}
    ratio = skipped["gp3-20g-12000iops-250mibps"].problems
    assert [(p.field, p.value) for p in ratio] == [("iops", 12000)]
    assert "3,000..10,000 IOPS for 20 GiB (500 per GiB" in ratio[0].message
    per_iops = skipped["gp3-500g-3000iops-1000mibps"].problems
    assert [(p.field, p.value) for p in per_iops] == [("throughput_mibps", 1000)]
    assert "3,000 IOPS allow 750" in per_iops[0].message
    target = request.config("gp3-100g-40000iops-1000mibps").targets[0]
    assert (target.size_gib, target.iops, target.throughput_mibps) == (100, 40000, 1000)  # type: ignore[union-attr]
    assert request.baseline_id == ids[0]


def test_each_generated_config_remembers_its_base_and_point() -> None:
    request = parse_request(example())
    origin = request.config("gp3-100g-12000iops-250mibps").origin
    assert origin == MatrixOrigin(
        base_id="gp3",
        config_index=0,
        point={"size_gib": 100, "iops": 12000, "throughput_mibps": 250},
        axes={"size_gib": [20, 100, 500], "iops": [3000, 12000, 40000], "throughput_mibps": [250, 1000]},
    )


def test_the_stored_dump_reparses_as_plain_configs_and_the_document_keeps_the_origins() -> None:
    document = example()
    request = parse_request(document)
    dumped = request.model_dump(mode="json")
    assert all("origin" not in c and c["matrix"] is None for c in dumped["configs"])
    assert "matrix_skipped" not in dumped
    again = parse_request(json.loads(json.dumps(dumped)))  # what the steps read
    assert [c.id for c in again.configs] == [c.id for c in request.configs]
    assert all(c.origin is None for c in again.configs) and again.matrix_skipped == []
    reread = parse_request(json.loads(json.dumps(document)))  # what the report reads: the run's document
    assert [c.origin for c in reread.configs] == [c.origin for c in request.configs]
    assert reread.matrix_skipped == request.matrix_skipped


def test_validating_the_model_directly_refuses_an_unexpanded_matrix(gp3: dict[str, Any]) -> None:
    """parse_request is the one door that expands; the model on its own says where to go."""
    gp3["configs"][0]["targets"][0]["size_gib"] = 100  # what the model needs before its rules run
    with pytest.raises(ValueError, match=r"expanded when the request document is parsed"):
        BenchmarkRequest.model_validate(gp3)


def test_a_field_with_one_value_is_set_but_not_in_the_id(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["matrix"] = {"size_gib": [100, 200], "throughput_mibps": [250]}
    request = parse_request(gp3)
    assert [c.id for c in request.configs] == ["gp3-100g", "gp3-200g"]
    assert request.configs[0].targets[0].throughput_mibps == 250  # type: ignore[union-attr]
    assert request.configs[0].origin is not None and list(request.configs[0].origin.axes) == ["size_gib"]


def test_config_fields_and_several_matrices_sit_beside_ordinary_configs(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["matrix"] = {"size_gib": [100, 200]}
    gp3["configs"].insert(
        0,
        {
            "id": "plain",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "gp2", "size_gib": 50}],
        },
    )
    gp3["configs"].append(
        {
            "id": "arm",
            "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}],
            "matrix": {"instance_type": ["m7g.large", "c7g.xlarge"], "filesystem": ["xfs", "ext4"]},
        }
    )
    gp3["baseline"] = "arm-c7g-xlarge-ext4"
    request = parse_request(gp3)
    assert [c.id for c in request.configs] == [
        "plain",
        "gp3-100g",
        "gp3-200g",
        "arm-m7g-large-xfs",
        "arm-m7g-large-ext4",
        "arm-c7g-xlarge-xfs",
        "arm-c7g-xlarge-ext4",
    ]
    assert request.config("arm-c7g-xlarge-ext4").instance_type == "c7g.xlarge"
    assert [m.base_id for m in summarize_matrices(request)] == ["gp3", "arm"]
    assert summarize_matrices(request)[1].config_index == 2


def test_a_key_names_the_target_when_several_have_the_field(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 100},
        {"kind": "ebs", "id": "data", "type": "gp3"},
    ]
    gp3["configs"][0]["matrix"] = {"data.size_gib": [200, 400], "ebs0.iops": [3000, 4000]}
    request = parse_request(gp3)
    # the first target's field first, whatever order the keys are written in
    assert [c.id for c in request.configs][:2] == ["gp3-3000iops-200g", "gp3-3000iops-400g"]
    second = request.configs[1]
    assert second.targets[0].iops == 3000 and second.targets[1].size_gib == 400  # type: ignore[union-attr]


# ----------------------------------------------------------------------------- invalid points


def test_invalid_points_are_refused_by_default_naming_each_point_and_rule() -> None:
    document = example()
    del document["matrix_invalid"]
    found = problems(document)
    points = [p for p in found if "point gp3-" in p]
    assert len(points) == 7
    assert (
        "configs[0].matrix.iops: point gp3-20g-12000iops-250mibps: gp3 allows 3,000..10,000 IOPS for 20 GiB "
        "(500 per GiB, at most 80,000) (got 12000)"
    ) in found
    assert any(
        p.startswith("configs[0].matrix.throughput_mibps: point gp3-20g-3000iops-1000mibps") for p in found
    )
    assert (
        found[-1].startswith("matrix_invalid: 7 matrix point(s) break AWS's rules")
        and '(got "error")' in found[-1]
    )


def test_a_point_breaking_a_rule_elsewhere_names_the_field() -> None:
    document = {
        "name": "stores",
        "configs": [
            {
                "id": "local",
                "targets": [{"kind": "instance_store"}],
                "matrix": {"instance_type": ["i3en.large", "m5.large"]},
            }
        ],
        "workloads": [{"profile": "std-randread-4k"}],
    }
    assert problems(copy.deepcopy(document))[0] == (
        "configs[0].matrix: point local-m5-large: targets[0].kind: m5.large has no instance store; "
        'pick e.g. an i3en, m5d or c5d type (got "instance_store")'
    )
    document["matrix_invalid"] = "skip"
    request = parse_request(document)
    assert [c.id for c in request.configs] == ["local-i3en-large"]
    assert request.matrix_skipped[0].problems[0].field == "targets[0].kind"


def test_a_problem_of_the_base_config_is_reported_once_at_its_field(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["image"] = "windows-95"
    found = problems(gp3)
    image = [p for p in found if "image" in p]
    assert len(image) == 1 and image[0].startswith("configs[0].image: ")
    assert any(p.startswith("configs[0].matrix.iops: point gp3-10g-6000iops:") for p in found)


def test_a_value_of_the_wrong_type_is_refused_even_when_skipping(gp3: dict[str, Any]) -> None:
    gp3["matrix_invalid"] = "skip"
    gp3["configs"][0]["matrix"]["iops"] = [3000, "6000"]
    assert problems(gp3) == ['configs[0].matrix.iops[1]: Input should be a valid integer (got "6000")']


def test_a_matrix_whose_every_point_breaks_a_rule_leaves_nothing_to_run(gp3: dict[str, Any]) -> None:
    gp3["matrix_invalid"] = "skip"
    gp3["configs"][0]["matrix"] = {"size_gib": [1, 2], "iops": [6000, 7000]}
    (only,) = problems(gp3)
    assert only.startswith(
        "configs[0].matrix: every one of its 4 points breaks a rule, nothing is left to run"
    )


# ----------------------------------------------------------------------------- the matrix's own shape


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        (
            {"size_gib": [100], "foo": [1]},
            "configs[0].matrix.foo: unknown matrix field; allowed: instance_type, image, clients, or a "
            "target's type, size_gib",
        ),
        ({"size_gib": 100}, "configs[0].matrix.size_gib: must be a non-empty list of values (got 100)"),
        ({"size_gib": []}, "configs[0].matrix.size_gib: must be a non-empty list of values (got [])"),
        (
            {"size_gib": [100, 200, 100]},
            "configs[0].matrix.size_gib[2]: repeats size_gib[0]; values must differ (got 100)",
        ),
        (
            {"size_gib": [100, None]},
            "configs[0].matrix.size_gib[1]: must be a number, a string or true/false (got null)",
        ),
        (
            {"size_gib": [100, [200]]},
            "configs[0].matrix.size_gib[1]: must be a number, a string or true/false (got [200])",
        ),
        ({}, "configs[0].matrix: must be an object of field -> list of values"),
        ([100], "configs[0].matrix: must be an object of field -> list of values"),
        (
            {"deployment_type": ["SCRATCH_2"]},
            "configs[0].matrix.deployment_type: no target of this config has deployment_type "
            "(its targets are ebs)",
        ),
        (
            {"data.size_gib": [100]},
            "configs[0].matrix.data.size_gib: names no target of this config (its targets: ebs0)",
        ),
        (
            {"ebs0.foo": [1]},
            "configs[0].matrix.ebs0.foo: foo is not a target field a matrix varies; allowed: type, size_gib",
        ),
        (
            {"size_gib": [100], "ebs0.size_gib": [200]},
            "configs[0].matrix.ebs0.size_gib: sets the same field as size_gib; keep one",
        ),
    ],
)
def test_a_malformed_matrix_is_refused_at_its_key(gp3: dict[str, Any], matrix: Any, expected: str) -> None:
    gp3["configs"][0]["matrix"] = matrix
    gp3["configs"][0]["targets"][0]["iops"] = 3000
    found = problems(gp3)
    assert any(p.startswith(expected) for p in found), found


def test_several_targets_with_the_field_must_be_named(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["targets"].append({"kind": "ebs", "id": "logs", "type": "gp3", "size_gib": 100})
    found = problems(gp3)
    assert found[0] == (
        "configs[0].matrix.size_gib: 2 targets have size_gib: name the one to vary, ebs0.size_gib or "
        "logs.size_gib (got [10, 500])"
    )


def test_a_field_the_matrix_sets_cannot_be_given_too(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["targets"][0]["iops"] = 3000
    assert problems(gp3) == [
        "configs[0].matrix.iops: configs[0].targets[0].iops is given too (3000): the matrix sets it; "
        "remove one (got [3000, 6000])"
    ]


def test_generated_ids_are_unique(gp3: dict[str, Any]) -> None:
    gp3["matrix_invalid"] = "skip"
    gp3["configs"].append(
        {
            "id": "gp3-500g-3000iops",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "gp2", "size_gib": 50}],
        }
    )
    assert problems(copy.deepcopy(gp3)) == [
        "configs[0].matrix: point {size_gib: 500, iops: 3000} gets the id gp3-500g-3000iops, which "
        'configs[1] has already; config ids must be unique (got {"size_gib": 500, "iops": 3000})'
    ]
    gp3["configs"].pop()
    gp3["configs"][0]["matrix"] = {
        "size_gib": [100],
        "image": ["ami-0123456789abcdef0", "AMI-0123456789ABCDEF0"],
    }
    (clash,) = problems(gp3)
    assert clash.startswith(
        'configs[0].matrix: points {image: "ami-0123456789abcdef0", size_gib: 100} and '
        '{image: "AMI-0123456789ABCDEF0", size_gib: 100} both get the id gp3-ami-0123456789abcdef0'
    )


def test_a_generated_id_must_be_a_valid_slug(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["id"] = "a-rather-long-config-name-that-leaves-little-room-for-values"
    (problem,) = problems(gp3)
    assert problem.startswith("configs[0].id: the point {size_gib: 10, iops: 3000} gets the id ")
    assert "shorten the id" in problem


def test_the_expansion_is_capped_by_max_configs(gp3: dict[str, Any]) -> None:
    sizes = list(range(100, 100 + MAX_CONFIGS // 2 + 1))
    gp3["configs"][0]["matrix"] = {"size_gib": sizes, "iops": [3000, 4000]}
    (problem,) = problems(gp3)
    count = 2 * len(sizes)
    assert problem.startswith(
        f"configs: the matrix expands the request to {count} configs (configs[0] gives {count}); "
        f"a request runs at most {MAX_CONFIGS} (MAX_CONFIGS)"
    )


def test_a_matrix_beyond_max_points_is_not_built(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["matrix"] = {"size_gib": list(range(100, 100 + MAX_POINTS + 1))}
    (problem,) = problems(gp3)
    assert problem.startswith(
        f"configs[0].matrix: {MAX_POINTS + 1} = {MAX_POINTS + 1} points; at most {MAX_POINTS}"
    )


# ----------------------------------------------------------------------------- set by the expansion only


def test_origin_and_skipped_points_are_refused_from_documents(gp3: dict[str, Any]) -> None:
    plain = {
        "id": "x",
        "instance_type": "c5.4xlarge",
        "targets": [{"kind": "ebs", "type": "gp2", "size_gib": 50}],
    }
    document = {**gp3, "configs": [{**plain, "origin": {"base_id": "x"}}], "matrix_skipped": []}
    found = problems(copy.deepcopy(document))
    assert found == [
        'configs[0].origin: set by the matrix expansion only; remove it (got {"base_id": "x"})',
        "matrix_skipped: set by the matrix expansion only; remove it (got [])",
    ]
    with pytest.raises(ValueError, match="set by the matrix expansion only"):
        BenchmarkRequest.model_validate(document)


def test_the_published_schema_has_the_matrix_but_not_what_the_expansion_sets() -> None:
    schema = BenchmarkRequest.model_json_schema()
    config = schema["$defs"]["Config"]["properties"]
    assert "matrix" in config and "origin" not in config
    assert "matrix_invalid" in schema["properties"] and "matrix_skipped" not in schema["properties"]
    assert schema["properties"]["matrix_invalid"]["enum"] == ["skip", "error"]
    assert "500 per GiB" in schema["properties"]["matrix_invalid"]["description"]


def test_matrix_invalid_takes_skip_or_error(gp3: dict[str, Any]) -> None:
    gp3["matrix_invalid"] = "ignore"
    found = problems(gp3)
    assert 'matrix_invalid: must be one of skip or error (got "ignore")' in found


def test_a_document_without_a_matrix_is_left_alone(minimal: dict[str, Any]) -> None:
    expansion = expand_matrix(minimal)
    assert expansion.document is minimal and not expansion.problems and not expansion.has_matrix


def test_other_problems_are_reported_in_the_same_pass(gp3: dict[str, Any]) -> None:
    gp3["baseline"] = "nope"
    gp3["workloads"].append({"profile": "nope"})
    found = problems(gp3)
    assert found[0].startswith("configs[0].matrix.iops: point gp3-10g-6000iops")
    assert (
        "workloads[1].profile: unknown workload profile 'nope' (`storagebench workloads` lists them) "
        '(got "nope")' in found
    )
    assert any(
        p.startswith("baseline: must name a config: gp3-10g-3000iops, gp3-500g-3000iops") for p in found
    )


def test_a_rule_every_point_breaks_with_its_own_value_names_each_point(gp3: dict[str, Any]) -> None:
    gp3["configs"][0]["matrix"] = {"size_gib": [1], "iops": [6000, 7000]}
    found = problems(gp3)
    assert [p.split(":")[0] for p in found[:2]] == ["configs[0].matrix.iops"] * 2
    assert found[0].startswith("configs[0].matrix.iops: point gp3-6000iops: gp3 allows 3,000..3,000 IOPS")
    assert found[1].startswith("configs[0].matrix.iops: point gp3-7000iops: ")


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        (True, "configs[0].targets: must be a list (got true)"),
        ([5], "configs[0].targets[0]: must be an object (got 5)"),
        ([{"type": "gp3"}], "configs[0].targets[0].kind: needs a kind: ebs, instance_store, efs"),
        ([{"kind": "tape"}], "configs[0].targets[0].kind: must be one of ebs, instance_store"),
    ],
)
def test_targets_that_do_not_read_are_said_before_any_key(
    gp3: dict[str, Any], targets: Any, expected: str
) -> None:
    gp3["configs"][0]["targets"] = targets
    (problem,) = problems(gp3)
    assert problem.startswith(expected)


def test_ids_do_not_depend_on_the_order_keys_are_written_in() -> None:
    """The run keeps its document in a DynamoDB map, which does not keep key order: the report
    expands that document again and must find the ids the run used."""
    document = example()
    shuffled = copy.deepcopy(document)
    matrix = shuffled["configs"][0]["matrix"]
    shuffled["configs"][0]["matrix"] = {key: matrix[key] for key in sorted(matrix, reverse=True)}
    first, second = parse_request(document), parse_request(shuffled)
    assert [c.id for c in second.configs] == [c.id for c in first.configs]
    assert [c.origin for c in second.configs] == [c.origin for c in first.configs]
    assert second.matrix_skipped == first.matrix_skipped


def test_every_field_a_matrix_varies_is_a_field_of_some_target_or_of_the_config() -> None:
    from storagebench.request.matrix_keys import CONFIG_FIELDS, TARGET_FIELDS, target_models
    from storagebench.request.model import Config

    assert set(CONFIG_FIELDS) <= set(Config.model_fields)
    held = {name for model in target_models().values() for name in model.model_fields}
    assert set(TARGET_FIELDS) <= held
