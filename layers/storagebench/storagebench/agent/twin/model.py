"""The per-I/O model of an EBS volume: what the twin answers each I/O with, and when.

Every I/O is admitted by two paced buckets, one for operations and one for bytes, in arrival
order (EBS spreads I/O out at its limits rather than serving it in slices), then completes a
service time later, drawn from the volume type's latency distribution. Queueing at the limit
is therefore what Little's law says: with ``n`` I/Os in flight at ``R`` IOPS each waits about
``n / R``. The accounting is AWS's:

* an SSD I/O costs one operation per started 256 KiB, an HDD I/O one per started MiB;
* an I/O that continues the previous one (same direction, contiguous) fills the same
  operation until it holds a full unit, as EBS merges sequential I/O;
* an HDD operation costs a full MiB of throughput however little it moves;
* gp2 I/O credits and st1/sc1 throughput credits start full, drain with the I/O above baseline
  and refill at baseline; while any are left the ceilings are the burst ones;
* each bucket tolerates ``PACING_SLOTS`` of its own slots of lateness (a GCRA): an I/O that
  reaches the twin late, because the twin or the client woke late, is caught up on instead of
  its slot being lost for good, and no window longer than those slots ever exceeds the limit;
* when the machine stalls the twin itself (a reply leaves ``STALL_S`` or more late: the twin
  could not run), ``forgive`` lets the buckets catch up on that time too, up to
  ``STALL_CREDIT_CAP_S``: the volume did not stop, its emulator did.

The model is pure (the clock is an argument) so the twin, the fidelity bench and the tests run
the same arithmetic; ``predict`` simulates a closed loop of ``iodepth`` I/Os through it. This
module is the model's one definition: the compiled twin (``native/twin/src/model.rs``) is its
port, held to it by the shared table ``tests/data/twin/model-table.json`` that ``replay`` writes
(``scripts/twin_model_table.py``). Service times are drawn by inverse CDF from a SplitMix64
stream (``Uniform``), which both implementations compute to the bit.
"""

from __future__ import annotations

import heapq
import math
import os
import random
from typing import Any, Dict, List, Optional, Sequence, Tuple

from storagebench.protocol.latency import LatencySpecError, latency_modes, number

MIB = 1 << 20
KIB = 1 << 10
Z99 = 2.3263478740408408  # the standard normal's 99th percentile
RESTORE_SHARE = 0.05  # credits needed to leave baseline again (avoids flapping at the knee); both emulators
PACING_SLOTS = 2.0  # slots of its own rate a bucket may catch up on after a late arrival
STALL_S = 0.005  # a reply this late means the twin itself could not run
STALL_CREDIT_CAP_S = 0.25  # the most of a stall the buckets may catch up on
_MASK = (1 << 64) - 1


class ModelError(ValueError):
    """A twin's parameters are outside what the model can serve."""


class Uniform:
    """SplitMix64 floats in (0, 1): the draws the Python and the compiled twin share, seed for seed."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> float:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        return ((z >> 11) + 0.5) / 9007199254740992.0


def random_seed() -> int:
    """A seed from the kernel: each twin draws its own service times unless told a seed."""
    return int.from_bytes(os.urandom(8), "little")


class Mode:
    """One lognormal mode of a service-time distribution (seconds)."""

    def __init__(self, weight: float, p50_s: float, p99_s: float) -> None:
        if not weight > 0:
            raise ModelError(f"latency mode weight: {weight!r}, a positive number expected")
        if not 0 < p50_s <= p99_s:
            raise ModelError(f"latency mode p50 {p50_s!r} s, p99 {p99_s!r} s: 0 < p50 <= p99 expected")
        self.weight = weight
        self.mu = math.log(p50_s)
        self.sigma = math.log(p99_s / p50_s) / Z99

    def quantile(self, q: float) -> float:
        return math.exp(self.mu + self.sigma * _normal_quantile(q))


class ServiceTime:
    """A mixture of lognormal modes; one mode is the usual case, two make a bimodal volume."""

    def __init__(self, modes: Sequence[Mode], seed: Optional[int] = None) -> None:
        if not modes:
            raise ModelError("latency: at least one mode expected")
        self.modes = list(modes)
        total = sum(m.weight for m in self.modes)
        self._cumulative: List[float] = []
        running = 0.0
        for mode in self.modes:
            running += mode.weight / total
            self._cumulative.append(running)
        self._uniform = Uniform(random_seed() if seed is None else seed)

    @classmethod
    def from_spec(cls, spec: Any, seed: Optional[int] = None) -> ServiceTime:
        """``{"modes": [{"weight": 1, "p50_ms": 0.6, "p99_ms": 1.4}, ...]}`` (``protocol.latency``)."""
        try:
            modes = latency_modes(spec)
        except LatencySpecError as exc:
            raise ModelError(str(exc)) from exc
        return cls([Mode(weight, p50 / 1000.0, p99 / 1000.0) for weight, p50, p99 in modes], seed)

    def sample(self) -> float:
        """A mode by its weight, then that lognormal's quantile at a second draw (inverse CDF)."""
        draw = self._uniform.next()
        chosen = self.modes[-1]
        for mode, edge in zip(self.modes, self._cumulative):
            if draw <= edge:
                chosen = mode
                break
        return math.exp(chosen.mu + chosen.sigma * _normal_quantile(self._uniform.next()))


