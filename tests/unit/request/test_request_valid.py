"""Valid requests: the study 1 example, defaults, suites, sweeps, edge values and the JSON Schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from storagebench.cli.request_summary import summarize_request
from storagebench.request import (
    BenchmarkRequest,
    EbsTarget,
    FileGatewayTarget,
    RequestError,
    load_request,
    parse_request,
)
from storagebench.workloads import SUITES


def with_target(document: dict[str, Any], target: dict[str, Any], **config: Any) -> dict[str, Any]:
    """``document`` with its first config's only target replaced (and config fields overridden)."""
    document["configs"][0]["targets"] = [target]
    document["configs"][0].update(config)
    return document


# --------------------------------------------------------------------------- the study 1 example


def test_study1_example_validates(study1: dict[str, Any]) -> None:
    request = parse_request(study1)
    assert request.name == "gp2-vs-io1"
    assert request.region == "us-east-1"
    assert request.baseline == "io1"
    assert request.baseline_id == "io1"
    assert [c.id for c in request.configs] == ["io1", "gp2"]
    io1, gp2 = request.configs
    assert io1.root_volume.type == "io1"
    assert io1.root_volume.size_gib == 80
    assert io1.root_volume.iops == 4000
    assert gp2.root_volume.type == "gp2"
    assert gp2.root_volume.iops is None
    target = io1.targets[0]
    assert isinstance(target, EbsTarget)
    assert (target.type, target.size_gib, target.iops, target.filesystem) == ("io1", 512, 1500, "xfs")
    assert [w.profile for w in request.workloads] == ["dd-seq-write-1m-dsync", "fio-randrw-4k-25read"]
    assert request.workloads[1].scale == 0.01
    assert request.repetitions == 3
    assert request.prewarm.method == "dd"


def test_study1_resolved_workloads(study1: dict[str, Any]) -> None:
    request = parse_request(study1)
    resolved = request.resolved_workloads()
    assert [(w.id, w.profile, w.scale) for w in resolved] == [
        ("dd-seq-write-1m-dsync", "dd-seq-write-1m-dsync", 1.0),
        ("fio-randrw-4k-25read", "fio-randrw-4k-25read", 0.01),
    ]
    assert all(w.params == {} and w.targets is None and w.repetitions is None for w in resolved)
    assert [request.repetitions_of(w) for w in resolved] == [3, 3]


def test_study1_summary(study1: dict[str, Any]) -> None:
    summary = summarize_request(parse_request(study1))
    assert summary["name"] == "gp2-vs-io1"
    assert summary["baseline"] == "io1"
    # One variant per workload, three repetitions each, one target.
    assert [(c["id"], c["steps"]) for c in summary["configs"]] == [("io1", 6), ("gp2", 6)]
    assert summary["warnings"] == []
    envelope = summary["configs"][0]["targets"][0]["envelope"]
    assert "io1 512 GiB on c5.4xlarge" in envelope
    assert "1,500 IOPS" in envelope
    json.dumps(summary)  # the CLI prints it as JSON


def test_load_request_reads_a_file(tmp_path: Path, study1: dict[str, Any]) -> None:
    path = tmp_path / "study1.json"
    path.write_text(json.dumps(study1, indent=2), encoding="utf-8")
    assert load_request(path) == parse_request(study1)
    assert load_request(str(path)).name == "gp2-vs-io1"


def test_round_trip_through_json(study1: dict[str, Any]) -> None:
    """Step Functions passes the validated request on as JSON; it must validate again unchanged."""
    request = parse_request(study1)
    again = parse_request(json.loads(json.dumps(request.model_dump(mode="json"))))
    assert again == request


def test_round_trip_keeps_coerced_params(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {
            "profile": "std-randread-4k",
            "params": {"bs": ["4k", "8k"], "runtime": "5m", "iodepth": ["auto", 8]},
        }
    ]
    request = parse_request(minimal)
    assert parse_request(request.model_dump(mode="json")) == request


# --------------------------------------------------------------------------- defaults


