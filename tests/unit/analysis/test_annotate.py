"""Findings attached to records: burst/baseline/knee, delivery against the envelope, bimodal latency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.records import result_record

from storagebench.analysis.annotate import annotate, burst_labels
from storagebench.request import parse_request
from storagebench.request.model import Config
from storagebench.results.records import HistogramBucket, ResultRecord

T0 = "2026-11-21T10:00:00.000Z"


def config(volume_type: str = "gp2", size_gib: int = 100, **extra: Any) -> Config:
    request = parse_request(
        {
            "name": "t",
            "configs": [
                {
                    "id": "c",
                    "instance_type": "c5.4xlarge",
                    "targets": [{"kind": "ebs", "type": volume_type, "size_gib": size_gib, **extra}],
                }
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    return request.configs[0]


def at(seconds: float) -> str:
    whole, frac = divmod(seconds, 1)
    return f"2026-11-21T10:{int(whole) // 60:02d}:{int(whole) % 60:02d}.{int(frac * 1000):03d}Z"


def iops_log(directory: Path, values: list[int]) -> None:
    """fio's 1 s averaged IOPS log of one job: 'time_ms, value, direction, bs, offset'."""
    (directory / "ts").mkdir(parents=True, exist_ok=True)
    lines = [f"{(i + 1) * 1000}, {v}, 0, 4096, 0" for i, v in enumerate(values)]
    (directory / "ts" / "sb_iops.1.log").write_text("\n".join(lines) + "\n")


def step(
    step_id: str,
    start: float,
    end: float,
    repetition: int = 1,
    knee_series: list[int] | None = None,
    output: Path | None = None,
    intent: str = "iops",
) -> dict[str, Any]:
    phase_dir = f"steps/{step_id}/run"
    if knee_series is not None and output is not None:
        iops_log(output / phase_dir, knee_series)
    return {
        "id": step_id,
        "workload": "std-randread-4k",
        "profile": "std-randread-4k",
        "variant": {},
        "repetition": repetition,
        "target": "ebs0",
        "intent": intent,
        "status": "ok",
        "started_at": at(start),
        "ended_at": at(end),
        "phases": [
            {"name": "run", "engine": "fio", "dir": phase_dir, "status": "ok", "started_at": at(start)}
        ],
    }


def write_manifest(output: Path, steps: list[dict[str, Any]]) -> None:
    output.mkdir(parents=True, exist_ok=True)
    (output / "manifest.json").write_text(json.dumps({"manifest_version": 1, "steps": steps}))


def record(repetition: int, iops: float, histogram: list[HistogramBucket] | None = None) -> ResultRecord:
    rates = {"iops": iops, "bw_mibps": iops * 4 / 1024}
    return result_record(
        config_id="c", repetition=repetition, **rates, bytes=1, runtime_s=10, histogram=histogram
    )


KNEE = [3000] * 20 + [300] * 20  # the bucket empties 20 s into the step


def test_steps_before_the_knee_ran_on_burst_the_one_holding_it_crossed_it_and_after_is_baseline(
    tmp_path: Path,
) -> None:
    steps = [
        step("a", 0, 30, output=tmp_path, knee_series=[3000] * 30),
        step("b", 31, 71, output=tmp_path, knee_series=KNEE),
        step("c", 72, 100, output=tmp_path, knee_series=[300] * 28),
    ]
    write_manifest(tmp_path, steps)
    labels = burst_labels(json.loads((tmp_path / "manifest.json").read_text()), tmp_path, config())
    assert labels["a"] == ["burst"]
    assert labels["c"] == ["baseline"]
    (crossed,) = labels["b"]
    assert crossed.startswith("crossed-knee@")
    assert 18 <= int(crossed.removeprefix("crossed-knee@").removesuffix("s")) <= 22


def test_a_bursting_volume_whose_bucket_never_emptied_ran_on_credits_throughout(tmp_path: Path) -> None:
    write_manifest(tmp_path, [step("a", 0, 30, output=tmp_path, knee_series=[3000] * 30)])
    assert burst_labels(json.loads((tmp_path / "manifest.json").read_text()), tmp_path, config()) == {
        "a": ["burst"]
    }


def test_a_volume_that_cannot_burst_gets_no_burst_label(tmp_path: Path) -> None:
    write_manifest(tmp_path, [step("a", 0, 30, output=tmp_path, knee_series=[3000] * 30)])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert burst_labels(manifest, tmp_path, config("gp3")) == {}
    assert burst_labels(manifest, tmp_path, config("gp2", 1000)) == {}  # 1,000 GiB gp2 never bursts


