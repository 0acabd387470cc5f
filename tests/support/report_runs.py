"""A realistic stored run for the report tests: records parsed from real fio output, stored the way
the results store keeps them, with a comparison, a run cost, regression verdicts and time series.

Four configs on c5.4xlarge (gp2 100 GiB, gp3 1,000 GiB as baseline, io1 4,000 IOPS, st1 that failed
before it measured anything) run four workloads three times. Each record starts as the real parse
of a tests/data/fio capture (``results.fio.aggregate_fio`` then ``to_record``, as collect does) and
is scaled per config and repetition so the configs differ; histograms are shifted by whole buckets
so they stay on the 4-per-octave grid. Labels are those ``analysis.annotate`` attaches.

Shared with tests/browser (loaded there by path), so it imports nothing from the test tree.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

from storagebench.costs.compare import compare
from storagebench.costs.monthly import price_request
from storagebench.costs.run_cost import run_cost, usage_for_config
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.protocol.adaptive import decide, half_width_pct
from storagebench.protocol.sla import Measured, judge, search
from storagebench.request import BenchmarkRequest, parse_request
from storagebench.results.fio import aggregate_fio, split_fio_output
from storagebench.results.records import HistogramBucket, LatencyStats, ResultRecord, SlaSearch
from storagebench.store import keys

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
RUN_ID = "r-20261121-0300-nightly"
STARTED = "2026-11-21T03:00:00Z"
ENDED = "2026-11-21T03:42:10Z"
STEP = 2 ** (1 / 4)

REQUEST: dict[str, Any] = {
    "name": "nightly-ebs",
    "description": "Nightly EBS comparison: gp2 burst against gp3 and io1 on the same instance type.",
    "region": "us-east-1",
    "baseline": "gp3",
    "configs": [
        {
            "id": "gp2",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "gp2", "size_gib": 100}],
        },
        {
            "id": "gp3",
            "instance_type": "c5.4xlarge",
            "targets": [
                {"kind": "ebs", "type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 125}
            ],
        },
        {
            "id": "io1",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "io1", "size_gib": 100, "iops": 4000}],
        },
        {
            "id": "st1",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "st1", "size_gib": 500}],
        },
    ],
    "prewarm": {"method": "none"},
    "workloads": [
        {"profile": "std-randread-4k"},
        {"profile": "std-seqread-1m"},
        {"profile": "std-latency-4k-qd1"},
        {"profile": "fio-randrw-4k-25read"},
    ],
    "repetitions": 3,
}

# workload -> (fio capture, direction override)
CAPTURES: dict[str, tuple[str, str | None]] = {
    "std-randread-4k": ("single_randread", None),
    "std-seqread-1m": ("seq_write_1m", "read"),  # a 1 MiB sequential capture, read as the profile does
    "std-latency-4k-qd1": ("lat_percentiles", None),
    "fio-randrw-4k-25read": ("study1_randrw", None),
}
# config -> (rate factor, latency shift in buckets)
SCALE: dict[str, tuple[float, int]] = {"gp2": (0.55, 6), "gp3": (1.0, 0), "io1": (1.25, -2)}
JITTER = (1.0, 0.97, 1.035)
LABELS: dict[tuple[str, str], list[list[str]]] = {
    ("gp2", "std-randread-4k"): [["burst"], ["crossed-knee@41s"], ["baseline", "under-delivered:0.71"]],
    ("io1", "std-randread-4k"): [["delivered:1.02", "instance-bound"]] * 3,
    ("gp2", "std-latency-4k-qd1"): [["bimodal-latency:180us/2900us"]] * 3,
}


@functools.cache
def _captured(workload: str) -> tuple[ResultRecord, ...]:
    name, direction = CAPTURES[workload]
    json_text, normal = split_fio_output((DATA / f"{name}.out").read_text())
    records = []
    for result in aggregate_fio(json_text, normal_text=normal):
        record = result.to_record(
            config_id="-", target_id="ebs0", workload=workload, profile=workload, repetition=1, phase="run"
        )
        if direction is not None:
            record = record.model_copy(update={"direction": direction})
        records.append(record)
    return tuple(records)


def _latency(latency: LatencyStats, factor: float) -> LatencyStats:
    scaled = {
        k: (v * factor if isinstance(v, float) and k.endswith("_us") else v)
        for k, v in latency.model_dump().items()
    }
    return LatencyStats.model_validate(scaled)


def record(config_id: str, workload: str, repetition: int, base: ResultRecord) -> ResultRecord:
    rate, shift = SCALE[config_id]
    rate *= JITTER[repetition - 1]
    latency_factor = STEP**shift / JITTER[repetition - 1]
    labels = [f"emulated:{config_id}:100GiB"]
    per_rep = LABELS.get((config_id, workload))
    if per_rep is not None:
        labels += per_rep[repetition - 1]
    histogram = [HistogramBucket(le_us=b.le_us * STEP**shift, count=b.count) for b in base.histogram or []]
    if (config_id, workload) == ("gp2", "std-latency-4k-qd1"):  # the report-card study's two modes
        histogram = _two_modes(histogram)
    return base.model_copy(
        update={
            "config_id": config_id,
            "repetition": repetition,
            "iops": base.iops * rate if base.iops is not None else None,
            "bw_mibps": base.bw_mibps * rate if base.bw_mibps is not None else None,
            "latency": _latency(base.latency, latency_factor) if base.latency is not None else None,
            "histogram": histogram,
            "labels": labels,
            "started_at": STARTED,
        }
    )


def _two_modes(histogram: list[HistogramBucket]) -> list[HistogramBucket]:
    """The histogram plus a slow copy 16x (16 buckets) higher with a third of its I/O."""
    slow = [HistogramBucket(le_us=b.le_us * STEP**16, count=max(1, b.count // 2)) for b in histogram]
    merged: dict[float, int] = {}
    for bucket in [*histogram, *slow]:
        merged[bucket.le_us] = merged.get(bucket.le_us, 0) + bucket.count
    return [HistogramBucket(le_us=le, count=c) for le, c in sorted(merged.items())]


def request() -> BenchmarkRequest:
    return parse_request(REQUEST)


def records(repetitions: int = 3, configs: tuple[str, ...] = ("gp2", "gp3", "io1")) -> list[ResultRecord]:
    out = []
    for config_id in configs:
        for workload in CAPTURES:
            for repetition in range(1, repetitions + 1):
                out += [record(config_id, workload, repetition, base) for base in _captured(workload)]
    return out


def storage_option(config_id: str) -> str:
    return {
        "gp2": "c5.4xlarge/ebs:gp2:100GiB:xfs",
        "gp3": "c5.4xlarge/ebs:gp3:1000GiB:3000iops:125MiBps:xfs",
        "io1": "c5.4xlarge/ebs:io1:100GiB:4000iops:xfs",
        "st1": "c5.4xlarge/ebs:st1:500GiB:xfs",
    }.get(config_id, config_id)


def result_item(rec: ResultRecord) -> dict[str, Any]:
    """As ``DynamoResultsStore.result_item`` writes it (keys removed, as ``get_run`` returns it)."""
    return {
        "type": "result",
        "run_id": RUN_ID,
        "config_id": rec.config_id,
        "record_key": keys.record_key(rec),
        "started_at": STARTED,
        "labels": {"storage_option": storage_option(rec.config_id), "suite": REQUEST["name"]},
        "record": rec.model_dump(mode="json"),
    }


ERROR = {"step": "provision", "error": "CapacityError", "cause": "InsufficientInstanceCapacity in us-east-1a"}


def config_item(config_id: str, recs: int, failed: bool = False) -> dict[str, Any]:
    errors = [ERROR] if failed else []
    state = {
        "item": {"run_id": RUN_ID, "config_id": config_id},
        "collected": None if failed else {"status": "ok", "records": recs, "problems": []},
        "errors": errors,
    }
    return {
        "type": "config",
        "run_id": RUN_ID,
        "config_id": config_id,
        "status": "CLEANED",
        "state": state,
        "errors": errors,
    }


def stored(recs: list[ResultRecord] | None = None, *, request_document: bool = True) -> dict[str, Any]:
    """``ResultsStore.get_run`` of the run: the run item, its config items and its results."""
    recs = records() if recs is None else recs
    counts = {cid: sum(1 for r in recs if r.config_id == cid) for cid in ("gp2", "gp3", "io1")}
    config_results = [
        {
            "run_id": RUN_ID,
            "config_id": cid,
            "status": "succeeded",
            "records": n,
            "errors": [],
            "leftovers": [],
        }
        for cid, n in counts.items()
    ]
    config_results.append(
        {
            "run_id": RUN_ID,
            "config_id": "st1",
            "status": "failed",
            "records": 0,
            "errors": [ERROR],
            "leftovers": [],
        }
    )
    run = {
        "type": "run",
        "run_id": RUN_ID,
        "suite": REQUEST["name"],
        "status": "PARTIAL",
        "configs": [c["id"] for c in REQUEST["configs"]],
        "started_at": STARTED,
        "ended_at": ENDED,
        "records": len(recs),
        "config_results": config_results,
    }
    if request_document:
        run["request"] = REQUEST
    return {
        "run": run,
        "configs": [*(config_item(cid, n) for cid, n in counts.items()), config_item("st1", 0, failed=True)],
        "results": [result_item(r) for r in recs],
    }


def comparison(recs: list[ResultRecord] | None = None) -> dict[str, Any]:
    req = request()
    costs = price_request(req, SnapshotPriceBook(req.region))
    return compare(req, costs, records() if recs is None else recs).model_dump(mode="json")


def run_cost_dump() -> dict[str, Any]:
    req = request()
    usages = [usage_for_config(c, 2400 if c.id != "st1" else 300) for c in req.configs]
    return run_cost(usages, SnapshotPriceBook(req.region), transitions=62).model_dump(mode="json")


def regressions() -> list[dict[str, Any]]:
    common = {"variant": "-", "phase": "run", "group": 0, "repetitions": 3}
    return [
        {
            **common,
            "storage_option": storage_option("gp3"),
            "workload": "std-randread-4k",
            "direction": "read",
            "metric": "lat_p95_us",
            "higher_is_better": False,
            "verdict": "regression",
            "flagged": True,
            "value": 160.0,
            "baseline": 118.0,
            "delta_pct": (160.0 - 118.0) / 118.0 * 100,
            "band": [110.0, 126.0],
            "history_n": 9,
            "config_ids": ["gp3"],
        },
        {
            **common,
            "storage_option": storage_option("io1"),
            "workload": "std-seqread-1m",
            "direction": "read",
            "metric": "bw_mibps",
            "higher_is_better": True,
            "verdict": "none",
            "flagged": False,
            "value": 2000.0,
            "baseline": 1990.0,
            "delta_pct": 0.5,
            "band": [1900.0, 2080.0],
            "history_n": 9,
            "config_ids": ["io1"],
        },
        {
            **common,
            "storage_option": storage_option("gp2"),
            "workload": "std-seqread-1m",
            "direction": "read",
            "metric": "iops",
            "higher_is_better": True,
            "verdict": "insufficient history",
            "flagged": False,
            "value": 880.0,
            "baseline": None,
            "delta_pct": None,
            "band": None,
            "history_n": 1,
            "config_ids": ["gp2"],
        },
    ]


def series_document(config_id: str, seconds: int = 120) -> dict[str, Any]:
    """What ``extract_series`` stores for a config: 1 s IOPS of each fio phase, gp2 with its knee."""
    entries: list[dict[str, Any]] = []
    rate, _ = SCALE[config_id]
    for workload, (_, override) in CAPTURES.items():
        directions = ["read", "write"] if workload == "fio-randrw-4k-25read" else [override or "read"]
        for repetition in (1, 2, 3):
            knee = 41 if (config_id, workload, repetition) == ("gp2", "std-randread-4k", 2) else None
            for direction in directions:
                level = 3000.0 * rate * JITTER[repetition - 1] / len(directions)
                values = []
                for t in range(1, seconds + 1):
                    value = level * (0.1 if knee is not None and t >= knee else 1.0)
                    values.append(round(value * (1 + 0.03 * math.sin(t / 3 + repetition)), 1))
                entries.append(
                    {
                        "step_id": f"{workload}-r{repetition}",
                        "target_id": "ebs0",
                        "workload": workload,
                        "profile": workload,
                        "variant": {},
                        "repetition": repetition,
                        "phase": "run",
                        "direction": direction,
                        "started_at": STARTED,
                        "t0_s": 1,
                        "interval_s": 1,
                        "iops": values,
                        "bw_mibps": [v * 4 / 1024 for v in values],
                        "knee_s": knee,
                    }
                )
    return {"version": 1, "series": entries, "problems": [], "environment": environment(HISTORY_RUNS + 1)}


def full_report_inputs() -> dict[str, Any]:
    """Every input of ``build_report`` for the realistic run."""
    return {
        "stored": stored(),
        "request": request(),
        "comparison": comparison(),
        "run_cost": run_cost_dump(),
        "regressions": regressions(),
        "series": {cid: series_document(cid) for cid in ("gp2", "gp3", "io1")},
    }


PROFILES = list(CAPTURES)


def large_inputs(configs: int = 20, workloads: int = 10) -> dict[str, Any]:
    document = {
        "name": "matrix",
        "baseline": "c00",
        "configs": [
            {
                "id": f"c{i:02d}",
                "instance_type": "c5.4xlarge",
                "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100 + 50 * i, "iops": 3000 + 500 * i}],
            }
            for i in range(configs)
        ],
        "workloads": [{"profile": PROFILES[j % len(PROFILES)], "id": f"w{j}"} for j in range(workloads)],
        "repetitions": 3,
    }
    request = parse_request(document)
    records: list[ResultRecord] = []
    series: dict[str, Any] = {}
    for i in range(configs):
        cid = f"c{i:02d}"
        entries: list[dict[str, Any]] = []
        for j in range(workloads):
            for rep in (1, 2, 3):
                for base in _captured(PROFILES[j % len(PROFILES)]):
                    factor = (1 + i / 10) * JITTER[rep - 1]
                    records.append(
                        base.model_copy(
                            update={
                                "config_id": cid,
                                "workload": f"w{j}",
                                "repetition": rep,
                                "iops": (base.iops or 0) * factor,
                                "bw_mibps": (base.bw_mibps or 0) * factor,
                            }
                        )
                    )
                entries.append(
                    {
                        "workload": f"w{j}",
                        "target_id": "ebs0",
                        "variant": {},
                        "phase": "run",
                        "repetition": rep,
                        "direction": "read",
                        "t0_s": 1,
                        "interval_s": 1,
                        "iops": [3000.0 + (t % 17) for t in range(600)],
                        "knee_s": None,
                    }
                )
        series[cid] = {"version": 1, "series": entries, "problems": []}
    costs = price_request(request, SnapshotPriceBook(request.region))
    comparison = compare(request, costs, records).model_dump(mode="json")
    stored = {
        "run": {"run_id": "r-large", "suite": "matrix", "status": "SUCCEEDED", "configs": list(series)},
        "configs": [],
        "results": [{"config_id": r.config_id, "record": r.model_dump(mode="json")} for r in records],
    }
    return {"stored": stored, "request": request, "comparison": comparison, "series": series}


# ------------------------------------------------------------------ history and a sweep

HISTORY_RUNS = 11
HISTORY_STEP = 6
"""Earlier runs of the suite; from the 6th on, io1 reads 25 % faster and the agents run fio 3.36."""
SWEEP = "qd-sweep"
SWEEP_PROFILE = "sweep-qd-randread-4k"
SWEEP_DEPTHS = (1, 2, 4, 8, 16, 32)
SWEEP_CAP = {"gp2": 3000.0, "gp3": 3000.0, "io1": 4000.0}


def environment(run: int) -> dict[str, str]:
    """What the agents recorded in earlier run ``run`` (1-based); this run is ``HISTORY_RUNS + 1``."""
    return {
        "fio_version": "fio-3.35" if run < HISTORY_STEP else "fio-3.36",
        "kernel": "6.1.0-18-cloud-amd64",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "agent_version": "0.9.0",
    }


def _earlier_run(run: int) -> dict[str, Any]:
    run_id = f"r-202611{run + 5:02d}-0300-nightly"
    started = f"2026-11-{run + 5:02d}T03:00:00Z"
    wobble = (1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 0.99, 1.008, 0.992, 1.003, 0.997)[run - 1]
    recs = []
    for rec in records():
        factor = wobble * (0.8 if rec.config_id == "io1" and run < HISTORY_STEP else 1.0)
        recs.append(
            rec.model_copy(
                update={
                    "iops": rec.iops * factor if rec.iops is not None else None,
                    "bw_mibps": rec.bw_mibps * factor if rec.bw_mibps is not None else None,
                    "started_at": started,
                }
            )
        )
    document = stored(recs)
    document["run"] = {**document["run"], "run_id": run_id, "started_at": started, "ended_at": started}
    document["results"] = [{**item, "run_id": run_id, "started_at": started} for item in document["results"]]
    return document


def history(runs: int = HISTORY_RUNS) -> dict[str, Any]:
    """``workflow.run_outputs.report_history`` of the run: its suite's earlier runs, newest first."""
    entries = [
        {"stored": _earlier_run(run), "environment": {cid: environment(run) for cid in ("gp2", "gp3", "io1")}}
        for run in range(runs, 0, -1)
    ]
    return {"runs": entries, "notes": [], "requested": 20}