class Limits:
    """A volume's ceilings and accounting, read from the plan's ``EmulationLimits``."""

    def __init__(self, spec: Dict[str, object]) -> None:
        def number(key: str, default: Optional[float] = None, positive: bool = True) -> float:
            value = spec.get(key)
            if value is None:  # absent or null: the default, as the throttle reads the plan
                value = default
            if value is None:
                raise ModelError(f"limits.{key}: missing, a positive number expected")
            expected = "a positive number expected" if positive else "a number >= 0 expected"
            result = _number(f"limits.{key}", value, expected)
            if not (result > 0 if positive else result >= 0):
                raise ModelError(f"limits.{key}: {value!r}, {expected}")
            return result

        self.iops = number("iops")
        self.mibps = number("mibps")
        self.burst_iops = number("burst_iops", self.iops)
        self.burst_mibps = number("burst_mibps", self.mibps)
        io_size_kib = number("io_size_kib", 256)
        if io_size_kib != int(io_size_kib):
            raise ModelError(
                f"limits.io_size_kib: {spec.get('io_size_kib')!r}, a whole number of KiB expected"
            )
        self.unit = int(io_size_kib) * KIB
        self.credit_capacity = number("credit_capacity", 0.0, positive=False)
        self.credit_refill = number("credit_refill_per_s", 0.0, positive=False)
        unit = spec.get("credit_unit", "io")
        if unit not in ("io", "mib"):
            raise ModelError(f"limits.credit_unit: {unit!r}, 'io' or 'mib' expected")
        self.credit_unit = str(unit)
        self.pacing_slots = number("pacing_slots", PACING_SLOTS, positive=False)
        # HDD volumes count I/O in 1 MiB units, and charge a whole unit of throughput per operation.
        self.hdd = self.unit >= MIB


