"""The agent under Python 3.9 on an emulated ext4 volume; write-safety checks on a real loop device."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_plans import MIB, ebs_target, emulated, fio_step, python39

from storagebench.agent.cli import main
from storagebench.agent.devices import list_block_devices, safety_problems

VOLUME_BYTES = 768 * MIB


@pytest.mark.root
@pytest.mark.fio
@pytest.mark.py39
def test_full_run_under_python39(agent_env: Any, fidelity: dict[str, Any]) -> None:
    # 768 MiB: a 6 s pre-warm. This plan has no latency model, so the kernel's throttle emulates the
    # volume, and blk-throttle starts a fresh slice whenever the governor moves the read/write split
    # (mkfs's writes, then this read), letting up to a slice of the limit through at once: over a
    # 2 s read (256 MiB) that measured 134 MiB/s beside make test's other streams.
    target = ebs_target("vol", [emulated("gp3", VOLUME_BYTES, iops=3000, mibps=125)], filesystem="ext4")
    steps = [
        fio_step(
            "s-fio",
            "vol",
            {"rr": {"rw": "randread", "bs": "4k", "iodepth": 8, "size": "16M", "ramp_time": 1, "runtime": 2}},
            time_based=1,
        ),
        {
            "id": "s-dd",
            "target": "vol",
            "repetition": 1,
            "phases": [
                {
                    "name": "write",
                    "engine": "dd",
                    "dd": {
                        "direction": "write",
                        "file": "f",
                        "bs": "1M",
                        "count": 8,
                        "oflag": "direct",
                        "parallel": 2,
                    },
                    "drop_caches": True,
                },
                {"name": "sh", "engine": "command", "command": {"script": "ls -l > listing; sync"}},
            ],
        },
    ]
    agent = agent_env.start(agent_env.plan([target], steps, prewarm={"method": "fio"}), python=python39())
    code = agent.wait(timeout=120)
    assert code == 0, agent_env.stderr_path.read_text()
    manifest = agent_env.manifest()
    assert manifest["system"]["python"].startswith("3.9.")
    assert manifest["status"] == "ok"
    assert [s["status"] for s in manifest["steps"]] == ["ok", "ok"]
    assert manifest["steps"][1]["phases"][0]["drop_caches"] == "done"
    (prewarm,) = manifest["prewarm"]
    assert prewarm["method"] == "fio"
    (device,) = prewarm["devices"]
    fio_prewarm = json.loads((agent_env.out / "prewarm" / "vol" / device["files"][1]).read_text())
    assert fio_prewarm["jobs"][0]["read"]["io_bytes"] == VOLUME_BYTES
    fio_mibps = fio_prewarm["jobs"][0]["read"]["bw_bytes"] / MIB
    fidelity["gp3 fio pre-warm MiB/s under Python 3.9, fio's own (envelope 125)"] = round(fio_mibps, 1)
    fidelity["gp3 fio pre-warm MiB/s under Python 3.9, agent's size / wall time"] = device["mibps"]
    assert fio_mibps == pytest.approx(125, rel=0.06)
    # The agent's figure includes fio's start and exit (~0.3 s), a visible share of a 6 s read.
    assert 0.7 * fio_mibps <= device["mibps"] <= fio_mibps
    assert manifest["targets"][0]["filesystem"] == "ext4"
    assert agent_env.fio_json("s-fio")["jobs"][0]["read"]["iops"] == pytest.approx(3000, rel=0.05)
    assert manifest["cleanup"]["status"] == "ok"
    agent_env.assert_clean()


@pytest.mark.root
def test_safety_problems_on_a_real_loop_device(agent_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    agent_env.volumes.mkdir()
    backing = agent_env.volumes / "disk.img"
    with backing.open("wb") as handle:
        handle.truncate(64 * MIB)
    path = subprocess.run(
        ["losetup", "--find", "--show", str(backing)], capture_output=True, text=True, check=True
    ).stdout.strip()
    mountpoint = agent_env.mount_root / "m"
    mountpoint.mkdir(parents=True)
    try:
        (device,) = [d for d in list_block_devices() if d.path == path]
        assert device.size_bytes == 64 * MIB
        assert safety_problems(device, allow_destroy=False) == []  # blank: safe to use

        subprocess.run(["mkfs.ext4", "-q", "-F", path], capture_output=True, check=True)
        assert safety_problems(device, allow_destroy=False) == [
            f"{path} already holds ext4 data; set allow_destroy to overwrite it"
        ]
        assert safety_problems(device, allow_destroy=True) == []

        subprocess.run(["mount", path, str(mountpoint)], capture_output=True, check=True)
        try:
            for allow in (False, True):
                assert safety_problems(device, allow_destroy=allow) == [
                    f"{path} is mounted (at {mountpoint})"
                ]
        finally:
            subprocess.run(["umount", str(mountpoint)], capture_output=True, check=True)

        assert main(["devices"]) == 0
        listed = {d["path"]: d for d in json.loads(capsys.readouterr().out)}
        assert listed[path]["size_bytes"] == 64 * MIB
        assert listed[path]["volume_id"] is None
    finally:
        subprocess.run(["losetup", "--detach", path], capture_output=True, check=False)
    assert not Path(f"/sys/block/{Path(path).name}/loop/backing_file").exists() or (
        Path(f"/sys/block/{Path(path).name}/loop/backing_file").read_text().strip() != str(backing)
    )
    agent_env.assert_clean()


@pytest.mark.root
def test_an_unprepared_target_is_attached_for_the_setup_hook_and_never_written(agent_env: Any) -> None:
    """prepare false: the agent finds the device, hands it to the setup hook, formats nothing."""
    chunks = ebs_target("chunks", [emulated("gp2", 512 * MIB, iops=3000, mibps=128)], filesystem="raw")
    chunks["prepare"] = False
    seen = agent_env.out.parent / "seen-device"
    plan = agent_env.plan([chunks], [])
    plan["setup"] = f'echo "$SB_DEVICE_CHUNKS" > {seen}; blkid -p "$SB_DEVICE_CHUNKS" || true'
    code, manifest = agent_env.run(plan)
    assert code == 0, manifest["error"]
    (target,) = manifest["targets"]
    assert target["mode"] == "attached" and seen.read_text().strip() == target["path"]
    assert target["path"].startswith("/dev/loop")
    agent_env.assert_clean()
