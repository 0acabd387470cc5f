"""Planning: steps in run order, agent plans, local target bindings and target contexts."""

from __future__ import annotations

import re
from typing import Any

import pytest

from storagebench.catalog.envelope import emulation_limits, volume_envelope
from storagebench.planning import (
    LocalOptions,
    LocalTargetError,
    build_plan,
    local_targets,
    plan_steps,
    target_context,
)
from storagebench.protocol.plan import PLAN_VERSION, PlanError, TargetSpec, check_plan
from storagebench.request import BenchmarkRequest, parse_request
from storagebench.workloads import PROFILES

GIB = 1 << 30
# The agent's id rule (storagebench.protocol.plan): what check_plan accepts for step ids.
AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@=,+-]{0,127}$")
NO_STRIPE = LocalOptions(can_stripe=False)
STRIPE = LocalOptions(can_stripe=True)

REQUIRED_PARAMS: dict[str, dict[str, Any]] = {
    "fio-custom": {"job_file": "[read]\nrw=read\nsize=16m\n"},
    "command": {"command": "true"},
}


def request(
    targets: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    instance_type: str = "c5.4xlarge",
    **top: Any,
) -> BenchmarkRequest:
    return parse_request(
        {
            "name": "plan-test",
            "configs": [{"id": "cfg", "instance_type": instance_type, "targets": targets}],
            "workloads": workloads,
            **top,
        }
    )


GP3 = {"kind": "ebs", "type": "gp3", "size_gib": 100}
LOCAL = {"kind": "local", "path": "/tmp"}


def step_keys(req: BenchmarkRequest) -> list[tuple[str, str, str, int]]:
    return [
        (s["workload"], s["target"], ",".join(f"{k}={v}" for k, v in s["variant"].items()), s["repetition"])
        for s in plan_steps(req, req.configs[0])
    ]


# --------------------------------------------------------------------------- step order


# two targets (a, b) and two workloads, each run twice
TWO_BY_TWO = (
    [dict(GP3, id="a"), dict(LOCAL, id="b")],
    [{"profile": "std-randread-4k"}, {"profile": "std-seqread-1m"}],
)
WORKLOADS = ("std-randread-4k", "std-seqread-1m")


def test_sequential_runs_every_repetition_before_the_next_workload() -> None:
    req = request(*TWO_BY_TWO, repetitions=2)
    # workload, then target, then repetition
    assert step_keys(req) == [(w, t, "", r) for w in WORKLOADS for t in ("a", "b") for r in (1, 2)]


def test_interleaved_runs_repetition_one_of_everything_first() -> None:
    req = request(*TWO_BY_TWO, repetitions=2, order="interleaved")
    # repetition, then workload, then target
    assert step_keys(req) == [(w, t, "", r) for r in (1, 2) for w in WORKLOADS for t in ("a", "b")]


def test_sweep_variants_are_ordered_within_a_workload() -> None:
    oltp = "reportcard-oltp-8k-randread"  # a sweep of numjobs 16 and 32
    req = request([GP3], [{"profile": oltp}], repetitions=2)
    assert step_keys(req) == [(oltp, "ebs0", f"numjobs={n}", r) for n in (16, 32) for r in (1, 2)]
    interleaved = request([GP3], [{"profile": oltp}], repetitions=2, order="interleaved")
    assert [k[2:] for k in step_keys(interleaved)] == [(f"numjobs={n}", r) for r in (1, 2) for n in (16, 32)]


def test_per_workload_repetitions_override() -> None:
    req = request(
        [GP3],
        [{"profile": "std-randread-4k", "repetitions": 1}, {"profile": "std-seqread-1m"}],
        repetitions=3,
    )
    assert step_keys(req) == [
        ("std-randread-4k", "ebs0", "", 1),
        ("std-seqread-1m", "ebs0", "", 1),
        ("std-seqread-1m", "ebs0", "", 2),
        ("std-seqread-1m", "ebs0", "", 3),
    ]
    interleaved = request(
        [GP3],
        [{"profile": "std-randread-4k", "repetitions": 3}, {"profile": "std-seqread-1m"}],
        repetitions=1,
        order="interleaved",
    )
    assert step_keys(interleaved) == [
        ("std-randread-4k", "ebs0", "", 1),
        ("std-seqread-1m", "ebs0", "", 1),
        ("std-randread-4k", "ebs0", "", 2),
        ("std-randread-4k", "ebs0", "", 3),
    ]


