"""The registry holds every kind the request model accepts; each kind answers for itself."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest

from storagebench.core.state import FileSystemRef, GatewayRef, Resources, VolumeRef
from storagebench.kinds import KINDS, UnknownKindError, kind_of, storage_kind
from storagebench.protocol.plan import NETWORK_KINDS
from storagebench.request import parse_request
from storagebench.request.model import Config, Target

REPO = Path(__file__).resolve().parents[3]
LAYER = REPO / "layers" / "storagebench" / "storagebench"


def _request_kinds() -> set[str]:
    union = typing.get_args(Target)[0]
    return {typing.get_args(model.model_fields["kind"].annotation)[0] for model in typing.get_args(union)}


def test_the_registry_holds_exactly_the_kinds_the_request_accepts() -> None:
    assert set(KINDS) == _request_kinds()
    assert all(name == kind.name for name, kind in KINDS.items())


@pytest.mark.parametrize("name", [None, "", "fsx_openzfs", "EBS", 3])
def test_an_unknown_kind_is_named_with_the_known_ones(name: object) -> None:
    with pytest.raises(UnknownKindError) as caught:
        storage_kind(name)
    assert repr(name) in str(caught.value)
    assert all(known in str(caught.value) for known in KINDS)


def test_kind_of_reads_the_kind_field() -> None:
    class Stray:
        kind = "fsx_openzfs"

    with pytest.raises(UnknownKindError, match="'fsx_openzfs'"):
        kind_of(Stray())
    with pytest.raises(UnknownKindError, match="None"):
        kind_of(object())


def _configs() -> dict[str, Config]:
    """One config per kind, from the shipped example requests (file_gateway, efs, fsx, ebs, local)."""
    configs: dict[str, Config] = {}
    for path in sorted((REPO / "events").glob("*.json")):
        document = json.loads(path.read_text())
        request = parse_request(document.get("detail", document))
        for config in request.configs:
            for target in config.targets:
                configs.setdefault(target.kind, config)
    extra = parse_request(
        {
            "name": "kinds",
            "configs": [
                {
                    "id": "store",
                    "instance_type": "i3en.large",
                    "targets": [
                        {"kind": "instance_store"},
                        {"kind": "nfs", "server": "10.0.0.9", "export": "/x"},
                    ],
                }
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    configs.setdefault("instance_store", extra.configs[0])
    configs.setdefault("nfs", extra.configs[0])
    return configs


def _provisioned(config: Config) -> Resources:
    """What Provision would have recorded for every target of ``config``."""
    resources = Resources(instance_id="i-1")
    for target in config.targets:
        tid = str(target.id)
        if target.kind == "ebs":
            resources.volumes += [
                VolumeRef(
                    target_id=tid,
                    member=m,
                    device_name=f"/dev/sd{m}",
                    volume_type="gp3",
                    size_gib=8,
                    volume_id=f"vol-{tid}{m}",
                )
                for m in range(getattr(target, "count", 1))
            ]
        elif target.kind in ("efs", "fsx_lustre"):
            resources.file_systems.append(
                FileSystemRef(
                    target_id=tid,
                    kind=target.kind,
                    file_system_id="fs-1",
                    dns_name="fs-1.fsx",
                    mount_name="abc",
                )
            )
        elif target.kind == "file_gateway":
            resources.gateways.append(
                GatewayRef(
                    target_id=tid,
                    appliance_id="i-2",
                    appliance_ip="10.0.0.5",
                    gateway_arn="arn:aws:storagegateway:us-east-1:123456789012:gateway/sgw-1",
                    cache_disk_ids=["d-1"],
                    file_share_arn="arn:aws:storagegateway:us-east-1:123456789012:share/share-1",
                    share_status="AVAILABLE",
                    share_path="/bucket",
                    bucket="bucket",
                    prefix="runs/r1/",
                )
            )
    return resources


CONFIGS = _configs()


def test_every_kind_has_an_example() -> None:
    assert set(CONFIGS) == set(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_network_kinds_agree_with_the_agent(name: str) -> None:
    """The planner's network flag and the agent's network mounts are one fact, written twice."""
    config = CONFIGS[name]
    target = next(t for t in config.targets if t.kind == name)
    spec = kind_of(target).agent_spec(target, _provisioned(config), "us-east-1")
    assert kind_of(target).network == (spec["kind"] in NETWORK_KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_answers_for_its_example(name: str) -> None:
    config = CONFIGS[name]
    target = next(t for t in config.targets if t.kind == name)
    kind = kind_of(target)
    assert kind.option_key(target).startswith(name)
    short, detail = kind.report_text(target)
    assert short and detail and "?" not in short
    bill = kind.bill(target, config.instance_type)
    assert bill.items or bill.notes or bill.unpriced  # every kind says how it is billed
    assert kind.preview_text(target).startswith(name)


def test_no_type_test_on_a_target_outside_the_kind_modules() -> None:
    """Knowledge of a kind lives in its module: no isinstance(..., SomethingTarget) anywhere else."""
    chain = re.compile(r"isinstance\([^)]*\b\w*Target\b")
    request = LAYER / "request"  # the target models and the config rules across them
    allowed = {request / "targets.py", request / "configs.py", *(LAYER / "kinds").glob("*.py")}
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for root in (REPO / "layers", REPO / "local", REPO / "functions")
        for path in root.rglob("*.py")
        if path not in allowed
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if chain.search(line)
    ]
    assert offenders == []
