"""What local targets cannot measure is said on stderr before the agent runs, in the report's words.

Runs under Python 3.9 too (``make test-agent-py39``): stdlib and pytest only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, ClassVar, Dict, List

import pytest

from storagebench.agent import cli
from storagebench.protocol.caveats import (
    directory_caveat,
    emulated_caveat,
    label_caveats,
    plan_caveats,
    throttle_caveat,
    twin_caveat,
)
from storagebench.protocol.plan import PLAN_VERSION

RUNNING = "FAKE RUNNER STARTED"


def emulated_target(target_id: str = "vol", volume_type: str = "gp3") -> Dict[str, Any]:
    return {
        "id": target_id,
        "kind": "ebs",
        "filesystem": "xfs",
        "emulate": [
            {
                "volume_type": volume_type,
                "size_gib": 100.0,
                "capacity_bytes": 1 << 30,
                "limits": {"iops": 3000, "mibps": 125, "io_size_kib": 256},
            }
        ],
    }


def plan_with(target: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "plan_version": PLAN_VERSION,
        "run_id": "r-caveats",
        "config_id": "c1",
        "targets": [target],
        "prewarm": {"method": "none"},
        "steps": [
            {
                "id": "s1",
                "target": target["id"],
                "repetition": 1,
                "phases": [
                    {
                        "name": "randread",
                        "engine": "fio",
                        "fio": {"jobs": [{"name": "j", "options": {"rw": "randread", "bs": "4k"}}]},
                    }
                ],
            }
        ],
        "setup": None,
        "teardown": None,
        "fail_fast": False,
    }


def test_emulated_targets_get_the_emulated_caveat_naming_them() -> None:
    (caveat,) = plan_caveats([emulated_target("data", "io1")])
    assert caveat == emulated_caveat(["data: io1"])
    assert caveat.startswith("emulated volumes (data: io1): ")
    assert "an EBS twin" in caveat and "throttled by the kernel" in caveat
    assert "not a measurement of it" in caveat


@pytest.mark.parametrize("emulator", ["twin", "throttle"])
def test_a_plan_that_names_its_emulator_gets_that_emulators_words(emulator: str) -> None:
    target = emulated_target("data", "gp3")
    target["emulate"] = [{**target["emulate"][0], "emulator": emulator}]
    (caveat,) = plan_caveats([target])
    assert caveat == (twin_caveat if emulator == "twin" else throttle_caveat)(["data: gp3"])


def test_directory_targets_get_the_page_cache_caveat() -> None:
    (caveat,) = plan_caveats([{"id": "scratch", "kind": "directory", "path": "/srv/data"}])
    assert caveat == directory_caveat(["scratch: /srv/data"])
    assert "file system and page cache" in caveat


def test_real_volumes_get_no_caveat() -> None:
    real = {"id": "real", "kind": "ebs", "filesystem": "raw", "volume_ids": ["vol-0123456789abcdef0"]}
    assert plan_caveats([real, {"id": "nvme", "kind": "instance_store", "count": 0}]) == []


def test_both_kinds_in_one_plan_give_both_caveats_emulated_first() -> None:
    caveats = plan_caveats([{"id": "d", "kind": "directory", "path": "/tmp"}, emulated_target()])
    assert [c.split(" (")[0] for c in caveats] == ["emulated volumes", "directory target"]


def test_the_report_labels_give_the_same_words() -> None:
    by_config = {"gp3": ["emulated:gp3:100GiB", "burst"], "local": ["directory:unthrottled"], "aws": []}
    # Records from before the twin carry no emulator label: they were measured on the throttle.
    assert label_caveats(by_config) == [throttle_caveat(["gp3"]), directory_caveat(["local"])]
    assert label_caveats({"aws": ["burst"]}) == []
    twins = {"a": ["emulated:gp3:100GiB", "emulator:twin"], "b": ["emulated:io2:8GiB", "emulator:throttle"]}
    assert label_caveats(twins) == [twin_caveat(["a"]), throttle_caveat(["b"])]
    assert "not EBS latency" in throttle_caveat() and "latency model" in twin_caveat()


class FakeRunner:
    """Stands in for the Runner: records that it started, after whatever stderr already holds."""

    started: ClassVar[List[str]] = []

    def __init__(self, plan: Any, out: str, *args: Any) -> None:
        self.plan = plan

    def execute(self) -> int:
        sys.stderr.write(RUNNING + "\n")
        FakeRunner.started.append(self.plan["run_id"])
        return 0


@pytest.mark.parametrize(
    "target, expected",
    [
        (emulated_target(), "emulated volumes (vol: gp3): "),
        ({"id": "here", "kind": "directory", "path": "/tmp"}, "directory target (here: /tmp): "),
    ],
)
def test_agent_run_warns_on_stderr_before_running(
    target: Dict[str, Any],
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan_with(target)), encoding="utf-8")
    monkeypatch.setattr(cli, "Runner", FakeRunner)
    code = cli.main(["run", "--plan", str(plan_file), "--out", str(tmp_path / "out"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 0 and FakeRunner.started[-1] == "r-caveats"
    warning = "storagebench-agent: warning: " + expected
    assert warning in captured.err, captured.err
    assert captured.err.index(warning) < captured.err.index(RUNNING)
    assert captured.out == ""


def test_agent_run_on_real_volumes_prints_no_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = {"id": "real", "kind": "ebs", "filesystem": "raw", "volume_ids": ["vol-0123456789abcdef0"]}
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan_with(real)), encoding="utf-8")
    monkeypatch.setattr(cli, "Runner", FakeRunner)
    assert cli.main(["run", "--plan", str(plan_file), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err
