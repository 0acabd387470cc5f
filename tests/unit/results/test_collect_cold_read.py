"""The sampled cold-read check of a manifest as a pre-warm record (results.collect, results.cold_read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.results.collect import collect

MIB = 1 << 20


def device(path: str, cold: list[float], warm: list[float]) -> dict[str, Any]:
    name = path.rsplit("/", 1)[-1]
    return {
        "path": path,
        "bytes": 256 * MIB,
        "sampled_bytes": 16 * MIB,
        "block_bytes": MIB,
        "seconds": sum(cold),
        "mibps": 16 / sum(cold),
        "warm_mibps": 16 / sum(warm),
        "extents": [
            {"offset": index * 64 * MIB, "bytes": 4 * MIB, "cold_s": c, "warm_s": w}
            for index, (c, w) in enumerate(zip(cold, warm, strict=True))
        ],
        "files": [f"dd.{name}.cold.stderr", f"dd.{name}.warm.stderr"],
    }


def write(root: Path, devices: list[dict[str, Any]], **entry: Any) -> Path:
    entry.setdefault("pass_seconds", {"cold": 0.26, "warm": 0.128})
    (root / "prewarm" / "vol").mkdir(parents=True)
    manifest = {
        "manifest_version": 1,
        "run_id": "run-1",
        "config_id": "gp3",
        "status": "ok",
        "targets": [{"id": "vol", "kind": "ebs", "mode": "filesystem", "labels": ["emulated:gp3:100GiB"]}],
        "prewarm": [
            {
                "target": "vol",
                "method": "dd",
                "mode": "sampled",
                "status": "ok",
                "dir": "prewarm/vol",
                "devices": devices,
                **entry,
            }
        ],
        "steps": [],
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


WARM = [0.032] * 4  # 4 MiB in 32 ms: 125 MiB/s, 8 ms per 1 MiB read


def test_a_stripe_sampled_cold_then_warm(tmp_path: Path) -> None:
    # Members read each extent at once: the pass lasts the slower member per extent.
    stripe = [
        device("/dev/loop0", [0.08, 0.04, 0.04, 0.04], WARM),
        device("/dev/loop1", [0.04, 0.10, 0.04, 0.04], WARM),
    ]
    collection = collect(write(tmp_path, stripe))
    assert collection.problems == []
    (record,) = collection.records
    assert (record.workload, record.phase, record.engine, record.direction) == (
        "prewarm",
        "prewarm",
        "prewarm",
        "read",
    )
    assert record.labels == ["emulated:gp3:100GiB", "prewarm:sampled"]
    assert record.raw == [
        "prewarm/vol/dd.loop0.cold.stderr",
        "prewarm/vol/dd.loop0.warm.stderr",
        "prewarm/vol/dd.loop1.cold.stderr",
        "prewarm/vol/dd.loop1.warm.stderr",
    ]
    check = record.cold_read
    assert check is not None
    assert (check.volumes, check.extents, check.block_bytes, check.bytes) == (2, 4, MIB, 32 * MIB)
    assert check.volume_pct == pytest.approx(6.25)  # 32 MiB of 2 x 256 MiB
    assert check.cold.seconds == pytest.approx(0.08 + 0.10 + 0.04 + 0.04)
    assert check.cold.mibps == pytest.approx(32 / 0.26)
    # 8 extents of 4 reads: 0.42 s / 32 reads; per extent 20, 10, 10, 10, 10, 25, 10, 10 ms
    assert check.cold.read_ms_mean == pytest.approx(13.125)
    assert (check.cold.read_ms_p50, check.cold.read_ms_max) == pytest.approx((10.0, 25.0))
    assert check.warm.mibps == pytest.approx(250.0) and check.warm.read_ms_mean == pytest.approx(8.0)
    assert check.penalty_pct == pytest.approx((13.125 / 8 - 1) * 100)  # +64 %
    assert (record.bw_mibps, record.bytes, record.ios, record.runtime_s) == pytest.approx(
        (32 / 0.26, 32 * MIB, 32, 0.26)
    )


def test_the_agents_clock_times_a_pass_when_it_has_one(tmp_path: Path) -> None:
    # dd's own seconds leave out its start-up and the gaps between extents; the agent's clock does
    # not, so a throttle that lets an idle device catch up cannot inflate the pass's MiB/s.
    collection = collect(
        write(tmp_path, [device("/dev/nvme1n1", WARM, WARM)], pass_seconds={"cold": 0.2, "warm": 0.16})
    )
    (record,) = collection.records
    check = record.cold_read
    assert check is not None
    assert (check.cold.seconds, check.cold.mibps) == pytest.approx((0.2, 80.0))
    assert (check.warm.seconds, check.warm.mibps) == pytest.approx((0.16, 100.0))
    assert check.cold.read_ms_mean == pytest.approx(8.0)  # dd's own: 32 ms per 4 MiB extent
    assert check.penalty_pct == pytest.approx(0.0)
    assert (record.runtime_s, record.bw_mibps) == pytest.approx((0.2, 80.0))


def test_a_volume_without_a_first_access_penalty(tmp_path: Path) -> None:
    collection = collect(write(tmp_path, [device("/dev/nvme1n1", WARM, WARM)]))
    (record,) = collection.records
    assert record.cold_read is not None and record.cold_read.penalty_pct == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["extents"][1].pop("warm_s"), "extents[1]: "),
        (lambda d: d.update(extents=[]), "no extents were read"),
        (lambda d: d.update(block_bytes=0), "block_bytes 0 is not a positive integer"),
        (lambda d: d.update(bytes=None), "bytes None is not the device's size"),
        (lambda d: [e.update(warm_s=0.0) for e in d["extents"]], "the warm pass took no measurable time"),
    ],
    ids=["extent-without-warm", "no-extents", "block-0", "no-size", "warm-zero"],
)
def test_an_unusable_check_is_a_problem_not_a_crash(tmp_path: Path, edit: Any, message: str) -> None:
    broken = device("/dev/loop0", WARM, WARM)
    edit(broken)
    collection = collect(write(tmp_path, [broken]))
    assert collection.records == []
    (problem,) = collection.problems
    assert problem.startswith("prewarm of 'vol': cold-read check of 'vol'") and message in problem


def test_a_check_without_the_agents_pass_times_is_a_problem(tmp_path: Path) -> None:
    collection = collect(write(tmp_path, [device("/dev/loop0", WARM, WARM)], pass_seconds={"cold": 0.2}))
    assert collection.records == []
    (problem,) = collection.problems
    assert "pass_seconds {'cold': 0.2} lacks a cold and a warm time > 0" in problem
