"""Ground truth end to end: the agent on an EBS twin of known latency, read back as the report reads it.

A twin (``emulator: twin``) configured bimodal (0.3 ms x 0.7 and 4 ms x 0.3) must come out of the
whole chain (FUSE twin, loop device, real fio, ``results.collect``, ``analysis.annotate``,
``report.build``) flagged "two modes", with each mode where fio measured that mode's I/O; a
gp3-like unimodal one (p50 0.6 ms, p99 1.4 ms) must not be flagged, and at QD1, where fio sees the
service time itself, its p50 must land within 10 % of the configured 0.6 ms (the model's own QD1
p50 at 3,000 IOPS is 0.601). The bimodal twin is io2-sized (16,000 IOPS) so that neither the IOPS
pacing nor a queue reshapes what QD1 and QD4 see.

Latency values need the CPU: a twin whose replies wait for a core answers late. The detector's
verdicts are judged against what the run's own CPU waits can explain (``TwinRun.moved_at_most``,
from each phase's fio and the twin's run-queue delay, ``tests.support.cpu_wait``): a wait of d
delays at most the I/Os in flight by d, so at most QD x waited / (valley - p99) of a phase's I/O
can have crossed into a second mode. Quiet, that is ~0 and the bounds are the model's; beside
``make test-busy`` it reached 0.73-0.89, so the verdicts then say little (judged quietly in
``make bench-fidelity``). Measured on this
2-core machine with a demo and the fidelity bench running beside, the gp3 QD1 p50 reached 0.71 ms
while tasks waited for a CPU 28-35 % of the time; up to 25 % it held. The p50 is therefore judged
only when the kernel's CPU pressure (``/proc/pressure/cpu``) stayed at or under 25 % during the
run; above it the test is skipped with the figure, after the detector's verdict was judged (that is
judged always). What the guard cannot see is the twin's calibration of its own I/O path, taken once
at start (30-151 us across runs here): the QD1 p50 moves by its error (0.569 ms at 106 us, 0.668 ms
at 30 us), which the terminal summary prints beside the p50. Each run takes about 9 s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from agent_plans import MIB, ebs_target, emulated, fio_step
from tests.support.cpu_wait import CpuWait, working_in

from storagebench.agent.twin.volume import twin_unavailable
from storagebench.analysis.annotate import annotate
from storagebench.analysis.bimodal import Bimodal, detect_bimodal
from storagebench.report.build import build_report
from storagebench.request import parse_request
from storagebench.request.model import Config
from storagebench.results.collect import collect
from storagebench.results.records import ResultRecord

pytestmark = [pytest.mark.root, pytest.mark.fio]

GP3 = {"iops": 3000, "mibps": 125}
IO2 = {"iops": 16000, "mibps": 1000}
UNIMODAL = {"modes": [{"weight": 1, "p50_ms": 0.6, "p99_ms": 1.4}]}
BIMODAL = {
    "modes": [{"weight": 0.7, "p50_ms": 0.3, "p99_ms": 0.6}, {"weight": 0.3, "p50_ms": 4.0, "p99_ms": 8.0}]
}
WORKLOAD = "twin-randread-4k"
PRESSURE = Path("/proc/pressure/cpu")
MAX_PRESSURE = 0.25  # PSI "some" share of the run; the values held up to 0.25 and broke from 0.28


@pytest.fixture(autouse=True)
def _twin_possible() -> None:
    reason = twin_unavailable()
    if reason is not None:
        pytest.skip(reason)


def median_ms(spec: dict[str, Any]) -> float:
    """The configured mixture's median, by bisection on its CDF (lognormal modes from p50 and p99)."""
    z99 = NormalDist().inv_cdf(0.99)
    modes = spec["modes"]
    total = math.fsum(float(m["weight"]) for m in modes)

    def cdf(x: float) -> float:
        return math.fsum(
            float(m["weight"])
            / total
            * NormalDist(math.log(m["p50_ms"]), math.log(m["p99_ms"] / m["p50_ms"]) / z99).cdf(math.log(x))
            for m in modes
        )

    low, high = 1e-4, 1e4
    for _ in range(100):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if cdf(middle) < 0.5 else (low, middle)
    return math.sqrt(low * high)


def lognormal_cdf(mode: dict[str, Any], x_ms: float) -> float:
    """P(latency <= x_ms) for one configured mode (lognormal from its p50 and p99)."""
    sigma = math.log(mode["p99_ms"] / mode["p50_ms"]) / NormalDist().inv_cdf(0.99)
    return NormalDist(math.log(mode["p50_ms"]), sigma).cdf(math.log(x_ms))


def cpu_stall_us() -> int | None:
    """Microseconds some task has waited for a CPU since boot (PSI), or None without PSI."""
    try:
        for line in PRESSURE.read_text().splitlines():
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1])
    except OSError:
        return None
    return None


