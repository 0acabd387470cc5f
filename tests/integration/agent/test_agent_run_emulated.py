"""Emulated EBS volumes end to end: loop device + cgroup throttle + governor, measured by fio.

Each test checks what the emulation delivers against the volume type's envelope with the
tolerances the emulation promises (pre-warm 5 %, IOPS 3 %), and that the run leaves nothing
behind. Sizes are small (256-512 MiB) and runs short (3-10 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_plans import MIB, ebs_target, emulated, fio_step, iops_log
from tests.support.cpu_wait import CpuWait, working_in

pytestmark = [pytest.mark.root, pytest.mark.fio]

GP3 = {"iops": 3000, "mibps": 125}
GP2_100 = {
    "iops": 300,
    "mibps": 75,
    "burst_iops": 3000,
    "burst_mibps": 128,
    "credit_capacity": 6 * (3000 - 300),  # the knee after ~6 s at full burst demand
    "credit_refill_per_s": 300,
    "credit_unit": "io",
}


def read_iops(document: dict[str, Any]) -> float:
    return sum(job["read"]["iops"] for job in document["jobs"])


def write_iops(document: dict[str, Any]) -> float:
    return sum(job["write"]["iops"] for job in document["jobs"])


def test_gp3_xfs_prewarm_and_randread(agent_env: Any, fidelity: dict[str, Any]) -> None:
    target = ebs_target("gp3", [emulated("gp3", 512 * MIB, **GP3)], filesystem="xfs")
    randread = fio_step(
        "s-randread",
        "gp3",
        # ramp_time: the first second after fio lays out its file (writes) is the governor moving
        # the split back to reads; it is excluded from fio's statistics, as in any benchmark.
        {"rr": {"rw": "randread", "bs": "4k", "iodepth": 16, "size": "64M", "ramp_time": 1, "runtime": 4}},
        time_based=1,
    )
    queue = {
        "id": "s-queue",
        "target": "gp3",
        "repetition": 1,
        "phases": [
            {
                "name": "sysfs",
                "engine": "command",
                "command": {
                    "script": 'dev=$(basename "$(df --output=source "$SB_TARGET_DIR" | tail -n 1)"); '
                    "cat /sys/block/$dev/queue/max_sectors_kb /sys/block/$dev/loop/dio",
                },
            }
        ],
    }
    plan = agent_env.plan([target], [queue, randread], prewarm={"method": "dd"})
    with CpuWait(lambda: working_in(agent_env.out)) as wait:  # fio's waits for a CPU: rate it could not drive
        code, manifest = agent_env.run(plan)
    assert code == 0, manifest["error"]
    kept = 1 - wait.share()
    assert manifest["status"] == "ok"

    (prepared,) = manifest["targets"]
    assert prepared["mode"] == "filesystem"
    assert prepared["filesystem"] == "xfs"
    assert prepared["labels"] == ["emulated:gp3:100GiB", "emulator:throttle"]  # the plan gives no latency
    (device,) = prepared["devices"]
    assert device["emulated"]["direct_io"] is True
    assert device["emulated"]["capacity_bytes"] == 512 * MIB
    assert device["emulated"]["backing_file"].startswith(str(agent_env.volumes))
    assert (agent_env.phase_dir("s-queue", "sysfs") / "stdout.0.txt").read_text().split() == ["256", "1"]

    (prewarm,) = manifest["prewarm"]
    assert prewarm["status"] == "ok"
    (warmed,) = prewarm["devices"]
    assert warmed["bytes"] == 512 * MIB
    fidelity["gp3 dd pre-warm MiB/s (envelope 125)"] = warmed["mibps"]
    assert warmed["mibps"] == pytest.approx(125, rel=0.05)

    document = agent_env.fio_json("s-randread")
    iops = read_iops(document)
    fidelity["gp3 xfs 4k randread QD16 IOPS (envelope 3000)"] = round(iops)
    log = iops_log(agent_env.phase_dir("s-randread", "p") / "ts" / "sb_iops.1.log")
    fidelity["gp3 xfs randread per-second IOPS (after a 1 s ramp)"] = [round(v) for _, v in log]
    assert 3000 * kept * 0.97 <= iops <= 3000 * 1.03
    assert manifest["emulation"]["errors"] == []
    agent_env.assert_clean()


def test_gp3_randrw_mix_stays_within_the_combined_budget(agent_env: Any, fidelity: dict[str, Any]) -> None:
    target = ebs_target("gp3", [emulated("gp3", 256 * MIB, **GP3)])
    step = fio_step(
        "s-mix",
        "gp3",
        {"rw": {"rw": "randrw", "rwmixread": 25, "bs": "4k", "iodepth": 16, "runtime": 5}},
        time_based=1,
    )
    with CpuWait(lambda: working_in(agent_env.out)) as wait:  # fio's waits for a CPU: rate it could not drive
        code, manifest = agent_env.run(agent_env.plan([target], [step]))
    assert code == 0, manifest["error"]
    kept = 1 - wait.share()
    document = agent_env.fio_json("s-mix")
    reads, writes = read_iops(document), write_iops(document)
    fidelity["gp3 randrw 25 % read, combined IOPS (envelope 3000)"] = round(reads + writes)
    # 3 % is the promise: the governor judges its split by what it costs the total and gives
    # the minority direction slack (measured 2,952-2,996 over repeated runs).
    assert 3000 * kept * 0.97 <= reads + writes <= 3000 * 1.03
    assert reads / (reads + writes) == pytest.approx(0.25, abs=0.02)
    (governor,) = manifest["emulation"]["governor"]
    assert governor["read_share"] == pytest.approx(0.25, abs=0.03)
    agent_env.assert_clean()


def test_io1_counts_a_1mib_read_as_four_256kib_ios(agent_env: Any, fidelity: dict[str, Any]) -> None:
    # IOPS-bound for 1 MiB reads counted as four 256 KiB I/Os: 400 x 0.25 MiB = 100 MiB/s; counted
    # as one I/O each (an HDD-type 1 MiB unit), the same limits give the 150 MiB/s ceiling.
    limits = {"iops": 400, "mibps": 150}
    ssd = ebs_target("io1", [emulated("io1", 512 * MIB, **limits)])
    hdd_unit = ebs_target("io1-1m", [emulated("io1", 512 * MIB, **dict(limits, io_size_kib=1024))])
    # A fresh blk-throttle slice passes up to 100 ms worth at once (docs/agent.md): the throttle's
    # first split move (a tick, 0.25 s in) falls in the ramp; fio's drain at the ramp's end opens
    # one more, up to the queue (8 MiB), +1.3 % over 6 s (+2.7 % over the 3 s this ran before).
    job = {"rw": "read", "bs": "1M", "iodepth": 8, "runtime": 6, "ramp_time": 1.5}
    steps = [
        fio_step("s-256k", "io1", {"seq": job}, time_based=1),
        fio_step("s-1m", "io1-1m", {"seq": job}, time_based=1),
    ]
    code, manifest = agent_env.run(agent_env.plan([ssd, hdd_unit], steps))
    assert code == 0, manifest["error"]
    ssd_mibps = agent_env.fio_json("s-256k")["jobs"][0]["read"]["bw_bytes"] / MIB
    hdd_mibps = agent_env.fio_json("s-1m")["jobs"][0]["read"]["bw_bytes"] / MIB
    fidelity["io1 400 IOPS, 1 MiB reads, MiB/s with 256 KiB accounting (expect 100)"] = round(ssd_mibps, 1)
    fidelity["io1 400 IOPS, 1 MiB reads, MiB/s with 1 MiB accounting (expect 150)"] = round(hdd_mibps, 1)
    assert ssd_mibps == pytest.approx(400 * 0.25, rel=0.03)
    assert hdd_mibps == pytest.approx(150, rel=0.03)  # the same limits without the split: MiB/s-bound
    agent_env.assert_clean()


def test_gp2_burst_bucket_empties_into_the_knee(agent_env: Any, fidelity: dict[str, Any]) -> None:
    target = ebs_target("gp2", [emulated("gp2", 256 * MIB, **GP2_100)])
    step = fio_step(
        "s-knee", "gp2", {"rr": {"rw": "randread", "bs": "4k", "iodepth": 16, "runtime": 10}}, time_based=1
    )
    # fio and the twin's waits for a CPU (tests.support.cpu_wait): the rate they could not drive
    with CpuWait(lambda: [*working_in(agent_env.out), *agent_env.twins()]) as wait:
        code, manifest = agent_env.run(agent_env.plan([target], [step]))
    assert code == 0, manifest["error"]
    kept = 1 - wait.share()  # the share of the run both had a CPU
    fidelity["gp2 knee: share of the run fio and the twin waited for a CPU"] = round(wait.share(), 3)

    events = manifest["emulation_events"]
    log = iops_log(agent_env.phase_dir("s-knee", "p") / "ts" / "sb_iops.1.log")
    fidelity["gp2 per-second IOPS"] = [round(v) for _, v in log]
    # what a missing knee needs to be explained (seen once beside a hog, 2026-12-08: no event)
    seen = f"per-second IOPS {fidelity['gp2 per-second IOPS']}, emulation {manifest.get('emulation')}"
    assert [e["event"] for e in events] == ["burst-exhausted"], seen
    (event,) = events
    assert event["ceiling_iops"] == 300
    assert event["ceiling_mibps"] == 75
    fidelity["gp2 knee: burst-exhausted elapsed_s (bucket sized for 6 s)"] = event["elapsed_s"]
    assert 5.5 <= event["elapsed_s"] <= 8.0 / kept  # a bucket drained slower lasts longer

    knee = next(at for at, v in log if v < 2000) / 1000
    fidelity["gp2 knee: first second under 2000 IOPS ends at s"] = knee
    assert 6 <= knee <= 8 / kept
    burst = [v for at, v in log if 2000 <= at <= 5000]
    baseline = [v for at, v in log if at >= knee * 1000 + 1000]
    assert len(burst) == 4
    assert len(baseline) >= 2
    assert 3000 * kept * 0.97 <= sum(burst) / len(burst) <= 3000 * 1.03
    assert 300 * kept * 0.95 <= sum(baseline) / len(baseline) <= 300 * 1.05
    (governor,) = manifest["emulation"]["governor"]
    assert governor["bursting"] is False
    agent_env.assert_clean()


def test_jbod_of_two_emulated_devices_raw(agent_env: Any, fidelity: dict[str, Any]) -> None:
    small = {"iops": 1000, "mibps": 125}
    target = ebs_target(
        "pair", [emulated("gp3", 256 * MIB, **small), emulated("gp3", 256 * MIB, **small)], layout="jbod"
    )
    step = fio_step(
        "s-jbod", "pair", {"rr": {"rw": "randread", "bs": "4k", "iodepth": 16, "runtime": 3}}, time_based=1
    )
    # fio and the twins' waits for a CPU (tests.support.cpu_wait): the rate they could not drive
    with CpuWait(lambda: [*working_in(agent_env.out), *agent_env.twins()]) as wait:
        code, manifest = agent_env.run(agent_env.plan([target], [step]))
    assert code == 0, manifest["error"]
    kept = 1 - wait.share()  # the share of the run they all had a CPU
    (prepared,) = manifest["targets"]
    paths = [d["path"] for d in prepared["devices"]]
    assert len(paths) == 2
    assert prepared["mode"] == "raw"
    assert prepared["path"] == ":".join(paths)
    assert "jbod" in prepared["labels"]
    assert f"filename={':'.join(paths)}\n" in (agent_env.phase_dir("s-jbod", "p") / "job.fio").read_text()
    iops = read_iops(agent_env.fio_json("s-jbod"))
    waited = round(1 - kept, 3)
    fidelity["jbod 2 x 1000 IOPS, randread IOPS (expect 2000), share waited"] = (round(iops), waited)
    assert 2000 * kept * 0.95 <= iops <= 2000 * 1.05
    assert len(manifest["emulation"]["governor"]) == 2
    agent_env.assert_clean()


def test_raid0_without_md_fails_cleanly(agent_env: Any) -> None:
    if Path("/proc/mdstat").exists():
        pytest.skip("this kernel has md: the no-md refusal cannot be exercised here")
    md_before = sorted(str(p) for p in Path("/dev").glob("md*")) + sorted(
        str(p) for p in Path("/dev").glob("md/*")
    )
    target = ebs_target(
        "stripe", [emulated("gp3", 256 * MIB, **GP3), emulated("gp3", 256 * MIB, **GP3)], layout="raid0"
    )
    step = fio_step("s-1", "stripe", {"rr": {"rw": "randread", "bs": "4k", "runtime": 1}}, time_based=1)
    code, manifest = agent_env.run(agent_env.plan([target], [step]))

    assert code == 3
    assert manifest["status"] == "failed"
    assert manifest["error"] == (
        "target stripe (ebs): a RAID0 stripe needs the kernel's md driver, and this kernel has none "
        "(/proc/mdstat is missing); load md_mod and raid0, or use layout jbod"
    )
    assert manifest["steps"] == []
    actions = manifest["cleanup"]["actions"]
    assert len(actions) == 2
    assert all(a["status"] == "ok" and a["action"].startswith("detach /dev/loop") for a in actions)
    md_after = sorted(str(p) for p in Path("/dev").glob("md*")) + sorted(
        str(p) for p in Path("/dev").glob("md/*")
    )
    assert md_after == md_before  # no md node, no /dev/md/<name> link
    assert list(agent_env.volumes.rglob("*.img")) == []  # backing files deleted
    agent_env.assert_clean()
