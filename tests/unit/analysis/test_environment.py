"""What a run measured on, and how two runs' environments differ."""

from __future__ import annotations

import pytest

from storagebench.analysis.environment import environment_changes, environment_of, instance_generation


def test_only_recorded_facts_are_kept() -> None:
    manifest = {"system": {"fio_version": "fio-3.35", "kernel": "", "os": None, "instance": None}}
    assert environment_of(manifest) == {"fio_version": "fio-3.35"}
    assert environment_of({}) == {}
    assert environment_of({"system": "garbled"}) == {}


@pytest.mark.parametrize(
    ("instance_type", "generation"),
    [("c5.4xlarge", "c5"), ("c6i.4xlarge", "c6i"), ("m7gd.large", "m7gd"), ("u-6tb1.metal", None)],
)
def test_instance_generation(instance_type: str, generation: str | None) -> None:
    assert instance_generation(instance_type) == generation


def test_changes_are_named_in_a_fixed_order() -> None:
    before = {"fio_version": "fio-3.35", "kernel": "6.1", "instance_type": "c5.4xlarge", "image_id": "ami-1"}
    after = {"fio_version": "fio-3.36", "kernel": "6.1", "instance_type": "c6i.4xlarge", "image_id": "ami-2"}
    assert environment_changes(before, after) == [
        "fio 3.35 -> 3.36",
        "image ami-1 -> ami-2",
        "instance generation c5 -> c6i (c5.4xlarge -> c6i.4xlarge)",
    ]


def test_a_size_change_within_a_generation_and_a_storage_change() -> None:
    assert environment_changes(
        {"instance_type": "c5.2xlarge", "storage_option": "ebs:gp3:100GiB:xfs"},
        {"instance_type": "c5.4xlarge", "storage_option": "ebs:gp3:200GiB:xfs"},
    ) == ["instance c5.2xlarge -> c5.4xlarge", "storage ebs:gp3:100GiB:xfs -> ebs:gp3:200GiB:xfs"]


def test_a_fact_known_on_one_side_is_not_a_change() -> None:
    assert environment_changes({"fio_version": "fio-3.35"}, {"kernel": "6.8"}) == []