def test_top_level_defaults(minimal: dict[str, Any]) -> None:
    request = parse_request(minimal)
    assert request.region == "us-east-1"
    assert request.baseline is None
    assert request.repetitions == 3
    assert request.order == "sequential"
    assert request.max_concurrency is None
    assert request.fail_fast is False
    assert request.tags == {}
    assert request.description is None


def test_baseline_defaults_to_first_config(minimal: dict[str, Any]) -> None:
    second = copy.deepcopy(minimal["configs"][0])
    second["id"] = "b"
    minimal["configs"].append(second)
    request = parse_request(minimal)
    assert request.baseline is None
    assert request.baseline_id == "a"
    minimal["baseline"] = "b"
    assert parse_request(minimal).baseline_id == "b"


def test_prewarm_defaults(minimal: dict[str, Any]) -> None:
    prewarm = parse_request(minimal).prewarm
    # block_size None: the agent reads 1M blocks with dd and 128k with fio (AWS's command)
    assert (prewarm.method, prewarm.block_size, prewarm.iodepth) == ("dd", None, 32)
    # restored volumes are read end to end; the others get a 4 GiB cold-read check in 32 extents
    assert (prewarm.volumes, prewarm.sample_gib, prewarm.sample_extents) == ("restored", 4.0, 32)
    assert prewarm.checks_cold_reads


def test_prewarm_volumes_and_sample(minimal: dict[str, Any]) -> None:
    minimal["prewarm"] = {"method": "fio", "volumes": "all", "sample_gib": 0.5, "sample_extents": 8}
    prewarm = parse_request(minimal).prewarm
    assert (prewarm.volumes, prewarm.sample_gib, prewarm.sample_extents) == ("all", 0.5, 8)
    minimal["prewarm"] = {"method": "dd", "sample_gib": 0}
    assert not parse_request(minimal).prewarm.checks_cold_reads
    minimal["prewarm"] = {"method": "none"}  # nothing read: neither initialisation nor check
    assert not parse_request(minimal).prewarm.checks_cold_reads


def test_timing_defaults(minimal: dict[str, Any]) -> None:
    timing = parse_request(minimal).timing
    assert timing.ready_poll_s == 15
    assert timing.command_poll_s == 300
    assert timing.command_timeout_h == 12
    assert timing.max_run_hours == 24


def test_timing_overrides_keep_other_defaults(minimal: dict[str, Any]) -> None:
    minimal["timing"] = {"ready_poll_s": 1, "command_poll_s": 600}
    timing = parse_request(minimal).timing
    assert (timing.ready_poll_s, timing.command_poll_s, timing.command_timeout_h) == (1, 600, 12)


def test_root_volume_defaults(minimal: dict[str, Any]) -> None:
    root = parse_request(minimal).configs[0].root_volume
    assert (root.type, root.size_gib, root.iops, root.throughput_mibps, root.encrypted) == (
        "gp3",
        8,
        None,
        None,
        True,
    )


def test_ebs_target_defaults(minimal: dict[str, Any]) -> None:
    target = parse_request(minimal).configs[0].targets[0]
    assert isinstance(target, EbsTarget)
    assert target.id == "ebs0"
    assert target.count == 1
    assert target.layout == "raid0"
    assert target.filesystem == "xfs"
    assert target.encrypted is True
    assert target.iops is None
    assert target.throughput_mibps is None
    assert target.snapshot_id is None
    assert target.allow_destroy is False


def test_target_ids_default_to_kind_and_position(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 100},
        {"kind": "efs"},
        {"kind": "fsx_lustre", "storage_capacity_gib": 1200},
        {"kind": "nfs", "server": "10.0.0.5", "export": "/bucket"},
        {"kind": "local", "path": "/tmp"},
        {"kind": "ebs", "type": "gp2", "size_gib": 50},
    ]
    request = parse_request(minimal)
    assert [t.id for t in request.configs[0].targets] == [
        "ebs0",
        "efs1",
        "fsx-lustre2",
        "nfs3",
        "local4",
        "ebs5",
    ]


def test_instance_store_target_id(minimal: dict[str, Any]) -> None:
    with_target(minimal, {"kind": "instance_store"}, instance_type="i3en.large")
    target = parse_request(minimal).configs[0].targets[0]
    assert target.id == "instance-store0"


