"""How fast does the results store answer its access patterns on 100,000 results, in the current
item layout and, side by side in the same run, in the previous one?

Loads DynamoDB Local 2.6.1 (the real engine, on disk under a temporary directory; its jars
come from ``.storagebench/dynamodb-local``) with realistic data through the store's own writes:
200 runs of 2 suites, each measuring 25 storage options x 20 workloads (one config per storage
option, one repetition), so 100,000 results with fio-like latency and a 40-bucket histogram,
plus the run and config items; the last runs are left RUNNING. The same data is
loaded twice, into two tables of the same server: once through ``DynamoResultsStore`` (the
current layout, ``store.keys``) and once through ``PreviousLayoutStore`` (the previous layout:
one item per result, histogram nested). Then, on each table, times each access pattern over
``--queries`` calls, random arguments each time:

1. one run with its configs and results (``get_run``: Query on the table, all pages);
2. the latest 10 runs of a suite (``list_runs``: Query on GSI1);
3. one metric's history over a 30-day range (``metric_history``: Query on GSI2), whole records
   and then only the fields regression detection reads (a projection: no histogram);
4. the runs in progress (``runs_in_progress``: Query on GSI3);
5. one run with its latency histograms (``get_run(..., histograms=True)``: one more Query in the
   current layout, nested in the results in the previous one);

and Finalize's regression detection for a few runs (current layout: the suite's digest in one
Query; previous layout: one Query per series). Every operation the client sends is counted
(botocore's ``provide-client-params`` event) and every Query asks for its consumed capacity
(``ReturnConsumedCapacity``): the report gives the read units per call of each pattern, which
operations it used and that none was a Scan.

``make bench-store`` runs ``.venv/bin/python bench/store.py --out bench-results/store.json``; on a
busy 2-CPU machine loading both layouts takes most of an hour (``--layouts current`` loads one).
The report's ``side_by_side`` holds p50/p90 and read units per call of each pattern in both
layouts and the regression check's Queries and seconds per run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from botocore.config import Config  # type: ignore[import-untyped, unused-ignore]

from storagebench.adapters.aws.dynamo.previous import PreviousLayoutStore
from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.analysis.regressions import HISTORY_FIELDS, compute_regressions
from storagebench.core.state import ConfigResult, ConfigState, Resources, RunSummary, StepTiming, WorkItem
from storagebench.results.records import HistogramBucket, LatencyStats, ResultRecord
from storagebench_local.dynamodb_local import DYNAMODB_LOCAL_VERSION, DynamoDBLocal
from storagebench_local.template import Template

ROOT = Path(__file__).resolve().parent.parent
TABLE = "storagebench-results"
T0 = datetime(2030, 1, 1, 2, 0, 0, tzinfo=UTC)
SUITES = ("nightly-ebs", "nightly-shared")
INSTANCES = ("c6i.2xlarge", "m7g.xlarge", "i4i.large", "r6i.large", "c7gn.large")
TARGETS = (
    "ebs:gp3:500GiB:3000iops:125MiBps:xfs",
    "ebs:gp2:1000GiB:xfs",
    "ebs:io2:200GiB:16000iops:xfs",
    "efs:elastic",
    "fsx_lustre:PERSISTENT_2:1200GiB:250",
)
WORKLOADS = (
    [
        (f"{kind}-{bs}", {"iodepth": depth, "bs": bs}, direction)
        for kind, direction in (("randread", "read"), ("randwrite", "write"))
        for bs in ("4k", "16k")
        for depth in (1, 32)
    ]
    + [
        (f"{kind}-1m", {"iodepth": depth, "bs": "1m"}, direction)
        for kind, direction in (("seqread", "read"), ("seqwrite", "write"))
        for depth in (1, 8)
    ]
    + [
        ("mixed-16k-70read", {"iodepth": depth, "rwmixread": 70, "bs": "16k"}, "mixed")
        for depth in (1, 4, 16, 64)
    ]
    + [("metadata-create", {"files": files}, "write") for files in (1000, 100000)]
    + [("latency-4k-qd1", {"iodepth": 1, "bs": "4k"}, "read"), ("prewarm", {}, "read")]
)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def options(count: int) -> list[str]:
    return [
        f"{INSTANCES[i % len(INSTANCES)]}/{TARGETS[i // len(INSTANCES) % len(TARGETS)]}" for i in range(count)
    ]


def record(option_index: int, workload_index: int, rng: random.Random) -> ResultRecord:
    workload, variant, direction = WORKLOADS[workload_index % len(WORKLOADS)]
    base = 2000.0 * (1 + option_index % 7) * (1 + workload_index % 5)
    iops = base * rng.gauss(1.0, 0.03)
    bs_kib = {"4k": 4, "16k": 16, "1m": 1024}.get(str(variant.get("bs")), 4)
    mean_us = 1e6 / base * int(variant.get("iodepth", 1) or 1) * rng.gauss(1.0, 0.04)
    return ResultRecord(
        config_id=f"opt{option_index:02d}",
        target_id="data",
        workload=workload,
        profile=f"std-{workload}",
        variant=variant,
        repetition=1,
        phase="run",
        direction=direction,  # type: ignore[arg-type, unused-ignore]
        engine="fio",
        jobs=4,
        iops=iops,
        bw_mibps=iops * bs_kib / 1024,
        bytes=int(iops * bs_kib * 1024 * 300),
        ios=int(iops * 300),
        runtime_s=300.0,
        latency=LatencyStats(
            basis="lat",
            samples=int(iops * 300),
            mean_us=mean_us,
            stdev_us=mean_us * 0.2,
            min_us=mean_us * 0.3,
            max_us=mean_us * 40,
            p50_us=mean_us * 0.95,
            p90_us=mean_us * 1.3,
            p95_us=mean_us * 1.5,
            p99_us=mean_us * 2.4,
            p999_us=mean_us * 6.0,
        ),
        histogram=[
            HistogramBucket(le_us=round(mean_us * 2 ** ((i - 20) / 4), 3), count=rng.randint(1, 50_000))
            for i in range(40)
        ],
        cpu_usr_pct=rng.uniform(1, 20),
        cpu_sys_pct=rng.uniform(5, 40),
        raw=[f"steps/{workload}.r1/run/fio.json"],
        labels=[],
    )


class Operations:
    """Counts what the client sends (every operation, before it leaves) and the read units each
    Query consumed (as DynamoDB reports them: ``ReturnConsumedCapacity=TOTAL``)."""

    def __init__(self, client: Any) -> None:
        self.counts: Counter[str] = Counter()
        self.read_units = 0.0
        self._lock = threading.Lock()
        client.meta.events.register("provide-client-params.dynamodb.*", self._count)
        client.meta.events.register("after-call.dynamodb.Query", self._consumed)

    def _count(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        with self._lock:  # the load sends from several threads
            self.counts[model.name] += 1
        if model.name == "Query":
            params["ReturnConsumedCapacity"] = "TOTAL"

    def _consumed(self, parsed: dict[str, Any], **_: Any) -> None:
        with self._lock:
            self.read_units += float((parsed.get("ConsumedCapacity") or {}).get("CapacityUnits") or 0.0)

    def snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self.counts)

    def units(self) -> float:
        with self._lock:
            return self.read_units


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def timed(
    name: str, queries: int, call: Callable[[random.Random], int], ops: Operations, rng: random.Random
) -> dict[str, Any]:
    for _ in range(min(10, queries)):  # warm the JIT and the connection pool
        call(rng)
    before = ops.snapshot()
    units_before = ops.units()
    latencies: list[float] = []
    items: list[int] = []
    for _ in range(queries):
        started = time.perf_counter()
        items.append(call(rng))
        latencies.append((time.perf_counter() - started) * 1000)
    sent = ops.snapshot() - before
    report = {
        "queries": queries,
        "p50_ms": round(percentile(latencies, 0.50), 3),
        "p90_ms": round(percentile(latencies, 0.90), 3),
        "p99_ms": round(percentile(latencies, 0.99), 3),
        "mean_ms": round(statistics.fmean(latencies), 3),
        "min_ms": round(min(latencies), 3),
        "max_ms": round(max(latencies), 3),
        "items_per_call": round(statistics.fmean(items), 1),
        "operations": dict(sent),
        "requests_per_call": round(sum(sent.values()) / queries, 2),
        "read_units_per_call": round((ops.units() - units_before) / queries, 1),
        "only_query": set(sent) == {"Query"},
    }
    print(
        f"  {name:<28} p50 {report['p50_ms']:8.2f} ms  p90 {report['p90_ms']:8.2f}"
        f"  p99 {report['p99_ms']:8.2f}  items/call {report['items_per_call']:7.1f}"
        f"  RCU/call {report['read_units_per_call']:7.1f}  {dict(sent)}",
        flush=True,
    )
    return report


def java_version() -> str:
    java = shutil.which("java")
    if java is None:
        return "none"
    done = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).splitlines()[0] if (done.stderr or done.stdout) else "unknown"


@dataclass
class Dataset:
    """What is loaded: run ids, their start times and suites, the storage options and workloads."""

    runs: int
    options: int
    workloads: int
    in_progress: int
    seed: int
    run_ids: list[str] = field(init=False)
    started: dict[str, str] = field(init=False)
    suite_of: dict[str, str] = field(init=False)
    storage: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.run_ids = [f"run-{n:04d}" for n in range(self.runs)]
        self.started = {r: iso(T0 + timedelta(hours=12 * n)) for n, r in enumerate(self.run_ids)}
        self.suite_of = {r: SUITES[n % len(SUITES)] for n, r in enumerate(self.run_ids)}
        self.storage = options(self.options)

    @property
    def series(self) -> list[tuple[str, str, dict[str, Any], str]]:
        return [(option, *WORKLOADS[w]) for option in self.storage for w in range(self.workloads)]


def load(store: DynamoResultsStore, data: Dataset, writers: int) -> int:
    """Every run through the store's own writes (batches of 25), ``writers`` runs at a time."""
    timing = StepTiming(ready_poll_s=30, ready_timeout_s=1200, heartbeat_s=300, command_timeout_s=7200)
    templates = {
        (o, w): record(o, w, random.Random(o * 1000 + w))
        for o in range(data.options)
        for w in range(data.workloads)
    }

    def one_run(run_index: int) -> int:
        run_id = data.run_ids[run_index]
        noise = random.Random(data.seed * 100_000 + run_index)
        at, suite = data.started[run_id], data.suite_of[run_id]
        configs = [f"opt{o:02d}" for o in range(data.options)]
        store.start_run(run_id, suite, {"name": suite, "configs": configs}, at, at, configs)
        stored = 0
        for o, option in enumerate(data.storage):
            batch = [
                templates[(o, w)].model_copy(
                    update={"iops": (templates[(o, w)].iops or 0.0) * noise.gauss(1.0, 0.03)}
                )
                for w in range(data.workloads)
            ]
            labels = {"storage_option": option, "suite": suite}
            stored += store.put_results(run_id, configs[o], batch, at, labels)
            item = WorkItem(
                run_id=run_id,
                config_id=configs[o],
                suite=suite,
                region="us-east-1",
                started_at=at,
                expires_at=at,
                timing=timing,
                artifacts_prefix=f"runs/{run_id}/{configs[o]}/",
            )
            store.put_config(ConfigState(item=item, resources=Resources(instance_id="i-0")), "SUCCEEDED")
        if run_index < data.runs - data.in_progress:
            results = [
                ConfigResult(run_id=run_id, config_id=c, status="succeeded", records=data.workloads)
                for c in configs
            ]
            store.finish_run(
                RunSummary(
                    run_id=run_id,
                    suite=suite,
                    status="SUCCEEDED",
                    configs=results,
                    records=stored,
                    started_at=at,
                    ended_at=at,
                )
            )
        return stored

    with ThreadPoolExecutor(max_workers=writers) as pool:
        return sum(pool.map(one_run, range(data.runs)))


