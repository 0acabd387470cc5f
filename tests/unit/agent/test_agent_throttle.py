"""ThrottleV1 / ThrottleV2 against a fake cgroup file system, and create_throttle's choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.agent.throttle import (
    Served,
    ThrottleError,
    ThrottleV1,
    ThrottleV2,
    create_throttle,
)

V1_FILES = ("read_iops_device", "write_iops_device", "read_bps_device", "write_bps_device")


def as_tuple(served: Served) -> tuple[int, int, int, int]:
    return (served.read_ios, served.write_ios, served.read_bytes, served.write_bytes)


def test_v1_writes_one_file_per_limit_with_zero_as_one(tmp_path: Path) -> None:
    throttle = ThrottleV1(str(tmp_path))
    throttle.set_limits("7:3", 750, 0, 131072000, 0)
    written = {name: (tmp_path / f"blkio.throttle.{name}").read_text() for name in V1_FILES}
    assert written == {
        "read_iops_device": "7:3 750",
        "write_iops_device": "7:3 1",  # 0 would remove the limit in blkio
        "read_bps_device": "7:3 131072000",
        "write_bps_device": "7:3 1",
    }
    throttle.set_limits("7:3", 2250.7, -5, 1.2, 99)  # type: ignore[arg-type]
    assert (tmp_path / "blkio.throttle.read_iops_device").read_text() == "7:3 2250"
    assert (tmp_path / "blkio.throttle.write_iops_device").read_text() == "7:3 1"
    assert (tmp_path / "blkio.throttle.read_bps_device").read_text() == "7:3 1"
    assert throttle.procs_file == str(tmp_path / "cgroup.procs")


def test_v1_refused_write_is_a_throttle_error(tmp_path: Path) -> None:
    throttle = ThrottleV1(str(tmp_path / "missing-cgroup"))
    with pytest.raises(ThrottleError, match=r"cannot write '7:3 10' to .*blkio.throttle.read_iops_device"):
        throttle.set_limits("7:3", 10, 10, 10, 10)


def test_v1_served(tmp_path: Path) -> None:
    (tmp_path / "blkio.throttle.io_serviced").write_text(
        "7:3 Read 1200\n7:3 Write 34\n7:3 Sync 1234\n7:3 Async 0\n7:3 Discard 0\n7:3 Total 1234\n"
        "8:0 Read 5\n8:0 Write 0\n8:0 Sync 5\n8:0 Async 0\n8:0 Discard 0\n8:0 Total 5\nTotal 1239\n"
    )
    (tmp_path / "blkio.throttle.io_service_bytes").write_text(
        "7:3 Read 4915200\n7:3 Write 8912896\n7:3 Sync 13828096\n7:3 Async 0\n7:3 Discard 0\n"
        "7:3 Total 13828096\n8:0 Read 20480\n8:0 Write 0\nTotal 13848576\n"
    )
    served = ThrottleV1(str(tmp_path)).served()
    assert sorted(served) == ["7:3", "8:0"]
    assert as_tuple(served["7:3"]) == (1200, 34, 4915200, 8912896)
    assert as_tuple(served["8:0"]) == (5, 0, 20480, 0)


def test_v1_served_empty_cgroup(tmp_path: Path) -> None:
    (tmp_path / "blkio.throttle.io_serviced").write_text("Total 0\n")
    (tmp_path / "blkio.throttle.io_service_bytes").write_text("Total 0\n")
    assert ThrottleV1(str(tmp_path)).served() == {}


def test_v2_writes_io_max_in_one_line(tmp_path: Path) -> None:
    throttle = ThrottleV2(str(tmp_path))
    throttle.set_limits("259:4", 750, 0, 131072000, 13107200)
    assert (tmp_path / "io.max").read_text() == "259:4 riops=750 wiops=1 rbps=131072000 wbps=13107200"


def test_v2_served(tmp_path: Path) -> None:
    (tmp_path / "io.stat").write_text(
        "7:3 rbytes=4915200 wbytes=8912896 rios=1200 wios=34 dbytes=0 dios=0\n"
        "259:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0 cost.usage=3\n"
        "\n"
        "8:0 rbytes=1\n"
    )
    served = ThrottleV2(str(tmp_path)).served()
    assert as_tuple(served["7:3"]) == (1200, 34, 4915200, 8912896)
    assert as_tuple(served["259:0"]) == (1, 0, 4096, 0)
    assert as_tuple(served["8:0"]) == (0, 0, 1, 0)


def test_remove(tmp_path: Path) -> None:
    group = tmp_path / "storagebench-r-c"
    group.mkdir()
    ThrottleV1(str(group)).remove()
    assert not group.exists()
    ThrottleV1(str(group)).remove()  # already gone: nothing to do
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("")
    with pytest.raises(ThrottleError, match="cannot remove cgroup"):
        ThrottleV2(str(busy)).remove()


# ---------------------------------------------------------------- create_throttle


def fake_v1(root: Path) -> Path:
    v1 = root / "blkio"
    v1.mkdir(parents=True)
    (v1 / "blkio.throttle.read_iops_device").write_text("")
    return v1


def fake_v2(root: Path, controllers: str, subtree: str | None = "") -> Path:
    root.mkdir(parents=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    if subtree is not None:
        (root / "cgroup.subtree_control").write_text(subtree + "\n")
    return root


def test_v1_is_preferred_when_mounted(tmp_path: Path) -> None:
    v1 = fake_v1(tmp_path)
    v2 = fake_v2(tmp_path / "unified", "cpu io memory")
    throttle = create_throttle("storagebench-r-c", str(v1), (str(v2),))
    assert isinstance(throttle, ThrottleV1)
    assert throttle.version == 1
    assert throttle.path == str(v1 / "storagebench-r-c")
    assert (v1 / "storagebench-r-c").is_dir()
    assert not (v2 / "storagebench-r-c").exists()


def test_v2_enables_io_and_creates_the_group(tmp_path: Path) -> None:
    without_io = fake_v2(tmp_path / "cgroup", "cpu memory pids")
    with_io = fake_v2(tmp_path / "unified", "cpuset cpu io memory", subtree="cpu")
    throttle = create_throttle("storagebench-r-c", str(tmp_path / "no-v1"), (str(without_io), str(with_io)))
    assert isinstance(throttle, ThrottleV2)
    assert throttle.path == str(with_io / "storagebench-r-c")
    assert (with_io / "storagebench-r-c").is_dir()
    assert (with_io / "cgroup.subtree_control").read_text() == "+io"
    assert (without_io / "cgroup.subtree_control").read_text() == "\n"


def test_v2_leaves_subtree_control_alone_when_io_is_enabled(tmp_path: Path) -> None:
    v2 = fake_v2(tmp_path / "cgroup", "io", subtree="cpu io")
    create_throttle("g", str(tmp_path / "no-v1"), (str(v2),))
    assert (v2 / "cgroup.subtree_control").read_text() == "cpu io\n"


def test_an_existing_group_is_reused(tmp_path: Path) -> None:
    v1 = fake_v1(tmp_path)
    (v1 / "storagebench-r-c").mkdir()
    assert create_throttle("storagebench-r-c", str(v1), ()).path == str(v1 / "storagebench-r-c")


@pytest.mark.parametrize(
    "layout", ["nothing", "v2-without-io", "v1-without-throttle-files"], ids=lambda layout: layout
)
def test_neither_is_a_throttle_error(tmp_path: Path, layout: str) -> None:
    v1 = tmp_path / "blkio"
    v2 = tmp_path / "cgroup"
    if layout == "v2-without-io":
        fake_v2(v2, "cpu memory")
    if layout == "v1-without-throttle-files":
        v1.mkdir()
        (v1 / "blkio.weight").write_text("")
    with pytest.raises(ThrottleError, match="neither cgroup v1 blkio nor a cgroup v2 hierarchy"):
        create_throttle("g", str(v1), (str(v2),))
    assert not (v1 / "g").exists()
    assert not (v2 / "g").exists()


def test_uncreatable_group_is_a_throttle_error(tmp_path: Path) -> None:
    v1 = fake_v1(tmp_path)
    (v1 / "file").write_text("")
    with pytest.raises(ThrottleError, match=r"cannot create cgroup .*file/g: Not a directory"):
        create_throttle("file/g", str(v1), ())


def test_cgroup_names_cannot_prefix_each_other() -> None:
    from storagebench.agent.emulate import CGROUP_PREFIX, cgroup_name

    assert cgroup_name("r-1", "c") == f"{CGROUP_PREFIX}r-1:c" == "storagebench:r-1:c"
    # ":" is not allowed in ids, so run r-1's prefix never matches run r-1-retry's cgroup.
    assert not cgroup_name("r-1-retry", "c").startswith(f"{CGROUP_PREFIX}r-1:")