def test_explicit_target_ids_are_kept(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "id": "data"},
        {"kind": "efs", "id": "shared"},
    ]
    assert [t.id for t in parse_request(minimal).configs[0].targets] == ["data", "shared"]


def test_efs_and_fsx_defaults(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {"kind": "efs"},
        {"kind": "fsx_lustre", "storage_capacity_gib": 1200},
        {"kind": "nfs", "server": "gw.example.com", "export": "/bucket"},
    ]
    efs, fsx, nfs = parse_request(minimal).configs[0].targets
    assert efs.kind == "efs"
    assert (efs.throughput_mode, efs.performance_mode, efs.one_zone) == ("elastic", "generalPurpose", False)
    assert "nfsvers=4.1" in efs.mount_options
    assert fsx.kind == "fsx_lustre"
    assert (fsx.deployment_type, fsx.per_unit_storage_throughput, fsx.stripe_count) == ("SCRATCH_2", None, -1)
    assert nfs.kind == "nfs"
    assert nfs.mount_options == "nolock,hard"


def test_file_gateway_study_event_validates() -> None:
    events = Path(__file__).resolve().parents[3] / "events"
    request = load_request(events / "file-gateway-io1-vs-gp2.json")
    assert [c.instance_type for c in request.configs] == ["c5.large", "c5.large"]  # the NFS clients
    alpha, beta = (c.targets[0] for c in request.configs)
    assert isinstance(alpha, FileGatewayTarget) and isinstance(beta, FileGatewayTarget)
    assert (alpha.gateway_instance_type, alpha.root_volume.type, alpha.root_volume.iops) == (
        "c5.4xlarge",
        "io1",
        4000,
    )
    assert [(c.type, c.size_gib, c.iops) for c in alpha.cache_volumes] == [("io1", 512, 1500)]
    assert [(c.type, c.size_gib, c.iops) for c in beta.cache_volumes] == [("gp2", 512, None)]
    assert alpha.mount_options_for_client() == "nolock,hard"
    assert request.repetitions == 12


def test_file_gateway_defaults_and_nfs_version(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {
            "kind": "file_gateway",
            "gateway_instance_type": "m5.xlarge",
            "root_volume": {"type": "gp3", "size_gib": 80},
            "cache_volumes": [{"type": "gp3", "size_gib": 150}, {"type": "gp3", "size_gib": 150}],
            "nfs_version": "4.1",
        }
    ]
    gateway = parse_request(minimal).configs[0].targets[0]
    assert isinstance(gateway, FileGatewayTarget)
    assert gateway.id == "file-gateway0"
    assert (gateway.mount_options, gateway.bucket, gateway.prefix) == ("nolock,hard", None, None)
    assert gateway.mount_options_for_client() == "nolock,hard,nfsvers=4.1"
    assert gateway.root_volume.encrypted and all(c.encrypted for c in gateway.cache_volumes)