def time_patterns(
    store: DynamoResultsStore, data: Dataset, ops: Operations, queries: int, rng: random.Random
) -> dict[str, dict[str, Any]]:
    series = data.series
    last_since = T0 + timedelta(hours=12 * data.runs) - timedelta(days=30)

    def pattern_1(r: random.Random) -> int:
        run = store.get_run(r.choice(data.run_ids))
        return 1 + len(run["configs"]) + len(run["results"])

    def pattern_2(r: random.Random) -> int:
        return len(store.list_runs(r.choice(SUITES), limit=10))

    def pattern_3(r: random.Random) -> int:
        option, workload, variant, direction = r.choice(series)
        since = T0 + (last_since - T0) * r.random()
        until = since + timedelta(days=30)
        return len(store.metric_history(option, workload, variant, "run", direction, iso(since), iso(until)))

    def pattern_3_projected(r: random.Random) -> int:
        option, workload, variant, direction = r.choice(series)
        since = T0 + (last_since - T0) * r.random()
        until = since + timedelta(days=30)
        return len(
            store.metric_history(
                option, workload, variant, "run", direction, iso(since), iso(until), fields=HISTORY_FIELDS
            )
        )

    def pattern_4(r: random.Random) -> int:
        return len(store.runs_in_progress())

    def pattern_5(r: random.Random) -> int:
        run = store.get_run(r.choice(data.run_ids), histograms=True)
        return sum(1 for result in run["results"] if (result.get("record") or {}).get("histogram"))

    return {
        "1_run_with_configs_and_results": timed("1 run+configs+results", queries, pattern_1, ops, rng),
        "2_latest_10_runs_of_a_suite": timed("2 latest 10 runs of a suite", queries, pattern_2, ops, rng),
        "3_metric_history_30_days": timed("3 metric history, 30 days", queries, pattern_3, ops, rng),
        "3_metric_history_30_days_metrics_only": timed(
            "3 same, metrics only", queries, pattern_3_projected, ops, rng
        ),
        "4_runs_in_progress": timed("4 runs in progress", queries, pattern_4, ops, rng),
        "5_run_with_histograms": timed("5 run with its histograms", queries, pattern_5, ops, rng),
    }


