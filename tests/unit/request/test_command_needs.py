"""A command workload's ``requires`` refused before launch on a config that cannot have it (field
study 3's cellranger step: a stock image without cellranger and its data), with what to provide."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.planning.steps import plan_steps
from storagebench.request import load_request, parse_request
from storagebench.workloads.command_needs import check_requires, parse_requires

EVENTS = Path(__file__).resolve().parents[3] / "events"
CELLRANGER = EVENTS / "genomics-cellranger.json"
REQUIRES = "cellranger /data/refdata-gex-GRCh38 /data/fastqs"


def cellranger() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(CELLRANGER.read_text(encoding="utf-8"))
    return document


def problems(document: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as raised:
        parse_request(document)
    return str(raised.value)


def test_the_shipped_cellranger_event_is_valid_on_its_own_images_and_plans_the_check() -> None:
    request = load_request(CELLRANGER)
    assert {c.image for c in request.configs} == {
        "/storagebench/genomics/cellranger-al2023",
        "/storagebench/genomics/cellranger-debian-12",
    }
    (workload,) = request.resolved_workloads()
    assert workload.params["requires"] == REQUIRES
    for config in request.configs:  # the agent checks them on the instance before the command
        (step,) = plan_steps(request, config)
        assert step["phases"][0]["command"]["requires"] == [
            "cellranger",
            "/data/refdata-gex-GRCh38",
            "/data/fastqs",
        ]


def test_the_cellranger_step_on_stock_images_is_refused_naming_config_image_and_what_to_provide() -> None:
    document = cellranger()
    for config in document["configs"]:
        config["image"] = "debian-12" if "debian" in config["image"] else "al2023"
    text = problems(document)
    assert text.count("workloads[0].params.requires") == 4
    assert (
        "cellranger-count requires cellranger, /data/refdata-gex-GRCh38, /data/fastqs, which config "
        "efs-standard cannot have: it boots the stock image al2023 and it has no setup hook to install "
        "and stage them. Give the config an image that has them (an AMI id, or an SSM parameter under "
        "/storagebench/ holding one), or a setup hook that installs the programs and stages the data"
    ) in text
    # MooseFS has a hook, but it installs MooseFS, not cellranger
    assert (
        "config moosefs-ebs cannot have: it boots the stock image debian-12 and its setup hook does not "
        "name them" in text
    )


def test_a_setup_hook_that_installs_and_stages_them_is_accepted() -> None:
    document = cellranger()
    config = copy.deepcopy(document["configs"][0])
    config["image"] = "al2023"
    config["setup"] = (
        "aws s3 cp s3://my-bucket/cellranger-8.0.1.tar.gz - | tar xz -C /opt\n"
        "ln -s /opt/cellranger-8.0.1/cellranger /usr/local/bin/cellranger\n"
        "aws s3 sync s3://my-bucket/genomics/ /data/"
    )
    document["configs"] = [config]
    assert parse_request(document).configs[0].setup is not None

    config["setup"] = "aws s3 sync s3://my-bucket/genomics/ /data/"  # the data, not the program
    text = problems(document)
    assert "requires cellranger, which config efs-standard cannot have" in text


def test_a_program_is_matched_as_a_word_not_inside_another() -> None:
    document = cellranger()
    config = document["configs"][0]
    config["image"] = "al2023"
    config["setup"] = "install cellranger-arc to /opt; mkdir -p /datasets"  # neither cellranger nor /data
    document["configs"] = [config]
    assert "requires cellranger, /data/refdata-gex-GRCh38, /data/fastqs, which config" in problems(document)


def test_a_workload_without_requires_is_not_checked() -> None:
    document = cellranger()
    for config in document["configs"]:
        config["image"] = "al2023" if "al2023" in config["image"] else "debian-12"
    del document["workloads"][0]["params"]["requires"]
    assert len(parse_request(document).configs) == 4


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "a non-empty string"),
        ("cellranger /data/../etc", "'/data/../etc' is neither a program name"),
        ("cell;ranger", "'cell;ranger' is neither a program name"),
        (" ".join(f"p{i}" for i in range(33)), "at most 32 entries, got 33"),
    ],
)
def test_bad_requires_is_refused_naming_field_value_and_what_is_allowed(value: str, message: str) -> None:
    document = cellranger()
    document["workloads"][0]["params"]["requires"] = value
    text = problems(document)
    assert "workloads[0].params.requires:" in text and message in text


def test_parse_and_check() -> None:
    assert parse_requires("cellranger, /data/fastqs  cellranger") == ["cellranger", "/data/fastqs"]
    check_requires("samtools /data/ref.fa")
    with pytest.raises(ValueError, match="at least one"):
        check_requires(" , ")