def test_workload_targets_filter() -> None:
    req = request(
        [dict(GP3, id="data"), dict(LOCAL, id="scratch"), dict(GP3, id="logs")],
        [
            {"profile": "std-randread-4k", "targets": ["logs", "data"]},
            {"profile": "dd-seq-write-1m-dsync", "targets": ["scratch"]},
            {"profile": "std-seqread-1m"},
        ],
        repetitions=1,
    )
    assert [(k[0], k[1]) for k in step_keys(req)] == [
        ("std-randread-4k", "data"),  # config order, not the filter's order
        ("std-randread-4k", "logs"),
        ("dd-seq-write-1m-dsync", "scratch"),
        ("std-seqread-1m", "data"),
        ("std-seqread-1m", "scratch"),
        ("std-seqread-1m", "logs"),
    ]


def test_step_fields() -> None:
    req = request([GP3], [{"suite": "genomics", "scale": 0.01}], repetitions=1)
    steps = plan_steps(req, req.configs[0])
    assert len(steps) == 6  # two profiles x threads 1, 4, 8
    first = steps[0]
    assert first["id"] == "genomics-large-file.ebs0.threads=1.r1"
    assert first["workload"] == "genomics-large-file"
    assert first["profile"] == "genomics-large-file"
    assert first["variant"] == {"threads": 1}
    assert first["repetition"] == 1
    assert first["target"] == "ebs0"
    assert first["cleanup"] is True
    assert first["intent"] == "throughput"
    assert [p["name"] for p in first["phases"]] == ["create", "read"]
    assert steps[3]["intent"] == "metadata"


def test_step_ids_are_unique_and_follow_the_agent_rule() -> None:
    req = request(
        [dict(GP3, id="data"), dict(LOCAL, id="scratch")],
        [
            {"suite": "standard", "scale": 0.01},
            {"profile": "vsan-randread-small-blocks", "scale": 0.01},
            {
                "profile": "std-randread-4k",
                "id": "bs-sweep",
                "params": {"bs": ["512", "4k", "1m"], "numjobs": [1, 2]},
            },
            {"profile": "fio-custom", "params": REQUIRED_PARAMS["fio-custom"]},
        ],
        repetitions=3,
    )
    ids = [s["id"] for s in plan_steps(req, req.configs[0])]
    assert len(ids) == len(set(ids))
    for step_id in ids:
        assert AGENT_ID.match(step_id), step_id
    assert "bs-sweep.data.bs=512,numjobs=2.r3" in ids
    assert "vsan-randread-small-blocks.scratch.bs=2k.r1" in ids


def test_step_ids_with_auto_in_a_sweep() -> None:
    req = request([GP3], [{"profile": "std-randread-4k", "params": {"iodepth": ["auto", 8]}}], repetitions=1)
    steps = plan_steps(req, req.configs[0])
    # The workload is named by its override (std-randread-4k[iodepth=auto|8]); the step id spells
    # the characters the agent's ids do not allow as "_".
    assert [s["workload"] for s in steps] == ["std-randread-4k[iodepth=auto|8]"] * 2
    assert [s["id"] for s in steps] == [
        # what auto resolved to, and that it was auto
        "std-randread-4k_iodepth=auto_8_.ebs0.iodepth=auto-2.r1",
        "std-randread-4k_iodepth=auto_8_.ebs0.iodepth=8.r1",
    ]
    # the resolved depth reaches fio: gp3 3,000 IOPS, 4 jobs -> 2 per job
    assert steps[0]["phases"][0]["fio"]["jobs"][0]["options"]["iodepth"] == 2


def test_long_ids_stay_unique() -> None:
    req = request(
        [dict(LOCAL, id="t" + "a" * 30)],
        [
            {
                "profile": "std-randread-4k",
                "id": "w" * 63,
                "params": {"bs": ["512", "1k"], "numjobs": [128, 256], "iodepth": [1024]},
            }
        ],
        repetitions=2,
    )
    ids = [s["id"] for s in plan_steps(req, req.configs[0])]
    assert len(ids) == len(set(ids)) == 8
    build_plan(req, "cfg", "run-1", local_targets(req.configs[0], NO_STRIPE))


