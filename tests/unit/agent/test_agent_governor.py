"""The throttle governor, driven tick by tick with a fake clock and fake kernel counters.

``Kernel`` stands in for the cgroup throttle: each tick it serves a saturating workload of a
given read fraction up to the limits the governor last applied, and hands the governor the
cumulative counters, exactly as ``Throttle.served()`` would. No threads, no sleeping.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

from storagebench.agent.emulate import (
    FLOOR_SHARE,
    MIN_SAMPLE_IOS,
    RESTORE_SHARE,
    DeviceBudget,
    Governor,
    LoopDevice,
)
from storagebench.agent.throttle import Served, Throttle, ThrottleError

MIB = 1 << 20
DEVICE = "7:9"
TICK = 0.25

GP3 = {"iops": 3000.0, "mibps": 125.0, "io_size_kib": 256}
# gp2 100 GiB with its bucket scaled so the knee comes after 6 s at full burst demand.
GP2 = {
    "iops": 300.0,
    "mibps": 75.0,
    "io_size_kib": 256,
    "burst_iops": 3000.0,
    "burst_mibps": 128.0,
    "credit_capacity": 6 * (3000.0 - 300.0),
    "credit_refill_per_s": 300.0,
    "credit_unit": "io",
}
# st1 500 GiB: throughput credits in MiB.
ST1 = {
    "iops": 19.53125,
    "mibps": 19.53125,
    "io_size_kib": 1024,
    "burst_mibps": 122.0703125,
    "burst_iops": 122.0703125,
    "credit_capacity": 6 * (122.0703125 - 19.53125),
    "credit_refill_per_s": 19.53125,
    "credit_unit": "mib",
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingThrottle(Throttle):
    def __init__(self) -> None:
        super().__init__("/nonexistent/storagebench-test")
        self.calls: list[tuple[str, int, int, int, int]] = []

    def set_limits(self, device: str, riops: int, wiops: int, rbps: int, wbps: int) -> None:
        self.calls.append((device, riops, wiops, rbps, wbps))

    def served(self) -> dict[str, Served]:
        raise AssertionError("the tests hand counters to tick() themselves")


class Kernel:
    def __init__(self, limits: dict[str, Any]) -> None:
        self.clock = FakeClock()
        self.throttle = RecordingThrottle()
        loop = LoopDevice("/volumes/x.img", "/dev/loop9", DEVICE, True)
        self.budget = DeviceBudget(loop, limits)  # type: ignore[arg-type]
        self.governor = Governor(self.throttle, [self.budget], period_s=TICK, clock=self.clock)
        self.governor.apply(self.budget, force=True)  # what Governor.start() does before its thread
        self.counters = Served()
        self.last_reads = 0
        self.last_writes = 0

    def tick(self, reads: int = 0, writes: int = 0, io_bytes: int = 4096, dt: float = TICK) -> None:
        """Serve exactly these I/Os during the next ``dt`` seconds, then let the governor tick."""
        self.clock.now += dt
        c = self.counters
        self.counters = Served(
            c.read_ios + reads,
            c.write_ios + writes,
            c.read_bytes + reads * io_bytes,
            c.write_bytes + writes * io_bytes,
        )
        self.last_reads, self.last_writes = reads, writes
        self.governor.tick({DEVICE: self.counters})

    def saturate(self, read_fraction: float, io_bytes: int = 4096, dt: float = TICK) -> None:
        """A workload always queueing I/O in this mix (fio randrw): served until one direction's limit."""
        assert self.budget.applied is not None
        riops, wiops, rbps, wbps = self.budget.applied
        read_rate = min(riops, rbps / io_bytes)
        write_rate = min(wiops, wbps / io_bytes)
        total = min(
            read_rate / read_fraction if read_fraction > 0 else math.inf,
            write_rate / (1 - read_fraction) if read_fraction < 1 else math.inf,
        )
        self.tick(round(total * read_fraction * dt), round(total * (1 - read_fraction) * dt), io_bytes, dt)

    @property
    def elapsed(self) -> float:
        return self.clock.now - self.governor._started


# ---------------------------------------------------------------- the read/write split


def test_starts_at_an_even_split() -> None:
    kernel = Kernel(GP3)
    # At an even split the writes count as the minority and carry the 5 % slack.
    assert kernel.throttle.calls == [(DEVICE, 1500, 1575, round(62.5 * MIB), round(62.5 * MIB * 1.05))]