def sweep_records(repetitions: int = 2) -> list[ResultRecord]:
    """A queue-depth sweep: latency flat while the volume has headroom, then growing with the queue
    (Little's law at the volume's IOPS cap)."""
    (base,) = _captured("std-randread-4k")
    assert base.latency is not None and base.latency.p95_us is not None
    out = []
    for config_id, cap in SWEEP_CAP.items():
        service_us = 1_000_000 / cap * 2  # two I/Os in flight fill the volume
        for depth in SWEEP_DEPTHS:
            iops = min(cap, depth * 1_000_000 / service_us)
            latency_factor = max(1.0, depth / 2) * service_us / base.latency.p95_us
            for repetition in range(1, repetitions + 1):
                out.append(
                    base.model_copy(
                        update={
                            "config_id": config_id,
                            "workload": SWEEP,
                            "profile": SWEEP_PROFILE,
                            "variant": {"iodepth": depth},
                            "repetition": repetition,
                            "iops": iops * JITTER[repetition - 1],
                            "bw_mibps": iops * JITTER[repetition - 1] * 4 / 1024,
                            "latency": _latency(base.latency, latency_factor),
                            "histogram": None,
                            "labels": [f"emulated:{config_id}:100GiB"],
                            "started_at": STARTED,
                        }
                    )
                )
    return out


