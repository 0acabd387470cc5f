"""The collector over an agent output directory built in tmp_path (manifest layout)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.results.collect import Collection, collect
from storagebench.results.errors import ManifestError
from storagebench.results.fio import split_fio_output

DATA = Path(__file__).resolve().parents[2] / "data"
MIB = 1 << 20


def fio_phase(root: Path, step: str, phase: str, fixture: str) -> dict[str, Any]:
    directory = root / "steps" / step / phase
    directory.mkdir(parents=True)
    json_text, normal = split_fio_output((DATA / "fio" / f"{fixture}.out").read_text())
    (directory / "fio.json").write_text(json_text)
    (directory / "fio.txt").write_text(normal)
    return {
        "name": phase,
        "engine": "fio",
        "dir": f"steps/{step}/{phase}",
        "status": "ok",
        "rc": 0,
        "started_at": "2026-11-21T17:00:00Z",
        "timing": {"real_s": 1.2, "user_s": 0.1, "sys_s": 0.3},
    }


def step(step_id: str, phases: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": step_id,
        "workload": extra.pop("workload", "randread"),
        "profile": extra.pop("profile", "oltp"),
        "variant": extra.pop("variant", {}),
        "repetition": extra.pop("repetition", 1),
        "target": "vol",
        "status": extra.pop("status", "ok"),
        "phases": phases,
        **extra,
    }


@pytest.fixture
def output(tmp_path: Path) -> Path:
    """A run with good and bad phases of every engine."""
    root = tmp_path / "out"
    root.mkdir()
    steps: list[dict[str, Any]] = []

    steps.append(step("s1", [fio_phase(root, "s1", "run", "numjobs4")], variant={"numjobs": 4}))

    corrupt = fio_phase(root, "s2", "run", "single_randread")
    text = (root / corrupt["dir"] / "fio.json").read_text()
    (root / corrupt["dir"] / "fio.json").write_text(text[: len(text) // 2])
    steps.append(step("s2", [corrupt]))

    # dd: two threads writing, timed by the agent.
    dd_dir = root / "steps/s3/write"
    dd_dir.mkdir(parents=True)
    (dd_dir / "dd.0.stderr").write_text((DATA / "dd/dsync_write.stderr").read_text())
    (dd_dir / "dd.1.stderr").write_text((DATA / "dd/write_fdatasync.stderr").read_text())
    (dd_dir / "timing.json").write_text(json.dumps({"real_s": 0.25, "user_s": 0.01, "sys_s": 0.2}))
    steps.append(
        step(
            "s3",
            [{"name": "write", "engine": "dd", "dir": "steps/s3/write", "status": "ok", "rc": 0}],
            workload="dd-dsync",
            profile="dd",
            repetition=2,
        )
    )

    # command: a shell loop creating files, two threads.
    cmd_dir = root / "steps/s4/create"
    cmd_dir.mkdir(parents=True)
    for thread in (0, 1):
        (cmd_dir / f"stdout.{thread}.txt").write_text("")
        (cmd_dir / f"stderr.{thread}.txt").write_text("")
    timing = {
        "real_s": 4.0,
        "user_s": 1.0,
        "sys_s": 2.0,
        "threads": [
            {"thread": 0, "rc": 0, "real_s": 3.5, "bytes": 50 * 512000, "files": 50},
            {"thread": 1, "rc": 0, "real_s": 4.0, "bytes": 50 * 512000, "files": 50},
        ],
    }
    (cmd_dir / "timing.json").write_text(json.dumps(timing))
    steps.append(
        step(
            "s4",
            [{"name": "create", "engine": "command", "dir": "steps/s4/create", "status": "ok"}],
            workload="smallfiles",
            profile="genomics",
        )
    )

    failed = {"name": "run", "engine": "fio", "dir": "steps/s5/run", "status": "failed", "rc": 1}
    failed["error"] = "fio exited 1: fio: pid=12, got signal=9"
    steps.append(step("s5", [failed], status="failed", error="phase run failed"))

    missing = fio_phase(root, "s6", "run", "single_randread")
    (root / missing["dir"] / "fio.json").unlink()
    steps.append(step("s6", [missing]))

    steps.append(step("s7", [fio_phase(root, "s7", "run", "job_error")]))
    steps.append(step("s8", [{"name": "run", "engine": "fio", "dir": "steps/s8/run", "status": "skipped"}]))

    prewarm_dir = root / "prewarm/vol"
    prewarm_dir.mkdir(parents=True)
    (prewarm_dir / "dd.loop0.stderr").write_text("")
    (prewarm_dir / "dd.loop1.stderr").write_text("")
    manifest = {
        "manifest_version": 1,
        "agent_version": "0.1.0",
        "run_id": "run-1",
        "config_id": "cfg-gp2",
        "status": "partial",
        "targets": [{"id": "vol", "kind": "ebs", "mode": "filesystem", "labels": ["emulated:gp2"]}],
        "prewarm": [
            {
                "target": "vol",
                "method": "dd",
                "status": "ok",
                "dir": "prewarm/vol",
                "devices": [
                    {
                        "path": "/dev/loop0",
                        "bytes": 2 * MIB * 100,
                        "seconds": 2.0,
                        "files": ["dd.loop0.stderr"],
                    },
                    {
                        "path": "/dev/loop1",
                        "bytes": 2 * MIB * 100,
                        "seconds": 4.0,
                        "mibps": 50.0,
                        "files": ["prewarm/vol/dd.loop1.stderr"],
                    },
                ],
            }
        ],
        "steps": steps,
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    plan = {
        "plan_version": 1,
        "steps": [{"id": "s3", "phases": [{"name": "write", "engine": "dd", "dd": {"direction": "write"}}]}],
    }
    (root / "plan.json").write_text(json.dumps(plan))
    return root


def by_step(collection: Collection, workload: str) -> list[Any]:
    return [r for r in collection.records if r.workload == workload]


def test_good_records_survive_bad_phases(output: Path) -> None:
    collection = collect(output)
    assert collection.config_id == "cfg-gp2" and collection.run_id == "run-1"
    assert sorted((r.workload, r.engine, r.direction) for r in collection.records) == [
        ("dd-dsync", "dd", "write"),
        ("prewarm", "prewarm", "read"),
        ("randread", "fio", "read"),
        ("smallfiles", "command", "mixed"),
    ]
    problems = "\n".join(collection.problems)
    assert len(collection.problems) == 4, problems
    # The fixtures are short runs: 0.18 s of fio and 0.2 s of dd are flagged and kept, as warnings
    assert [w.split(";")[0] for w in collection.warnings] == [
        "step s1 phase run: read: too small to measure: 0.18 s of I/O (under 1 s)",
        "step s3 phase write: write: too small to measure: 0.2 s of I/O (under 1 s)",
    ]
    assert "step s2 phase run: steps/s2/run/fio.json: not fio JSON" in problems
    assert "step s5 phase run failed (rc=1): fio exited 1" in problems
    assert "step s6 phase run: steps/s6/run/fio.json is missing" in problems
    assert (
        "step s7 phase run: steps/s7/run/fio.json: fio job 'full' (group 0) failed with error 28" in problems
    )
    assert "s8" not in problems  # skipped is not a problem


def test_fio_record_carries_identity_labels_and_raw(output: Path) -> None:
    (record,) = [r for r in collect(output).records if r.engine == "fio"]
    assert (record.config_id, record.target_id, record.profile, record.repetition) == (
        "cfg-gp2",
        "vol",
        "oltp",
        1,
    )
    assert record.variant == {"numjobs": 4} and record.phase == "run" and record.group == 0
    assert record.labels == ["emulated:gp2", "too-small"]  # 0.18 s of I/O (protocol.measurable)
    assert record.started_at == "2026-11-21T17:00:00Z"
    assert record.raw == ["steps/s1/run/fio.json", "steps/s1/run/fio.txt"]
    assert all((output / path).is_file() for path in record.raw)
    assert record.jobs == 4 and record.latency is not None and record.histogram


def test_dd_record(output: Path) -> None:
    (record,) = by_step(collect(output), "dd-dsync")
    assert record.jobs == 2 and record.repetition == 2
    assert record.bytes == 104857600 + 67108864
    # Rates use dd's own copy time (the slowest thread's, as fio's aggrb uses its longest job);
    # real_s is the agent's wall clock, process start-up included.
    assert record.real_s == 0.25 and record.runtime_s == 0.200351
    assert record.bw_mibps == pytest.approx((104857600 + 67108864) / 0.200351 / MIB)
    assert record.ios == 100 + 64 and record.iops == pytest.approx(164 / 0.200351)
    assert record.job_bw_min_mibps == pytest.approx(104857600 / 0.200351 / MIB)
    assert record.job_bw_max_mibps == pytest.approx(67108864 / 0.0841038 / MIB)
    assert (record.user_s, record.sys_s) == (0.01, 0.2)
    assert record.cpu_sys_pct == pytest.approx(80.0)
    assert record.raw == [
        "steps/s3/write/dd.0.stderr",
        "steps/s3/write/dd.1.stderr",
        "steps/s3/write/timing.json",
    ]


def test_command_record(output: Path) -> None:
    (record,) = by_step(collect(output), "smallfiles")
    assert (record.direction, record.jobs, record.files) == ("mixed", 2, 100)
    assert record.bytes == 100 * 512000
    assert (record.real_s, record.user_s, record.sys_s, record.runtime_s) == (4.0, 1.0, 2.0, 4.0)
    assert record.cpu_usr_pct == 25.0
    assert record.bw_mibps == pytest.approx(100 * 512000 / 4.0 / MIB)
    assert (record.job_runtime_min_s, record.job_runtime_max_s) == (3.5, 4.0)
    assert "steps/s4/create/stdout.0.txt" in record.raw and "steps/s4/create/timing.json" in record.raw


def test_prewarm_record(output: Path) -> None:
    (record,) = by_step(collect(output), "prewarm")
    assert (record.target_id, record.phase, record.engine, record.direction) == (
        "vol",
        "prewarm",
        "prewarm",
        "read",
    )
    assert record.bytes == 400 * MIB and record.runtime_s == 4.0
    assert record.bw_mibps == pytest.approx(100.0)  # 400 MiB over the slowest member's 4 s
    assert (record.job_bw_min_mibps, record.job_bw_max_mibps) == (50.0, 100.0)
    assert record.labels == ["emulated:gp2", "prewarm:dd"]
    assert record.raw == ["prewarm/vol/dd.loop0.stderr", "prewarm/vol/dd.loop1.stderr"]


def test_fio_summary_disagreement_is_reported_and_the_record_kept(output: Path) -> None:
    text_path = output / "steps/s1/run/fio.txt"
    text = text_path.read_text()
    assert "bw=178MiB/s (186MB/s)" in text
    text_path.write_text(text.replace("bw=178MiB/s (186MB/s)", "bw=278MiB/s (286MB/s)"))
    collection = collect(output)
    assert by_step(collection, "randread")
    assert any(
        p.startswith("step s1 phase run: steps/s1/run/fio.txt: group 0 read: aggregate bandwidth")
        for p in collection.problems
    ), collection.problems


def test_missing_fio_txt_is_noted_but_records_kept(output: Path) -> None:
    (output / "steps/s1/run/fio.txt").unlink()
    collection = collect(output)
    (record,) = by_step(collection, "randread")
    assert record.raw == ["steps/s1/run/fio.json"]
    assert any("fio.txt is missing" in p for p in collection.problems)


def test_dd_uses_manifest_timing_and_phase_name_without_timing_json_or_plan(output: Path) -> None:
    (output / "steps/s3/write/timing.json").unlink()
    (output / "plan.json").unlink()
    manifest = json.loads((output / "manifest.json").read_text())
    dd_step = next(s for s in manifest["steps"] if s["id"] == "s3")
    dd_step["phases"][0]["timing"] = {"real_s": 0.5, "user_s": 0.0, "sys_s": 0.1}
    (output / "manifest.json").write_text(json.dumps(manifest))
    collection = collect(output)
    (record,) = by_step(collection, "dd-dsync")
    assert record.direction == "write" and record.real_s == 0.5 and record.runtime_s == 0.200351
    assert "steps/s3/write/timing.json" not in record.raw
    assert any("timing.json is missing: used the manifest's timing" in p for p in collection.problems)


def test_bad_dd_stderr_loses_only_its_phase(output: Path) -> None:
    (output / "steps/s3/write/dd.1.stderr").write_text(
        "dd: error writing '/mnt/x': No space left on device\n"
    )
    collection = collect(output)
    assert by_step(collection, "dd-dsync") == []
    assert by_step(collection, "randread") and by_step(collection, "smallfiles")
    assert any(
        p.startswith("step s3 phase write: ") and "dd.1.stderr: no dd summary" in p and "No space" in p
        for p in collection.problems
    ), collection.problems


def test_command_with_failed_thread_yields_no_record(output: Path) -> None:
    timing_path = output / "steps/s4/create/timing.json"
    timing = json.loads(timing_path.read_text())
    timing["threads"][1]["rc"] = 2
    timing_path.write_text(json.dumps(timing))
    collection = collect(output)
    assert by_step(collection, "smallfiles") == []
    assert any("thread 1 rc=2" in p for p in collection.problems)


def test_malformed_step_and_escaping_dir_are_problems(output: Path) -> None:
    manifest = json.loads((output / "manifest.json").read_text())
    manifest["steps"].append("not a step")
    manifest["steps"].append(
        step("s9", [{"name": "run", "engine": "fio", "dir": "../../etc", "status": "ok"}])
    )
    bad_identity = step("s10", [{"name": "run", "engine": "fio", "status": "ok"}])
    del bad_identity["workload"]
    manifest["steps"].append(bad_identity)
    (output / "manifest.json").write_text(json.dumps(manifest))
    collection = collect(output)
    assert len(by_step(collection, "randread")) == 1
    problems = "\n".join(collection.problems)
    assert "steps[8]: expected an object" in problems
    assert "step s9 phase run: phase dir '../../etc' is not inside the output directory" in problems
    assert "step s10 phase run: the manifest's step lacks workload" in problems


def test_missing_or_invalid_manifest_raises(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"manifest.json: missing"):
        collect(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ManifestError, match=r"manifest.json: not valid JSON"):
        collect(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"manifest_version": 2, "config_id": "c"}))
    with pytest.raises(ManifestError, match=r"manifest_version 2 is not 1"):
        collect(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"manifest_version": 1}))
    with pytest.raises(ManifestError, match=r"config_id"):
        collect(tmp_path)
    (tmp_path / "manifest.json").write_text(
        json.dumps({"manifest_version": 1, "config_id": "c", "steps": {}})
    )
    with pytest.raises(ManifestError, match=r"steps: expected a list"):
        collect(str(tmp_path))


def test_empty_run_is_an_empty_collection(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"manifest_version": 1, "config_id": "c"}))
    assert collect(tmp_path) == Collection(config_id="c")


def test_absolute_phase_dirs_are_made_relative_or_replaced_by_the_layout(output: Path) -> None:
    manifest = json.loads((output / "manifest.json").read_text())
    fio_step = next(s for s in manifest["steps"] if s["id"] == "s1")
    fio_step["phases"][0]["dir"] = str(output / "steps/s1/run")  # the agent's own absolute path
    dd_step = next(s for s in manifest["steps"] if s["id"] == "s3")
    dd_step["phases"][0]["dir"] = "/var/lib/storagebench/run-1/steps/s3/write"  # copied from elsewhere
    (output / "manifest.json").write_text(json.dumps(manifest))
    collection = collect(output)
    (fio,) = by_step(collection, "randread")
    assert fio.raw == ["steps/s1/run/fio.json", "steps/s1/run/fio.txt"]
    (dd,) = by_step(collection, "dd-dsync")
    assert dd.raw[0] == "steps/s3/write/dd.0.stderr"


def test_dd_read_direction_from_the_agents_commands_txt(output: Path) -> None:
    (output / "plan.json").unlink()
    (output / "steps/s3/write/commands.txt").write_text(
        "dd if=/mnt/t/work/f.0 of=/dev/null bs=1M count=100\n"
        "dd if=/mnt/t/work/f.1 of=/dev/null bs=1M count=100\n"
    )
    (record,) = by_step(collect(output), "dd-dsync")
    assert record.direction == "read"
    assert record.ios == 100 + 64  # records in


def test_command_bytes_from_the_planners_accounting(output: Path) -> None:
    timing_path = output / "steps/s4/create/timing.json"
    timing = json.loads(timing_path.read_text())
    for thread in timing["threads"]:
        del thread["bytes"], thread["files"]
    timing["accounting"] = {"bytes": 1000 * 512000, "files": 1000}
    timing_path.write_text(json.dumps(timing))
    (record,) = by_step(collect(output), "smallfiles")
    assert (record.bytes, record.files) == (1000 * 512000, 1000)
    assert record.bw_mibps == pytest.approx(1000 * 512000 / 4.0 / MIB)
    # Nothing known: no bytes, no bandwidth, but still the timed record.
    del timing["accounting"]
    timing_path.write_text(json.dumps(timing))
    (record,) = by_step(collect(output), "smallfiles")
    assert (record.bytes, record.files, record.bw_mibps, record.real_s) == (0, None, None, 4.0)


def test_fio_txt_with_the_preamble_as_the_agent_writes_it(output: Path) -> None:
    combined = (DATA / "fio/numjobs4.out").read_text()
    json_text, normal = split_fio_output(combined)
    preamble = combined[: combined.index(json_text.rstrip("\n"))]
    (output / "steps/s1/run/fio.txt").write_text(preamble + normal)
    collection = collect(output)
    assert by_step(collection, "randread")
    assert not [p for p in collection.problems if "s1" in p]


# ------------------------------------------------------------------------- the volume's side


def _view(
    device: str, ops: int, mean_us: float, hist: list[list[int]] | None, bound: float | None
) -> dict[str, Any]:
    return {
        "device": device,
        "volume_id": "vol-0" + device[-1] * 16 if hist is not None else None,
        "source": "nvme-log-page" if hist is not None else "kernel-counters",
        "directions": {
            "read": {"ops": ops, "bytes": ops * 4096, "mean_latency_us": mean_us, "histogram": hist},
            "write": {
                "ops": 0,
                "bytes": 0,
                "mean_latency_us": None,
                "histogram": hist and [[b[0], b[1], 0] for b in hist],
            },
        },
        "throttled_s": {
            "volume_iops": bound,
            "volume_throughput": 0.0 if bound is not None else None,
            "instance_iops": 0.0 if bound is not None else None,
            "instance_throughput": 0.0 if bound is not None else None,
        },
        "queue_length": 4,
    }


def _volume_run(tmp_path: Path, volume: Any) -> Collection:
    root = tmp_path / "out"
    root.mkdir(parents=True)
    phase = fio_phase(root, "s1", "run", "single_randread")
    phase["volume"] = volume
    manifest = {
        "manifest_version": 1,
        "agent_version": "0.1.0",
        "run_id": "run-1",
        "config_id": "cfg",
        "status": "ok",
        "targets": [{"id": "vol", "kind": "ebs", "mode": "raw", "labels": []}],
        "steps": [step("s1", [phase])],
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    return collect(root)


def test_each_record_gets_its_direction_as_the_striped_volumes_saw_it(tmp_path: Path) -> None:
    members = [
        _view("/dev/nvme1n1", 30_000, 2_000.0, [[1024, 2048, 10_000], [2048, 4096, 20_000]], 12.5),
        _view("/dev/nvme2n1", 10_000, 4_000.0, [[1024, 2048, 0], [2048, 4096, 10_000]], 30.0),
    ]
    collection = _volume_run(tmp_path, members)
    assert collection.problems == []
    (record,) = [r for r in collection.records if r.direction == "read"]
    volume = record.volume
    assert volume is not None and (volume.source, volume.devices, volume.ops) == ("nvme-log-page", 2, 40_000)
    assert volume.bytes == 40_000 * 4096
    assert volume.mean_latency_us == pytest.approx((30_000 * 2_000 + 10_000 * 4_000) / 40_000)  # 2,500
    assert [(b.lower_us, b.upper_us, b.count) for b in volume.histogram or []] == [
        (1024, 2048, 10_000),
        (2048, 4096, 30_000),
    ]
    assert volume.volume_iops_bound_s == 30.0  # the most any member spent bound
    assert volume.iops == pytest.approx(40_000 / record.runtime_s)


def test_emulated_volumes_give_counters_without_histogram_or_bound_time(tmp_path: Path) -> None:
    collection = _volume_run(tmp_path, [_view("/dev/loop3", 5_000, 300.0, None, None)])
    (record,) = [r for r in collection.records if r.direction == "read"]
    assert record.volume is not None and record.volume.source == "kernel-counters"
    assert record.volume.histogram is None and record.volume.volume_iops_bound_s is None


def test_a_bad_volume_view_is_a_named_problem_and_the_record_is_kept(tmp_path: Path) -> None:
    bad = _view("/dev/nvme1n1", 10, 1.0, [[0, 1, 10]], 0.0)
    bad["directions"]["read"]["ops"] = -5
    unread = {"device": "/dev/nvme2n1", "volume_id": "vol-0b", "error": "the NVMe ioctl was refused"}
    collection = _volume_run(tmp_path, [bad, unread])
    assert collection.problems == [
        "step s1 phase run: volume[0].directions.read.ops: Input should be greater than or equal to 0"
        " (got -5)",
        "step s1 phase run: volume[1] /dev/nvme2n1: not read: the NVMe ioctl was refused",
    ]
    (record,) = [r for r in collection.records if r.direction == "read"]
    assert record.volume is None and record.iops  # fio's figures are intact
    assert _volume_run(tmp_path / "x", "garbage").problems == [
        "step s1 phase run: volume: expected a list of device views, got str"
    ]
