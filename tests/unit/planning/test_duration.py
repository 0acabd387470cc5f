"""The expected duration of a run (planning.duration), checked against figures computed by hand."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails
from storagebench.kinds.base import INSTANCE_READY_S
from storagebench.kinds.efs import EFS_READY_S
from storagebench.kinds.fsx_lustre import FSX_LUSTRE_READY_S
from storagebench.planning.duration import (
    AGENT_SETUP_S,
    COLLECT_CLEANUP_S,
    STEP_OVERHEAD_S,
    config_duration,
    estimate_duration,
    wall_hours,
)
from storagebench.planning.preview import preview_request
from storagebench.request import load_request, parse_request

EVENTS = Path(__file__).resolve().parents[3] / "events"
GP3_100: dict[str, Any] = {"id": "data", "kind": "ebs", "type": "gp3", "size_gib": 100}


def one_config(
    workloads: list[dict[str, Any]],
    targets: list[dict[str, Any]] | None = None,
    prewarm: str | dict[str, Any] = "none",
    repetitions: int = 1,
    instance_type: str = "c5.4xlarge",
    **extra: Any,
) -> Any:
    document = {
        "name": "duration",
        "configs": [{"id": "c", "instance_type": instance_type, "targets": targets or [GP3_100], **extra}],
        "workloads": workloads,
        "prewarm": prewarm if isinstance(prewarm, dict) else {"method": prewarm},
        "repetitions": repetitions,
    }
    request = parse_request(document)
    return config_duration(request, request.configs[0])


def test_a_timed_fio_profile_at_half_scale_three_times_is_ramp_plus_runtime_each() -> None:
    # std-randread-4k: runtime 180 s, ramp 10 s; scale 0.5 -> 90 + 5 s; raw device: no file layout.
    raw = one_config(
        [{"profile": "std-randread-4k", "scale": 0.5}], [{**GP3_100, "filesystem": "raw"}], repetitions=3
    )
    assert raw.steps == 3 and raw.complete
    assert raw.workloads_s == pytest.approx(3 * (90 + 5 + STEP_OVERHEAD_S))
    # On xfs fio first writes its 4 jobs x 512 MiB files, at gp3's 125 MiB/s: 16.384 s per step.
    xfs = one_config([{"profile": "std-randread-4k", "scale": 0.5}], repetitions=3)
    assert xfs.workloads_s == pytest.approx(3 * (90 + 5 + STEP_OVERHEAD_S + 2048 / 125))
    total = INSTANCE_READY_S + 15 + AGENT_SETUP_S + xfs.workloads_s + COLLECT_CLEANUP_S  # 15: ready_poll_s
    assert xfs.hours == pytest.approx(total / 3600) and xfs.prewarm_s == 0


def test_a_sweep_runs_every_point() -> None:
    # sweep-qd-randread-4k: 8 queue depths x (30 s + 2 s ramp), each its own step.
    swept = one_config([{"profile": "sweep-qd-randread-4k"}], [{**GP3_100, "filesystem": "raw"}])
    assert swept.steps == 8
    assert swept.workloads_s == pytest.approx(8 * (30 + 2 + STEP_OVERHEAD_S))
    two = one_config(
        [{"profile": "sweep-qd-randread-4k", "params": {"iodepth": [1, 32]}}],
        [{**GP3_100, "filesystem": "raw"}],
    )
    assert two.workloads_s == pytest.approx(2 * (32 + STEP_OVERHEAD_S))


@pytest.mark.parametrize(
    ("target", "mibps"),
    [
        (GP3_100, 125),  # gp3's included throughput
        ({**GP3_100, "type": "io1", "iops": 4000}, 500),  # 0.25 MiB/s per IOPS, capped at 500
        ({**GP3_100, "type": "io1", "iops": 1000}, 250),  # 1,000 IOPS x 256 KiB
    ],
)
def test_a_size_bound_dd_write_moves_its_bytes_at_the_envelopes_rate(
    target: dict[str, Any], mibps: float
) -> None:
    # dd-seq-write-4g-dsync: 4,096 x 1 MiB.
    run = one_config([{"profile": "dd-seq-write-4g-dsync"}], [target])
    assert run.workloads_s == pytest.approx(4096 / mibps + STEP_OVERHEAD_S)


def test_small_random_io_is_bound_by_iops() -> None:
    # fio-randrw-4k-25read at scale 1/8: 4 jobs x 1 GiB of 4 KiB I/O = 1,048,576 I/O at gp3's 3,000 IOPS,
    # after laying out the 4 GiB at 125 MiB/s.
    run = one_config([{"profile": "fio-randrw-4k-25read", "scale": 0.125}])
    assert run.workloads_s == pytest.approx(1_048_576 / 3000 + 4096 / 125 + STEP_OVERHEAD_S)


ALL_DD = {"method": "dd", "volumes": "all"}
RESTORED = {**GP3_100, "throughput_mibps": 500, "snapshot_id": "snap-0123456789abcdef0"}
# The cold-read check of a volume of 32 GiB or more: 4 GiB read twice (cold, warm) plus a dd start
# per extent and pass (32 extents).
CHECK_STARTS_S = 2 * 32 * 0.01


def test_volumes_all_reads_the_whole_volume_at_its_rate() -> None:
    run = one_config(
        [{"profile": "std-latency-4k-qd1", "scale": 0.1}], [{**GP3_100, "size_gib": 1024}], ALL_DD
    )
    assert run.prewarm_s == pytest.approx(1024 * 1024 / 125)  # 8,388.6 s
    assert run.prewarm_s / 3600 == pytest.approx(2.33, abs=0.01)
    # A stripe of three is read at once: three times the bytes at three times the rate.
    striped = one_config(
        [{"profile": "std-latency-4k-qd1"}],
        [{**GP3_100, "size_gib": 1024, "count": 3}],
        {"method": "fio", "volumes": "all"},
    )
    assert striped.prewarm_s == pytest.approx(run.prewarm_s)
    # A snapshot volume with a provisioned initialization rate below the volume's is read at that rate.
    slow = one_config(
        [{"profile": "std-latency-4k-qd1"}], [{**RESTORED, "initialization_rate_mibps": 100}], ALL_DD
    )
    assert slow.prewarm_s == pytest.approx(100 * 1024 / 100)


def test_a_restored_volume_is_read_end_to_end_by_default() -> None:
    lazy = one_config([{"profile": "std-latency-4k-qd1"}], [RESTORED], "dd")
    assert lazy.prewarm_s == pytest.approx(100 * 1024 / 500) and any("lazily" in n for n in lazy.notes)


def test_a_new_volume_gets_the_cold_read_check_not_the_full_read() -> None:
    big = one_config([{"profile": "std-latency-4k-qd1"}], [{**GP3_100, "size_gib": 1024}], "dd")
    assert big.prewarm_s == pytest.approx(2 * 4096 / 125 + CHECK_STARTS_S)  # 66.2 s, not 2.33 h
    # At most an eighth of a small volume: 16 GiB -> 2 GiB per pass.
    small = one_config([{"profile": "std-latency-4k-qd1"}], [{**GP3_100, "size_gib": 16}], "dd")
    assert small.prewarm_s == pytest.approx(2 * 2048 / 125 + CHECK_STARTS_S)
    # A stripe's members are sampled at once: their bytes at the stripe's rate.
    striped = one_config(
        [{"profile": "std-latency-4k-qd1"}], [{**GP3_100, "size_gib": 1024, "count": 3}], "dd"
    )
    assert striped.prewarm_s == pytest.approx(big.prewarm_s)
    # AWS initialises a volume at its provisioned rate (the workflow waits): only the check is read.
    initialised = one_config(
        [{"profile": "std-latency-4k-qd1"}], [{**RESTORED, "initialization_rate_mibps": 100}], "dd"
    )
    assert initialised.prewarm_s == pytest.approx(2 * 4096 / 500 + CHECK_STARTS_S)


def test_the_check_follows_its_sample_and_can_be_left_out() -> None:
    workloads = [{"profile": "std-latency-4k-qd1"}]
    sample = one_config(workloads, [GP3_100], {"method": "dd", "sample_gib": 1, "sample_extents": 8})
    assert sample.prewarm_s == pytest.approx(2 * 1024 / 125 + 2 * 8 * 0.01)
    assert one_config(workloads, [GP3_100], {"method": "dd", "sample_gib": 0}).prewarm_s == 0
    # volumes none: a restored volume is not read end to end, its check measures the lazy load.
    lazy = one_config(workloads, [RESTORED], {"method": "dd", "volumes": "none"})
    assert lazy.prewarm_s == pytest.approx(2 * 4096 / 500 + CHECK_STARTS_S)


def test_the_nightly_suite_no_longer_reads_its_new_volumes_end_to_end() -> None:
    nightly = load_request(EVENTS / "nightly.json")
    checked = estimate_duration(nightly, len(nightly.configs))
    seconds = {c.config_id: c.prewarm_s for c in checked.configs}
    assert seconds["gp3"] == pytest.approx(2 * 4096 / 125 + CHECK_STARTS_S)  # 66.2 s
    assert seconds["gp2"] == pytest.approx(2 * 4096 / 128 + CHECK_STARTS_S)  # gp2 at 200 GiB: 128 MiB/s
    assert 50 < seconds["io2"] < 60  # the instance's EBS baseline, not io2's own, is the ceiling
    full = estimate_duration(
        nightly.model_copy(update={"prewarm": nightly.prewarm.model_copy(update={"volumes": "all"})}),
        len(nightly.configs),
    )
    assert {c.config_id: round(c.prewarm_s / 60, 1) for c in full.configs} == {
        "gp2": 26.7,
        "gp3": 27.3,
        "io2": 22.9,
    }
    assert checked.wall_hours < full.wall_hours - 0.4


def test_file_systems_are_created_while_the_instance_boots() -> None:
    efs = one_config([{"profile": "std-latency-4k-qd1"}], [{"id": "fs", "kind": "efs"}])
    fsx = one_config(
        [{"profile": "std-latency-4k-qd1"}],
        [{"id": "fs", "kind": "fsx_lustre", "storage_capacity_gib": 1200}],
    )
    assert efs.ready_s == max(INSTANCE_READY_S, EFS_READY_S) + 15
    assert fsx.ready_s == FSX_LUSTRE_READY_S + 15 > efs.ready_s


def test_a_custom_command_without_a_duration_is_flagged() -> None:
    run = one_config([{"id": "pipeline", "profile": "command", "params": {"command": "make all"}}])
    assert not run.complete and run.workloads_s == pytest.approx(STEP_OVERHEAD_S)
    assert any("pipeline on data (ebs)" in n and "custom command" in n for n in run.notes)


def test_a_size_bound_phase_on_a_target_without_catalog_rates_is_flagged() -> None:
    run = one_config(
        [{"profile": "dd-seq-write-1g-dsync"}], [{"id": "here", "kind": "local", "path": "/mnt/x"}]
    )
    assert not run.complete and any("rate the catalog does not give" in n for n in run.notes)


def test_the_wall_time_is_the_maps_schedule() -> None:
    assert wall_hours([3, 1, 1, 1], 2) == 3  # the three short ones share the second slot
    assert wall_hours([1, 2, 3], 1) == 6
    assert wall_hours([1, 2, 3], 8) == 3
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        wall_hours([1.0], 0)


@pytest.mark.parametrize("path", sorted(EVENTS.glob("*.json")), ids=lambda p: p.name)
def test_every_shipped_request_fits_in_its_own_deadline(path: Path) -> None:
    request = load_request(path)
    preview = preview_request(request, Guardrails())
    duration = preview.estimate.duration
    assert duration == estimate_duration(request, preview.max_concurrency)
    assert all(math.isfinite(c.hours) and c.hours > 0 for c in duration.configs)
    assert 0 < duration.wall_hours < request.timing.max_run_hours
    assert 0 < preview.estimate.total_usd < preview.estimate.upper_bound_usd
    assert not [p for p in preview.problems if p.limit == "MaxRunHours"]


def test_a_file_gateway_waits_for_its_appliance_and_share_and_its_steps_have_no_rate() -> None:
    from storagebench.kinds.file_gateway import FILE_GATEWAY_READY_S
    from storagebench.planning.duration import config_duration
    from storagebench.request import load_request

    events = Path(__file__).resolve().parents[3] / "events"
    request = load_request(events / "file-gateway-io1-vs-gp2.json")
    expected = config_duration(request, request.configs[0])
    assert expected.ready_s == FILE_GATEWAY_READY_S + request.timing.ready_poll_s
    assert expected.prewarm_s == 0  # the gateway's disks are the appliance's, blank, and not pre-warmed
    assert not expected.complete
    assert any("on share (file_gateway): not estimated" in note for note in expected.notes)


def test_a_preview_plans_each_config_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps once, then duration, knees and preview from those: no config is expanded twice."""
    from storagebench.planning import duration, knee, preview, steps

    request = load_request(EVENTS / "genomics-file-systems.json")
    calls: list[str] = []
    real = steps.plan_steps

    def counted(request: object, config: object) -> object:
        calls.append(config.id)  # type: ignore[attr-defined]
        return real(request, config)  # type: ignore[arg-type]

    for module in (preview, duration, knee):  # every module of the preview's pipeline that can plan
        monkeypatch.setattr(module, "plan_steps", counted)
    result = preview_request(request, Guardrails())
    assert sorted(calls) == sorted(c.id for c in request.configs)
    assert [c.steps for c in result.configs] == [
        [str(s["id"]) for s in real(request, c)] for c in request.configs
    ]


def test_a_file_system_is_estimated_at_the_clients_baseline_network_when_that_is_lower() -> None:
    # EFS provisioned at 1,024 MiB/s; dd writes 4 GiB: c5.large's network (0.75 Gbps baseline, 89 MiB/s)
    # moves it, not the file system. On c5.4xlarge (5 Gbps baseline, 596 MiB/s) EFS's own per-client
    # 500 MiB/s binds: storage-bound, no note.
    efs = {"id": "fs", "kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 1024}
    write = [{"profile": "dd-seq-write-4g-dsync"}]
    small = one_config(write, [efs], instance_type="c5.large")
    large = one_config(write, [efs])
    assert small.workloads_s == pytest.approx(STEP_OVERHEAD_S + 4096 / (0.75e9 / 8 / 2**20), rel=1e-3)
    assert large.workloads_s == pytest.approx(STEP_OVERHEAD_S + 4096 / 500)
    said = "c5.large's baseline network, 89 MiB/s each way, below the storage's"
    assert any(said in note for note in small.notes)
    assert not any("baseline network" in n for n in large.notes)