SLA = "sla-randread-4k"
SLA_SPEC: dict[str, Any] = {
    "percentile": 99.0,
    "target_us": 1000.0,
    "low_iops": 100,
    "tolerance": 0.05,
    "max_probes": 12,
    "min_delivered": 0.95,
}
# config -> (IOPS cap, p99 at no load in us, highest rate probed, most probes): gp3 finds its limit
# within the tolerance, io1 runs out of probes first, gp2 misses 1 ms even at the lowest rate
SLA_VOLUMES: dict[str, tuple[float, float, int, int]] = {
    "gp3": (3000.0, 400.0, 4500, 12),
    "io1": (4000.0, 300.0, 6000, 4),
    "gp2": (3000.0, 1200.0, 4500, 12),
}


def sla_search(config_id: str, repetition: int = 1) -> SlaSearch:
    """A search run by ``protocol.sla.search`` against a model volume (p99 = p99 at no load / (1 -
    utilisation), achieved IOPS capped), stored as Collect stores it."""
    cap, idle_us, high, max_probes = SLA_VOLUMES[config_id]
    cap *= JITTER[repetition - 1]
    spec: Any = {**SLA_SPEC, "high_iops": high, "max_probes": max_probes}

    def run_probe(number: int, rate: int) -> Any:
        achieved = min(float(rate), cap)
        utilisation = min(0.99, rate / cap)
        measured = Measured(achieved, idle_us / (1 - utilisation), ios=int(achieved * 30), runtime_s=30.0)
        return {**judge(measured, rate, spec), "dir": f"probe-{number:02d}"}

    result: dict[str, Any] = dict(search(run_probe, spec))
    answer = result.pop("answer")
    return SlaSearch.model_validate(
        {
            **result,
            "sustained_iops": answer["iops"] if answer else None,
            "answer_probe": answer["probe"] if answer else None,
        }
    )