class Admission:
    """The state that orders I/Os: paced buckets, the merge window and the credit balance."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.ops_free_at = 0.0  # when the operations bucket next has a token
        self.bytes_free_at = 0.0
        self.merge_end = -1
        self.merge_write = False
        self.merge_fill = 0
        self.credits = limits.credit_capacity
        self.bursting = limits.credit_capacity > 0
        self.credit_clock: Optional[float] = None
        self.events: List[Tuple[float, str, float, float, float]] = []  # time, event, credits, ceilings
        self.operations = 0
        self.ios = 0
        self.bytes = 0
        self.stall_credit = 0.0

    def ceilings(self) -> Tuple[float, float]:
        if self.bursting:
            return self.limits.burst_iops, self.limits.burst_mibps
        return self.limits.iops, self.limits.mibps

    def cost(self, offset: int, length: int, write: bool) -> Tuple[int, int]:
        """Operations and bytes this I/O is charged, updating the merge window."""
        unit = self.limits.unit
        operations = 0
        remaining = length
        if offset == self.merge_end and write == self.merge_write and self.merge_fill < unit:
            room = unit - self.merge_fill
            taken = min(room, remaining)
            remaining -= taken
            self.merge_fill += taken
        if remaining > 0:
            operations = -(-remaining // unit)
            self.merge_fill = remaining - (operations - 1) * unit
        self.merge_end = offset + length
        self.merge_write = write
        charged = operations * unit if self.limits.hdd else length
        if self.limits.hdd and operations == 0:
            charged = 0
        return operations, charged

    def _spend(self, now: float, operations: int, charged: int) -> None:
        limits = self.limits
        if limits.credit_capacity <= 0:
            return
        if self.credit_clock is not None:
            self.credits = min(
                limits.credit_capacity, self.credits + limits.credit_refill * (now - self.credit_clock)
            )
        self.credit_clock = now
        spent = float(operations) if limits.credit_unit == "io" else charged / MIB
        # At baseline the bucket hovers at empty; it never owes credits (AWS: balance >= 0).
        self.credits = max(0.0, self.credits - spent)
        if self.bursting and self.credits <= 0:
            self.bursting = False
            self.events.append((now, "burst-exhausted", self.credits, *self.ceilings()))
        elif not self.bursting and self.credits >= RESTORE_SHARE * limits.credit_capacity:
            self.bursting = True
            self.events.append((now, "burst-restored", self.credits, *self.ceilings()))

    def forgive(self, seconds: float) -> None:
        """The twin could not run for ``seconds``: I/Os its stall made late may catch up on as
        much of the rate (capped at STALL_CREDIT_CAP_S); the credit is spent as the buckets
        catch up and gone once neither lags the clock."""
        if seconds > 0:
            self.stall_credit = min(STALL_CREDIT_CAP_S, self.stall_credit + seconds)

    def admit(self, now: float, offset: int, length: int, write: bool) -> float:
        """When this I/O, arriving at ``now``, has its last unit start being served (>= now).

        An I/O of several units (1 MiB on an SSD volume is four 256 KiB operations) is served
        unit by unit at the volume's pace and completes a service time after its last unit, as
        the pieces a guest kernel splits it into would."""
        operations, charged = self.cost(offset, length, write)
        self.ios += 1
        self.operations += operations
        self.bytes += length
        self._spend(now, operations, charged)
        iops, mibps = self.ceilings()
        # Paced, not sliced: EBS spreads I/O out rather than serving a backlog at once. Each
        # bucket is a GCRA whose tolerance is PACING_SLOTS of its own slots: a bucket left idle
        # by a late arrival may run that far behind the clock and catch up, so a twin or client
        # that wakes late does not lose rate for good; over any longer window the limit holds.
        slots = self.limits.pacing_slots
        bytes_rate = mibps * MIB
        ops_base = slots / iops
        bytes_base = slots * self.limits.unit / bytes_rate
        ops_tolerance = ops_base + self.stall_credit
        bytes_tolerance = bytes_base + self.stall_credit
        start = now
        ops_ready, bytes_ready = self.ops_free_at, self.bytes_free_at
        if operations:
            ops_ready = max(ops_ready, now - ops_tolerance)
            start = max(start, ops_ready)
        if charged:
            bytes_ready = max(bytes_ready, now - bytes_tolerance)
            start = max(start, bytes_ready)
        if operations:
            self.ops_free_at = max(ops_ready, start - ops_tolerance) + operations / iops
        if charged:
            self.bytes_free_at = max(bytes_ready, start - bytes_tolerance) + charged / bytes_rate
        if self.stall_credit:
            lag = max(now - ops_base - self.ops_free_at, now - bytes_base - self.bytes_free_at)
            self.stall_credit = max(0.0, min(self.stall_credit, lag))
        if operations > 1:
            start += (operations - 1) * max(1.0 / iops, self.limits.unit / bytes_rate)
        return start


class VolumeModel:
    """Admission plus service time: ``complete_at(now, ...)`` is when the I/O's answer is due."""

    def __init__(
        self, limits: Dict[str, object], latency: Dict[str, object], seed: Optional[int] = None
    ) -> None:
        self.admission = Admission(Limits(limits))
        self.service = ServiceTime.from_spec(latency, seed)

    def complete_at(self, now: float, offset: int, length: int, write: bool) -> float:
        start = self.admission.admit(now, offset, length, write)
        return start + self.service.sample()