# --------------------------------------------------------------------------- build_plan


def test_build_plan_prewarms_only_ebs_targets() -> None:
    req = request(
        [dict(GP3, id="data"), dict(LOCAL, id="scratch"), dict(GP3, id="logs", filesystem="raw")],
        [{"profile": "std-randread-4k", "scale": 0.01}],
        prewarm={"method": "fio", "volumes": "all", "block_size": "128k", "iodepth": 16},
    )
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0], NO_STRIPE))
    assert plan["prewarm"] == {
        "method": "fio",
        "targets": ["data", "logs"],
        "block_size": "128k",
        "iodepth": 16,
    }
    assert plan["plan_version"] == PLAN_VERSION
    assert (plan["run_id"], plan["config_id"]) == ("run-1", "cfg")
    assert [t["id"] for t in plan["targets"]] == ["data", "scratch", "logs"]
    assert len(plan["steps"]) == 9
    check_plan(plan)


SNAPSHOT = "snap-0123456789abcdef0"


def test_build_plan_reads_restored_volumes_and_checks_the_cold_read_of_the_others() -> None:
    req = request(
        [
            dict(GP3, id="new"),
            dict(LOCAL, id="scratch"),
            dict(GP3, id="restored", snapshot_id=SNAPSHOT),
            dict(GP3, id="initialised", snapshot_id=SNAPSHOT, initialization_rate_mibps=200),
        ],
        [{"profile": "std-randread-4k", "scale": 0.01}],
        prewarm={"method": "dd", "sample_gib": 2, "sample_extents": 16},
    )
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0], NO_STRIPE))
    assert plan["prewarm"] == {
        "method": "dd",
        "targets": ["new", "restored", "initialised"],
        "iodepth": 32,
        "sampled": ["new", "initialised"],
        "sample_bytes": 2 * GIB,
        "sample_extents": 16,
    }
    check_plan(plan)


@pytest.mark.parametrize(
    ("prewarm", "targets", "sampled"),
    [
        ({"method": "dd", "volumes": "none"}, ["new", "restored"], ["new", "restored"]),
        ({"method": "dd", "volumes": "all"}, ["new", "restored"], None),
        ({"method": "dd", "sample_gib": 0}, ["restored"], None),
        ({"method": "fio", "volumes": "restored"}, ["new", "restored"], ["new"]),
        ({"method": "none"}, [], None),
    ],
    ids=["none-samples-all", "all-reads-all", "no-check", "fio-restored", "method-none"],
)
def test_build_plan_follows_prewarm_volumes(
    prewarm: dict[str, Any], targets: list[str], sampled: list[str] | None
) -> None:
    req = request(
        [dict(GP3, id="new"), dict(GP3, id="restored", snapshot_id=SNAPSHOT)],
        [{"profile": "std-randread-4k", "scale": 0.01}],
        prewarm=prewarm,
    )
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0], NO_STRIPE))
    assert plan["prewarm"]["targets"] == targets
    assert plan["prewarm"].get("sampled") == sampled
    assert plan["prewarm"]["method"] == (prewarm["method"] if targets else "none")


def test_build_plan_without_ebs_targets_prewarms_nothing() -> None:
    req = request([LOCAL], [{"profile": "dd-seq-write-1m-dsync"}], prewarm={"method": "dd"})
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0]))
    assert plan["prewarm"]["method"] == "none"
    assert plan["prewarm"]["targets"] == []


def test_build_plan_copies_hooks_and_fail_fast() -> None:
    req = parse_request(
        {
            "name": "hooks",
            "fail_fast": True,
            "configs": [
                {
                    "id": "cfg",
                    "instance_type": "c5.large",
                    "setup": "echo setup",
                    "teardown": "echo teardown",
                    "targets": [LOCAL],
                }
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0]))
    assert (plan["setup"], plan["teardown"], plan["fail_fast"]) == ("echo setup", "echo teardown", True)


def test_build_plan_with_an_unbound_target_raises() -> None:
    req = request([dict(GP3, id="data"), dict(LOCAL, id="scratch")], [{"profile": "std-randread-4k"}])
    only_scratch: list[TargetSpec] = [{"id": "scratch", "kind": "directory", "path": "/tmp"}]
    with pytest.raises(ValueError, match="config cfg: targets data are not bound to a device"):
        build_plan(req, "cfg", "run-1", only_scratch)


