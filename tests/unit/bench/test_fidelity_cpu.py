"""The twin's CPU figures: per 1,000 IOPS from its own account, and from a sampled counter."""

from __future__ import annotations

import os

import pytest

from fidelity_cpu import (
    CLOCK_TICKS,
    RunSampler,
    cpu_figures,
    delta_between,
    stalls_within,
    twin_cpu_from_state,
)
from fidelity_latency import FidelityError


def test_cpu_per_1000_iops_is_the_cpu_of_one_io_scaled_to_1000_iops() -> None:
    # 1 s of CPU for 10,000 I/Os in 10 s: 10 % of a core at 1,000 IOPS, 100 us per I/O.
    assert cpu_figures(1.0, 10.0, 10_000) == {
        "cpu_share_pct_of_one_core": 10.0,
        "iops": 1000.0,
        "cpu_us_per_io": 100.0,
        "pct_of_one_core_per_1000_iops": 10.0,
    }
    # The same CPU at three times the rate: a third of the cost per 1,000 IOPS.
    assert cpu_figures(1.0, 10.0, 30_000)["pct_of_one_core_per_1000_iops"] == pytest.approx(3.33)
    assert cpu_figures(0.5, 10.0, 0)["pct_of_one_core_per_1000_iops"] is None


def test_the_twins_own_account_becomes_figures() -> None:
    state = {"cpu_s": 5.5, "ios": 51808, "modelled_s": 31.076, "operations": 51763, "events": []}
    figures = twin_cpu_from_state(state)
    assert figures["cpu_share_pct_of_one_core"] == 17.7
    assert figures["cpu_us_per_io"] == 106.2
    assert figures["pct_of_one_core_per_1000_iops"] == 10.62
    assert (figures["ios"], figures["modelled_s"]) == (51808, 31.076)


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"ios": 10, "modelled_s": 1.0}, "twin state cpu_s: None, a number >= 0 expected"),
        ({"cpu_s": 1.0, "ios": "many", "modelled_s": 1.0}, "twin state ios: 'many'"),
        ({"cpu_s": 1.0, "ios": 10, "modelled_s": 0.0}, "0.0 s, a positive duration expected"),
    ],
)
def test_a_state_without_its_counters_is_refused_by_name(state: dict[str, object], message: str) -> None:
    with pytest.raises(FidelityError, match=message):
        twin_cpu_from_state(state)


def test_a_counter_grows_by_the_interpolated_amount_within_the_samples() -> None:
    samples = [(100.0, 0.0), (101.0, 1.0), (102.0, 3.0)]
    assert delta_between(samples, 100.5, 101.5) == pytest.approx(1.5)  # 0.5 -> 2.0
    assert delta_between(samples, 100.0, 102.0) == pytest.approx(3.0)
    assert delta_between(samples, 99.0, 101.0) is None  # before the first sample: unknown
    assert delta_between(samples, 101.0, 102.5) is None
    with pytest.raises(FidelityError, match=r"end 101\.0 is not after start 101\.0"):
        delta_between(samples, 101.0, 101.0)


def twin_state(origin: float | None, stalls: list[tuple[float, float]]) -> dict[str, object]:
    timing = {"stalls": [{"elapsed_s": at, "late_ms": late} for at, late in stalls]}
    return {"state": {"model_started_unix": origin, "reply_timing": timing}}


def test_stalls_are_counted_in_the_window_they_happened_in() -> None:
    twins = [
        twin_state(1000.0, [(5.0, 80.0), (30.0, 9.5)]),
        twin_state(1001.0, [(9.0, 6.0)]),
        twin_state(None, [(5.0, 50.0)]),  # a twin of an older agent: no wall clock, not counted
    ]
    manifest = {"emulation": {"twins": twins}}
    assert stalls_within(manifest, (1004.0, 1010.5)) == {"count": 2, "late_ms": 86.0}
    assert stalls_within(manifest, (1011.0, 1020.0)) == {"count": 0, "late_ms": 0}


def test_steal_is_the_most_stolen_cpus_share_of_the_window() -> None:
    sampler = RunSampler(os.getpid(), period_s=60)
    sampler.stop()
    # over 10 s cpu0 lost 1 s to the hypervisor, cpu1 3 s
    sampler.cpu_stolen = [
        [(0.0, 0.0), (10.0, 1.0 * CLOCK_TICKS)],
        [(0.0, 0.0), (10.0, 3.0 * CLOCK_TICKS)],
    ]
    assert sampler.host_steal_pct(0.0, 10.0) == 30.0
    assert sampler.host_steal_pct(5.0, 10.0) == 30.0  # interpolated: 1.5 s of 5
    assert sampler.host_steal_pct(5.0, 11.0) is None  # past the last sample
