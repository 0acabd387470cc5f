"""Write tests/data/twin/model-table.json: the Python model's answers on traces of I/Os.

The table is what holds the compiled twin (native/twin) to the model's one definition
(agent/twin/model.py): tests/unit/agent/twin/test_twin_model_table.py replays every trace through
both and compares every start, service time, counter and burst event. Rerun this (``make
twin-model-table``) when the model changes on purpose; the test fails until the table and the
port agree with it again.

Traces are open-loop arrival times, written out in the table so that both sides read the same
numbers: bursts at the limit, late arrivals (the pacing tolerance), sequential merges, gp2 and st1
credits running out and coming back, a bimodal latency, a service time shorter than the overhead.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from storagebench.agent.twin.model import ModelError, VolumeModel, replay

KIB, MIB = 1 << 10, 1 << 20
GP3 = {"iops": 3000, "mibps": 125, "io_size_kib": 256}
GP3_LATENCY = {"modes": [{"weight": 1, "p50_ms": 0.5, "p99_ms": 1.2}]}


def arrivals(count: int, rate: float, seed: int, jitter_s: float = 0.0) -> list[float]:
    """Poisson arrivals at ``rate``, each made up to ``jitter_s`` late (a late wake-up)."""
    draw = random.Random(seed)
    now, times = 0.0, []
    for _ in range(count):
        now += draw.expovariate(rate)
        times.append(now + draw.uniform(0.0, jitter_s))
    return sorted(times)


def random_ios(times: list[float], block: int, seed: int, write_share: float = 0.0) -> list[list[Any]]:
    draw = random.Random(seed)
    return [[t, draw.randrange(4096) * block, block, draw.random() < write_share] for t in times]


def stalled(ios: list[list[Any]], stalls: dict[int, float]) -> list[list[Any]]:
    """The trace with the twin stalled ``stalls[i]`` seconds before I/O ``i``, arriving that late."""
    out, delay = [], 0.0
    for index, io in enumerate(ios):
        delay += stalls.get(index, 0.0)
        now = io[0] + delay
        out.append([now, *io[1:], stalls[index]] if index in stalls else [now, *io[1:]])
    return out


def sequential_ios(times: list[float], block: int, write: bool = False) -> list[list[Any]]:
    return [[t, index * block, block, write] for index, t in enumerate(times)]


def cases() -> list[dict[str, Any]]:
    gp2 = {
        "iops": 300,
        "mibps": 128,
        "burst_iops": 3000,
        "io_size_kib": 256,
        "credit_capacity": 200,
        "credit_refill_per_s": 300,
    }
    st1 = {
        "iops": 500,
        "mibps": 40,
        "burst_mibps": 250,
        "io_size_kib": 1024,
        "credit_capacity": 20,
        "credit_refill_per_s": 40,
        "credit_unit": "mib",
    }
    bimodal = {
        "modes": [{"weight": 9, "p50_ms": 0.4, "p99_ms": 0.9}, {"weight": 1, "p50_ms": 4, "p99_ms": 9}]
    }
    return [
        {
            "name": "gp3 4 KiB random reads offered above the limit",
            "spec": {"limits": GP3, "latency": GP3_LATENCY},
            "seed": 11,
            "ios": random_ios(arrivals(300, 4500, 1), 4 * KIB, 2),
        },
        {
            "name": "gp3 at the limit with arrivals up to 2 ms late (the pacing tolerance)",
            "spec": {"limits": GP3, "latency": GP3_LATENCY},
            "seed": 12,
            "ios": random_ios(arrivals(300, 2900, 3, jitter_s=0.002), 4 * KIB, 4, write_share=0.3),
        },
        {
            "name": "gp3 strict pacing (pacing_slots 0) against the same late arrivals",
            "spec": {"limits": {**GP3, "pacing_slots": 0}, "latency": GP3_LATENCY},
            "seed": 12,
            "ios": random_ios(arrivals(300, 2900, 3, jitter_s=0.002), 4 * KIB, 4, write_share=0.3),
        },
        {
            "name": "gp3 at the limit with the twin stalled 30 ms then 0.5 s (the stall credit, capped)",
            "spec": {"limits": GP3, "latency": GP3_LATENCY},
            "seed": 17,
            "ios": stalled(random_ios(arrivals(300, 4000, 16), 4 * KIB, 17), {100: 0.03, 200: 0.5}),
        },
        {
            "name": "gp3 sequential 1 MiB writes and 128 KiB reads that merge",
            "spec": {"limits": GP3, "latency": GP3_LATENCY},
            "seed": 13,
            "ios": sequential_ios(arrivals(100, 200, 5), MIB, write=True)
            + sequential_ios([t + 1.0 for t in arrivals(150, 1200, 6)], 128 * KIB),
        },
        {
            "name": "gp2 burst credits run out and come back",
            "spec": {"limits": gp2, "latency": {"modes": [{"weight": 1, "p50_ms": 0.35, "p99_ms": 0.85}]}},
            "seed": 14,
            "ios": random_ios(arrivals(350, 3500, 7), 4 * KIB, 8)
            + random_ios([t + 1.0 for t in arrivals(150, 2000, 9)], 16 * KIB, 10),
        },
        {
            "name": "st1 throughput credits in MiB, random 4 KiB charged a whole MiB",
            "spec": {"limits": st1, "latency": {"modes": [{"weight": 1, "p50_ms": 11, "p99_ms": 24}]}},
            "seed": 15,
            "ios": random_ios(arrivals(100, 300, 11), 4 * KIB, 12)
            + sequential_ios([t + 1.0 for t in arrivals(100, 300, 13)], MIB),
        },
        {
            "name": "a bimodal volume, service shorter than the overhead clamped to 0",
            "spec": {"limits": {"iops": 16000, "mibps": 1000}, "latency": bimodal},
            "seed": 16,
            "overhead_s": 0.0003,
            "ios": random_ios(arrivals(400, 8000, 14), 16 * KIB, 15, write_share=0.5),
        },
    ]


BAD_SPECS: list[tuple[dict[str, Any], str]] = [
    ({"limits": {"mibps": 125}, "latency": GP3_LATENCY}, "limits.iops"),
    ({"limits": {"iops": -1, "mibps": 125}, "latency": GP3_LATENCY}, "limits.iops"),
    ({"limits": {"iops": 3000, "mibps": True}, "latency": GP3_LATENCY}, "limits.mibps"),
    ({"limits": {**GP3, "io_size_kib": 2.5}, "latency": GP3_LATENCY}, "limits.io_size_kib"),
    ({"limits": {**GP3, "credit_unit": "tb"}, "latency": GP3_LATENCY}, "limits.credit_unit"),
    ({"limits": {**GP3, "credit_capacity": -5}, "latency": GP3_LATENCY}, "limits.credit_capacity"),
    ({"limits": {**GP3, "pacing_slots": -1}, "latency": GP3_LATENCY}, "limits.pacing_slots"),
    ({"limits": GP3, "latency": {"modes": []}}, "latency.modes"),
    ({"limits": GP3, "latency": {"modes": [{"p50_ms": 1}]}}, "latency.modes[0]"),
    ({"limits": GP3, "latency": {"modes": [{"p50_ms": 2, "p99_ms": 1}]}}, "latency.modes[0]"),
    (
        {"limits": GP3, "latency": {"modes": [{"weight": 0, "p50_ms": 1, "p99_ms": 2}]}},
        "latency.modes[0].weight",
    ),
]


def table() -> dict[str, Any]:
    rows = []
    for case in cases():
        overhead = float(case.get("overhead_s", 0.0))
        answer = replay(case["spec"], case["seed"], case["ios"], overhead)
        rows.append({**case, "overhead_s": overhead, "expected": answer})
    errors = []
    for spec, field in BAD_SPECS:
        try:
            VolumeModel(spec["limits"], spec["latency"], 1)
        except ModelError as exc:
            if field not in str(exc):
                raise SystemExit(f"{spec}: the model's error {exc!r} does not name {field}") from None
        else:
            raise SystemExit(f"{spec}: the model accepted a spec the table says is bad")
        errors.append({"spec": spec, "field": field})
    return {
        "about": "written by scripts/twin_model_table.py from agent/twin/model.py; do not edit by hand",
        "cases": rows,
        "bad_specs": errors,
    }


def render(document: dict[str, Any]) -> str:
    """Compact JSON with one case per line: small to check in, and a diff names the case."""
    head = {k: v for k, v in document.items() if k not in ("cases", "bad_specs")}
    lines = ["{" + json.dumps(head)[1:-1] + ","]
    for key in ("cases", "bad_specs"):
        items = [json.dumps(item, separators=(",", ":")) for item in document[key]]
        lines.append(f'"{key}": [\n' + ",\n".join(items) + "\n]" + ("," if key == "cases" else ""))
    return "\n".join(lines) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path, nargs="?", default=Path("tests/data/twin/model-table.json"))
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs from the model")
    args = parser.parse_args()
    text = render(table())
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            sys.exit(f"{args.out} differs from the model: make twin-model-table")
        return
    args.out.write_text(text)
    print(f"{args.out}: {len(text) // 1024} KiB")


if __name__ == "__main__":
    main()