def test_build_plan_unknown_config() -> None:
    req = request([LOCAL], [{"profile": "std-randread-4k"}])
    with pytest.raises(KeyError, match="no config 'nope'"):
        build_plan(req, "nope", "run-1", [])


def test_build_plan_bad_run_id_is_refused_by_check_plan() -> None:
    req = request([LOCAL], [{"profile": "std-randread-4k"}])
    with pytest.raises(PlanError, match="run_id"):
        build_plan(req, "cfg", "run id with spaces", local_targets(req.configs[0]))


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_plans_on_a_directory(name: str) -> None:
    req = request(
        [LOCAL],
        [{"profile": name, "scale": 0.01, "params": REQUIRED_PARAMS.get(name, {})}],
        instance_type="c5.large",
    )
    plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0], NO_STRIPE))
    assert plan["steps"]
    assert {s["target"] for s in plan["steps"]} == {"local0"}


@pytest.mark.parametrize("name", sorted(n for n, p in PROFILES.items() if p.needs != "filesystem"))
def test_every_raw_capable_profile_plans_on_an_emulated_raw_stripe(name: str) -> None:
    req = request(
        [{"kind": "ebs", "type": "gp2", "size_gib": 100, "count": 2, "filesystem": "raw"}],
        [{"profile": name, "scale": 0.01, "params": REQUIRED_PARAMS.get(name, {})}],
    )
    for options in (NO_STRIPE, STRIPE):
        plan = build_plan(req, "cfg", "run-1", local_targets(req.configs[0], options))
        assert plan["prewarm"]["targets"] == ["ebs0"]


# --------------------------------------------------------------------------- local targets


def test_gp2_is_emulated_with_the_catalog_limits() -> None:
    req = request([{"kind": "ebs", "type": "gp2", "size_gib": 100}], [{"profile": "std-randread-4k"}])
    (spec,) = local_targets(req.configs[0], LocalOptions(knee_seconds=60, can_stripe=False))
    assert spec["id"] == "ebs0"
    assert spec["kind"] == "ebs"
    assert (spec["filesystem"], spec["count"], spec["layout"]) == ("xfs", 1, "raid0")
    assert "volume_ids" not in spec
    (emulation,) = spec["emulate"]
    assert emulation["volume_type"] == "gp2"
    assert emulation["size_gib"] == 100
    assert emulation["capacity_bytes"] == GIB
    limits = emulation["limits"]
    assert limits == emulation_limits(volume_envelope("gp2", 100), knee_seconds=60)
    assert (limits["iops"], limits["burst_iops"]) == (300, 3000)
    assert (limits["mibps"], limits["burst_mibps"]) == (75, 128)
    assert limits["credit_unit"] == "io"
    assert limits["credit_refill_per_s"] == 300
    # A full bucket drained at burst demand (3,000 spent, 300 refilled per second) lasts knee_seconds.
    assert limits["credit_capacity"] / (
        limits["burst_iops"] - limits["credit_refill_per_s"]
    ) == pytest.approx(60)


@pytest.mark.parametrize("knee", [5.0, 30.0, 120.0])
def test_knee_seconds_sets_the_bucket(knee: float) -> None:
    req = request([{"kind": "ebs", "type": "gp2", "size_gib": 100}], [{"profile": "std-randread-4k"}])
    (spec,) = local_targets(req.configs[0], LocalOptions(knee_seconds=knee, can_stripe=False))
    limits = spec["emulate"][0]["limits"]
    assert limits["credit_capacity"] == pytest.approx(knee * 2700)


def test_st1_is_emulated_with_a_throughput_bucket() -> None:
    req = request([{"kind": "ebs", "type": "st1", "size_gib": 500}], [{"profile": "std-seqread-1m"}])
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    limits = spec["emulate"][0]["limits"]
    assert limits == emulation_limits(volume_envelope("st1", 500), knee_seconds=60)
    assert limits["credit_unit"] == "mib"


def test_gp3_is_emulated_without_a_bucket() -> None:
    req = request(
        [{"kind": "ebs", "type": "gp3", "size_gib": 100, "iops": 6000, "throughput_mibps": 500}],
        [{"profile": "std-randread-4k"}],
    )
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    limits = spec["emulate"][0]["limits"]
    assert (limits["iops"], limits["mibps"]) == (6000, 500)
    assert "credit_capacity" not in limits