def sla_records(repetitions: int = 2) -> list[ResultRecord]:
    """The answer probe's record of each search (the lowest rate's when the SLA was never met,
    with no IOPS and the ``sla-not-met`` label), carrying the whole search, as Collect writes it."""
    (base,) = _captured("std-randread-4k")
    assert base.latency is not None and base.latency.p99_us is not None
    out = []
    for config_id in SLA_VOLUMES:
        for repetition in range(1, repetitions + 1):
            sla = sla_search(config_id, repetition)
            number = sla.answer_probe if sla.met else sla.probes[0].probe
            (probe,) = [p for p in sla.probes if p.probe == number]
            labels = [f"emulated:{config_id}:100GiB", *([] if sla.met else ["sla-not-met"])]
            out.append(
                base.model_copy(
                    update={
                        "config_id": config_id,
                        "workload": SLA,
                        "profile": SLA,
                        "phase": "search",
                        "repetition": repetition,
                        "iops": probe.iops if sla.met else None,
                        "bw_mibps": probe.iops * 4 / 1024 if sla.met else None,
                        "ios": probe.ios,
                        "runtime_s": probe.runtime_s,
                        "latency": _latency(base.latency, probe.latency_us / base.latency.p99_us),
                        "histogram": None,
                        "labels": labels,
                        "sla": sla,
                        "started_at": STARTED,
                    }
                )
            )
    return out