def test_whitespace_is_stripped(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["instance_type"] = "  c5.large "
    minimal["region"] = " eu-west-1 "
    request = parse_request(minimal)
    assert request.configs[0].instance_type == "c5.large"
    assert request.region == "eu-west-1"


@pytest.mark.parametrize(
    "region", ["us-east-1", "eu-central-1", "ap-southeast-2", "us-gov-west-1", "il-central-1"]
)
def test_regions(minimal: dict[str, Any], region: str) -> None:
    minimal["region"] = region
    assert parse_request(minimal).region == region


def test_config_lookup(study1: dict[str, Any]) -> None:
    request = parse_request(study1)
    assert request.config("gp2").id == "gp2"
    with pytest.raises(KeyError, match="no config 'zz'; configs are io1, gp2"):
        request.config("zz")


@pytest.mark.parametrize(
    ("given", "closest"),
    [
        ("c5.4xlarg", "c5.4xlarge, c5.xlarge, c5.9xlarge"),  # its own family first
        ("m7g.2xlarge", "m7g.xlarge, m7g.4xlarge, m7g.large"),
        ("m6id.large", "m6i.large, m6i.xlarge, m6i.2xlarge"),  # a family the catalog lacks: the nearest
    ],
)
def test_unknown_instance_type_is_an_error_naming_the_closest_known_types(
    minimal: dict[str, Any], given: str, closest: str
) -> None:
    minimal["configs"][0]["instance_type"] = given
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    (error,) = caught.value.errors
    assert (error.path, error.value) == ("configs[0].instance_type", given)
    assert f"did you mean {closest}?" in error.message and "not in the catalog" in error.message


def test_an_instance_type_close_to_nothing_lists_the_known_families(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["instance_type"] = "zz9.q"
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    (error,) = caught.value.errors
    assert "the catalog knows the families c5, c7g, i3en, m5" in error.message


def test_an_unknown_gateway_appliance_type_is_an_error_too(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {
            "kind": "file_gateway",
            "gateway_instance_type": "m5.4xlarg",
            "root_volume": {"type": "gp3", "size_gib": 80},
            "cache_volumes": [{"type": "gp3", "size_gib": 150}],
        }
    ]
    with pytest.raises(RequestError) as caught:
        parse_request(minimal)
    (error,) = caught.value.errors
    assert error.path == "configs[0].targets[0].gateway_instance_type"
    assert "did you mean m5.xlarge" in error.message


# --------------------------------------------------------------------------- suites


def test_standard_suite_expands_to_six_profiles(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"suite": "standard", "scale": 0.5, "repetitions": 2}]
    request = parse_request(minimal)
    resolved = request.resolved_workloads()
    assert len(resolved) == 6
    assert [w.profile for w in resolved] == [
        "std-randread-4k",
        "std-randwrite-4k",
        "std-seqread-1m",
        "std-seqwrite-1m",
        "std-latency-4k-qd1",
        "std-mixed-16k-70read",
    ]
    assert [w.id for w in resolved] == [w.profile for w in resolved]
    assert {w.scale for w in resolved} == {0.5}
    assert {w.repetitions for w in resolved} == {2}
    assert all(w.params == {} for w in resolved)


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_suite_expands_on_a_filesystem(minimal: dict[str, Any], suite: str) -> None:
    minimal["workloads"] = [{"suite": suite, "scale": 0.01}]
    resolved = parse_request(minimal).resolved_workloads()
    assert [w.profile for w in resolved] == list(SUITES[suite])


def test_suite_and_profiles_mix(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {"suite": "genomics"},
        {"profile": "std-randread-4k", "id": "extra-randread"},
    ]
    resolved = parse_request(minimal).resolved_workloads()
    assert [w.id for w in resolved] == ["genomics-large-file", "genomics-small-files", "extra-randread"]


def test_suite_with_target_filter(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"].append({"kind": "local", "path": "/tmp", "id": "scratch"})
    minimal["workloads"] = [{"suite": "report-card", "targets": ["scratch"]}]
    resolved = parse_request(minimal).resolved_workloads()
    assert {tuple(w.targets or ()) for w in resolved} == {("scratch",)}


# --------------------------------------------------------------------------- params and sweeps


def test_params_are_coerced(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {"profile": "std-randread-4k", "params": {"bs": "8k", "runtime": "2m", "size": "4G", "numjobs": 8.0}}
    ]
    params = parse_request(minimal).workloads[0].params
    assert params == {"bs": 8192, "runtime": 120.0, "size": 4 << 30, "numjobs": 8}
    assert isinstance(params["numjobs"], int)


def test_sweeps_in_params(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {
            "profile": "std-randread-4k",
            "params": {"bs": ["4k", "16k"], "numjobs": [1, 4, 16], "iodepth": "auto"},
        }
    ]
    params = parse_request(minimal).workloads[0].params
    assert params == {"bs": [4096, 16384], "numjobs": [1, 4, 16], "iodepth": "auto"}


def test_sweep_with_auto_member(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "std-randread-4k", "params": {"iodepth": ["auto", 1, 32]}}]
    assert parse_request(minimal).workloads[0].params == {"iodepth": ["auto", 1, 32]}


def test_sweep_of_32_values_is_allowed(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "sweep-qd-randread-4k", "params": {"iodepth": list(range(1, 33))}}]
    assert len(parse_request(minimal).workloads[0].params["iodepth"]) == 32