def test_read_share_converges_to_the_mix_and_ignores_noise() -> None:
    kernel = Kernel(GP3)
    kernel.saturate(0.25)
    assert kernel.budget.ios.read_share == pytest.approx(0.25, abs=0.002)
    assert kernel.budget.bytes.read_share == pytest.approx(0.25, abs=0.002)
    # The minority (reads) carries the slack: the split's error is left to the majority side.
    expected = (787.5, 2250, 125 * MIB * 0.25 * 1.05, 125 * MIB * 0.75)
    assert kernel.budget.applied == pytest.approx(expected, rel=0.005)
    changes = (kernel.budget.ios.changes, kernel.budget.bytes.changes)
    calls = len(kernel.throttle.calls)
    delivered = []
    for index in range(60):  # 15 s of a 25 % mix that wobbles by +-2 points from tick to tick
        kernel.saturate(0.23 if index % 2 else 0.27)
    assert (kernel.budget.ios.changes, kernel.budget.bytes.changes) == changes
    assert len(kernel.throttle.calls) == calls  # nothing rewritten: each rewrite costs accuracy
    for _ in range(8):
        kernel.saturate(0.25)
        delivered.append((kernel.last_reads + kernel.last_writes) / TICK)
    # The combined budget, split as the workload mixes (the majority side binds).
    assert delivered == pytest.approx([3000] * 8, rel=0.005)


def test_a_real_change_of_mix_is_followed() -> None:
    kernel = Kernel(GP3)
    kernel.saturate(0.25)
    kernel.saturate(0.25)
    kernel.saturate(0.75)  # read-bound at the old split: 250 of the 1000 IOPS it gets are writes
    assert kernel.budget.ios.read_share > 0.25
    kernel.saturate(0.75)
    assert kernel.budget.ios.read_share == pytest.approx(0.75, abs=0.01)
    kernel.saturate(0.75)
    assert (kernel.last_reads + kernel.last_writes) / TICK == pytest.approx(3000, rel=0.005)


@pytest.mark.parametrize("read_ticks", [1, 2, 40, 240, 2400])
def test_pure_read_then_pure_write_switches_within_one_tick(read_ticks: int) -> None:
    kernel = Kernel(GP3)
    for _ in range(read_ticks):
        kernel.saturate(1.0)
    assert kernel.budget.ios.read_share == 1.0
    assert kernel.budget.applied is not None
    assert kernel.budget.applied[1] == 300  # writes keep the floor share
    kernel.saturate(0.0)
    assert kernel.last_writes >= MIN_SAMPLE_IOS  # the floor lets 75 writes through in a tick
    assert kernel.budget.ios.read_share < 0.05
    assert kernel.budget.applied[1] >= 2850


def test_a_long_stable_mix_does_not_dilute_a_change() -> None:
    kernel = Kernel(GP3)
    for _ in range(400):  # 100 s of a 25 % mix: 300,000 I/Os of history
        kernel.saturate(0.25)
    kernel.saturate(0.75)
    kernel.saturate(0.75)
    assert kernel.budget.ios.read_share == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize(
    ("mix", "first_reads", "first_writes"),
    [(0.12, 48, 368), (0.25, 121, 379)],
    ids=["12pct-read-first-sample-0.1154", "25pct-read-first-sample-0.242"],
)
def test_a_small_split_error_on_the_minority_direction_is_corrected(
    mix: float, first_reads: int, first_writes: int
) -> None:
    kernel = Kernel(GP3)
    # The first tick at the even split: write-bound, the served mix is the workload's plus
    # sampling noise (here well inside one sigma of the true mix).
    kernel.tick(reads=first_reads, writes=first_writes)
    assert abs(kernel.budget.ios.read_share - mix) < 0.01
    # 20 s of the steady mix: correcting a 0.005 share error at a 12 % mix needs 3 sigma of
    # evidence, about 45,000 I/Os (16 s at 3,000 IOPS); looser evidence would let sampling
    # noise rewrite the kernel limits every few seconds, and each rewrite costs accuracy.
    for _ in range(80):
        kernel.saturate(mix)
    delivered = []
    for _ in range(20):
        kernel.saturate(mix)
        delivered.append((kernel.last_reads + kernel.last_writes) / TICK)
    assert sum(delivered) / len(delivered) == pytest.approx(3000, rel=0.03)