@pytest.mark.parametrize(
    ("size_gib", "capacity_option", "expected"),
    # an xfs target gets at least 320 MiB: mkfs.xfs refuses smaller devices
    [(100, GIB, GIB), (1, 4 * GIB, GIB), (2, 4 * GIB, 2 * GIB), (100, 256 << 20, 320 << 20)],
)
def test_capacity_is_the_smaller_of_option_and_size(
    size_gib: int, capacity_option: int, expected: int
) -> None:
    req = request([{"kind": "ebs", "type": "gp3", "size_gib": size_gib}], [{"profile": "std-randread-4k"}])
    (spec,) = local_targets(req.configs[0], LocalOptions(capacity_bytes=capacity_option, can_stripe=False))
    assert spec["emulate"][0]["capacity_bytes"] == expected


def test_raid0_without_md_is_one_device_with_summed_limits() -> None:
    req = request(
        [{"kind": "ebs", "type": "gp2", "size_gib": 100, "count": 3}], [{"profile": "std-randread-4k"}]
    )
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    assert spec["count"] == 1
    assert spec["layout"] == "raid0"
    (emulation,) = spec["emulate"]
    assert "raid0" in emulation["volume_type"]
    assert "gp2" in emulation["volume_type"]
    assert "x3" in emulation["volume_type"]
    assert emulation["size_gib"] == 300
    assert emulation["capacity_bytes"] == 3 * GIB
    one = emulation_limits(volume_envelope("gp2", 100), knee_seconds=60)
    limits = emulation["limits"]
    for key in ("iops", "mibps", "burst_iops", "burst_mibps", "credit_capacity", "credit_refill_per_s"):
        assert limits[key] == pytest.approx(one[key] * 3), key
    assert limits["credit_unit"] == "io"
    assert limits["io_size_kib"] == one["io_size_kib"]


def test_raid0_with_md_is_one_emulation_per_member() -> None:
    req = request(
        [{"kind": "ebs", "type": "gp2", "size_gib": 100, "count": 3, "raid_chunk_kib": 64}],
        [{"profile": "std-randread-4k"}],
    )
    (spec,) = local_targets(req.configs[0], STRIPE)
    assert (spec["count"], spec["layout"], spec["raid_chunk_kib"]) == (3, "raid0", 64)
    assert len(spec["emulate"]) == 3
    assert all(e["volume_type"] == "gp2" and e["limits"]["iops"] == 300 for e in spec["emulate"])


@pytest.mark.parametrize("options", [NO_STRIPE, STRIPE])
def test_jbod_is_n_devices(options: LocalOptions) -> None:
    req = request(
        [{"kind": "ebs", "type": "gp3", "size_gib": 100, "count": 4, "layout": "jbod", "filesystem": "raw"}],
        [{"profile": "std-randread-4k"}],
    )
    (spec,) = local_targets(req.configs[0], options)
    assert (spec["count"], spec["layout"], spec["filesystem"]) == (4, "jbod", "raw")
    assert len(spec["emulate"]) == 4
    assert all(e["volume_type"] == "gp3" for e in spec["emulate"])


def test_mount_options_are_passed_on() -> None:
    req = request(
        [{"kind": "ebs", "type": "gp3", "size_gib": 100, "mount_options": "noatime", "filesystem": "ext4"}],
        [{"profile": "std-randread-4k"}],
    )
    (spec,) = local_targets(req.configs[0], NO_STRIPE)
    assert (spec["mount_options"], spec["filesystem"]) == ("noatime", "ext4")


def test_local_target_is_a_directory() -> None:
    req = request(
        [{"kind": "local", "path": "/var/tmp/bench", "id": "here"}], [{"profile": "std-randread-4k"}]
    )
    assert local_targets(req.configs[0]) == [{"id": "here", "kind": "directory", "path": "/var/tmp/bench"}]