def test_fio_custom_with_a_job_file(minimal: dict[str, Any]) -> None:
    job = "[global]\nioengine=libaio\ndirect=1\n\n[randread]\nrw=randread\nbs=4k\nsize=64m\n"
    minimal["workloads"] = [{"profile": "fio-custom", "params": {"job_file": job, "timeseries": False}}]
    assert parse_request(minimal).workloads[0].params == {"job_file": job, "timeseries": False}


def test_command_profile(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {
            "profile": "command",
            "params": {"command": "cellranger count --localcores=8", "threads": 2, "bytes": 0},
        }
    ]
    assert parse_request(minimal).workloads[0].params["threads"] == 2


def test_same_profile_twice_with_ids(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [
        {"profile": "dd-seq-write-1m-dsync", "id": "dd-1mb", "params": {"count": 1}},
        {"profile": "dd-seq-write-1m-dsync"},
    ]
    assert [w.id for w in parse_request(minimal).resolved_workloads()] == ["dd-1mb", "dd-seq-write-1m-dsync"]


def test_raw_target_with_filesystem_profile_restricted_by_targets(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "filesystem": "raw", "id": "dev"},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "id": "fs"},
    ]
    minimal["workloads"] = [
        {"profile": "dd-seq-write-1m-dsync", "targets": ["fs"]},
        {"profile": "std-randread-4k"},
    ]
    parse_request(minimal)


# --------------------------------------------------------------------------- edge values AWS allows


@pytest.mark.parametrize(
    "target",
    [
        {"kind": "ebs", "type": "gp3", "size_gib": 8, "iops": 4000},  # 500 per GiB
        {"kind": "ebs", "type": "gp3", "size_gib": 1, "iops": 3000},  # included with any size
        {"kind": "ebs", "type": "gp3", "size_gib": 1},
        {"kind": "ebs", "type": "gp3", "size_gib": 160, "iops": 80000},
        {"kind": "ebs", "type": "gp3", "size_gib": 65536},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "iops": 3000, "throughput_mibps": 750},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "throughput_mibps": 750},  # default 3,000 IOPS
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "throughput_mibps": 125},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "iops": 8000, "throughput_mibps": 2000},
        {"kind": "ebs", "type": "io1", "size_gib": 512, "iops": 25600},  # 50 per GiB
        {"kind": "ebs", "type": "io1", "size_gib": 4, "iops": 100},
        {"kind": "ebs", "type": "io1", "size_gib": 16384, "iops": 64000},
        {"kind": "ebs", "type": "io2", "size_gib": 100, "iops": 100000},  # 1,000 per GiB
        {"kind": "ebs", "type": "io2", "size_gib": 256, "iops": 256000},
        {"kind": "ebs", "type": "io2", "size_gib": 65536, "iops": 100},
        {"kind": "ebs", "type": "gp2", "size_gib": 1},
        {"kind": "ebs", "type": "gp2", "size_gib": 16384},
        {"kind": "ebs", "type": "st1", "size_gib": 125},
        {"kind": "ebs", "type": "sc1", "size_gib": 16384},
        {"kind": "ebs", "type": "standard", "size_gib": 1024},
        {"kind": "ebs", "type": "standard", "size_gib": 1},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "count": 16},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "count": 4, "raid_chunk_kib": 256},
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "count": 3, "layout": "jbod", "filesystem": "raw"},
        {
            "kind": "ebs",
            "type": "gp3",
            "size_gib": 100,
            "snapshot_id": "snap-0123456789abcdef0",
            "initialization_rate_mibps": 100,
        },
        {
            "kind": "ebs",
            "type": "gp3",
            "size_gib": 100,
            "snapshot_id": "snap-01234567",
            "initialization_rate_mibps": 300,
            "allow_destroy": True,
        },
        {"kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 1},
        {"kind": "efs", "throughput_mode": "provisioned", "provisioned_throughput_mibps": 3414},
        {"kind": "efs", "throughput_mode": "bursting", "performance_mode": "maxIO"},
        {"kind": "efs", "one_zone": True, "storage_gib_hint": 1024},
        {"kind": "fsx_lustre", "deployment_type": "SCRATCH_1", "storage_capacity_gib": 3600},
        {"kind": "fsx_lustre", "deployment_type": "SCRATCH_1", "storage_capacity_gib": 2400},
        {"kind": "fsx_lustre", "deployment_type": "SCRATCH_2", "storage_capacity_gib": 2400},
        {
            "kind": "fsx_lustre",
            "deployment_type": "PERSISTENT_1",
            "storage_capacity_gib": 1200,
            "per_unit_storage_throughput": 200,
        },
        {
            "kind": "fsx_lustre",
            "deployment_type": "PERSISTENT_2",
            "storage_capacity_gib": 4800,
            "per_unit_storage_throughput": 1000,
            "data_compression": "LZ4",
        },
        {"kind": "nfs", "server": "10.0.0.5", "export": "/bucket", "nfs_version": "4.1"},
        {"kind": "local", "path": "/var/tmp/bench"},
    ],
    ids=lambda t: "-".join(str(v) for k, v in t.items() if k not in ("kind",))[:60],
)
def test_edge_targets_validate(minimal: dict[str, Any], target: dict[str, Any]) -> None:
    with_target(minimal, target)
    parse_request(minimal)


