"""Finding EBS and instance-store devices by identity, and refusing unsafe ones, on a fake sysfs."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from storagebench.agent import devices
from storagebench.agent.devices import (
    EBS_MODEL,
    INSTANCE_STORE_MODEL,
    BlockDevice,
    DeviceError,
    find_ebs,
    find_instance_store,
    list_block_devices,
    safety_problems,
)
from storagebench.agent.proc import CommandError
from storagebench.agent.targets import raid0_command

GIB = 1 << 30


def disk(
    sysfs: Path,
    name: str,
    dev: str,
    size_gib: float,
    serial: str | None = None,
    model: str | None = None,
    partitions: dict[str, str] | None = None,
    holders: list[str] | None = None,
    partition_holders: dict[str, list[str]] | None = None,
) -> None:
    base = sysfs / "block" / name
    base.mkdir(parents=True)
    (base / "dev").write_text(dev + "\n")
    (base / "size").write_text(f"{int(size_gib * GIB / 512)}\n")
    (base / "holders").mkdir()
    for holder in holders or []:
        (base / "holders" / holder).mkdir()
    if serial is not None or model is not None:
        (base / "device").mkdir()
        if serial is not None:
            (base / "device" / "serial").write_text(serial.ljust(20) + "\n")  # NVMe pads with spaces
        if model is not None:
            (base / "device" / "model").write_text(model.ljust(40) + "\n")
    for part, number in (partitions or {}).items():
        (base / part).mkdir()
        (base / part / "dev").write_text(number + "\n")
        (base / part / "holders").mkdir()
        for holder in (partition_holders or {}).get(part, []):
            (base / part / "holders" / holder).mkdir()


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    root = tmp_path / "sys"
    disk(root, "nvme0n1", "259:0", 8, "vol0123456789abcdef0", EBS_MODEL, partitions={"nvme0n1p1": "259:1"})
    disk(root, "nvme1n1", "259:2", 100, "vol0abc0000000000001", EBS_MODEL)
    disk(root, "nvme2n1", "259:3", 1745, "AWS22B5E5E8F5B4A3E2C", INSTANCE_STORE_MODEL)
    disk(root, "nvme3n1", "259:4", 1745, "AWS1A1FB7E2A0E8B0AF6", INSTANCE_STORE_MODEL)
    disk(root, "nvme4n1", "259:5", 50, "vol0abc0000000000004", EBS_MODEL, partitions={"nvme4n1p1": "259:6"})
    disk(root, "nvme5n1", "259:7", 50, "vol0abc0000000000005", EBS_MODEL, holders=["md127"])
    disk(
        root,
        "nvme6n1",
        "259:8",
        50,
        "vol0abc0000000000006",
        EBS_MODEL,
        partitions={"nvme6n1p1": "259:9"},
        partition_holders={"nvme6n1p1": ["dm-0"]},
    )
    disk(root, "xvdf", "202:80", 20)  # Xen: no serial, /dev/sdf shows up as xvdf
    disk(root, "loop3", "7:3", 1)
    return root


@pytest.fixture
def mountinfo(tmp_path: Path) -> Path:
    path = tmp_path / "mountinfo"
    path.write_text(
        "22 1 259:1 / / rw,noatime shared:1 - xfs /dev/nvme0n1p1 rw,attr2,inode64\n"
        "23 22 0:21 / /proc rw,nosuid shared:2 - proc proc rw\n"
        "40 22 259:6 / /data rw,relatime shared:30 - ext4 /dev/nvme4n1p1 rw\n"
        "41 22 259:6 /sub /data2 rw,relatime shared:30 - ext4 /dev/nvme4n1p1 rw\n"
    )
    return path


def by_name(sysfs: Path) -> dict[str, BlockDevice]:
    return {d.name: d for d in list_block_devices(str(sysfs))}


def test_list_block_devices(sysfs: Path) -> None:
    found = list_block_devices(str(sysfs))
    assert [d.name for d in found] == [
        "loop3",
        "nvme0n1",
        "nvme1n1",
        "nvme2n1",
        "nvme3n1",
        "nvme4n1",
        "nvme5n1",
        "nvme6n1",
        "xvdf",
    ]  # whole disks only: no partitions
    nvme1 = by_name(sysfs)["nvme1n1"]
    assert nvme1.info() == {
        "path": "/dev/nvme1n1",
        "name": "nvme1n1",
        "volume_id": "vol-0abc0000000000001",
        "serial": "vol0abc0000000000001",
        "model": EBS_MODEL,
        "size_bytes": 100 * GIB,
        "emulated": None,
    }
    assert nvme1.major_minor == "259:2"
    store = by_name(sysfs)["nvme2n1"]
    assert store.volume_id is None
    assert store.model == INSTANCE_STORE_MODEL
    xen = by_name(sysfs)["xvdf"]
    assert (xen.serial, xen.model, xen.volume_id) == (None, None, None)


def test_list_block_devices_without_sysfs(tmp_path: Path) -> None:
    assert list_block_devices(str(tmp_path / "nothing")) == []


@pytest.mark.parametrize(
    ("serial", "volume_id"),
    [
        ("vol0abc", "vol-0abc"),
        ("vol-0abc", "vol-0abc"),
        ("AWS22B5E5E8F5B4A3E2C", None),
        (None, None),
        ("", None),
    ],
)
def test_volume_id_from_serial(serial: str | None, volume_id: str | None) -> None:
    assert BlockDevice("nvme1n1", "259:2", 0, serial, None).volume_id == volume_id


def test_find_ebs_by_volume_id_in_the_order_asked(sysfs: Path) -> None:
    found = find_ebs(["vol-0abc0000000000004", "vol-0abc0000000000001"], sysfs=str(sysfs), wait_s=0)
    assert [d.name for d in found] == ["nvme4n1", "nvme1n1"]


def test_find_ebs_on_xen_falls_back_to_the_device_name(sysfs: Path) -> None:
    found = find_ebs(
        ["vol-0abc0000000000001", "vol-0ffffffffffffffff"],
        device_names=["/dev/sdg", "/dev/sdf"],
        sysfs=str(sysfs),
        wait_s=0,
    )
    assert [d.name for d in found] == ["nvme1n1", "xvdf"]


def test_find_ebs_times_out_listing_visible_disks(sysfs: Path) -> None:
    started = time.monotonic()
    with pytest.raises(DeviceError) as caught:
        find_ebs(["vol-0abc0000000000001", "vol-0missing"], sysfs=str(sysfs), wait_s=0.3, poll_s=0.05)
    assert time.monotonic() - started < 2
    message = str(caught.value)
    assert message.startswith("EBS volume(s) vol-0missing not visible after 0 s; visible disks: ")
    for shown in (
        "nvme0n1(vol-0123456789abcdef0)",
        "nvme1n1(vol-0abc0000000000001)",
        f"nvme2n1({INSTANCE_STORE_MODEL})",
        "xvdf(None)",
        "loop3(None)",
    ):
        assert shown in message


def test_find_ebs_with_no_disks_at_all(tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match=r"visible disks: none$"):
        find_ebs(["vol-0abc"], sysfs=str(tmp_path), wait_s=0)


def test_find_ebs_waits_for_the_volume_to_appear(sysfs: Path) -> None:
    def attach() -> None:
        time.sleep(0.3)
        disk(sysfs, "nvme7n1", "259:10", 10, "vol0late000000000007", EBS_MODEL)

    thread = threading.Thread(target=attach)
    thread.start()
    try:
        found = find_ebs(["vol-0late000000000007"], sysfs=str(sysfs), wait_s=10, poll_s=0.05)
    finally:
        thread.join()
    assert [d.name for d in found] == ["nvme7n1"]


def test_find_instance_store(sysfs: Path, tmp_path: Path) -> None:
    assert [d.name for d in find_instance_store(0, str(sysfs))] == ["nvme2n1", "nvme3n1"]
    assert [d.name for d in find_instance_store(1, str(sysfs))] == ["nvme2n1"]
    with pytest.raises(DeviceError, match="3 instance-store disks requested, 2 present"):
        find_instance_store(3, str(sysfs))
    empty = tmp_path / "sys-ebs-only"
    disk(empty, "nvme0n1", "259:0", 8, "vol0123", EBS_MODEL)
    with pytest.raises(DeviceError, match="this instance has no instance-store NVMe disk"):
        find_instance_store(0, str(empty))


# ---------------------------------------------------------------- safety


@pytest.fixture
def no_blkid(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """signature() must not run blkid on this machine's devices: record the calls instead."""
    calls: list[str] = []

    def fake_signature(path: str) -> str | None:
        calls.append(path)
        return None

    monkeypatch.setattr(devices, "signature", fake_signature)
    return calls


