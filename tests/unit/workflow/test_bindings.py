"""From a config to its launch spec, its storage-option labels and its agent targets."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.workflow_fakes import attached

from storagebench.catalog import instance_type as catalog_instance
from storagebench.core.errors import NotYetConsistentError
from storagebench.core.state import FileSystemRef, Resources, VolumeRef
from storagebench.protocol.plan import check_plan
from storagebench.request import Config, parse_request
from storagebench.workflow.bindings import (
    DATA_DEVICE_LETTERS,
    ROOT_DEVICE,
    agent_targets,
    architecture,
    client_token,
    launch_spec,
    storage_option,
)

REGION = "eu-west-1"


def config(targets: list[dict[str, Any]], instance_type: str = "c5.4xlarge", **extra: Any) -> Config:
    document = {
        "name": "bind",
        "configs": [{"id": "cfg", "instance_type": instance_type, "targets": targets, **extra}],
        "workloads": [{"profile": "std-randread-4k"}],
    }
    return parse_request(document).configs[0]


def volumes_for(cfg: Config) -> list[VolumeRef]:
    """What a launch of the config would attach: one volume per stripe member, with ids."""
    return [attached(v, f"vol-{v.target_id}-{v.member}") for v in launch_spec(cfg, "run", {}).volumes]


# =================================================================================== architecture


@pytest.mark.parametrize(
    ("instance_type", "arch"),
    [("c5.4xlarge", "x86_64"), ("i3en.large", "x86_64"), ("c7g.large", "arm64"), ("m7g.4xlarge", "arm64")],
)
def test_architecture_comes_from_the_catalog(instance_type: str, arch: str) -> None:
    spec = catalog_instance(instance_type)
    assert spec is not None and spec.arch == arch
    assert architecture(instance_type) == arch


@pytest.mark.parametrize(
    "instance_type",
    ["c8g.large", "m7gd.xlarge", "x2gd.large", "im4gn.large", "c6gn.16xlarge", "g5g.xlarge", "r8g.48xlarge"],
)
def test_uncatalogued_graviton_types_are_arm(instance_type: str) -> None:
    assert catalog_instance(instance_type) is None
    assert architecture(instance_type) == "arm64"


@pytest.mark.parametrize(
    "instance_type",
    ["z1d.large", "g4ad.xlarge", "g5.xlarge", "c7i-flex.large", "inf2.xlarge", "m6in.large", "gr6.4xlarge"],
)
def test_other_uncatalogued_types_default_to_x86(instance_type: str) -> None:
    assert catalog_instance(instance_type) is None
    assert architecture(instance_type) == "x86_64"


def test_a1_instances_are_arm() -> None:
    assert architecture("a1.large") == "arm64"


# =================================================================================== client token


def test_client_token_is_stable_bounded_and_distinct() -> None:
    token = client_token("run-1", "cfg")
    assert token == client_token("run-1", "cfg") and len(token) <= 64
    assert len({token, client_token("run-1", "other"), client_token("run-2", "cfg")}) == 3
    assert client_token("a-b", "c") != client_token("a", "b-c")
    assert len(client_token("r" * 80, "c" * 63)) <= 64


# =================================================================================== storage option

EBS: dict[str, Any] = {"kind": "ebs", "type": "gp3", "size_gib": 100}


@pytest.mark.parametrize(
    ("target", "instance_type", "label"),
    [
        (EBS, "c5.4xlarge", "c5.4xlarge/ebs:gp3:100GiB:xfs"),
        (
            {**EBS, "iops": 6000, "throughput_mibps": 500, "count": 4, "filesystem": "ext4"},
            "c5.4xlarge",
            "c5.4xlarge/ebs:gp3:100GiB:6000iops:500MiBps:x4raid0:ext4",
        ),
        (
            {"kind": "ebs", "type": "io2", "size_gib": 500, "iops": 16000, "count": 2, "layout": "jbod",
             "filesystem": "raw"},
            "r5b.4xlarge",
            "r5b.4xlarge/ebs:io2:500GiB:16000iops:x2jbod:raw",
        ),
        ({"kind": "efs"}, "c5.large", "c5.large/efs:elastic"),
        ({"kind": "efs", "throughput_mode": "bursting", "one_zone": True}, "c5.large",
         "c5.large/efs:bursting:one-zone"),
        ({"kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 128},
         "c5.large", "c5.large/efs:provisioned:128MiBps"),
        ({"kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 12.5},
         "c5.large", "c5.large/efs:provisioned:12.5MiBps"),
        ({"kind": "fsx_lustre", "storage_capacity_gib": 1200}, "c5.large",
         "c5.large/fsx_lustre:SCRATCH_2:1200GiB"),
        ({"kind": "fsx_lustre", "deployment_type": "PERSISTENT_2", "storage_capacity_gib": 1200,
          "per_unit_storage_throughput": 250}, "c5.large", "c5.large/fsx_lustre:PERSISTENT_2:1200GiB:250"),
        ({"kind": "instance_store"}, "i3en.large", "i3en.large/instance_store:all:xfs"),
        ({"kind": "instance_store", "count": 2, "filesystem": "raw"}, "i3en.24xlarge",
         "i3en.24xlarge/instance_store:2:raw"),
        ({"kind": "nfs", "server": "gw.example.com", "export": "/bucket"}, "m5.large",
         "m5.large/nfs:gw.example.com:/bucket"),
        ({"kind": "local", "path": "/srv/data"}, "m5.large", "m5.large/local:/srv/data"),
    ],
)  # fmt: skip
def test_storage_option_describes_each_kind(target: dict[str, Any], instance_type: str, label: str) -> None:
    cfg = config([target], instance_type)
    assert storage_option(cfg, str(cfg.targets[0].id)) == label
    again = config([dict(target)], instance_type)  # stable: the same option, parsed again
    assert storage_option(again, str(again.targets[0].id)) == label


def test_storage_option_ignores_the_target_id_and_position() -> None:
    cfg = config([{"kind": "local", "path": "/a"}, {**EBS, "id": "named"}])
    other = config([{**EBS, "id": "other"}])
    assert storage_option(cfg, "named") == storage_option(other, "other")


DISTINCT: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (EBS, {**EBS, "type": "gp2"}),
    (EBS, {**EBS, "size_gib": 200}),
    (EBS, {**EBS, "iops": 4000}),
    (EBS, {**EBS, "throughput_mibps": 250}),
    (EBS, {**EBS, "count": 2}),
    ({**EBS, "count": 2, "filesystem": "raw"}, {**EBS, "count": 2, "layout": "jbod", "filesystem": "raw"}),
    (EBS, {**EBS, "filesystem": "ext4"}),
    ({"kind": "efs"}, {"kind": "efs", "throughput_mode": "bursting"}),
    ({"kind": "efs"}, {"kind": "efs", "one_zone": True}),
    (
        {"kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 100},
        {"kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 200},
    ),
    (
        {"kind": "fsx_lustre", "storage_capacity_gib": 1200},
        {"kind": "fsx_lustre", "storage_capacity_gib": 2400},
    ),
    (
        {"kind": "fsx_lustre", "storage_capacity_gib": 1200},
        {"kind": "fsx_lustre", "storage_capacity_gib": 1200, "deployment_type": "SCRATCH_1"},
    ),
    ({"kind": "nfs", "server": "a", "export": "/x"}, {"kind": "nfs", "server": "b", "export": "/x"}),
    ({"kind": "nfs", "server": "a", "export": "/x"}, {"kind": "nfs", "server": "a", "export": "/y"}),
    ({"kind": "local", "path": "/a"}, {"kind": "local", "path": "/b"}),
    (EBS, {"kind": "local", "path": "/a"}),
]


@pytest.mark.parametrize(("first", "second"), DISTINCT)
def test_storage_option_is_distinct_for_distinct_options(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    cfg = config([{**first, "id": "one"}, {**second, "id": "two"}])
    assert storage_option(cfg, "one") != storage_option(cfg, "two")


def test_storage_option_differs_by_instance_type() -> None:
    assert storage_option(config([EBS], "c5.large"), "ebs0") != storage_option(
        config([EBS], "m5.large"), "ebs0"
    )


def test_storage_option_distinguishes_efs_performance_modes() -> None:
    cfg = config(
        [
            {"id": "gp", "kind": "efs", "throughput_mode": "bursting"},
            {"id": "maxio", "kind": "efs", "throughput_mode": "bursting", "performance_mode": "maxIO"},
        ]
    )
    assert storage_option(cfg, "gp") != storage_option(cfg, "maxio")


def test_storage_option_distinguishes_fsx_compression() -> None:
    fsx = {"kind": "fsx_lustre", "storage_capacity_gib": 1200}
    cfg = config([{**fsx, "id": "plain"}, {**fsx, "id": "lz4", "data_compression": "LZ4"}])
    assert storage_option(cfg, "plain") != storage_option(cfg, "lz4")


def test_storage_option_of_an_unknown_target_raises() -> None:
    with pytest.raises(StopIteration):
        storage_option(config([EBS]), "nope")


# =================================================================================== launch spec


def test_launch_spec_names_data_devices_in_order_across_targets_and_stripes() -> None:
    cfg = config(
        [
            {"id": "a", **EBS, "count": 3},
            {"id": "fs", "kind": "efs"},
            {"id": "b", "kind": "ebs", "type": "io2", "size_gib": 50, "iops": 2000, "count": 2},
            {"id": "c", "kind": "ebs", "type": "st1", "size_gib": 125},
            {"id": "dir", "kind": "local", "path": "/x"},
        ]
    )
    spec = launch_spec(cfg, "run-1", {"k": "v"})
    assert [(v.target_id, v.member, v.device_name) for v in spec.volumes] == [
        ("a", 0, "/dev/sdf"),
        ("a", 1, "/dev/sdg"),
        ("a", 2, "/dev/sdh"),
        ("b", 0, "/dev/sdi"),
        ("b", 1, "/dev/sdj"),
        ("c", 0, "/dev/sdk"),
    ]
    assert [(v.volume_type, v.size_gib, v.iops) for v in spec.volumes if v.target_id == "b"] == [
        ("io2", 50, 2000),
        ("io2", 50, 2000),
    ]
    assert len({v.device_name for v in spec.volumes} | {spec.root.device_name}) == 7
    assert spec.tags == {"k": "v"}
    assert spec.client_token == client_token("run-1", "cfg")


def test_launch_spec_root_volume_and_volume_settings() -> None:
    cfg = config(
        [
            {
                "kind": "ebs",
                "type": "gp3",
                "size_gib": 200,
                "iops": 5000,
                "throughput_mibps": 300,
                "encrypted": False,
                "snapshot_id": "snap-0123456789abcdef0",
                "initialization_rate_mibps": 200,
            }
        ],
        instance_type="c7g.large",
        root_volume={"type": "io2", "size_gib": 40, "iops": 3000, "encrypted": False},
    )
    spec = launch_spec(cfg, "r", {})
    assert spec.architecture == "arm64" and spec.instance_type == "c7g.large"
    root = spec.root
    assert (root.target_id, root.member, root.device_name) == ("root", 0, ROOT_DEVICE)
    assert ROOT_DEVICE == "/dev/xvda"
    assert (root.volume_type, root.size_gib, root.iops, root.encrypted) == ("io2", 40, 3000, False)
    (volume,) = spec.volumes
    assert (volume.iops, volume.throughput_mibps, volume.encrypted) == (5000, 300, False)
    assert (volume.snapshot_id, volume.initialization_rate_mibps) == ("snap-0123456789abcdef0", 200)


def test_launch_spec_without_ebs_targets_has_only_the_root() -> None:
    spec = launch_spec(config([{"kind": "efs"}, {"kind": "local", "path": "/x"}]), "r", {})
    assert spec.volumes == [] and spec.root.device_name == ROOT_DEVICE


def test_launch_spec_letters_never_repeat_up_to_21_volumes() -> None:
    cfg = config([{**EBS, "size_gib": 10, "count": 16}, {**EBS, "size_gib": 10, "count": 5}])
    names = [v.device_name for v in launch_spec(cfg, "r", {}).volumes]
    assert len(names) == 21 == len(set(names)) == len(DATA_DEVICE_LETTERS)
    assert names[0] == "/dev/sdf" and names[20] == "/dev/sdz"


def test_launch_spec_names_every_volume_the_request_model_allows() -> None:
    cfg = config(
        [{**EBS, "size_gib": 10, "count": 16}, {**EBS, "size_gib": 10, "count": 5}]
    )  # the model's maximum
    names = [v.device_name for v in launch_spec(cfg, "r", {}).volumes]
    assert len(set(names)) == 21


# =================================================================================== agent targets


def bound(cfg: Config, resources: Resources) -> dict[str, Any]:
    return {t["id"]: t for t in agent_targets(cfg, resources, REGION)}


def test_agent_targets_ebs_stripe() -> None:
    cfg = config(
        [
            {
                "id": "data",
                **EBS,
                "iops": 4000,
                "throughput_mibps": 250,
                "count": 3,
                "raid_chunk_kib": 256,
                "mount_options": "noatime",
            }
        ]
    )
    volumes = volumes_for(cfg)
    target = bound(cfg, Resources(instance_id="i-1", volumes=list(reversed(volumes))))["data"]
    assert target == {
        "id": "data",
        "kind": "ebs",
        "volume_ids": ["vol-data-0", "vol-data-1", "vol-data-2"],
        "device_names": ["/dev/sdf", "/dev/sdg", "/dev/sdh"],
        "count": 3,
        "layout": "raid0",
        "filesystem": "xfs",
        "allow_destroy": False,
        "prepare": True,
        "volume": {"type": "gp3", "size_gib": 100, "iops": 4000, "throughput_mibps": 250},
        "mount_options": "noatime",
        "raid_chunk_kib": 256,
    }


def test_agent_targets_ebs_without_options_has_no_optional_keys() -> None:
    cfg = config([EBS])
    target = bound(cfg, Resources(volumes=volumes_for(cfg)))["ebs0"]
    assert "mount_options" not in target and "raid_chunk_kib" not in target
    assert target["volume_ids"] == ["vol-ebs0-0"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda vs: [vs[0].model_copy(update={"volume_id": None}), vs[1]],  # id not known yet
        lambda vs: vs[:1],  # a member not recorded yet
        lambda vs: [],
    ],
)
def test_agent_targets_ebs_wait_for_every_member(edit: Any) -> None:
    cfg = config([{**EBS, "count": 2}])
    with pytest.raises(NotYetConsistentError, match="ebs0"):
        agent_targets(cfg, Resources(volumes=edit(volumes_for(cfg))), REGION)


def test_agent_targets_instance_store() -> None:
    cfg = config(
        [{"id": "nvme", "kind": "instance_store", "count": 2, "mount_options": "noatime"}], "i3en.24xlarge"
    )
    assert bound(cfg, Resources())["nvme"] == {
        "id": "nvme",
        "kind": "instance_store",
        "count": 2,
        "filesystem": "xfs",
        "mount_options": "noatime",
    }
    every = config([{"id": "nvme", "kind": "instance_store"}], "i3en.large")
    assert bound(every, Resources())["nvme"]["count"] == 0  # 0: every device


def test_agent_targets_efs() -> None:
    cfg = config([{"id": "shared", "kind": "efs", "mount_options": "nfsvers=4.1,hard"}])
    ref = FileSystemRef(target_id="shared", kind="efs", file_system_id="fs-0abc")
    assert bound(cfg, Resources(file_systems=[ref]))["shared"] == {
        "id": "shared",
        "kind": "efs",
        "source": f"fs-0abc.efs.{REGION}.amazonaws.com:/",
        "fstype": "nfs4",
        "mount_options": "nfsvers=4.1,hard",
    }


def test_agent_targets_fsx_lustre() -> None:
    cfg = config([{"id": "scratch", "kind": "fsx_lustre", "storage_capacity_gib": 1200, "stripe_count": 8}])
    ref = FileSystemRef(
        target_id="scratch",
        kind="fsx_lustre",
        file_system_id="fs-0def",
        dns_name="fs-0def.fsx.eu-west-1.amazonaws.com",
        mount_name="x7yz1bmv",
    )
    assert bound(cfg, Resources(file_systems=[ref]))["scratch"] == {
        "id": "scratch",
        "kind": "fsx_lustre",
        "fstype": "lustre",
        "source": "fs-0def.fsx.eu-west-1.amazonaws.com@tcp:/x7yz1bmv",
        "mount_options": "relatime,flock",
        "lustre_stripe_count": 8,
    }


@pytest.mark.parametrize(("dns_name", "mount_name"), [(None, "m"), ("d", None), (None, None)])
def test_agent_targets_fsx_waits_for_its_dns_and_mount_name(
    dns_name: str | None, mount_name: str | None
) -> None:
    cfg = config([{"id": "scratch", "kind": "fsx_lustre", "storage_capacity_gib": 1200}])
    ref = FileSystemRef(
        target_id="scratch",
        kind="fsx_lustre",
        file_system_id="fs-1",
        dns_name=dns_name,
        mount_name=mount_name,
    )
    with pytest.raises(NotYetConsistentError, match="fs-1"):
        agent_targets(cfg, Resources(file_systems=[ref]), REGION)


@pytest.mark.parametrize("kind", ["efs", "fsx_lustre"])
def test_agent_targets_wait_for_an_unrecorded_file_system(kind: str) -> None:
    target: dict[str, Any] = {"id": "net", "kind": kind}
    if kind == "fsx_lustre":
        target["storage_capacity_gib"] = 1200
    other = FileSystemRef(target_id="else", kind="efs", file_system_id="fs-9")
    with pytest.raises(NotYetConsistentError, match="net"):
        agent_targets(config([target]), Resources(file_systems=[other]), REGION)


@pytest.mark.parametrize(
    ("extra", "options"),
    [
        ({}, "nolock,hard"),
        ({"nfs_version": "3"}, "nolock,hard,nfsvers=3"),
        ({"nfs_version": "4.2", "mount_options": ""}, "nfsvers=4.2"),
        ({"mount_options": "ro"}, "ro"),
    ],
)
def test_agent_targets_nfs(extra: dict[str, Any], options: str) -> None:
    cfg = config([{"id": "share", "kind": "nfs", "server": "10.1.2.3", "export": "/vol/a", **extra}])
    assert bound(cfg, Resources())["share"] == {
        "id": "share",
        "kind": "nfs",
        "source": "10.1.2.3:/vol/a",
        "fstype": "nfs",
        "mount_options": options,
    }


def test_agent_targets_local_directory() -> None:
    cfg = config([{"id": "dir", "kind": "local", "path": "/srv/bench"}])
    assert bound(cfg, Resources())["dir"] == {"id": "dir", "kind": "directory", "path": "/srv/bench"}


def test_agent_targets_keep_the_config_order_and_make_a_valid_plan() -> None:
    cfg = config(
        [
            {"id": "dir", "kind": "local", "path": "/x"},
            {"id": "data", **EBS},
            {"id": "shared", "kind": "efs"},
            {"id": "share", "kind": "nfs", "server": "h", "export": "/e"},
        ]
    )
    ref = FileSystemRef(target_id="shared", kind="efs", file_system_id="fs-1")
    targets = agent_targets(cfg, Resources(volumes=volumes_for(cfg), file_systems=[ref]), REGION)
    assert [t["id"] for t in targets] == ["dir", "data", "shared", "share"]
    plan = {"plan_version": 1, "run_id": "r", "config_id": "cfg", "targets": targets, "steps": []}
    check_plan(plan)  # the agent accepts every binding


FILE_GATEWAY = {
    "id": "share",
    "kind": "file_gateway",
    "gateway_instance_type": "c5.4xlarge",
    "root_volume": {"type": "io1", "size_gib": 80, "iops": 4000},
    "cache_volumes": [{"type": "io1", "size_gib": 512, "iops": 1500}],
}


def test_a_file_gateway_is_never_left_out_of_the_plan_silently() -> None:
    from storagebench.core.errors import ProvisioningError

    cfg = config([FILE_GATEWAY], instance_type="c5.large")
    with pytest.raises(ProvisioningError, match="target share: no file gateway was provisioned"):
        agent_targets(cfg, Resources(), REGION)


def test_storage_option_of_a_file_gateway_names_its_disks_and_mount() -> None:
    cfg = config([FILE_GATEWAY], instance_type="c5.large")
    assert storage_option(cfg, "share") == (
        "c5.large/file_gateway:c5.4xlarge:io1:80GiB:4000iops+io1:512GiB:1500iops:nolock,hard"
    )
    gp2 = config(
        [
            {
                **FILE_GATEWAY,
                "root_volume": {"type": "gp2", "size_gib": 80},
                "cache_volumes": [{"type": "gp2", "size_gib": 512}],
            }
        ],
        instance_type="c5.large",
    )
    assert storage_option(gp2, "share") != storage_option(cfg, "share")