def replay(
    spec: Dict[str, Any], seed: int, ios: Sequence[Sequence[Any]], overhead_s: float = 0.0
) -> Dict[str, Any]:
    """The model alone on a trace of ``[now, offset, length, write(, stall_s)]`` I/Os (``stall_s``: a
    stall of the twin forgiven just before the I/O): each I/O's start and
    service time (less ``overhead_s``, never below 0, as the twin answers), the counters and the
    burst events. ``storagebench-twin replay`` answers the same document with the same figures."""
    model = VolumeModel(spec["limits"], spec["latency"], seed)
    starts: List[float] = []
    services: List[float] = []
    for io in ios:
        now, offset, length, write = io[:4]
        if len(io) > 4:  # the twin was stalled this long just before this arrival
            model.admission.forgive(io[4])
        starts.append(model.admission.admit(now, offset, length, write))
        services.append(max(0.0, model.service.sample() - overhead_s))
    admission = model.admission
    return {
        "starts": starts,
        "services": services,
        "ios": admission.ios,
        "operations": admission.operations,
        "bytes": admission.bytes,
        "credits": admission.credits,
        "events": [list(event) for event in admission.events],
    }


def predict(
    limits: Dict[str, object],
    latency: Dict[str, object],
    *,
    iodepth: int,
    block_size: int,
    ios: int = 200_000,
    sequential: bool = False,
    write: bool = False,
    capacity: int = 1 << 30,
    overhead_s: float = 0.0,
    seed: int = 7,
) -> Dict[str, float]:
    """What the model predicts for fio at ``iodepth`` I/Os in flight (a closed loop).

    Every completion submits the next I/O ``overhead_s`` later (the host's own time between a
    completion and the next submission). Returns IOPS, MiB/s and completion-latency percentiles
    (ms) over the second half of the I/Os, past any warm-up of the buckets.
    """
    if iodepth < 1 or block_size < 1 or ios < 2 * iodepth:
        raise ModelError(f"predict: iodepth {iodepth}, block_size {block_size}, ios {ios} out of range")
    model = VolumeModel(limits, latency, seed)
    rng = random.Random(seed + 1)
    blocks = max(1, capacity // block_size)
    cursor = 0
    heap: List[Tuple[float, float]] = []

    def next_offset() -> int:
        nonlocal cursor
        if sequential:
            offset = cursor
            cursor = (cursor + block_size) % (blocks * block_size)
            return offset
        return rng.randrange(blocks) * block_size

    for _ in range(iodepth):
        heapq.heappush(heap, (model.complete_at(0.0, next_offset(), block_size, write), 0.0))
    latencies: List[float] = []
    first_done: Optional[float] = None
    last_done = 0.0
    for index in range(ios):
        done, submitted = heapq.heappop(heap)
        if index >= ios // 2:
            if first_done is None:
                first_done = done
            latencies.append(done - submitted)
            last_done = done
        now = done + overhead_s
        heapq.heappush(heap, (model.complete_at(now, next_offset(), block_size, write), now))
    latencies.sort()
    span = max(last_done - (first_done or 0.0), 1e-9)
    counted = len(latencies)

    def pct(q: float) -> float:
        return latencies[min(counted - 1, int(q * counted))] * 1000.0

    return {
        "iops": round(counted / span, 1),
        "mibps": round(counted * block_size / MIB / span, 2),
        "mean_ms": round(sum(latencies) / counted * 1000.0, 4),
        "p50_ms": round(pct(0.50), 4),
        "p95_ms": round(pct(0.95), 4),
        "p99_ms": round(pct(0.99), 4),
    }


def _number(path: str, value: object, expected: str) -> float:
    """``value`` as a float (bools and NaN refused), or a ModelError naming ``path`` and the value."""
    return number(path, value, expected, ModelError)


def _normal_quantile(q: float) -> float:
    """Inverse standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9)."""
    if not 0 < q < 1:
        raise ModelError(f"quantile {q!r}: 0 < q < 1 expected")
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    low = 0.02425
    if q < low:
        r = math.sqrt(-2 * math.log(q))
        return (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / (
            (((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1
        )
    if q > 1 - low:
        r = math.sqrt(-2 * math.log(1 - q))
        return -(((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / (
            (((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1
        )
    r = q - 0.5
    s = r * r
    return (
        (((((a[0] * s + a[1]) * s + a[2]) * s + a[3]) * s + a[4]) * s + a[5])
        * r
        / (((((b[0] * s + b[1]) * s + b[2]) * s + b[3]) * s + b[4]) * s + 1)
    )
