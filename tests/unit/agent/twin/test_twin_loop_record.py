"""The record that leads sweep to a twin's loop device once the kernel no longer names its path."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from storagebench.agent.twin import loop_record


def _losetup(monkeypatch: pytest.MonkeyPatch, devices: list[dict[str, Any]]) -> None:
    listing = json.dumps({"loopdevices": devices})

    def fake_run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert argv[:3] == ["losetup", "--list", "--json"]
        return subprocess.CompletedProcess(argv, 0, listing, "")

    monkeypatch.setattr(loop_record, "run", fake_run)


def _recorded(tmp_path: Path, name: str, device: str) -> Path:
    volume = tmp_path / f"{name}.volume"
    volume.write_bytes(b"")
    backing = tmp_path / "r1" / "c1" / f"{name}.img"
    backing.parent.mkdir(parents=True, exist_ok=True)
    loop_record.write_record(str(backing), device, str(volume))
    return volume


def test_a_loop_device_matching_its_record_is_found_whatever_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    volume = _recorded(tmp_path, "vol-0", "/dev/loop7")
    status = volume.stat()
    # losetup pads the device number column; the backing file's path is gone ("/volume")
    _losetup(
        monkeypatch,
        [
            {
                "name": "/dev/loop7",
                "back-maj:min": f"   {os.major(status.st_dev)}:{os.minor(status.st_dev)} ",
                "back-ino": status.st_ino,
            },
            {"name": "/dev/loop8", "back-maj:min": "0:41", "back-ino": 2},
        ],
    )
    assert loop_record.recorded_loops(str(tmp_path / "r1")) == ["/dev/loop7"]
    assert loop_record.recorded_loops(str(tmp_path / "r2")) == []  # another run's directory


def test_a_loop_device_reused_for_something_else_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    volume = _recorded(tmp_path, "vol-0", "/dev/loop7")
    status = volume.stat()
    same_dev = f"{os.major(status.st_dev)}:{os.minor(status.st_dev)}"
    _losetup(monkeypatch, [{"name": "/dev/loop7", "back-maj:min": same_dev, "back-ino": status.st_ino + 1}])
    assert loop_record.recorded_loops(str(tmp_path / "r1")) == []
    _losetup(monkeypatch, [])  # detached since
    assert loop_record.recorded_loops(str(tmp_path / "r1")) == []


def test_a_half_written_record_is_skipped_and_removing_twice_is_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backing = tmp_path / "r1" / "vol-0.img"
    backing.parent.mkdir()
    Path(loop_record.record_path(str(backing))).write_text('{"device": "/dev/lo')
    _losetup(monkeypatch, [{"name": "/dev/loop7", "back-maj:min": "0:40", "back-ino": 2}])
    assert loop_record.recorded_loops(str(tmp_path / "r1")) == []
    loop_record.remove_record(str(backing))
    loop_record.remove_record(str(backing))
    assert not Path(loop_record.record_path(str(backing))).exists()
