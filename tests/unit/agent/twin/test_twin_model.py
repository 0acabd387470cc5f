"""The EBS twin's per-I/O model (agent.twin.model): AWS's I/O accounting, pacing, credits and latency.

Every expected figure is computed here by hand or independently (``statistics.NormalDist`` for
the lognormal's percentiles), never read back from the model.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from typing import Any, Dict, List, Tuple

import pytest

from storagebench.agent.twin.model import (
    PACING_SLOTS,
    STALL_CREDIT_CAP_S,
    Admission,
    Limits,
    ModelError,
    ServiceTime,
    VolumeModel,
    predict,
)

KIB = 1 << 10
MIB = 1 << 20
GP3 = {"iops": 3000, "mibps": 125, "io_size_kib": 256}
ST1 = {"iops": 500, "mibps": 40, "io_size_kib": 1024}
FAST = {"modes": [{"weight": 1, "p50_ms": 0.6, "p99_ms": 1.4}]}


def admission(**limits: Any) -> Admission:
    return Admission(Limits(limits))


def costs(gate: Admission, ios: List[Tuple[int, int, bool]]) -> List[Tuple[int, int]]:
    return [gate.cost(offset, length, write) for offset, length, write in ios]


# ---------------------------------------------------------------- I/O accounting


def test_an_ssd_io_costs_one_operation_per_started_256_kib() -> None:
    gate = admission(**GP3)
    assert gate.cost(0, MIB, False) == (4, MIB)
    assert gate.cost(64 * MIB, 256 * KIB + 1, False) == (2, 256 * KIB + 1)  # random: no merge
    assert gate.cost(128 * MIB, 4 * KIB, True) == (1, 4 * KIB)


def test_sequential_4k_ios_in_one_direction_merge_into_one_operation_per_256_kib() -> None:
    gate = admission(**GP3)
    run = [(i * 4 * KIB, 4 * KIB, False) for i in range(128)]  # 512 KiB in 4 KiB reads
    charged = costs(gate, run)
    assert sum(ops for ops, _ in charged) == 2
    assert [i for i, (ops, _) in enumerate(charged) if ops] == [0, 64]  # a new unit every 256 KiB
    assert sum(size for _, size in charged) == 512 * KIB  # SSD: throughput is what moved


def test_a_direction_change_or_a_gap_starts_a_new_operation() -> None:
    gate = admission(**GP3)
    assert gate.cost(0, 4 * KIB, False) == (1, 4 * KIB)
    assert gate.cost(4 * KIB, 4 * KIB, False) == (0, 4 * KIB)  # continues the read
    assert gate.cost(8 * KIB, 4 * KIB, True) == (1, 4 * KIB)  # same place, now a write
    assert gate.cost(12 * KIB, 4 * KIB, True) == (0, 4 * KIB)
    assert gate.cost(20 * KIB, 4 * KIB, True) == (1, 4 * KIB)  # a 4 KiB hole
    assert gate.cost(12 * KIB, 4 * KIB, True) == (1, 4 * KIB)  # backwards


def test_a_merged_io_that_overflows_its_unit_opens_the_next_one() -> None:
    gate = admission(**GP3)
    assert gate.cost(0, 192 * KIB, False) == (1, 192 * KIB)
    # 64 KiB fill the first unit, the remaining 64 KiB start a second one ...
    assert gate.cost(192 * KIB, 128 * KIB, False) == (1, 128 * KIB)
    # ... which then has 192 KiB of room left.
    assert gate.cost(320 * KIB, 192 * KIB, False) == (0, 192 * KIB)
    assert gate.cost(512 * KIB, 4 * KIB, False) == (1, 4 * KIB)


def test_hdd_counts_1_mib_units_and_charges_a_whole_mib_per_operation() -> None:
    gate = admission(**ST1)
    assert gate.cost(0, 4 * KIB, False) == (1, MIB)  # a random 4 KiB read moves a MiB's worth
    assert gate.cost(512 * MIB, 3 * MIB, False) == (3, 3 * MIB)
    sequential = costs(gate, [(i * 64 * KIB, 64 * KIB, False) for i in range(32)])  # 2 MiB
    assert sequential[0] == (1, MIB)
    assert sequential[16] == (1, MIB)
    assert sum(ops for ops, _ in sequential) == 2
    assert sum(size for _, size in sequential) == 2 * MIB  # the merged ones are not charged again


def test_admission_counts_ios_operations_and_bytes() -> None:
    gate = admission(**GP3)
    for i in range(64):
        gate.admit(0.0, i * 4 * KIB, 4 * KIB, False)
    gate.admit(0.0, 100 * MIB, MIB, True)
    assert (gate.ios, gate.operations, gate.bytes) == (65, 1 + 4, 64 * 4 * KIB + MIB)


# ---------------------------------------------------------------- pacing


def strict(**limits: Any) -> Admission:
    """Pacing with no tolerance: every I/O in the slot after the last (pacing_slots 0)."""
    return admission(pacing_slots=0, **limits)


def test_ios_arriving_together_are_spaced_at_exactly_the_iops_limit() -> None:
    gate = strict(iops=1000, mibps=1000, io_size_kib=256)
    starts = [gate.admit(5.0, i * MIB, 4 * KIB, False) for i in range(5)]
    assert starts == pytest.approx([5.0, 5.001, 5.002, 5.003, 5.004], abs=1e-12)


def test_an_io_arriving_after_its_slot_starts_at_once() -> None:
    gate = strict(iops=1000, mibps=1000, io_size_kib=256)
    assert gate.admit(1.0, 0, 4 * KIB, False) == 1.0
    assert gate.admit(1.0005, MIB, 4 * KIB, False) == pytest.approx(1.001, abs=1e-12)
    assert gate.admit(1.25, 2 * MIB, 4 * KIB, False) == 1.25


def test_ios_are_spaced_at_exactly_the_throughput_limit() -> None:
    gate = strict(iops=16000, mibps=1, io_size_kib=256)  # bytes bind: 4 x 256 KiB per second
    starts = [gate.admit(0.0, i * MIB, 256 * KIB, False) for i in range(4)]
    assert starts == pytest.approx([0.0, 0.25, 0.5, 0.75], abs=1e-12)


def test_a_1_mib_io_takes_four_operation_slots_and_completes_after_its_last() -> None:
    gate = strict(iops=100, mibps=1000, io_size_kib=256)
    assert gate.admit(0.0, 0, MIB, False) == pytest.approx(0.03, abs=1e-12)  # its 4th unit's slot
    assert gate.admit(0.0, 64 * MIB, 4 * KIB, False) == pytest.approx(0.04, abs=1e-12)


def test_a_1_mib_io_bound_by_throughput_completes_when_its_last_unit_is_served() -> None:
    gate = strict(iops=16000, mibps=1, io_size_kib=256)  # 256 KiB every 0.25 s
    assert gate.admit(0.0, 0, MIB, False) == pytest.approx(0.75, abs=1e-12)
    assert gate.admit(0.0, 64 * MIB, 256 * KIB, False) == pytest.approx(1.0, abs=1e-12)


def test_strict_pacing_saves_no_tokens_while_idle() -> None:
    gate = strict(iops=1000, mibps=1000, io_size_kib=256)
    for i in range(10):
        gate.admit(0.0, i * MIB, 4 * KIB, False)
    later = [gate.admit(2.0, (20 + i) * MIB, 4 * KIB, False) for i in range(3)]
    assert later == pytest.approx([2.0, 2.001, 2.002], abs=1e-12)


def test_idleness_saves_up_no_more_than_the_pacing_slots() -> None:
    """EBS spreads I/O out: after a second of idleness two slots are caught up on, not a backlog."""
    gate = admission(iops=1000, mibps=1000, io_size_kib=256)
    assert gate.limits.pacing_slots == PACING_SLOTS == 2
    for i in range(10):
        gate.admit(0.0, i * MIB, 4 * KIB, False)
    later = [gate.admit(2.0, (20 + i) * MIB, 4 * KIB, False) for i in range(5)]
    assert later == pytest.approx([2.0, 2.0, 2.0, 2.001, 2.002], abs=1e-12)


def closed_loop_rate(gate: Admission, late_slots: float, qd: int = 4, service_s: float = 0.003) -> float:
    """IOPS a client keeping ``qd`` I/Os in flight gets when each reply reaches it up to
    ``late_slots`` of 1/1000 s late (the twin's or the client's late wake-up), 20,000 I/Os."""
    draw = random.Random(3)
    completions = [gate.admit(0.0, i * MIB, 4 * KIB, False) + service_s for i in range(qd)]
    heapq.heapify(completions)
    done = 0.0
    for i in range(20_000):
        done = heapq.heappop(completions)
        arrival = done + draw.uniform(0, late_slots / 1000)
        heapq.heappush(completions, gate.admit(arrival, (i * 7919 % 4096) * MIB, 4 * KIB, False) + service_s)
    return 20_000 / done


def test_late_replies_keep_the_rate_with_the_tolerance_and_lose_it_without() -> None:
    """4 in flight and 3 ms of service ask for 1,333 IOPS of a 1,000 IOPS volume: at the limit
    with a little to spare, as a twin is; replies up to 1.5 slots late."""
    limits = {"iops": 1000, "mibps": 1000, "io_size_kib": 256}
    assert closed_loop_rate(admission(**limits), 0.0) == pytest.approx(1000, rel=0.001)
    assert closed_loop_rate(admission(**limits), 1.5) == pytest.approx(1000, rel=0.002)
    assert closed_loop_rate(strict(**limits), 1.5) < 0.97 * 1000  # each missed slot lost for good


def stalled_closed_loop_rate(gate: Admission, stalls: int, stall_s: float, forgive: bool) -> float:
    """IOPS of 8 I/Os in flight (1 ms of service) for 20 s at 1,000 IOPS, the twin stalled
    ``stalls`` times: every reply due in a stall leaves when it ends, and the twin then forgives."""
    completions = [gate.admit(0.0, i * MIB, 4 * KIB, False) + 0.001 for i in range(8)]
    heapq.heapify(completions)
    stall_at = [20.0 * (k + 1) / (stalls + 1) for k in range(stalls)]
    done, index = 0.0, 0
    while done < 20.0:
        done = heapq.heappop(completions)
        if stall_at and done >= stall_at[0]:
            begun = stall_at.pop(0)
            done = max(done, begun + stall_s)
            if forgive:
                gate.forgive(done - begun)
        index += 1
        heapq.heappush(completions, gate.admit(done, (index * 7919 % 4096) * MIB, 4 * KIB, False) + 0.001)
    return index / done


def test_stalls_of_the_twin_itself_are_caught_up_on_when_forgiven() -> None:
    limits = {"iops": 1000, "mibps": 1000, "io_size_kib": 256}
    forgiven = stalled_closed_loop_rate(admission(**limits), 20, 0.05, forgive=True)
    not_forgiven = stalled_closed_loop_rate(admission(**limits), 20, 0.05, forgive=False)
    assert forgiven == pytest.approx(1000, rel=0.003)
    assert not_forgiven < 0.96 * 1000  # 20 x 50 ms of a 20 s run lost


def test_the_stall_credit_is_capped_and_spent_once_the_buckets_catch_up() -> None:
    gate = admission(iops=1000, mibps=1000, io_size_kib=256)
    gate.admit(10.0, 0, 4 * KIB, False)
    gate.forgive(1.0)  # capped at STALL_CREDIT_CAP_S
    starts = [gate.admit(11.0, (i + 1) * MIB, 4 * KIB, False) for i in range(400)]
    at_once = sum(1 for start in starts if start == 11.0)
    assert at_once == int((STALL_CREDIT_CAP_S + PACING_SLOTS / 1000) * 1000) + 1
    assert gate.stall_credit == 0.0  # spent: the buckets no longer lag the clock
    later = [gate.admit(12.0, (500 + i) * MIB, 4 * KIB, False) for i in range(5)]
    assert later == pytest.approx([12.0, 12.0, 12.0, 12.001, 12.002], abs=1e-9)  # paced again


def test_the_tolerance_never_lets_a_window_beyond_its_slots_exceed_the_limit() -> None:
    gate = admission(iops=1000, mibps=1000, io_size_kib=256)
    starts = sorted(gate.admit(i * 0.0005, (i * 7919 % 4096) * MIB, 4 * KIB, False) for i in range(4000))
    for first in range(0, len(starts) - 101, 97):  # any 100 consecutive starts span >= 97 slots
        assert starts[first + 100] - starts[first] >= (100 - PACING_SLOTS) / 1000 - 1e-12


# ---------------------------------------------------------------- credits

GP2 = {
    "iops": 100,
    "mibps": 128,
    "burst_iops": 1000,
    "burst_mibps": 128,
    "credit_capacity": 2000,
    "credit_refill_per_s": 100,
    "credit_unit": "io",
    "io_size_kib": 256,
}


def saturate(gate: Admission, rate: float, until: float, size: int, random_offsets: bool = True) -> float:
    """I/Os arriving every 1/rate s from 0 until the first event or ``until``; returns the last arrival."""
    index = 0
    at = 0.0
    while at < until and not gate.events:
        at = index / rate
        offset = (index * 7919 % 4096) * MIB if random_offsets else index * size
        gate.admit(at, offset, size, False)
        index += 1
    return at


def test_gp2_io_credits_drain_and_the_burst_ends_when_computed_by_hand() -> None:
    """2,000 credits, refill 100/s, demand 1,000 IOPS: the bucket loses 900 per second net.

    I/O ``i`` arrives at i / 1000 s and leaves 2000 - (i + 1) + 100 * i / 1000 credits: the first
    at or below zero is i = ceil(1999 / 0.9) = 2222, at 2.222 s (2000 / 900 = 2.2222 s by the
    continuous drain, within one I/O's interval).
    """
    gate = admission(**GP2)
    assert gate.ceilings() == (1000, 128)
    saturate(gate, 1000.0, 10.0, 4 * KIB)
    ((at, event, credits, iops, mibps),) = gate.events
    assert event == "burst-exhausted"
    assert at == pytest.approx(2.222, abs=1e-9)
    assert at == pytest.approx(2000 / 900, abs=1 / 1000)
    assert (credits, iops, mibps) == (0.0, 100, 128)
    assert gate.ceilings() == (100, 128)


def test_gp2_credits_restore_the_burst_at_5_percent() -> None:
    """Empty at the knee; refilling at 100/s, 5 % of 2,000 (100 credits) takes 1 s, and the I/O
    that looks spends one: 1.00 s of rest leaves 99 (still baseline), 1.02 s leaves 101."""
    gate = admission(**GP2)
    knee = saturate(gate, 1000.0, 10.0, 4 * KIB)
    gate.admit(knee + 1.0, 3 * MIB, 4 * KIB, False)
    assert gate.credits == pytest.approx(99.0, abs=1e-6)
    assert len(gate.events) == 1
    gate2 = admission(**GP2)
    knee2 = saturate(gate2, 1000.0, 10.0, 4 * KIB)
    gate2.admit(knee2 + 1.02, 3 * MIB, 4 * KIB, False)
    assert gate2.credits == pytest.approx(101.0, abs=1e-6)
    assert [e[1] for e in gate2.events] == ["burst-exhausted", "burst-restored"]
    assert gate2.events[1][0] == pytest.approx(knee2 + 1.02, abs=1e-9)
    assert gate2.ceilings() == (1000, 128)


def test_credits_never_exceed_the_capacity() -> None:
    gate = admission(**GP2)
    gate.admit(0.0, 0, 4 * KIB, False)
    gate.admit(3600.0, MIB, 4 * KIB, False)  # an hour of refill on a full bucket
    assert gate.credits == pytest.approx(2000 - 1, abs=1e-9)


ST1_BURST = {
    "iops": 500,
    "mibps": 40,
    "burst_iops": 500,
    "burst_mibps": 250,
    "credit_capacity": 100,
    "credit_refill_per_s": 20,
    "credit_unit": "mib",
    "io_size_kib": 1024,
}


def test_st1_mib_credits_drain_with_throughput_and_end_the_burst_when_computed_by_hand() -> None:
    """100 MiB of credits, refill 20 MiB/s, 1 MiB reads at 250 MiB/s: read ``i`` arrives at
    i / 250 s and leaves 100 - (i + 1) + 20 * i / 250 = 99 - 0.92 i: zero first at
    i = ceil(99 / 0.92) = 108, at 0.432 s (100 / 230 = 0.4348 s continuously)."""
    gate = admission(**ST1_BURST)
    assert gate.ceilings() == (500, 250)
    saturate(gate, 250.0, 10.0, MIB, random_offsets=False)
    ((at, event, _, iops, mibps),) = gate.events
    assert event == "burst-exhausted"
    assert at == pytest.approx(0.432, abs=1e-9)
    assert at == pytest.approx(100 / 230, abs=1 / 250)
    assert (iops, mibps) == (500, 40)


def test_st1_random_4k_reads_spend_a_mib_of_credit_each() -> None:
    gate = admission(**ST1_BURST)
    for i in range(10):
        gate.admit(0.0, i * 64 * MIB, 4 * KIB, False)
    assert gate.credits == pytest.approx(90.0, abs=1e-9)


def test_a_volume_without_credits_never_bursts() -> None:
    gate = admission(**GP3)
    saturate(gate, 3000.0, 2.0, 4 * KIB)
    assert gate.events == []
    assert gate.ceilings() == (3000, 125)


# ---------------------------------------------------------------- predict


def lognormal_percentile(p50_ms: float, p99_ms: float, q: float) -> float:
    standard = statistics.NormalDist()
    sigma = math.log(p99_ms / p50_ms) / standard.inv_cdf(0.99)
    return math.exp(math.log(p50_ms) + sigma * standard.inv_cdf(q))


def test_predict_at_the_limit_follows_littles_law() -> None:
    """8 in flight at 2,000 IOPS: each waits 8 / 2000 s = 4 ms on average."""
    limits = {"iops": 2000, "mibps": 1000, "io_size_kib": 256}
    result = predict(limits, FAST, iodepth=8, block_size=4 * KIB, ios=40_000)
    assert result["iops"] == pytest.approx(2000, rel=0.01)
    assert result["mean_ms"] == pytest.approx(8 / 2000 * 1000, rel=0.01)
    assert result["mibps"] == pytest.approx(2000 * 4 / 1024, rel=0.01)


def test_predict_at_the_throughput_limit_follows_littles_law() -> None:
    """4 x 1 MiB in flight at 125 MiB/s: 125 I/Os per second, 4 / 125 s = 32 ms each."""
    result = predict(GP3, FAST, iodepth=4, block_size=MIB, ios=4_000, sequential=True)
    assert result["mibps"] == pytest.approx(125, rel=0.01)
    assert result["mean_ms"] == pytest.approx(4 / 125 * 1000, rel=0.01)


def test_predict_at_qd1_below_the_limit_is_the_service_time() -> None:
    result = predict(GP3, FAST, iodepth=1, block_size=4 * KIB, ios=100_000)
    for q, key in ((0.50, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms")):
        assert result[key] == pytest.approx(lognormal_percentile(0.6, 1.4, q), rel=0.02), key
    assert result["iops"] < 3000  # service-bound, not limit-bound


def test_predict_adds_the_hosts_overhead_between_ios() -> None:
    unlimited = {"iops": 1_000_000, "mibps": 100_000}  # no pacing: the same draws, the same latency
    slow_host = predict(unlimited, FAST, iodepth=1, block_size=4 * KIB, ios=20_000, overhead_s=0.0004)
    fast_host = predict(unlimited, FAST, iodepth=1, block_size=4 * KIB, ios=20_000)
    # Latency is the volume's; the gaps between I/Os lower the rate: 1 / (mean + 0.4 ms).
    assert slow_host["mean_ms"] == pytest.approx(fast_host["mean_ms"], rel=1e-9)
    assert slow_host["iops"] == pytest.approx(1000 / (fast_host["mean_ms"] + 0.4), rel=0.01)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"iodepth": 0, "block_size": 4096}, "iodepth 0"),
        ({"iodepth": 1, "block_size": 0}, "block_size 0"),
        ({"iodepth": 8, "block_size": 4096, "ios": 10}, "ios 10"),
    ],
)
def test_predict_refuses_an_impossible_run(arguments: Dict[str, int], named: str) -> None:
    with pytest.raises(ModelError, match=named):
        predict(GP3, FAST, **arguments)  # type: ignore[arg-type]


# ---------------------------------------------------------------- service time


def test_a_mixture_draws_each_mode_by_its_weight() -> None:
    spec = {
        "modes": [
            {"weight": 0.3, "p50_ms": 0.1, "p99_ms": 0.2},
            {"weight": 0.7, "p50_ms": 10.0, "p99_ms": 20.0},
        ]
    }
    service = ServiceTime.from_spec(spec, seed=11)
    draws = 20_000
    fast = sum(1 for _ in range(draws) if service.sample() < 0.001)  # the modes do not overlap at 1 ms
    sampling_error = math.sqrt(0.3 * 0.7 / draws)
    assert abs(fast / draws - 0.3) < 4 * sampling_error


def test_weights_are_relative() -> None:
    spec = {"modes": [{"weight": 1, "p50_ms": 0.1, "p99_ms": 0.2}, {"weight": 3, "p50_ms": 10, "p99_ms": 20}]}
    service = ServiceTime.from_spec(spec, seed=3)
    fast = sum(1 for _ in range(20_000) if service.sample() < 0.001)
    assert abs(fast / 20_000 - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 20_000)


def test_a_single_mode_has_the_configured_percentiles() -> None:
    service = ServiceTime.from_spec(FAST, seed=5)
    draws = sorted(service.sample() * 1000 for _ in range(50_000))
    assert draws[len(draws) // 2] == pytest.approx(0.6, rel=0.02)
    assert draws[int(0.99 * len(draws))] == pytest.approx(1.4, rel=0.04)
    (mode,) = service.modes
    assert mode.quantile(0.5) * 1000 == pytest.approx(0.6, rel=1e-9)
    assert mode.quantile(0.95) * 1000 == pytest.approx(lognormal_percentile(0.6, 1.4, 0.95), rel=1e-6)


def test_the_same_seed_draws_the_same_service_times() -> None:
    one = VolumeModel(GP3, FAST, seed=42)
    two = VolumeModel(GP3, FAST, seed=42)
    ios = [(i * 1e-3, i * MIB, 4 * KIB, False) for i in range(50)]
    assert [one.complete_at(*io) for io in ios] == [two.complete_at(*io) for io in ios]


def test_complete_at_is_admission_plus_a_service_time_from_the_distribution() -> None:
    fixed = {"modes": [{"p50_ms": 2.0, "p99_ms": 2.0}]}  # sigma 0: every draw is exactly 2 ms
    model = VolumeModel({"iops": 1000, "mibps": 1000}, fixed, seed=1)
    assert model.complete_at(0.0, 0, 4 * KIB, False) == pytest.approx(0.002, abs=1e-12)
    assert model.complete_at(0.0, MIB, 4 * KIB, False) == pytest.approx(0.003, abs=1e-12)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"mibps": 125}, "limits.iops: missing"),
        ({"iops": 0, "mibps": 125}, "limits.iops: 0, a positive number expected"),
        ({"iops": "lots", "mibps": 125}, "limits.iops: 'lots', a positive number expected"),
        ({"iops": 3000, "mibps": -1}, "limits.mibps: -1, a positive number expected"),
        ({"iops": 3000, "mibps": 125, "io_size_kib": 0}, "limits.io_size_kib: 0, a positive number expected"),
        ({"iops": 3000, "mibps": 125, "io_size_kib": 0.5}, "limits.io_size_kib: 0.5, a whole number of KiB"),
        ({"iops": 3000, "mibps": 125, "burst_iops": 0}, "limits.burst_iops: 0, a positive number expected"),
        (
            {"iops": 3000, "mibps": 125, "burst_mibps": "x"},
            "limits.burst_mibps: 'x', a positive number expected",
        ),
        ({"iops": 3000, "mibps": float("nan")}, "limits.mibps: nan, a positive number expected"),
        ({"iops": True, "mibps": 125}, "limits.iops: True, a positive number expected"),
        (
            {"iops": 3000, "mibps": 125, "credit_capacity": -5},
            "limits.credit_capacity: -5, a number >= 0 expected",
        ),
        (
            {"iops": 3000, "mibps": 125, "credit_refill_per_s": "fast"},
            "limits.credit_refill_per_s: 'fast', a number >= 0 expected",
        ),
        (
            {"iops": 3000, "mibps": 125, "credit_unit": "gib"},
            "limits.credit_unit: 'gib', 'io' or 'mib' expected",
        ),
    ],
)
def test_bad_limits_name_the_field_and_the_value(limits: Dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        Limits(limits)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("latency", "message"),
    [
        ("fast", "latency: 'fast', an object with modes expected"),
        ({}, "latency.modes: None, a non-empty list of modes expected"),
        ({"modes": []}, "latency.modes: [], a non-empty list of modes expected"),
        ({"modes": [7]}, "latency.modes[0]: 7, an object expected"),
        ({"modes": [{"p50_ms": 0.6}]}, "latency.modes[0]: p99_ms missing"),
        ({"modes": [{"p50_ms": "slow", "p99_ms": 1}]}, "latency.modes[0].p50_ms: 'slow', a number expected"),
        (
            {"modes": [{"p50_ms": 2, "p99_ms": 1}]},
            "latency.modes[0]: p50_ms 2, p99_ms 1: 0 < p50_ms <= p99_ms expected",
        ),
        (
            {"modes": [{"p50_ms": 0, "p99_ms": 1}]},
            "latency.modes[0]: p50_ms 0, p99_ms 1: 0 < p50_ms <= p99_ms expected",
        ),
        (
            {"modes": [FAST["modes"][0], {"weight": 0, "p50_ms": 1, "p99_ms": 2}]},
            "latency.modes[1].weight: 0, a positive number expected",
        ),
        (
            {"modes": [{"weight": "half", "p50_ms": 1, "p99_ms": 2}]},
            "latency.modes[0].weight: 'half', a positive number expected",
        ),
    ],
)
def test_bad_latency_names_the_field_and_the_value(latency: Any, message: str) -> None:
    with pytest.raises(ModelError) as caught:
        ServiceTime.from_spec(latency)
    assert message in str(caught.value)


def test_absent_or_null_optional_limits_take_their_defaults() -> None:
    """As the throttle reads a plan: no burst means the baseline, no bucket means none."""
    limits = Limits({"iops": 3000, "mibps": 125, "burst_iops": None, "credit_capacity": None})
    assert (limits.burst_iops, limits.burst_mibps) == (3000, 125)
    assert (limits.unit, limits.hdd, limits.credit_capacity, limits.credit_unit) == (
        256 * KIB,
        False,
        0.0,
        "io",
    )
    assert Limits(ST1).hdd


def test_model_errors_are_value_errors() -> None:
    """Callers that validate input catch ValueError; a ModelError is one."""
    assert issubclass(ModelError, ValueError)