def time_regressions(store: DynamoResultsStore, data: Dataset, ops: Operations, runs: int) -> dict[str, Any]:
    """Finalize's regression detection for the newest finished runs."""
    finished = data.run_ids[: data.runs - data.in_progress]
    targets = finished[-runs:] if runs > 0 else []
    seconds: list[float] = []
    flagged = compared = 0
    before = ops.snapshot()
    for run_id in targets:
        started = time.perf_counter()
        report = compute_regressions(store, run_id, data.suite_of[run_id], data.started[run_id], budget_s=600)
        seconds.append(time.perf_counter() - started)
        flagged += len(report.flagged)
        compared += report.series_compared
    sent = ops.snapshot() - before
    result = {
        "runs": len(targets),
        "queries_per_run": round(sent.get("Query", 0) / max(len(targets), 1), 1),
        "series_per_run": compared / max(len(targets), 1),
        "seconds_per_run": [round(s, 2) for s in seconds],
        "operations": dict(sent),
        "flagged_per_run": flagged / max(len(targets), 1),
        "only_query": set(sent) <= {"Query"},
    }
    print(f"  regression detection: {result['seconds_per_run']} s per run, {dict(sent)}", flush=True)
    return result


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "store.json")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--options", type=int, default=25, help="storage options per run (one config each)")
    parser.add_argument("--workloads", type=int, default=20, help="workloads per storage option")
    parser.add_argument("--in-progress", type=int, default=3, help="the newest runs are left RUNNING")
    parser.add_argument("--queries", type=int, default=200, help="calls timed per access pattern")
    parser.add_argument("--regression-runs", type=int, default=3, help="Finalize regression detections timed")
    parser.add_argument("--writers", type=int, default=4, help="threads loading runs in parallel")
    parser.add_argument("--in-memory", action="store_true", help="DynamoDB Local -inMemory instead of a file")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / ".storagebench" / "dynamodb-local")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--layouts",
        nargs="+",
        choices=sorted(LAYOUTS),
        default=["previous", "current"],
        help="item layouts to load and time (both: side by side)",
    )
    args = parser.parse_args()
    if args.workloads > len(WORKLOADS):
        parser.error(f"--workloads: at most {len(WORKLOADS)}")
    return args


