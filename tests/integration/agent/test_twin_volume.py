"""EBS twins end to end: FUSE twin process + loop device through ``EmulatedFleet``, measured by fio.

Each test checks what fio sees against the model (the service time at QD1, Little's law at the
IOPS limit), and that every way out (teardown, a crashed twin, a sweep) leaves no loop device,
no FUSE mount, no twin process and no file. The auto/twin choice and its fallback reasons are
checked on the same machinery. Volumes are small (256 MiB) and fio runs short (2-3 s). Every test
runs on both data paths: the compiled twin (``native``, built by make setup) and the Python one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agent_plans import MIB, ebs_target, fio_step
from tests.support.cpu_wait import CpuWait, children
from tests.support.hung_io import hung_io_report
from tests.support.processes import process_state

from storagebench.agent.emulate import EmulatedFleet, EmulationError, LoopDevice, cgroup_name, destroy_loop
from storagebench.agent.sweep import resources_of, sweep
from storagebench.agent.twin.volume import twin_unavailable
from storagebench_local.native_twin import NATIVE_TWIN

pytestmark = [pytest.mark.root, pytest.mark.fio]

LATENCY = {"modes": [{"weight": 1, "p50_ms": 0.6, "p99_ms": 1.4}], "source": "test: gp3-like"}


@pytest.fixture(autouse=True)
def _fuse() -> None:
    reason = twin_unavailable()
    if reason is not None:
        pytest.skip(reason)


PROGRAM: dict[str, str] = {}  # the data path of the running test (set by the fixture below)


@pytest.fixture(autouse=True, params=["native", "python"])
def implementation(request: pytest.FixtureRequest) -> Any:
    """Every test on both data paths; gp3_like names the compiled twin for the native one."""
    if request.param == "native":
        if not NATIVE_TWIN.is_file():
            pytest.fail(f"{NATIVE_TWIN} is not built (make setup builds it; it needs cargo)")
        PROGRAM["twin_program"] = str(NATIVE_TWIN)
    yield request.param
    PROGRAM.clear()


# The QD8 rate each data path is held to beside make test's other streams on 2 cores: the Python
# one spends ~0.1 ms of CPU per 4 KiB request; at 2,000 IOPS it fell to 1,732 in CI, at 800 to 738
# on a fresh clone's make test (issue 26): the fallback is held where it keeps its model, 400.
QUEUED_IOPS = {"native": 2000, "python": 400}
# Whether QD1 latency (0.6 ms, each request's own service time) and the QD8 rate within 3 % are
# held beside the suite. The Python fallback's are not: a wake-up later than the model's 2-slot
# allowance (5 ms at 400 IOPS) loses rate for good (384 of 400 on a fresh clone's make test), so its
# rate is held within -10/+3 %; and each late wake-up lands on a QD1 request itself (2.34 ms for
# 0.60), so that figure is recorded here and judged only quietly (bench-fidelity). At QD8 queueing
# dominates: Little's law at the delivered rate holds for both.
QD1_LATENCY_HELD = {"native": True, "python": False}


def gp3_like(iops: int = 3000, latency: Any = LATENCY, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "volume_type": "gp3",
        "size_gib": 100.0,
        "capacity_bytes": 256 * MIB,
        "limits": {"iops": iops, "mibps": 125, "io_size_kib": 256},
        **PROGRAM,
    }
    spec.update(extra)
    if latency is not None:
        spec["latency"] = latency
    return spec


def fleet_of(env: Any) -> EmulatedFleet:
    return EmulatedFleet(
        str(env.volumes / env.run_id / env.config_id), cgroup_name(env.run_id, env.config_id)
    )


def fio_args(device: str, iodepth: int, seconds: float, **options: Any) -> list[str]:
    args = [
        "fio",
        "--name=twin",
        f"--filename={device}",
        "--direct=1",
        "--ioengine=libaio",
        f"--iodepth={iodepth}",
        "--bs=4k",
        "--rw=randread",
        f"--runtime={seconds}",
        "--time_based",
        "--ramp_time=0.5",
        "--output-format=json",
    ]
    return args + [f"--{key}={value}" for key, value in options.items()]


def fio_read(
    device: str, iodepth: int, seconds: float = 2.0, twin_pid: int | None = None
) -> dict[str, float]:
    """fio's figures, and ``waited``: the share of the run fio and the twin waited for a CPU."""
    fio = subprocess.Popen(
        fio_args(device, iodepth, seconds), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watched = [fio.pid] if twin_pid is None else [fio.pid, twin_pid]
    with CpuWait(lambda: [*watched, *children(fio.pid)]) as wait:
        try:
            out, err = fio.communicate(timeout=60)
        except subprocess.TimeoutExpired as exc:
            report = hung_io_report([*watched, *children(fio.pid)])
            fio.kill()
            out, err = fio.communicate()
            raise AssertionError(f"fio did not exit in 60 s; stdout:\n{out}\n{report}") from exc
    assert fio.returncode == 0, err
    job = json.loads(out)["jobs"][0]["read"]
    percentiles = job["clat_ns"]["percentile"]
    return {
        "iops": job["iops"],
        "ios": job["total_ios"],
        "p50_ms": percentiles["50.000000"] / 1e6,
        "p99_ms": percentiles["99.000000"] / 1e6,
        "mean_ms": job["clat_ns"]["mean"] / 1e6,
        "waited": wait.share(),
    }


def files_under(root: Path) -> list[str]:
    return sorted(str(Path(d) / f) for d, _, files in os.walk(root) for f in files)


def assert_nothing_left(env: Any) -> None:
    assert env.leftovers() == []
    assert files_under(env.volumes) == []


def process_gone(pid: int) -> bool:
    return process_state(pid) in (None, "Z")


# ---------------------------------------------------------------- life cycle and fidelity


def test_twin_life_cycle_and_latency_through_the_fleet(
    agent_env: Any, fidelity: dict[str, Any], implementation: str
) -> None:
    fleet = fleet_of(agent_env)
    rate = QUEUED_IOPS[implementation]
    qd1 = fleet.add("vol-0", gp3_like(iops=3000, emulator="twin"))
    qd8 = fleet.add("vol-1", gp3_like(iops=rate, emulator="twin"))
    loops: list[LoopDevice] = [qd1, qd8]
    try:
        assert fleet.fallback_reason is None
        for loop in loops:
            assert loop.emulator == "twin"
            assert loop.twin is not None and loop.twin.implementation == implementation
            assert loop.direct_io
            assert loop.twin is not None and loop.twin.process is not None
            assert loop.twin.process.poll() is None
            assert os.path.ismount(loop.twin.mountpoint)
            assert 0 < (loop.twin.overhead_s or 0) < 0.005  # calibrated: this machine's own I/O path
        assert sorted(agent_env.twins()) == sorted(loop.twin.process.pid for loop in loops)  # type: ignore[union-attr]
        fleet.start()  # the model is on from here

        single = fio_read(qd1.path, iodepth=1, twin_pid=qd1.twin.process.pid)  # type: ignore[union-attr]
        fidelity[f"{implementation} twin QD1 4k randread p50 ms (model 0.600)"] = round(single["p50_ms"], 3)
        if QD1_LATENCY_HELD[implementation]:
            assert single["p50_ms"] == pytest.approx(0.6, rel=0.15)
        else:
            assert single["p50_ms"] >= 0.6 * 0.85  # late wake-ups only add: never faster than the model

        queued = fio_read(qd8.path, iodepth=8, seconds=3.0, twin_pid=qd8.twin.process.pid)  # type: ignore[union-attr]
        model_p50_ms = 8 / rate * 1000  # Little's law at the limit
        fidelity[
            f"{implementation} twin QD8 4k randread at {rate:,} IOPS: IOPS, p50 ms "
            f"(model {model_p50_ms:.1f}), share of the run fio and the twin waited for a CPU"
        ] = (round(queued["iops"]), round(queued["p50_ms"], 3), round(queued["waited"], 3))
        # The model's tolerance for the time fio and the twin had a CPU (tests.support.cpu_wait):
        # what they measurably waited for one is rate they could not drive or serve.
        floor = rate * (1 - queued["waited"])
        if QD1_LATENCY_HELD[implementation]:
            assert floor * 0.97 <= queued["iops"] <= rate * 1.03
        else:  # wake-ups later than the 2-slot allowance lose rate for good (384 of 400)
            assert floor * 0.90 <= queued["iops"] <= rate * 1.03
        # Little's law at the rate delivered: queueing, not the data path, sets the latency
        assert queued["p50_ms"] == pytest.approx(8 / queued["iops"] * 1000, rel=0.10)
    finally:
        problems = []
        for loop in loops:
            try:
                destroy_loop(loop)
            except EmulationError as exc:
                problems.append(str(exc))
        problems += fleet.stop()
        if sys.exc_info()[0] is not None:  # a failure: what each twin saw, for its message
            print(json.dumps(fleet.twin_reports(), indent=1, default=str))
    assert problems == []
    assert_nothing_left(agent_env)
    reports = fleet.twin_reports()
    assert [report["device"] for report in reports] == [qd1.path, qd8.path]
    for report, measured in zip(reports, (single, queued), strict=True):
        state = report["state"]
        assert isinstance(state, dict)
        # every read fio counted was modelled (fio leaves out its ramp; calibration is not modelled)
        assert state["ios"] >= measured["ios"] > 0
        assert state["events"] == []  # gp3: no credits
        assert state["cpu_s"] > 0
        if implementation == "native":  # every I/O answered at its time, none left for the stop
            assert state["loop"]["answered_at_stop"] == 0
        assert report["implementation"] == implementation
        assert state.get("implementation", "python") == implementation


def test_a_teardown_right_after_creation_leaves_nothing(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    loop = fleet.add("vol-0", gp3_like(emulator="twin"))
    destroy_loop(loop)
    assert fleet.stop() == []
    assert_nothing_left(agent_env)
    ((report),) = fleet.twin_reports()
    assert report["state"]["ios"] == 0  # type: ignore[index]


# ---------------------------------------------------------------- a crashed twin


def test_a_killed_twin_fails_fio_without_hanging_and_sweep_leaves_nothing(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    loop = fleet.add("vol-0", gp3_like(iops=1000, emulator="twin"))
    assert loop.twin is not None and loop.twin.process is not None
    fleet.start()
    fio = subprocess.Popen(
        fio_args(loop.path, iodepth=8, seconds=30), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        time.sleep(1.5)
        assert fio.poll() is None, "fio ended before the twin was killed"
        loop.twin.process.send_signal(signal.SIGKILL)
        began = time.monotonic()
        out, err = fio.communicate(timeout=20)  # a hang would raise TimeoutExpired
        assert time.monotonic() - began < 20
    finally:
        if fio.poll() is None:
            fio.kill()
            fio.wait(timeout=10)
    assert fio.returncode != 0
    reported = out + err
    errors = ("Input/output error", "Transport endpoint is not connected", "err=5")
    assert any(word in reported for word in errors), reported[-2000:]
    assert loop.twin.process.wait(timeout=10) == -signal.SIGKILL
    # What the agent's own teardown would meet: a loop device over a dead FUSE mount.
    assert agent_env.loops() and agent_env.twin_mounts()
    report = sweep(agent_env.run_id, str(agent_env.mount_root), str(agent_env.volumes))
    assert report["leftovers"] == []
    assert_nothing_left(agent_env)
    fleet.stop()


def test_teardown_after_the_twin_died_cleans_up_or_says_why(agent_env: Any) -> None:
    """The agent's destroy_loop on a twin that crashed: the loop, the dead mount and the files go."""
    fleet = fleet_of(agent_env)
    loop = fleet.add("vol-0", gp3_like(emulator="twin"))
    assert loop.twin is not None and loop.twin.process is not None
    loop.twin.process.kill()
    loop.twin.process.wait(timeout=10)
    destroy_loop(loop)
    assert fleet.stop() == []
    assert_nothing_left(agent_env)


def fio_of(env: Any) -> list[int]:
    """fio processes of this run: the agent starts fio in a phase directory of its output."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                cwd = str((entry / "cwd").readlink())
            except OSError:
                continue
            if argv[0].rsplit(b"/", 1)[-1] == b"fio" and cwd.startswith(str(env.out) + "/"):
                pids.append(int(entry.name))
    return [pid for pid in pids if not process_gone(pid)]


def test_sweep_after_a_killed_agent_leaves_nothing(agent_env: Any) -> None:
    """SIGKILL on an agent whose volume is a twin: its fio runs in the run's cgroup (a cgroup with
    no limit, kept to name the run's processes), so sweep stops it at once, then leaves nothing."""
    volume = gp3_like(emulator="twin", capacity_bytes=512 * MIB)  # mkfs.xfs needs 300 MiB
    target = ebs_target("vol", [volume], filesystem="xfs")
    job = {"rw": "randread", "bs": "4k", "iodepth": 16, "runtime": 60, "size": "16M"}
    agent = agent_env.start(agent_env.plan([target], [fio_step("s-long", "vol", {"rr": job}, time_based=1)]))
    with agent_env.reaping(agent):

        def measuring() -> bool:
            assert agent.poll() is None, f"the agent exited early: {agent_env.stderr_path.read_text()}"
            return bool(fio_of(agent_env)) and (agent_env.phase_dir("s-long", "p") / "ts").is_dir()

        agent_env.wait_for(measuring, "fio to measure the twin volume", timeout_s=60)
        time.sleep(1.0)
        twins = agent_env.twins()
        assert len(twins) == 1
        agent.kill()
        agent.wait(timeout=10)
    (group,) = agent_env.cgroups()
    assert set(fio_of(agent_env)) <= set(agent_env.cgroup_pids())  # fio is found by the run's cgroup
    assert not any((group / name).exists() and (group / name).read_text().strip() for name in THROTTLE_FILES)
    report = sweep(agent_env.run_id, str(agent_env.mount_root), str(agent_env.volumes))
    assert report["leftovers"] == []
    assert not fio_of(agent_env)  # stopped by sweep, not left to fail on its own
    agent_env.wait_for(lambda: not agent_env.loops(), "the loop device to go", timeout_s=10)
    assert_nothing_left(agent_env)


# No limit is written for a twin: the cgroup only names the run's processes.
THROTTLE_FILES = ("blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device")


def test_sweep_of_a_live_twin_stops_it(agent_env: Any) -> None:
    """A killed agent leaves its twin serving: sweep detaches the loop, stops the twin, unmounts."""
    fleet = fleet_of(agent_env)
    loop = fleet.add("vol-0", gp3_like(emulator="twin"))
    assert loop.twin is not None and loop.twin.process is not None
    pid = loop.twin.process.pid
    report = sweep(agent_env.run_id, str(agent_env.mount_root), str(agent_env.volumes))
    assert report["leftovers"] == []
    assert f"stop EBS twin processes {pid}" in report["removed"]
    assert process_gone(pid)
    assert loop.twin.process.wait(timeout=10) == -signal.SIGKILL
    assert_nothing_left(agent_env)


def test_sweep_finds_a_twins_loop_device_after_its_mount_is_gone(agent_env: Any) -> None:
    """A local instance's mount namespace dies with its processes, taking the twin's FUSE mount
    before the loop device: the kernel then names the backing file ``/volume``. The record next to
    the backing file still leads sweep (and the leak check) to the loop device."""
    fleet = fleet_of(agent_env)
    loop = fleet.add("vol-0", gp3_like(emulator="twin"))
    assert loop.twin is not None and loop.twin.process is not None
    loop.twin.process.kill()
    loop.twin.process.wait(timeout=10)
    subprocess.run(["umount", "--lazy", loop.twin.mountpoint], check=True)
    listing = agent_env.loop_listing(check=True)
    assert f"{loop.path} /volume" in " ".join(listing.split())  # its path no longer says whose it is
    assert agent_env.loops() == [f"{loop.path} (recorded twin)"]  # the leak check sees it too
    found = resources_of(agent_env.run_id, str(agent_env.mount_root), str(agent_env.volumes))
    assert found["loops"] == [loop.path]  # found by its record
    report = sweep(agent_env.run_id, str(agent_env.mount_root), str(agent_env.volumes))
    assert report["leftovers"] == []
    assert f"detach {loop.path}" in report["removed"]
    assert resources_of(agent_env.run_id, str(agent_env.mount_root), str(agent_env.volumes))["loops"] == []
    assert_nothing_left(agent_env)


# ---------------------------------------------------------------- choosing the emulator


def test_auto_without_a_latency_falls_back_to_the_throttle_with_the_reason(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    loop = fleet.add("vol-0", gp3_like(latency=None, emulator="auto"))
    try:
        assert loop.emulator == "throttle"
        assert loop.twin is None
        assert fleet.fallback_reason == "the plan carries no latency model"
        assert agent_env.twins() == []
        assert agent_env.twin_mounts() == []
    finally:
        destroy_loop(loop)
        fleet.stop()
    assert_nothing_left(agent_env)


def test_auto_falls_back_when_the_twin_cannot_start_and_leaves_nothing_of_it(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    broken = {"modes": [{"p50_ms": 2, "p99_ms": 1}]}  # refused by the twin's model
    loop = fleet.add("vol-0", gp3_like(latency=broken))  # "auto" is the default
    try:
        assert loop.emulator == "throttle"
        reason = fleet.fallback_reason or ""
        assert reason.startswith("EBS twin failed: ")
        assert "latency.modes[0]: p50_ms 2, p99_ms 1" in reason
        assert agent_env.twins() == []
        assert agent_env.twin_mounts() == []
        assert files_under(agent_env.volumes) == [loop.backing_file]  # the throttle's, only
        second = fleet.add("vol-1", gp3_like())  # auto stops trying after a failure
        assert second.emulator == "throttle"
        destroy_loop(second)
    finally:
        destroy_loop(loop)
        fleet.stop()
    assert_nothing_left(agent_env)


def test_twin_without_a_latency_is_refused_with_the_reason(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    with pytest.raises(EmulationError, match=r"^EBS twin: the plan carries no latency model$"):
        fleet.add("vol-0", gp3_like(latency=None, emulator="twin"))
    assert fleet.loops == []
    assert fleet.fallback_reason is None
    assert_nothing_left(agent_env)


def test_twin_that_cannot_start_is_refused_with_the_twins_own_reason(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    with pytest.raises(EmulationError, match=r"^EBS twin: .*error spec: limits\.iops: 0, a positive number"):
        fleet.add("vol-0", dict(gp3_like(emulator="twin"), limits={"iops": 0, "mibps": 125}))
    assert fleet.loops == []
    assert_nothing_left(agent_env)


def test_an_unknown_emulator_is_refused(agent_env: Any) -> None:
    fleet = fleet_of(agent_env)
    with pytest.raises(EmulationError, match=r"^emulator 'nbd': one of auto, twin, throttle expected$"):
        fleet.add("vol-0", gp3_like(emulator="nbd"))
    assert_nothing_left(agent_env)