@pytest.mark.parametrize("allow_destroy", [False, True])
def test_root_disk_is_refused_even_with_allow_destroy(
    sysfs: Path, mountinfo: Path, no_blkid: list[str], allow_destroy: bool
) -> None:
    problems = safety_problems(by_name(sysfs)["nvme0n1"], allow_destroy, str(sysfs), str(mountinfo))
    assert problems == ["/dev/nvme0n1 is the root disk (at /)"]
    assert no_blkid == []


def test_mounted_partition_is_refused(sysfs: Path, mountinfo: Path, no_blkid: list[str]) -> None:
    problems = safety_problems(by_name(sysfs)["nvme4n1"], True, str(sysfs), str(mountinfo))
    assert problems == ["/dev/nvme4n1 is mounted (at /data)"]


def test_held_by_md_is_refused(sysfs: Path, mountinfo: Path, no_blkid: list[str]) -> None:
    problems = safety_problems(by_name(sysfs)["nvme5n1"], True, str(sysfs), str(mountinfo))
    assert problems == ["/dev/nvme5n1 is in use by md127"]


def test_partition_held_by_dm_is_refused(sysfs: Path, mountinfo: Path, no_blkid: list[str]) -> None:
    problems = safety_problems(by_name(sysfs)["nvme6n1"], True, str(sysfs), str(mountinfo))
    assert problems == ["/dev/nvme6n1 is in use by dm-0"]