LAYOUTS: dict[str, tuple[str, type[DynamoResultsStore]]] = {
    "current": (TABLE, DynamoResultsStore),
    "previous": (f"{TABLE}-previous", PreviousLayoutStore),
}
"""Layout -> (table, the store writing it); both are read by ``DynamoResultsStore``'s reads."""


def measure_layout(
    client: Any, template: Template, layout: str, data: Dataset, args: argparse.Namespace
) -> dict[str, Any]:
    """Load the data in one layout into its own table, then time every pattern on it."""
    table, writer = LAYOUTS[layout]
    client.create_table(**template.table_kwargs("ResultsTable", table))
    ops = Operations(client)
    print(
        f"[{layout} layout] loading {args.runs} runs x {args.options} options x {args.workloads} "
        "workloads ...",
        flush=True,
    )
    started = time.perf_counter()
    results = load(writer(client, table), data, args.writers)
    load_s = time.perf_counter() - started
    load_ops = ops.snapshot()
    print(f"  {results} results in {load_s:.1f} s ({results / load_s:.0f}/s), {dict(load_ops)}", flush=True)
    print(f"[{layout} layout] timing {args.queries} calls per pattern ...", flush=True)
    reader = DynamoResultsStore(client, table)
    patterns = time_patterns(reader, data, ops, args.queries, random.Random(args.seed))
    regression = time_regressions(reader, data, ops, args.regression_runs)
    total = ops.snapshot()
    return {
        "table": table,
        "result_items": results,
        "load": {
            "seconds": round(load_s, 2),
            "result_items_per_s": round(results / load_s, 1),
            "writer_threads": args.writers,
            "operations": dict(load_ops),
        },
        "patterns": patterns,
        "regression_detection": regression,
        "operations_total": dict(total),
        "scan_operations": total.get("Scan", 0),
        "every_read_is_a_query": all(p["only_query"] for p in patterns.values()) and regression["only_query"],
    }