def sweep_request() -> dict[str, Any]:
    return {
        **REQUEST,
        "workloads": [
            *REQUEST["workloads"],
            {"id": SWEEP, "profile": SWEEP_PROFILE, "params": {"iodepth": list(SWEEP_DEPTHS)}},
            {"profile": SLA, "params": {"sla_percentile": 99, "sla_ms": 1.0}},
        ],
    }


def everything_inputs() -> dict[str, Any]:
    """The realistic run with a sweep, latency-SLA searches and eleven earlier runs: every section of
    the report drawn."""
    document = sweep_request()
    req = parse_request(document)
    recs = [*records(), *sweep_records(), *sla_records()]
    stored_run = with_repetition_stops(stored(recs))
    stored_run["run"]["request"] = document
    inputs = full_report_inputs()
    return {
        **inputs,
        "stored": stored_run,
        "request": req,
        "comparison": compare(req, price_request(req, SnapshotPriceBook(req.region)), recs).model_dump(
            mode="json"
        ),
        "history": history(),
    }


def adaptive_series(
    series: str,
    values: list[float],
    *,
    metric: str = "iops",
    bounds: tuple[int, int] = (2, 3),
    ci_pct: float = 2.0,
) -> dict[str, Any]:
    """One series as the agent's manifest records it (``agent.adaptive.SeriesTracker.record``), the
    stopping rule applied to ``values`` by the agent's own ``decide``."""
    workload, target = series.split(".")[:2]
    stopped, reason = decide(values, len(values), bounds[0], bounds[1], ci_pct)
    precision = half_width_pct(values)
    return {
        "series": series,
        "workload": workload,
        "target": target,
        "variant": {},
        "metric": metric,
        "phase": "run",
        "min": bounds[0],
        "max": bounds[1],
        "ci_pct": ci_pct,
        "spent": len(values),
        "values": values,
        "mean": sum(values) / len(values),
        "half_width_pct": round(precision, 4) if precision is not None else None,
        "stopped": stopped,
        "reason": reason,
        "notes": [],
    }


