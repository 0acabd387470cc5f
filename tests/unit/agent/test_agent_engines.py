"""engines: the fio job file as rendered, and the dd/command engines on a plain directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.agent.engines import PhaseContext, clear_workdir, fio_job_file, run_phase
from storagebench.agent.proc import CommandError


def ctx(tmp_path: Path, mode: str = "filesystem") -> PhaseContext:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    target = "/dev/loop42" if mode == "raw" else str(tmp_path)
    return PhaseContext(
        target,
        mode,
        None if mode == "raw" else str(workdir),
        str(tmp_path / "phase"),
        None,
        is_root=False,
    )


def fio_phase(**fio: Any) -> Any:
    return {"name": "p", "engine": "fio", "fio": fio}


def sections(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("["):
            current = line
            found[current] = []
        elif line:
            found[current].append(line)
    return found


def test_directory_target_and_logs(tmp_path: Path) -> None:
    phase = fio_phase(
        global_options={"ioengine": "libaio", "direct": 1},
        jobs=[{"name": "rr", "options": {"rw": "randread", "bs": "4k", "iodepth": 16}}],
    )
    text = fio_job_file(phase, ctx(tmp_path))
    assert text.endswith("\n")
    assert text.splitlines()[0] == "[global]"
    assert sections(text) == {
        "[global]": [
            f"directory={tmp_path / 'work'}",
            "write_iops_log=ts/sb",
            "write_lat_log=ts/sb",
            "write_bw_log=ts/sb",
            "log_avg_msec=1000",
            "per_job_logs=1",
            "ioengine=libaio",
            "direct=1",
        ],
        "[rr]": ["rw=randread", "bs=4k", "iodepth=16"],
    }


def test_raw_target_uses_filename_and_no_logs_without_timeseries(tmp_path: Path) -> None:
    phase = fio_phase(timeseries=False, jobs=[{"name": "a", "options": {"rw": "read"}}])
    text = fio_job_file(phase, ctx(tmp_path, mode="raw"))
    assert text == "[global]\nfilename=/dev/loop42\n\n[a]\nrw=read\n"


def test_jbod_filename_keeps_the_colon_list(tmp_path: Path) -> None:
    context = PhaseContext("/dev/loop1:/dev/loop2", "raw", None, str(tmp_path), None, False)
    text = fio_job_file(fio_phase(timeseries=False, jobs=[{"name": "a", "options": {}}]), context)
    assert "filename=/dev/loop1:/dev/loop2\n" in text


def test_plan_global_options_come_after_ours_so_they_win(tmp_path: Path) -> None:
    phase = fio_phase(global_options={"log_avg_msec": 500}, jobs=[{"name": "a", "options": {}}])
    lines = sections(fio_job_file(phase, ctx(tmp_path)))["[global]"]
    # A dict update: the plan's value replaces ours in place (fio would also take the last one).
    assert "log_avg_msec=500" in lines
    assert "log_avg_msec=1000" not in lines


def test_user_job_file_follows_our_global(tmp_path: Path) -> None:
    user = "[global]\nbs=64k\n\n[mine]\nrw=write\nsize=8M\n\n\n"
    text = fio_job_file(fio_phase(job_file=user, jobs=[], timeseries=False), ctx(tmp_path))
    ours = f"[global]\ndirectory={tmp_path / 'work'}\n"
    assert text.startswith(ours)
    assert text == ours + "\n" + user.rstrip() + "\n"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"rw": "read\nfilename=/dev/sda"}, "has a newline"),
        ({"rw\nfilename": "/dev/sda"}, "has a newline"),
        ({"rw=read": "x"}, "or '='"),
    ],
    ids=["newline-in-value", "newline-in-key", "equals-in-key"],
)
def test_options_with_newlines_are_refused(tmp_path: Path, options: dict[str, Any], fragment: str) -> None:
    with pytest.raises(CommandError, match="fio option") as caught:
        fio_job_file(fio_phase(jobs=[{"name": "a", "options": options}]), ctx(tmp_path))
    assert fragment in str(caught.value)


def test_global_options_with_newlines_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="newline"):
        fio_job_file(
            fio_phase(global_options={"ioengine": "sync\n[evil]"}, jobs=[{"name": "a", "options": {}}]),
            ctx(tmp_path),
        )


def test_job_names_with_newlines_are_refused(tmp_path: Path) -> None:
    phase = fio_phase(jobs=[{"name": "a]\nfilename=/dev/sda\n[b", "options": {"rw": "write"}}])
    with pytest.raises(CommandError):
        fio_job_file(phase, ctx(tmp_path))


# ---------------------------------------------------------------- command and dd engines


def test_command_phase_output_env_and_timing(tmp_path: Path) -> None:
    context = ctx(tmp_path)
    phase = {
        "name": "cmd",
        "engine": "command",
        "command": {
            "script": 'echo "$SB_THREAD/$SB_THREADS $SB_TARGET_DIR $EXTRA"; echo err >&2; '
            'echo x > "f.$SB_THREAD"',
            "parallel": 2,
            "env": {"EXTRA": "yes"},
            "accounting": {"bytes": 4, "files": 2},
        },
    }
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "ok", result
    assert result["rc"] == 0
    assert result["files"] == ["stderr.0.txt", "stderr.1.txt", "stdout.0.txt", "stdout.1.txt", "timing.json"]
    phase_dir = Path(context.phase_dir)
    for thread in (0, 1):
        out = (phase_dir / f"stdout.{thread}.txt").read_text()
        assert out == f"{thread}/2 {context.workdir} yes\n"
        assert (phase_dir / f"stderr.{thread}.txt").read_text() == "err\n"
        assert (Path(str(context.workdir)) / f"f.{thread}").exists()  # cwd is the workdir
    timing = json.loads((phase_dir / "timing.json").read_text())
    assert timing == result["timing"]
    assert timing["accounting"] == {"bytes": 4, "files": 2}
    assert [t["thread"] for t in timing["threads"]] == [0, 1]
    assert all(t["rc"] == 0 for t in timing["threads"])
    assert timing["real_s"] >= max(t["real_s"] for t in timing["threads"]) - 0.01


def test_command_phase_failure_and_timeout(tmp_path: Path) -> None:
    failing = {"name": "bad", "engine": "command", "command": {"script": "exit 4"}}
    result = run_phase(failing, ctx(tmp_path))  # type: ignore[arg-type]
    assert result["status"] == "failed"
    assert result["rc"] == 4
    assert result["error"] == "command thread 0 exited with status 4"

    slow = {"name": "slow", "engine": "command", "command": {"script": "sleep 20"}, "timeout_s": 1}
    result = run_phase(slow, ctx(tmp_path))  # type: ignore[arg-type]
    assert result["status"] == "failed"
    assert result["error"] == "command thread 0 timed out after 1 s and was killed"
    assert result["timing"]["real_s"] < 5


def test_dd_phase_writes_commands_and_timing(tmp_path: Path) -> None:
    context = ctx(tmp_path)
    phase = {
        "name": "dd",
        "engine": "dd",
        "dd": {"direction": "write", "file": "data", "bs": "4k", "count": 3, "parallel": 2, "conv": "fsync"},
    }
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "ok", result
    work = Path(str(context.workdir))
    assert sorted(p.name for p in work.iterdir()) == ["data.0", "data.1"]
    assert (work / "data.0").stat().st_size == 3 * 4096
    commands = (Path(context.phase_dir) / "commands.txt").read_text().splitlines()
    assert commands == [
        f"dd if=/dev/zero of={work / 'data.0'} bs=4k count=3 conv=fsync",
        f"dd if=/dev/zero of={work / 'data.1'} bs=4k count=3 conv=fsync",
    ]
    assert "records out" in (Path(context.phase_dir) / "dd.1.stderr").read_text()
    assert json.loads((Path(context.phase_dir) / "timing.json").read_text())["threads"][1]["rc"] == 0

    read = {"name": "rd", "engine": "dd", "dd": {"direction": "read", "file": "data", "bs": "4k", "count": 3}}
    context.phase_dir = str(tmp_path / "phase-read")
    result = run_phase(read, context)  # type: ignore[arg-type]
    # parallel 1 reads "data" (no thread suffix), which does not exist: dd fails, the phase records it.
    assert result["status"] == "failed"
    assert result["error"] == "dd thread 0 exited with status 1"


def test_dd_and_command_need_a_file_system(tmp_path: Path) -> None:
    raw = ctx(tmp_path, mode="raw")
    dd = {"name": "dd", "engine": "dd", "dd": {"direction": "write", "file": "f", "bs": "4k", "count": 1}}
    assert run_phase(dd, raw)["error"] == "dd phases need a file system target"  # type: ignore[arg-type]
    command = {"name": "c", "engine": "command", "command": {"script": "true"}}
    assert run_phase(command, raw)["error"] == "command phases need a file system target"  # type: ignore[arg-type]


def test_drop_caches_is_skipped_when_not_root(tmp_path: Path) -> None:
    phase = {"name": "c", "engine": "command", "command": {"script": "true"}, "drop_caches": True}
    result = run_phase(phase, ctx(tmp_path))  # type: ignore[arg-type]
    assert result["drop_caches"] == "skipped: not root"


def test_clear_workdir_keeps_the_directory(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "sub" / "deeper").mkdir(parents=True)
    (work / "file").write_text("x")
    (work / "sub" / "deeper" / "f").write_text("y")
    (work / "link").symlink_to(tmp_path)  # a link is removed, never followed
    clear_workdir(str(work))
    assert work.is_dir()
    assert list(work.iterdir()) == []
    assert tmp_path.is_dir()


NODE_LOSS = {"role": "controller", "index": 0, "at_s": 1.5}


def test_a_node_loss_phase_logs_every_100_ms(tmp_path: Path) -> None:
    phase = {**fio_phase(jobs=[{"name": "a", "options": {}}]), "node_loss": NODE_LOSS}
    lines = fio_job_file(phase, ctx(tmp_path)).splitlines()
    assert "log_avg_msec=100" in lines
    assert "log_avg_msec=1000" not in lines


def test_a_node_loss_phase_without_time_series_says_why(tmp_path: Path) -> None:
    phase = {**fio_phase(timeseries=False, jobs=[{"name": "a", "options": {}}]), "node_loss": NODE_LOSS}
    result: Any = {}
    from storagebench.agent.engines import _measure_node_loss

    _measure_node_loss(phase, str(tmp_path), result)
    assert result == {"node_loss_error": "the phase logs no time series (fio.timeseries is false)"}
    phase = {**fio_phase(jobs=[{"name": "a", "options": {}}]), "node_loss": NODE_LOSS}
    (tmp_path / "ts").mkdir()
    _measure_node_loss(phase, str(tmp_path), result)
    assert result["node_loss_error"].startswith("controller[0] removed at 1.5 s:")
    assert "no fio iops log" in result["node_loss_error"]