def side_by_side(layouts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """p50/p90 and read units of each pattern in both layouts, and the regression check's Queries."""
    current, previous = layouts["current"], layouts["previous"]
    rows: dict[str, Any] = {}
    for name, now in current["patterns"].items():
        before = previous["patterns"][name]
        rows[name] = {
            "p50_ms": {"previous": before["p50_ms"], "current": now["p50_ms"]},
            "p90_ms": {"previous": before["p90_ms"], "current": now["p90_ms"]},
            "read_units_per_call": {
                "previous": before["read_units_per_call"],
                "current": now["read_units_per_call"],
            },
            "speedup_p50": round(before["p50_ms"] / now["p50_ms"], 1) if now["p50_ms"] else None,
        }
    regression = {
        key: {
            "previous": previous["regression_detection"][key],
            "current": current["regression_detection"][key],
        }
        for key in ("queries_per_run", "seconds_per_run", "series_per_run")
    }
    print(
        "\npattern                              p50 previous -> current     p90 previous -> current",
        flush=True,
    )
    for name, row in rows.items():
        print(
            f"  {name:<34} {row['p50_ms']['previous']:8.1f} -> {row['p50_ms']['current']:6.1f} ms"
            f"    {row['p90_ms']['previous']:8.1f} -> {row['p90_ms']['current']:6.1f} ms",
            flush=True,
        )
    print(
        f"  regression check: {regression['queries_per_run']['previous']} -> "
        f"{regression['queries_per_run']['current']} Queries per run, "
        f"{regression['seconds_per_run']['previous']} -> {regression['seconds_per_run']['current']} s",
        flush=True,
    )
    return {"patterns": rows, "regression_detection": regression}


def main() -> None:
    args = parse_args()
    data = Dataset(args.runs, args.options, args.workloads, args.in_progress, args.seed)
    mode = "in memory" if args.in_memory else "on disk"
    root = Path(tempfile.mkdtemp(prefix="storagebench-bench-store-"))
    server = DynamoDBLocal(root, cache_dir=args.cache_dir, in_memory=args.in_memory)
    try:
        print(f"starting DynamoDB Local {DYNAMODB_LOCAL_VERSION} ({mode})", flush=True)
        server.start()
        client = server.client(config=Config(max_pool_connections=max(10, args.writers * 2)))
        template = Template(ROOT / "template.yaml")
        layouts = {layout: measure_layout(client, template, layout, data, args) for layout in args.layouts}
        compared = side_by_side(layouts) if set(layouts) == set(LAYOUTS) else None
        report: dict[str, Any] = {
            "benchmark": "results store access patterns, current vs previous item layout",
            "when": iso(datetime.now(UTC)),
            "engine": f"DynamoDB Local {DYNAMODB_LOCAL_VERSION} ({mode})",
            "machine": {
                "cpus": os.cpu_count(),
                "load_average_1m": round(os.getloadavg()[0], 2),
                "python": platform.python_version(),
                "java": java_version(),
                "platform": platform.platform(),
            },
            "data": {
                "runs": args.runs,
                "suites": len(SUITES),
                "storage_options": args.options,
                "workloads": args.workloads,
                "series": len(data.series),
                "result_records": args.runs * args.options * args.workloads,
                "run_items": args.runs,
                "config_items": args.runs * args.options,
                "runs_in_progress": args.in_progress,
            },
            "side_by_side": compared,
            "layouts": layouts,
            "scan_operations": sum(layout["scan_operations"] for layout in layouts.values()),
            "every_read_is_a_query": all(layout["every_read_is_a_query"] for layout in layouts.values()),
            "dynamodb_local_peak_rss_mb": round((server.peak_rss_bytes() or 0) / 2**20, 1),
            "dynamodb_local_startup_s": round(server.startup_s or 0.0, 2),
            # of which the JVM waited for a CPU: what this machine's load added to its start
            "dynamodb_local_startup_waited_s": round(server.startup_waited_s or 0.0, 2),
            "dynamodb_local_startup_stolen_s": round(server.startup_stolen_s or 0.0, 2),
        }
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    if report["scan_operations"] or not report["every_read_is_a_query"]:
        sys.exit("a Scan (or another read than Query) was sent: see the report")


if __name__ == "__main__":
    main()