@pytest.mark.parametrize(
    ("target", "kind", "instance_type"),
    [
        ({"kind": "efs"}, "efs", "c5.large"),
        ({"kind": "fsx_lustre", "storage_capacity_gib": 1200}, "fsx_lustre", "c5.large"),
        ({"kind": "nfs", "server": "10.0.0.5", "export": "/bucket"}, "nfs", "c5.large"),
        ({"kind": "instance_store"}, "instance_store", "i3en.large"),
    ],
)
def test_aws_only_kinds_cannot_be_emulated(target: dict[str, Any], kind: str, instance_type: str) -> None:
    req = request([LOCAL, target], [{"profile": "std-randread-4k"}], instance_type=instance_type)
    with pytest.raises(LocalTargetError) as caught:
        local_targets(req.configs[0])
    message = str(caught.value)
    assert f"({kind})" in message
    assert "targets[1]" in message
    assert "cfg" in message
    assert "needs AWS" in message


# --------------------------------------------------------------------------- target context


def one_target(target: dict[str, Any], instance_type: str) -> tuple[BenchmarkRequest, Any]:
    """A request of std-randread-4k on one target, and that target's context."""
    req = request([target], [{"profile": "std-randread-4k"}], instance_type=instance_type)
    return req, target_context(req.configs[0], req.configs[0].targets[0])


def test_target_context_is_capped_by_the_instance() -> None:
    req, ctx = one_target({"kind": "ebs", "type": "io2", "size_gib": 1000, "iops": 100000}, "c5.large")
    assert (ctx.mode, ctx.media, ctx.devices) == ("filesystem", "ssd", 1)
    assert ctx.expected_iops == 20000  # c5.large's EBS maximum, not the volume's 100,000
    steps = plan_steps(req, req.configs[0])
    assert steps[0]["phases"][0]["fio"]["jobs"][0]["options"]["iodepth"] == 10  # 40 outstanding over 4 jobs


def test_target_context_on_a_big_instance_follows_the_volume() -> None:
    _, ctx = one_target({"kind": "ebs", "type": "gp3", "size_gib": 100, "iops": 3000}, "c5.4xlarge")
    assert ctx.expected_iops == 3000


def test_target_context_of_a_stripe() -> None:
    _, ctx = one_target(
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "iops": 4000, "count": 4, "filesystem": "raw"},
        "c5.4xlarge",
    )
    assert (ctx.mode, ctx.devices, ctx.expected_iops) == ("raw", 4, 16000)


def test_target_context_gp2_uses_the_burst() -> None:
    req = request([{"kind": "ebs", "type": "gp2", "size_gib": 100}], [{"profile": "std-randread-4k"}])
    assert target_context(req.configs[0], req.configs[0].targets[0]).expected_iops == 3000


@pytest.mark.parametrize("volume_type", ["st1", "sc1", "standard"])
def test_target_context_hdd_media(volume_type: str) -> None:
    req = request([{"kind": "ebs", "type": volume_type, "size_gib": 500}], [{"profile": "std-seqread-1m"}])
    ctx = target_context(req.configs[0], req.configs[0].targets[0])
    assert ctx.media == "hdd"
    assert ctx.expected_iops is not None


@pytest.mark.parametrize(
    ("target", "media", "instance_type"),
    [
        ({"kind": "efs"}, "network", "c5.large"),
        ({"kind": "fsx_lustre", "storage_capacity_gib": 1200}, "network", "c5.large"),
        ({"kind": "nfs", "server": "gw", "export": "/b"}, "network", "c5.large"),
        ({"kind": "local", "path": "/tmp"}, "unknown", "c5.large"),
        ({"kind": "instance_store"}, "ssd", "i3en.large"),  # NVMe, IOPS not in the catalog
    ],
)
def test_target_context_of_other_kinds(target: dict[str, Any], media: str, instance_type: str) -> None:
    req = request([target], [{"profile": "std-randread-4k"}], instance_type=instance_type)
    ctx = target_context(req.configs[0], req.configs[0].targets[0])
    assert (ctx.mode, ctx.media, ctx.expected_iops) == ("filesystem", media, None)
    steps = plan_steps(req, req.configs[0])
    assert steps[0]["phases"][0]["fio"]["jobs"][0]["options"]["iodepth"] == 32


def test_target_context_unknown_instance_uses_the_volume() -> None:
    req = request(
        [{"kind": "ebs", "type": "io2", "size_gib": 1000, "iops": 100000}], [{"profile": "std-randread-4k"}]
    )
    # A request stored before unknown types were refused, or a type the catalog dropped since
    config = req.configs[0].model_copy(update={"instance_type": "x9z.large"})
    assert target_context(config, config.targets[0]).expected_iops == 100000
