"""The agent end to end on a directory target: no devices, no cgroup, real fio/dd/sh.

These need neither root nor loop devices (only fio), so they also run on a developer's laptop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_plans import fio_step

from storagebench.agent.cli import main

pytestmark = pytest.mark.fio


def directory_target(tmp_path: Path) -> dict[str, Any]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    return {"id": "here", "kind": "directory", "path": str(data)}


def small_fio_step(step_id: str, **job: Any) -> dict[str, Any]:
    options = {"rw": "randwrite", "bs": "4k", "size": "4M", "iodepth": 4, "runtime": 1, "time_based": 1}
    options.update(job)
    return fio_step(step_id, "here", {"job": options}, ioengine="libaio", direct=1)


def dd_step(step_id: str) -> dict[str, Any]:
    return {
        "id": step_id,
        "target": "here",
        "repetition": 1,
        "phases": [
            {
                "name": "write",
                "engine": "dd",
                "dd": {"direction": "write", "file": "big", "bs": "1M", "count": 4, "conv": "fsync"},
            },
            {
                "name": "read",
                "engine": "dd",
                "dd": {"direction": "read", "file": "big", "bs": "1M", "count": 4, "iflag": "direct"},
            },
        ],
    }


def command_step(step_id: str, script: str = 'head -c 65536 /dev/zero > "f.$SB_THREAD"') -> dict[str, Any]:
    return {
        "id": step_id,
        "target": "here",
        "repetition": 1,
        "phases": [
            {
                "name": "sh",
                "engine": "command",
                "command": {"script": script, "parallel": 2, "accounting": {"bytes": 131072, "files": 2}},
            }
        ],
    }


def statuses(manifest: dict[str, Any]) -> dict[str, str]:
    return {step["id"]: step["status"] for step in manifest["steps"]}


def test_fio_dd_and_command_steps(agent_env: Any, tmp_path: Path) -> None:
    target = directory_target(tmp_path)
    plan = agent_env.plan([target], [small_fio_step("s-fio"), dd_step("s-dd"), command_step("s-cmd")])
    code, manifest = agent_env.run(plan)

    assert code == 0, manifest["error"]
    assert manifest["status"] == "ok"
    assert manifest["error"] is None
    assert manifest["cleanup"]["status"] == "ok"
    assert manifest["cleanup"]["leftovers"] == []
    assert statuses(manifest) == {"s-fio": "ok", "s-dd": "ok", "s-cmd": "ok"}
    assert manifest["system"]["fio_version"].startswith("fio-")
    assert manifest["emulation_events"] == []
    (prepared,) = manifest["targets"]
    assert prepared["mode"] == "filesystem"
    assert prepared["labels"] == ["directory:unthrottled"]
    assert prepared["path"] == f"{target['path']}/storagebench-{agent_env.tag}-here"
    assert json.loads((agent_env.out / "plan.json").read_text()) == plan
    assert "done: ok" in (agent_env.out / "agent.log").read_text()
    assert json.loads((agent_env.out / "progress.json").read_text())["stage"] == "done"

    fio_dir = agent_env.phase_dir("s-fio", "p")
    (fio_phase,) = manifest["steps"][0]["phases"]
    assert fio_phase["dir"] == "steps/s-fio/p"
    assert fio_phase["rc"] == 0
    assert {"job.fio", "fio.json", "fio.txt", "fio.stderr", "ts/sb_iops.1.log"} <= set(fio_phase["files"])
    assert not (fio_dir / "fio.out").exists()  # split into fio.json + fio.txt
    document = agent_env.fio_json("s-fio")
    assert document["jobs"][0]["write"]["total_ios"] > 0
    assert "Run status group 0" in (fio_dir / "fio.txt").read_text()
    assert fio_phase["timing"]["real_s"] >= 1.0
    assert f"directory={prepared['path']}/sb-s-fio" in (fio_dir / "job.fio").read_text()

    for phase in ("write", "read"):
        timing = json.loads((agent_env.phase_dir("s-dd", phase) / "timing.json").read_text())
        assert timing["threads"][0]["rc"] == 0
        assert timing["real_s"] > 0
        assert "4194304 bytes" in (agent_env.phase_dir("s-dd", phase) / "dd.0.stderr").read_text()

    cmd_dir = agent_env.phase_dir("s-cmd", "sh")
    timing = json.loads((cmd_dir / "timing.json").read_text())
    assert [t["rc"] for t in timing["threads"]] == [0, 0]
    assert timing["accounting"] == {"bytes": 131072, "files": 2}
    assert timing["user_s"] >= 0
    assert timing["sys_s"] >= 0

    # The work directory (and every step's files in it) is gone; the target directory is not.
    assert Path(target["path"]).is_dir()
    assert list(Path(target["path"]).iterdir()) == []
    agent_env.assert_clean()


def test_a_failing_step_keeps_the_other_results(agent_env: Any, tmp_path: Path) -> None:
    steps = [small_fio_step("s-bad", rw="sideways"), dd_step("s-dd"), command_step("s-cmd")]
    code, manifest = agent_env.run(agent_env.plan([directory_target(tmp_path)], steps))

    assert code == 1
    assert manifest["status"] == "partial"
    assert manifest["error"] == "1 of 3 steps failed"
    assert statuses(manifest) == {"s-bad": "failed", "s-dd": "ok", "s-cmd": "ok"}
    bad = manifest["steps"][0]
    assert bad["error"].startswith("phase p: fio thread 0 exited with status 1")
    assert "sideways" in bad["error"]  # the tail of fio's stderr says why
    assert (agent_env.phase_dir("s-bad", "p") / "job.fio").exists()
    assert (agent_env.phase_dir("s-dd", "read") / "timing.json").exists()
    assert (agent_env.phase_dir("s-cmd", "sh") / "timing.json").exists()
    assert manifest["cleanup"]["status"] == "ok"
    assert list((tmp_path / "data").iterdir()) == []
    agent_env.assert_clean()


def test_fail_fast_skips_the_rest(agent_env: Any, tmp_path: Path) -> None:
    failing = command_step("s-fail", script="echo broken >&2; exit 3")
    failing["phases"].append({"name": "after", "engine": "command", "command": {"script": "true"}})
    steps = [failing, command_step("s-2"), dd_step("s-3")]
    code, manifest = agent_env.run(agent_env.plan([directory_target(tmp_path)], steps, fail_fast=True))

    assert code == 1
    assert manifest["status"] == "partial"
    assert statuses(manifest) == {"s-fail": "failed", "s-2": "skipped", "s-3": "skipped"}
    first = manifest["steps"][0]
    assert first["error"] == "phase sh: command thread 0 exited with status 3"
    assert [(p["name"], p["status"]) for p in first["phases"]] == [("sh", "failed"), ("after", "skipped")]
    assert first["phases"][1]["error"] == "an earlier phase failed"
    for skipped in manifest["steps"][1:]:
        assert skipped["error"] == "skipped: fail_fast after an earlier failure"
        assert skipped["phases"] == []
    assert not (agent_env.out / "steps" / "s-2").exists()
    assert (agent_env.phase_dir("s-fail", "sh") / "stderr.0.txt").read_text() == "broken\n"
    agent_env.assert_clean()


def test_setup_hook_failure_aborts_before_targets(agent_env: Any, tmp_path: Path) -> None:
    marker = tmp_path / "teardown-ran"
    plan = agent_env.plan(
        [directory_target(tmp_path)],
        [command_step("s-1")],
        setup="echo setting up $SB_RUN_ID; exit 7",
        teardown=f'echo "$SB_RUN_ID $SB_CONFIG_ID" > "{marker}"',
    )
    code, manifest = agent_env.run(plan)

    assert code == 3
    assert manifest["status"] == "failed"
    assert manifest["error"] == "the setup hook exited with status 7 (see hooks/setup.out)"
    assert manifest["targets"] == []
    assert manifest["steps"] == []
    assert list((tmp_path / "data").iterdir()) == []  # the directory target was never prepared
    assert manifest["hooks"]["setup"]["rc"] == 7
    assert manifest["hooks"]["teardown"]["rc"] == 0
    assert (agent_env.out / "hooks" / "setup.out").read_text() == f"setting up {agent_env.run_id}\n"
    assert marker.read_text() == f"{agent_env.run_id} c1\n"
    agent_env.assert_clean()


@pytest.mark.parametrize("path", ["ok", "failed-step", "failed-prepare"])
def test_teardown_hook_runs_on_every_path(agent_env: Any, tmp_path: Path, path: str) -> None:
    marker = tmp_path / "teardown-ran"
    target = directory_target(tmp_path)
    steps = [command_step("s-1")]
    if path == "failed-step":
        steps = [command_step("s-1", script="exit 1")]
    if path == "failed-prepare":
        target["path"] = str(tmp_path / "does-not-exist")
    plan = agent_env.plan([target], steps, setup="true", teardown=f'touch "{marker}"')
    code, manifest = agent_env.run(plan)

    assert code == {"ok": 0, "failed-step": 1, "failed-prepare": 3}[path]
    assert marker.exists()
    assert manifest["hooks"]["teardown"]["rc"] == 0
    if path == "failed-prepare":
        assert manifest["error"] == f"target here (directory): directory {target['path']} does not exist"
    agent_env.assert_clean()


def test_a_failing_teardown_hook_makes_the_run_incomplete(agent_env: Any, tmp_path: Path) -> None:
    plan = agent_env.plan([directory_target(tmp_path)], [command_step("s-1")], teardown="exit 5")
    code, manifest = agent_env.run(plan)
    assert code == 1
    assert manifest["status"] == "ok"  # every measurement is there ...
    assert manifest["cleanup"]["status"] == "incomplete"  # ... but the machine may not be as it was
    assert manifest["cleanup"]["leftovers"] == [
        "the teardown hook exited with status 5 (see hooks/teardown.out)"
    ]
    agent_env.assert_clean()


def test_invalid_plans_and_reused_output_are_refused(
    agent_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = agent_env.plan([directory_target(tmp_path)], [command_step("s-1")])
    plan["plan_version"] = 2
    assert main(agent_env.args(plan)) == 2
    assert "plan_version: 2 is not supported" in capsys.readouterr().err
    assert not agent_env.out.exists()

    agent_env.out.mkdir()
    (agent_env.out / "manifest.json").write_text("{}")
    plan["plan_version"] = 1
    assert main(agent_env.args(plan)) == 2
    assert "is not empty; results are never overwritten" in capsys.readouterr().err
    assert (agent_env.out / "manifest.json").read_text() == "{}"

    agent_env.plan_path.write_text("{not json")
    assert main(["run", "--plan", str(agent_env.plan_path), "--out", str(tmp_path / "o2")]) == 2
    assert "not JSON (line 1 column 2" in capsys.readouterr().err


def test_a_crash_is_never_recorded_as_ok(agent_env: Any, tmp_path: Path) -> None:
    step = command_step("s-env")
    step["phases"][0]["command"]["env"] = {"THREADS": 4}
    plan = agent_env.plan([directory_target(tmp_path)], [command_step("s-1"), step])
    try:
        code = main(agent_env.args(plan))
    except TypeError:
        code = None
    agent_env.assert_clean()
    if code == 2:
        return  # refusing the plan up front is a fix too
    manifest = agent_env.manifest()
    assert manifest["status"] != "ok", "the agent crashed but its manifest says ok"
    assert code == 1


def test_an_engine_bug_is_recorded_as_a_failure(
    agent_env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from storagebench.agent import runner

    def broken_engine(phase: Any, ctx: Any) -> Any:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(runner, "run_phase", broken_engine)
    plan = agent_env.plan([directory_target(tmp_path)], [command_step("s-1")])
    try:
        code = main(agent_env.args(plan))
    except RuntimeError:
        code = None
    agent_env.assert_clean()
    manifest = agent_env.manifest()
    assert manifest["status"] == "failed", f"manifest status {manifest['status']!r} after a crash"
    assert "engine bug" in (manifest["error"] or "")
    assert code not in (0, None)


def test_a_node_loss_on_a_single_machine_is_refused_not_measured(agent_env: Any, tmp_path: Path) -> None:
    # A single machine has no node to lose: the step that would remove one fails naming why,
    # before its fio starts (the skipping of later steps is tested with real nodes, in
    # tests/unit/agent/topology/test_node_loss_power_off.py and the 3-node local run).
    loss = small_fio_step("s-loss", runtime=5, rate_iops=200)
    loss["phases"][0]["node_loss"] = {"role": "controller", "index": 0, "at_s": 1.5}
    steps = [command_step("s-before"), loss, command_step("s-after")]
    code, manifest = agent_env.run(agent_env.plan([directory_target(tmp_path)], steps))

    assert code != 0 and manifest["status"] == "failed"
    assert "step s-loss removes controller-0, but this plan has no topology" in manifest["error"]
    assert statuses(manifest)["s-before"] == "ok"
    assert not (agent_env.phase_dir("s-loss", "p") / "fio.out").exists()  # fio never ran
    agent_env.assert_clean()