@pytest.mark.parametrize(
    ("measured", "expected_label"),
    [(2990.0, "delivered:1.00"), (2100.0, "under-delivered:0.70"), (3600.0, "over-delivered:1.20")],
)
def test_delivery_is_judged_against_the_expected_envelope(
    tmp_path: Path, measured: float, expected_label: str
) -> None:
    write_manifest(tmp_path, [step("a", 0, 30)])
    (annotated,) = annotate([record(1, measured)], tmp_path, config("gp3"))
    assert expected_label in annotated.labels


def test_the_instance_limit_is_named_when_it_is_the_bound(tmp_path: Path) -> None:
    """A 64,000 IOPS io2 volume on a c5.4xlarge (20,000 IOPS EBS maximum): the instance binds."""
    write_manifest(tmp_path, [step("a", 0, 30)])
    (annotated,) = annotate([record(1, 19_900)], tmp_path, config("io2", 100, iops=64_000))
    assert "instance-bound" in annotated.labels and "delivered:0.99" in annotated.labels  # 19,900 of 20,000


def test_a_latency_step_is_not_held_to_the_ceiling(tmp_path: Path) -> None:
    write_manifest(tmp_path, [step("a", 0, 30, intent="latency")])
    (annotated,) = annotate([record(1, 500)], tmp_path, config("gp3"))
    assert not any(label.startswith(("delivered", "under-delivered")) for label in annotated.labels)


def test_two_latency_modes_are_flagged(tmp_path: Path) -> None:
    write_manifest(tmp_path, [step("a", 0, 30)])
    fast = [HistogramBucket(le_us=2 ** (k / 4), count=1000) for k in range(38, 42)]  # ~0.7-1.4 ms
    slow = [HistogramBucket(le_us=2 ** (k / 4), count=600) for k in range(55, 59)]  # ~13-27 ms
    (annotated,) = annotate([record(1, 3000, fast + slow)], tmp_path, config("gp3"))
    (bimodal,) = [label for label in annotated.labels if label.startswith("bimodal-latency:")]
    low, high = (float(v.removesuffix("us")) for v in bimodal.removeprefix("bimodal-latency:").split("/"))
    assert 500 < low < 2000 and 10_000 < high < 40_000


def test_nothing_is_lost_when_the_manifest_is_missing(tmp_path: Path) -> None:
    records = [record(1, 3000)]
    assert annotate(records, tmp_path, config()) == records


def efs_config(instance_type: str) -> Config:
    request = parse_request(
        {
            "name": "t",
            "configs": [
                {
                    "id": "c",
                    "instance_type": instance_type,
                    "targets": [{"id": "fs", "kind": "efs", "throughput_mode": "elastic"}],
                }
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    return request.configs[0]


def efs_step_and_record(tmp_path: Path, mibps: float) -> ResultRecord:
    write_manifest(tmp_path, [{**step("a", 0, 30, intent="throughput"), "target": "fs"}])
    return record(1, 0).model_copy(update={"target_id": "fs", "iops": None, "bw_mibps": mibps})


def test_the_clients_network_is_named_when_it_caps_storage_reached_over_it(tmp_path: Path) -> None:
    """EFS elastic gives one client 1,500 MiB/s; a c5.large carries 1,192 MiB/s (10 Gbps burst)."""
    (annotated,) = annotate([efs_step_and_record(tmp_path, 1_150)], tmp_path, efs_config("c5.large"))
    assert "instance-bound:network" in annotated.labels and "delivered:0.96" in annotated.labels


def test_a_100_gbit_client_leaves_efs_its_own_ceiling(tmp_path: Path) -> None:
    (annotated,) = annotate([efs_step_and_record(tmp_path, 1_450)], tmp_path, efs_config("r5n.24xlarge"))
    assert "delivered:0.97" in annotated.labels  # 1,450 of EFS's 1,500 MiB/s per client
    assert not any(label.startswith("instance-bound") for label in annotated.labels)


def test_local_mode_does_not_hold_loopback_to_the_types_network(tmp_path: Path) -> None:
    record = efs_step_and_record(tmp_path, 1_150)
    (annotated,) = annotate([record], tmp_path, efs_config("c5.large"), network_ceilings=False)
    assert not any(
        label.startswith(("delivered", "under-delivered", "instance-bound")) for label in annotated.labels
    )