@pytest.mark.parametrize(
    "root",
    [
        {"type": "io1", "size_gib": 80, "iops": 4000},
        {"type": "gp2", "size_gib": 80},
        {"type": "gp3", "size_gib": 30, "iops": 6000, "throughput_mibps": 500},
        {"type": "io2", "size_gib": 8, "iops": 8000},
    ],
)
def test_root_volumes_validate(minimal: dict[str, Any], root: dict[str, Any]) -> None:
    minimal["configs"][0]["root_volume"] = root
    assert parse_request(minimal).configs[0].root_volume.type == root["type"]


def test_instance_store_with_count_within_devices(minimal: dict[str, Any]) -> None:
    with_target(minimal, {"kind": "instance_store", "count": 2}, instance_type="i3en.24xlarge")
    parse_request(minimal)


def test_twenty_one_data_volumes(minimal: dict[str, Any]) -> None:
    """The most an instance gets: one per device name /dev/sdf to /dev/sdz."""
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 10, "count": 16},
        {"kind": "ebs", "type": "gp3", "size_gib": 10, "count": 5},
    ]
    parse_request(minimal)


# --------------------------------------------------------------------------- the JSON Schema


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return BenchmarkRequest.model_json_schema()


def test_schema_is_valid_json_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    json.dumps(schema)


def test_schema_defines_every_target_kind(schema: dict[str, Any]) -> None:
    for name in (
        "EbsTarget",
        "EfsTarget",
        "FsxLustreTarget",
        "NfsTarget",
        "FileGatewayTarget",
        "LocalTarget",
        "InstanceStoreTarget",
    ):
        assert name in schema["$defs"], name
    assert set(schema["required"]) == {"name", "configs", "workloads"}


def test_valid_request_validates_against_schema(schema: dict[str, Any], study1: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(study1)) == []


def test_validated_dump_validates_against_schema(schema: dict[str, Any], study1: dict[str, Any]) -> None:
    dumped = parse_request(study1).model_dump(mode="json")
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(dumped)) == []


def test_wrong_kind_fails_the_schema(schema: dict[str, Any], study1: dict[str, Any]) -> None:
    study1["configs"][0]["targets"][0]["kind"] = "s3"
    assert not jsonschema.Draft202012Validator(schema).is_valid(study1)
    with pytest.raises(RequestError):
        parse_request(study1)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.pop("name"),
        lambda d: d.__setitem__("name", "Has Caps"),
        lambda d: d.__setitem__("region", "mars-1"),
        lambda d: d.__setitem__("repetitions", 0),
        lambda d: d.__setitem__("unknown", 1),
        lambda d: d["configs"][0]["targets"][0].__setitem__("type", "gp4"),
        lambda d: d["configs"][0]["targets"][0].__setitem__("count", 17),
    ],
)
def test_structural_errors_fail_the_schema_too(
    schema: dict[str, Any], study1: dict[str, Any], edit: Any
) -> None:
    edit(study1)
    assert not jsonschema.Draft202012Validator(schema).is_valid(study1)
    with pytest.raises(RequestError):
        parse_request(study1)