def fio_percentiles_us(document: dict[str, Any]) -> dict[float, float]:
    """fio's own percentiles of the one job's reads (the record's basis: lat when fio kept them)."""
    read = document["jobs"][0]["read"]
    latency = read["lat_ns"] if "percentile" in read["lat_ns"] else read["clat_ns"]
    return {float(percent): value / 1000 for percent, value in latency["percentile"].items()}


def config(volume_type: str, **extra: Any) -> Config:
    """The request config the records belong to (``annotate`` reads the targets' kinds from it)."""
    target = {"id": "twin", "kind": "ebs", "type": volume_type, "size_gib": 100, **extra}
    request = parse_request(
        {
            "name": "twin-ground-truth",
            "configs": [{"id": "c1", "instance_type": "c5.4xlarge", "targets": [target]}],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    return request.configs[0]


def randread(step_id: str, iodepth: int, runtime_s: int) -> dict[str, Any]:
    step = fio_step(
        step_id,
        "twin",
        {f"qd{iodepth}": {"rw": "randread", "bs": "4k", "iodepth": iodepth, "runtime": runtime_s}},
        time_based=1,
    )
    step.update(workload=WORKLOAD, profile=WORKLOAD, variant={"iodepth": iodepth})
    return step


class TwinRun:
    """One agent run on a twin: its records as the collect step stores them, and the CPU pressure."""

    def __init__(
        self,
        agent_env: Any,
        volume_type: str,
        limits: dict[str, Any],
        latency: dict[str, Any],
        request: Config,
    ) -> None:
        self.agent_env = agent_env
        volume = dict(emulated(volume_type, 256 * MIB, **limits), latency=latency, emulator="twin")
        plan = agent_env.plan(
            [ebs_target("twin", [volume])], [randread("s-qd1", 1, 4), randread("s-qd4", 4, 3)]
        )
        stall, started = cpu_stall_us(), time.monotonic()
        # Each phase's fio (it runs in its phase's directory) and the twin while that fio runs:
        # their waits for a CPU during the phase
        waits = {qd: CpuWait(self._phase_processes(f"s-qd{qd}")) for qd in (1, 4)}
        with waits[1], waits[4]:
            code, manifest = agent_env.run(plan)
        # the steal of the most-stolen CPU delayed whichever of them ran there
        self.waited_s = {qd: sum(wait.waited_s().values()) + wait.stolen_s() for qd, wait in waits.items()}
        after, wall_s = cpu_stall_us(), time.monotonic() - started
        self.pressure = None if stall is None or after is None else (after - stall) / 1e6 / wall_s
        assert code == 0, manifest["error"]
        (device,) = manifest["targets"][0]["devices"]
        assert device["emulated"]["emulator"] == "twin", device["emulated"].get("fallback_reason")
        # the twin served with every CPU kept awake (agent.twin.wake): this suite runs as root
        assert manifest["emulation"]["cpu_wake"] == {"cpu_wake_latency_us": 0, "refused": None}
        self.calibrated_overhead_us = device["emulated"]["calibrated_overhead_us"]
        collection = collect(agent_env.out)
        assert collection.problems == []
        self.records = annotate(collection.records, agent_env.out, request)
        assert sorted(r.variant["iodepth"] for r in self.records) == [1, 4]
        assert all("emulator:twin" in r.labels for r in self.records)
        stored = {
            "run": {"run_id": agent_env.run_id, "suite": "local", "status": "SUCCEEDED", "configs": ["c1"]},
            "configs": [],
            "results": [
                {"config_id": r.config_id, "record": r.model_dump(mode="json")} for r in self.records
            ],
        }
        self.report = build_report(stored)

    def at(self, iodepth: int) -> ResultRecord:
        (record,) = [r for r in self.records if r.variant["iodepth"] == iodepth]
        return record

    def modes(self, iodepth: int) -> Bimodal | None:
        histogram = self.at(iodepth).histogram
        assert histogram is not None
        return detect_bimodal(histogram)

    def _phase_processes(self, step: str) -> Callable[[], list[int]]:
        def processes() -> list[int]:
            fio = working_in(self.agent_env.phase_dir(step, "p"))
            return [*fio, *self.agent_env.twins()] if fio else []

        return processes

    def moved_at_most(self, iodepth: int, valley_us: float, from_us: float) -> float:
        """The largest share of the phase's I/O that CPU waits can have pushed past ``valley_us``
        from at most ``from_us``: a wait of d s delays at most the ``iodepth`` I/Os in flight by d,
        and moving one past the valley takes ``valley_us - from_us``. On a quiet machine it is ~0."""
        ios = self.agent_env.fio_json(f"s-qd{iodepth}")["jobs"][0]["read"]["total_ios"]
        delay_s = max(valley_us - from_us, 1.0) / 1e6
        return min(1.0, iodepth * self.waited_s[iodepth] / (ios * delay_s))

    def p50_ms(self, iodepth: int) -> float:
        latency = self.at(iodepth).latency
        assert latency is not None and latency.p50_us is not None
        return latency.p50_us / 1000

    def note(self, fidelity: dict[str, Any], name: str) -> None:
        """What the run says about the machine: CPU pressure, and the I/O path the twin calibrated."""
        pressure = None if self.pressure is None else round(self.pressure, 3)
        fidelity[f"{name}: CPU pressure, calibrated I/O path us"] = (pressure, self.calibrated_overhead_us)

    def skip_latency_values_if_starved(self) -> None:
        if self.pressure is not None and self.pressure > MAX_PRESSURE:
            pytest.skip(
                f"the detector's verdict held; the p50 was not judged: tasks waited for a CPU "
                f"{self.pressure:.0%} of the run (> {MAX_PRESSURE:.0%}), other work on this machine"
            )


def test_bimodal_twin_is_flagged_end_to_end(agent_env: Any, fidelity: dict[str, Any]) -> None:
    run = TwinRun(agent_env, "io2", IO2, BIMODAL, config("io2", iops=16000))
    for iodepth in (1, 4):
        found = run.modes(iodepth)
        assert found is not None, f"QD{iodepth}: not flagged"
        assert any(label.startswith("bimodal-latency:") for label in run.at(iodepth).labels)
        # The twin's draws: 30 % slow. A late wake-up can only move a fast I/O's completion up into
        # the slow mode, never a slow one down: 0.355 beside make test's other streams on 2 cores,
        # 0.63-0.66 with more load; so the bound adds what the waits measured can have moved (from
        # the fast mode's configured p99, 0.6 ms, past the valley).
        moved = run.moved_at_most(iodepth, found.valley_us, 600.0)
        assert 0.25 <= found.high_mass <= 0.40 + moved, f"QD{iodepth}: {moved:.3f} explained by CPU waits"
        # Each mode where fio measured its I/O: the fast one (70 % of I/O) between fio's p20 and
        # p50, the slow one (the last 30 %) between p80 and p95, whatever the twin's timing error.
        # Fast I/O that CPU waits moved up (the mass found past 30 %, bounded above) widens the slow
        # mode's share of fio's distribution by as much: its lower edge is then that percentile.
        measured = fio_percentiles_us(agent_env.fio_json(f"s-qd{iodepth}"))
        assert measured[20.0] <= found.low_mode_us <= measured[50.0]
        slow_from = max(p for p in measured if p <= 80.0 - 100 * max(0.0, found.high_mass - 0.30))
        assert measured[slow_from] <= found.high_mode_us <= measured[95.0], f"slow mode from p{slow_from:g}"
        fidelity[
            f"twin bimodal QD{iodepth}: modes us (configured 300, 4000), slow-mode share, "
            "share CPU waits can have moved"
        ] = (round(found.low_mode_us), round(found.high_mode_us), round(found.high_mass, 3), round(moved, 3))
    assert any(f.category == "latency" and "two modes" in f.text for f in run.report.warnings)
    assert run.report.histograms and all(h.bimodal for h in run.report.histograms)
    fidelity["twin bimodal QD1 p50 ms (configured median)"] = (
        round(run.p50_ms(1), 3),
        round(median_ms(BIMODAL), 3),
    )
    run.note(fidelity, "twin bimodal")
    agent_env.assert_clean()


def test_unimodal_twin_is_not_flagged_end_to_end(agent_env: Any, fidelity: dict[str, Any]) -> None:
    run = TwinRun(agent_env, "gp3", GP3, UNIMODAL, config("gp3"))
    explained = []
    for iodepth in (1, 4):
        found = run.modes(iodepth)
        if found is None:
            assert not any(label.startswith("bimodal-latency:") for label in run.at(iodepth).labels)
            continue
        # A second mode is the host's only if the CPU waits measured can have put it there: its mass
        # no more than the configured lognormal's own tail past the valley plus what they can have
        # moved from the configured p99 (1.4 ms). On a quiet machine that is ~0: any flag fails.
        tail = 1 - lognormal_cdf(UNIMODAL["modes"][0], found.valley_us / 1000)
        moved = run.moved_at_most(iodepth, found.valley_us, 1400.0)
        fidelity[f"twin gp3 QD{iodepth} flagged under load: slow share, tail + moved by CPU waits"] = (
            round(found.high_mass, 3),
            round(tail + moved, 3),
        )
        assert found.high_mass <= tail + moved, f"QD{iodepth}: flagged beyond what CPU waits explain"
        explained.append(iodepth)
    if not explained:
        assert not any("two modes" in f.text for f in run.report.warnings)
        assert run.report.histograms and all(h.bimodal is None for h in run.report.histograms)

    measured = run.p50_ms(1)
    fidelity["twin gp3 QD1 p50 ms (configured 0.6)"] = round(measured, 3)
    run.note(fidelity, "twin gp3")
    run.skip_latency_values_if_starved()
    assert measured == pytest.approx(median_ms(UNIMODAL), rel=0.10)
    agent_env.assert_clean()
