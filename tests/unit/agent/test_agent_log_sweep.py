"""Progress (agent.log, progress.json), the manifest writer, and sweep on an empty machine state."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from storagebench.agent import sweep as sweep_module
from storagebench.agent.log import Progress, utc_now
from storagebench.agent.proc import CommandError
from storagebench.agent.sweep import resources_of, sweep
from storagebench.protocol.manifest import MANIFEST_VERSION, read_manifest, write_json_atomic

LINE = re.compile(r"^\[storagebench-agent \d\d:\d\d:\d\d\] (.*)$")
EMPTY = {
    "mounts": [],
    "arrays": [],
    "loops": [],
    "cgroups": [],
    "twins": [],
    "twin_mounts": [],
    "directories": [],
}


def test_utc_now_is_iso_with_milliseconds_and_z() -> None:
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", utc_now())


def test_progress_writes_agent_log_and_the_stream(tmp_path: Path) -> None:
    stream = io.StringIO()
    progress = Progress(str(tmp_path), stream=stream)
    progress.say("preparing target vol (ebs)")
    progress.say("step 1/2 s1 on vol")
    progress.close()
    progress.close()  # twice is harmless
    logged = (tmp_path / "agent.log").read_text().splitlines()
    assert [LINE.match(line).group(1) for line in logged] == [  # type: ignore[union-attr]
        "preparing target vol (ebs)",
        "step 1/2 s1 on vol",
    ]
    assert stream.getvalue().splitlines() == logged


def test_progress_appends_and_quiet_keeps_the_log(tmp_path: Path) -> None:
    (tmp_path / "agent.log").write_text("earlier\n")
    stream = io.StringIO()
    progress = Progress(str(tmp_path), stream=stream, quiet=True)
    progress.say("hello")
    progress.close()
    assert stream.getvalue() == ""
    lines = (tmp_path / "agent.log").read_text().splitlines()
    assert lines[0] == "earlier"
    assert lines[1].endswith("] hello")


def test_progress_json_is_current(tmp_path: Path) -> None:
    progress = Progress(str(tmp_path), stream=io.StringIO())
    assert not (tmp_path / "progress.json").exists()
    progress.update(stage="workloads", step=2, steps=5, current="s2")
    first = json.loads((tmp_path / "progress.json").read_text())
    assert first["stage"] == "workloads"
    assert (first["step"], first["steps"], first["current"]) == (2, 5, "s2")
    assert re.match(r"^\d{4}-.*Z$", first["updated_at"])
    progress.update(stage="done", status="ok")
    second = json.loads((tmp_path / "progress.json").read_text())
    assert second["stage"] == "done"
    assert second["status"] == "ok"
    assert second["current"] == "s2"  # the state accumulates
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []
    progress.close()


def test_progress_without_an_output_directory_only_talks(tmp_path: Path) -> None:
    stream = io.StringIO()
    progress = Progress(None, stream=stream)
    progress.say("x")
    progress.update(stage="y")
    assert stream.getvalue().endswith("] x\n")
    assert progress.state["stage"] == "y"


def test_write_json_atomic_and_read_manifest(tmp_path: Path) -> None:
    write_json_atomic(str(tmp_path / "manifest.json"), {"manifest_version": MANIFEST_VERSION, "b": 1, "a": 2})
    text = (tmp_path / "manifest.json").read_text()
    assert text.endswith("}\n")
    assert text.index('"a"') < text.index('"b"')  # sorted keys
    assert read_manifest(str(tmp_path))["a"] == 2  # type: ignore[typeddict-item]
    write_json_atomic(str(tmp_path / "manifest.json"), {"manifest_version": 99})
    with pytest.raises(ValueError, match="manifest_version 99 is not 1"):
        read_manifest(str(tmp_path))


def test_write_json_atomic_leaves_no_temporary_on_failure(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text('{"old": true}\n')
    with pytest.raises(TypeError):
        write_json_atomic(str(tmp_path / "m.json"), {"bad": object()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]
    assert json.loads((tmp_path / "m.json").read_text()) == {"old": True}


# ---------------------------------------------------------------- sweep


def test_resources_of_on_an_empty_machine(tmp_path: Path) -> None:
    assert resources_of("r-nothing-here-7f3a", str(tmp_path / "mnt"), str(tmp_path / "vol")) == EMPTY
    (tmp_path / "mnt").mkdir()
    (tmp_path / "vol").mkdir()
    (tmp_path / "mnt" / "other-run-c1").mkdir()
    assert resources_of("r-nothing-here-7f3a", str(tmp_path / "mnt"), str(tmp_path / "vol")) == EMPTY


def test_sweep_on_an_empty_machine(tmp_path: Path) -> None:
    report = sweep("r-nothing-here-7f3a", str(tmp_path / "mnt"), str(tmp_path / "vol"))
    assert report == {"found": [], "removed": [], "leftovers": []}


def test_sweep_removes_directories_of_the_run_only(tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    vol = tmp_path / "vol"
    for path in (mnt / "r-9f" / "c1" / "vol", vol / "r-9f" / "c1", vol / "r-9f" / "c2", mnt / "r-9g" / "c1"):
        path.mkdir(parents=True)
    (vol / "r-9f" / "c1" / "vol-0.img").write_text("")
    found = resources_of("r-9f", str(mnt), str(vol))
    assert found == dict(EMPTY, directories=[str(mnt / "r-9f"), str(vol / "r-9f")])
    report = sweep("r-9f", str(mnt), str(vol))
    assert report["leftovers"] == []
    assert report["removed"] == [f"remove {d}" for d in found["directories"]]
    assert sorted(p.name for p in mnt.iterdir()) == ["r-9g"]
    assert list(vol.iterdir()) == []


def test_sweep_never_deletes_files_under_the_mount_root(tmp_path: Path) -> None:
    kept = tmp_path / "mnt" / "r-1" / "c" / "vol" / "results.csv"
    kept.parent.mkdir(parents=True)
    kept.write_text("someone's data")
    report = sweep("r-1", str(tmp_path / "mnt"), str(tmp_path / "vol"))
    assert kept.read_text() == "someone's data"
    (leftover,) = report["leftovers"]
    assert leftover.startswith(f"remove {tmp_path / 'mnt' / 'r-1'}: ")


def test_sweep_reports_what_it_cannot_remove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "vol" / "r-1" / "c").mkdir(parents=True)

    def refuse(path: str) -> None:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(sweep_module.shutil, "rmtree", refuse)
    report = sweep("r-1", str(tmp_path / "mnt"), str(tmp_path / "vol"))
    assert report["removed"] == []
    (leftover,) = report["leftovers"]
    assert leftover.startswith(f"remove {tmp_path / 'vol' / 'r-1'}: ")


def test_sweep_does_not_take_another_run_whose_id_extends_this_one(tmp_path: Path) -> None:
    (tmp_path / "vol" / "r-1" / "c").mkdir(parents=True)  # run r-1, config c
    (tmp_path / "vol" / "r-1-retry" / "c").mkdir(parents=True)  # run r-1-retry, config c
    (tmp_path / "mnt" / "r-1-c").mkdir(parents=True)  # the old flat layout of run r-1-c's tags
    found = resources_of("r-1", str(tmp_path / "mnt"), str(tmp_path / "vol"))
    assert found["directories"] == [str(tmp_path / "vol" / "r-1")]
    sweep("r-1", str(tmp_path / "mnt"), str(tmp_path / "vol"))
    assert (tmp_path / "vol" / "r-1-retry" / "c").is_dir()
    assert (tmp_path / "mnt" / "r-1-c").is_dir()


def test_sweep_never_deletes_through_a_mount_it_could_not_unmount(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mountpoint = tmp_path / "mnt" / "r-1" / "c" / "share"
    mountpoint.mkdir(parents=True)
    (mountpoint / "precious.txt").write_text("data on the mounted file system")

    def mounts_under(prefix: str) -> list[str]:
        return [str(mountpoint)] if str(mountpoint).startswith(prefix + "/") else []

    def busy(path: str) -> None:
        raise CommandError(f"umount --lazy {path} failed with status 32: target is busy")

    monkeypatch.setattr(sweep_module, "_mounts_under", mounts_under)
    monkeypatch.setattr(sweep_module, "unmount", busy)
    report = sweep("r-1", str(tmp_path / "mnt"), str(tmp_path / "vol"))
    assert report["leftovers"] == [
        f"unmount {mountpoint}: umount --lazy {mountpoint} failed with status 32: target is busy",
        f"{tmp_path / 'mnt' / 'r-1'} kept: still mounted at {mountpoint}",
    ]
    assert (mountpoint / "precious.txt").exists()