def test_fewer_than_20_ios_do_not_move_the_split() -> None:
    kernel = Kernel(GP3)
    kernel.tick(reads=MIN_SAMPLE_IOS - 1)
    assert kernel.budget.ios.read_share == 0.5
    kernel.tick(reads=1)  # 20 since the start: enough
    assert kernel.budget.ios.read_share == 1.0
    kernel.tick(writes=MIN_SAMPLE_IOS - 1)
    assert kernel.budget.ios.read_share == 1.0
    kernel.tick(writes=1)
    assert kernel.budget.ios.read_share == 0.0


def test_idle_device_keeps_its_split_and_limits() -> None:
    kernel = Kernel(GP3)
    kernel.saturate(0.25)
    calls = len(kernel.throttle.calls)
    for _ in range(20):
        kernel.tick()
    assert kernel.budget.ios.read_share == pytest.approx(0.25, abs=0.002)
    assert len(kernel.throttle.calls) == calls


def test_a_device_missing_from_the_counters_is_left_alone() -> None:
    kernel = Kernel(GP3)
    kernel.clock.now += TICK
    kernel.governor.tick({"8:0": Served(100, 0, 409600, 0)})
    assert kernel.budget.last is None
    assert len(kernel.throttle.calls) == 1


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
@pytest.mark.parametrize(
    "limits",
    [GP3, {"iops": 0.01, "mibps": 1e-9}, {"iops": 1.0, "mibps": 0.000001}],
    ids=["gp3", "tiny", "one"],
)
def test_kernel_limits_are_never_zero(limits: dict[str, Any], share: float) -> None:
    budget = DeviceBudget(LoopDevice("/x", "/dev/loop9", DEVICE, True), limits)  # type: ignore[arg-type]
    budget.ios.read_share = share
    budget.bytes.read_share = share
    values = budget.kernel_limits()
    assert all(isinstance(v, int) and v >= 1 for v in values), values


def test_kernel_limits_floor_the_idle_direction() -> None:
    budget = DeviceBudget(LoopDevice("/x", "/dev/loop9", DEVICE, True), GP3)  # type: ignore[arg-type]
    budget.ios.read_share = budget.bytes.read_share = 1.0
    floor = FLOOR_SHARE
    assert budget.kernel_limits() == (3000, round(3000 * floor), 125 * MIB, round(125 * MIB * floor))


# ---------------------------------------------------------------- credit buckets


def test_gp2_credits_drain_at_served_minus_refill_and_the_knee_comes_when_empty() -> None:
    kernel = Kernel(GP2)
    budget = kernel.budget
    assert budget.bursting
    assert budget.credits == 16200
    history = []
    while budget.bursting:
        before = budget.credits
        applied_before = budget.applied
        kernel.saturate(1.0)
        history.append((before, kernel.last_reads, budget.credits, applied_before))
        assert len(history) < 200, "the bucket never emptied"
    # Every bursting tick: balance = previous + refill x elapsed - I/Os served.
    for before, served, after, _ in history[:-1]:
        assert after == pytest.approx(before + 300 * TICK - served)
        assert after > 0
    # Burst ceiling while there were credits (the first tick still had the even split).
    assert history[-1][3] is not None
    assert history[-1][3][0] == 3000
    assert [reads for _, reads, _, _ in history[1:]] == [750] * (len(history) - 1)
    # The tick that empties the bucket drops the ceiling to baseline at once.
    before, served, _, _ = history[-1]
    assert before + 300 * TICK - served <= 0
    assert budget.credits == 0.0
    assert budget.applied == (300, 30, round(75 * MIB), round(75 * MIB * FLOOR_SHARE))
    (event,) = kernel.governor.events
    assert event["event"] == "burst-exhausted"
    assert event["elapsed_s"] == pytest.approx(kernel.elapsed)
    # 375 reads at the even split, then 750 a tick draining 675: empty on the 25th tick (6.25 s).
    assert len(history) == 25
    assert event["elapsed_s"] == pytest.approx(6.25)
    assert event["ceiling_iops"] == 300.0
    assert event["ceiling_mibps"] == 75.0
    assert event["credits"] == 0.0
    assert event["device"] == "/dev/loop9"
    # After the knee the volume delivers its baseline.
    kernel.saturate(1.0)
    kernel.saturate(1.0)
    assert kernel.last_reads == 75