def steady_verdict(step: str, attained: bool, runtime_s: float) -> dict[str, Any]:
    """fio's steady-state verdict of one job, as Collect stores it (``core.series.SteadyStateOutcome``)."""
    return {
        "step": step,
        "phase": "run",
        "job": "std-seqread-1m",
        "criterion": "iops_slope:0.3%",
        "attained": attained,
        "duration_s": 60.0,
        "ramp_s": 10.0,
        "runtime_s": runtime_s,
    }


REPETITION_STOPS: dict[str, dict[str, list[dict[str, Any]]]] = {
    "gp3": {  # precise after 3 repetitions (the run's 3 of each workload)
        "series": [adaptive_series("std-randread-4k.ebs0", [3010.0, 2995.0, 3004.0])],
        "steady_state": [steady_verdict("std-seqread-1m-r1", True, 95.0)],
    },
    "gp2": {  # burst credits make it noisy: max spent short of the precision asked
        "series": [adaptive_series("std-randread-4k.ebs0", [1650.0, 1480.0, 910.0])],
        "steady_state": [steady_verdict("std-seqread-1m-r1", False, 300.0)],
    },
}
"""Config id -> the adaptive series and steady-state verdicts its collect summary records."""


def with_repetition_stops(stored_run: dict[str, Any]) -> dict[str, Any]:
    """The stored run with ``REPETITION_STOPS`` in its configs' collect summaries."""
    for config in stored_run["configs"]:
        stops = REPETITION_STOPS.get(config["config_id"])
        if stops is not None and config["state"]["collected"] is not None:
            config["state"]["collected"].update(stops)
    return stored_run