def test_a_free_device_is_checked_for_data_unless_allowed(
    sysfs: Path, mountinfo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def xfs_signature(path: str) -> str:
        seen.append(path)
        return "xfs"

    monkeypatch.setattr(devices, "signature", xfs_signature)
    nvme1 = by_name(sysfs)["nvme1n1"]
    assert safety_problems(nvme1, False, str(sysfs), str(mountinfo)) == [
        "/dev/nvme1n1 already holds xfs data; set allow_destroy to overwrite it"
    ]
    assert seen == ["/dev/nvme1n1"]
    assert safety_problems(nvme1, True, str(sysfs), str(mountinfo)) == []
    assert seen == ["/dev/nvme1n1"]  # allow_destroy: blkid is not even asked


def test_missing_mountinfo_means_nothing_mounted(sysfs: Path, tmp_path: Path, no_blkid: list[str]) -> None:
    assert safety_problems(by_name(sysfs)["nvme1n1"], False, str(sysfs), str(tmp_path / "none")) == []
    assert no_blkid == ["/dev/nvme1n1"]


def completed(rc: int, stdout: str) -> Any:
    return subprocess.CompletedProcess(["blkid"], rc, stdout, "")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (completed(0, "DEVNAME=/dev/x\nUUID=1234\nTYPE=xfs\n"), "xfs"),
        (completed(0, "DEVNAME=/dev/x\nPTUUID=ab\nPTTYPE=gpt\n"), "gpt"),
        (completed(0, "DEVNAME=/dev/x\nUSAGE=other\n"), "data"),
        (completed(2, ""), None),
        (CommandError("blkid is not installed"), None),
    ],
    ids=["filesystem", "partition-table", "unknown", "nothing", "no-blkid"],
)
def test_signature(monkeypatch: pytest.MonkeyPatch, answer: Any, expected: str | None) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> Any:
        calls.append(list(argv))
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(devices, "run", fake_run)
    assert devices.signature("/dev/x") == expected
    assert calls == [["blkid", "-p", "-o", "export", "/dev/x"]]


# ---------------------------------------------------------------- RAID0


def test_raid0_command() -> None:
    members = [
        BlockDevice("nvme1n1", "259:2", GIB, "vol01", EBS_MODEL),
        BlockDevice("nvme2n1", "259:3", GIB, "vol02", EBS_MODEL),
    ]
    assert raid0_command("/dev/md/sb-stripe", members, 256) == [
        "mdadm",
        "--create",
        "/dev/md/sb-stripe",
        "--run",
        "--force",
        "--level=0",
        "--metadata=1.2",
        "--raid-devices=2",
        "--chunk=256",
        "/dev/nvme1n1",
        "/dev/nvme2n1",
    ]
    assert raid0_command("/dev/md/sb-x", members[:1] * 3, None) == [
        "mdadm",
        "--create",
        "/dev/md/sb-x",
        "--run",
        "--force",
        "--level=0",
        "--metadata=1.2",
        "--raid-devices=3",
        "/dev/nvme1n1",
        "/dev/nvme1n1",
        "/dev/nvme1n1",
    ]