def test_gp2_stays_at_baseline_under_baseline_demand() -> None:
    kernel = Kernel(GP2)
    while kernel.budget.bursting:
        kernel.saturate(1.0)
    for _ in range(100):
        kernel.saturate(1.0)  # 300 IOPS served, 300 credits earned a second
    assert not kernel.budget.bursting
    assert [e["event"] for e in kernel.governor.events] == ["burst-exhausted"]


def test_gp2_burst_is_restored_after_refilling_5_percent() -> None:
    kernel = Kernel(GP2)
    while kernel.budget.bursting:
        kernel.saturate(1.0)
    needed = RESTORE_SHARE * GP2["credit_capacity"]  # 810 credits = 10.8 s of idle refill
    idle_ticks = 0
    while not kernel.budget.bursting:
        kernel.tick()
        idle_ticks += 1
        assert idle_ticks < 100
    assert idle_ticks == math.ceil(needed / (300 * TICK))
    assert kernel.budget.credits >= needed
    exhausted, restored = kernel.governor.events
    assert restored["event"] == "burst-restored"
    assert restored["elapsed_s"] == pytest.approx(exhausted["elapsed_s"] + idle_ticks * TICK)
    assert restored["ceiling_iops"] == 3000.0
    assert kernel.budget.applied is not None
    assert kernel.budget.applied[0] == 3000


def test_gp2_balance_never_exceeds_capacity() -> None:
    kernel = Kernel(GP2)
    for _ in range(40):
        kernel.tick()
    assert kernel.budget.credits == GP2["credit_capacity"]


def test_st1_credits_are_mib() -> None:
    kernel = Kernel(ST1)
    history = []
    while kernel.budget.bursting:
        before = kernel.budget.credits
        kernel.saturate(1.0, io_bytes=MIB)
        history.append((before, kernel.last_reads, kernel.budget.credits))
        assert len(history) < 200
    for before, reads, after in history[:-1]:
        assert after == pytest.approx(before + ST1["credit_refill_per_s"] * TICK - reads)
    # A full bucket lasts 6 s at full burst demand (+ the first tick at the even split).
    assert len(history) * TICK == pytest.approx(6.25, abs=0.25)
    (event,) = kernel.governor.events
    assert event["event"] == "burst-exhausted"
    assert event["ceiling_mibps"] == 19.53125
    assert kernel.budget.ceilings() == (19.53125, 19.53125)
    kernel.saturate(1.0, io_bytes=MIB)
    kernel.saturate(1.0, io_bytes=MIB)
    assert kernel.last_reads / TICK == pytest.approx(19.53, abs=2.1)


def test_st1_spends_a_credit_per_mib_not_per_io() -> None:
    kernel = Kernel(ST1)
    io_bytes = 128 * 1024
    for _ in range(4):
        before = kernel.budget.credits
        kernel.tick(reads=40, io_bytes=io_bytes)  # 40 I/Os, 5 MiB
        assert kernel.budget.credits == pytest.approx(
            min(ST1["credit_capacity"], before + ST1["credit_refill_per_s"] * TICK - 5)
        )


def test_summary() -> None:
    kernel = Kernel(GP2)
    kernel.saturate(1.0)
    (summary,) = kernel.governor.summary()
    assert summary == {
        "device": "/dev/loop9",
        "split_changes_ios": 1,
        "split_changes_bytes": 1,
        "read_share": 1.0,
        "credits_left": 15900.0,
        "bursting": True,
    }
    (plain,) = Kernel(GP3).governor.summary()
    assert plain["credits_left"] is None
    assert plain["bursting"] is None


# ---------------------------------------------------------------- the thread


class FailingThrottle(RecordingThrottle):
    def served(self) -> dict[str, Served]:
        raise ThrottleError("io_serviced vanished")


def test_the_loop_records_errors_and_keeps_going() -> None:
    throttle = FailingThrottle()
    budget = DeviceBudget(LoopDevice("/x", "/dev/loop9", DEVICE, True), GP3)  # type: ignore[arg-type]
    governor = Governor(throttle, [budget], period_s=0.005)
    governor.start()
    try:
        deadline = time.monotonic() + 5
        while len(governor.errors) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)
    finally:
        governor.stop()
    assert governor.errors == ["io_serviced vanished"] * 20  # capped
    assert throttle.calls[0] == (DEVICE, 1500, 1575, round(62.5 * MIB), round(62.5 * MIB * 1.05))
    assert governor._thread is not None
    assert not governor._thread.is_alive()
