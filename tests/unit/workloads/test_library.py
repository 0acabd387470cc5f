"""The profile library: every profile builds valid agent phases, studies are reproduced at scale 1."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from storagebench.protocol.plan import PLAN_VERSION, Phase, check_plan
from storagebench.workloads import (
    PROFILES,
    SUITES,
    TargetContext,
    build_phases,
    check_params,
    get_profile,
    variants,
)
from storagebench.workloads.describe import describe_library
from storagebench.workloads.param_builders import auto_iodepth, dd_size
from storagebench.workloads.params import parse_size
from storagebench.workloads.phase_builders import check_fio_job_file
from storagebench.workloads.profile import ParamsError, Profile, Variant

MIB = 1 << 20

# Profiles whose text parameters have no default: a request must give them.
REQUIRED = {
    "fio-custom": {"job_file": "[global]\nioengine=libaio\n\n[read]\nrw=read\nsize=16m\n"},
    "command": {"command": "dd if=/dev/zero of=$SB_TARGET_DIR/x bs=1M count=1", "bytes": MIB},
}

FILESYSTEM_CONTEXTS = [
    TargetContext(mode="filesystem", media="ssd", expected_iops=3000),
    TargetContext(mode="filesystem", media="hdd", expected_iops=250),
    TargetContext(mode="filesystem", media="network"),
    TargetContext(mode="filesystem"),
]
RAW_CONTEXTS = [
    TargetContext(mode="raw", media="ssd", expected_iops=64000, devices=4),
    TargetContext(mode="raw", media="hdd", expected_iops=500),
]
DIRECTORY = {"id": "t", "kind": "directory", "path": "/tmp"}
RAW_EBS = {"id": "t", "kind": "ebs", "filesystem": "raw", "volume_ids": ["vol-0123456789abcdef0"]}


def one_step_plan(phases: list[Phase], target: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "plan_version": PLAN_VERSION,
        "run_id": "run-1",
        "config_id": "c",
        "targets": [dict(target)],
        "prewarm": {"method": "none"},
        "steps": [{"id": "s.t.r1", "target": "t", "repetition": 1, "phases": phases}],
    }


def all_phases(name: str, scale: float, ctx: TargetContext) -> list[tuple[Variant, list[Phase]]]:
    profile = PROFILES[name]
    overrides = check_params(profile, REQUIRED.get(name, {}))
    return [(v, build_phases(profile, v, ctx)) for v in variants(profile, overrides, scale, ctx)]


def fio_options(phases: list[Phase]) -> list[dict[str, Any]]:
    return [job["options"] for phase in phases if phase["engine"] == "fio" for job in phase["fio"]["jobs"]]


def first_options(name: str, scale: float = 1, ctx: TargetContext | None = None) -> dict[str, Any]:
    ((_, phases),) = all_phases(name, scale, ctx or FILESYSTEM_CONTEXTS[0])[:1]
    return fio_options(phases)[0]


def runs(name: str, scale: float = 1, ctx: TargetContext | None = None) -> list[tuple[Variant, list[Phase]]]:
    return all_phases(name, scale, ctx or FILESYSTEM_CONTEXTS[0])


# --------------------------------------------------------------------------- every profile


def test_library_is_not_empty_and_names_match() -> None:
    assert len(PROFILES) >= 25
    for name, profile in PROFILES.items():
        assert profile.name == name
        assert profile.title and profile.description and profile.source and profile.family
        assert profile.needs in ("any", "raw", "filesystem")
        assert profile.engine in ("fio", "dd", "command")
        assert len(set(profile.param_names)) == len(profile.param_names)


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("scale", [1, 0.01])
def test_every_profile_builds_on_a_filesystem(name: str, scale: float) -> None:
    for ctx in FILESYSTEM_CONTEXTS:
        built = all_phases(name, scale, ctx)
        assert built, name
        for _, phases in built:
            assert phases
            assert {p["engine"] for p in phases} <= {"fio", "dd", "command"}
            check_plan(one_step_plan(phases, DIRECTORY))
            json.dumps(phases)


@pytest.mark.parametrize("name", sorted(n for n, p in PROFILES.items() if p.needs != "filesystem"))
@pytest.mark.parametrize("scale", [1, 0.01])
def test_every_profile_that_allows_raw_builds_on_a_raw_device(name: str, scale: float) -> None:
    for ctx in RAW_CONTEXTS:
        for _, phases in all_phases(name, scale, ctx):
            check_plan(one_step_plan(phases, RAW_EBS))


@pytest.mark.parametrize("name", sorted(n for n, p in PROFILES.items() if p.needs == "filesystem"))
def test_filesystem_profiles_refuse_a_raw_device(name: str) -> None:
    profile = PROFILES[name]
    ctx = RAW_CONTEXTS[0]
    overrides = check_params(profile, REQUIRED.get(name, {}))
    variant = variants(profile, overrides, 1, ctx)[0]
    with pytest.raises(ValueError, match=f"{name} needs a filesystem target"):
        build_phases(profile, variant, ctx)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_engine_matches_phases(name: str) -> None:
    profile = PROFILES[name]
    for _, phases in runs(name):
        assert {p["engine"] for p in phases} == {profile.engine}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_scaled_fio_sizes_are_whole_mib_and_floored(name: str) -> None:
    for _, phases in runs(name, 0.01):
        for options in fio_options(phases):
            if "size" in options:
                size = parse_size(options["size"])
                assert size % MIB == 0, options["size"]
                assert size >= 16 * MIB
            if "runtime" in options:
                assert options["runtime"] == "3s"  # every runtime floors at 3 s


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_concurrency_block_size_and_mix_never_scale(name: str) -> None:
    profile = PROFILES[name]
    for param in profile.params:
        if param.name in (
            "bs",
            "iodepth",
            "numjobs",
            "threads",
            "jobs_per_group",
            "rwmixread",
            "nrfiles",
            "sync",
        ):
            assert not param.scales, (name, param.name)
    full = [v.values for v, _ in runs(name, 1)]
    small = [v.values for v, _ in runs(name, 0.01)]
    for a, b in zip(full, small, strict=True):
        for key in ("bs", "iodepth", "numjobs", "threads", "jobs_per_group", "rwmixread", "file_size"):
            assert a.get(key) == b.get(key), (name, key)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_defaults_pass_their_own_checks(name: str) -> None:
    profile = PROFILES[name]
    for param in profile.params:
        if param.default is None:
            continue
        defaults = param.default if isinstance(param.default, tuple) else (param.default,)
        for value in defaults:
            param.coerce(value)
        if isinstance(param.default, tuple):
            assert param.sweepable, (name, param.name)


def test_suites_name_existing_profiles() -> None:
    assert set(SUITES) == {"standard", "file-gateway", "virtual-san", "genomics", "report-card"}
    for members in SUITES.values():
        for member in members:
            assert member in PROFILES
    assert len(SUITES["standard"]) == 6


def test_get_profile_unknown_suggests() -> None:
    with pytest.raises(KeyError, match="did you mean vsan-randwrite-8k"):
        get_profile("vsan-randwrite-8")
    assert get_profile("vsan-randwrite-8k") is PROFILES["vsan-randwrite-8k"]


def test_check_params_collects_every_error() -> None:
    with pytest.raises(ParamsError) as caught:
        check_params(PROFILES["std-randread-4k"], {"bs": "4x", "nope": 1, "numjobs": [0, 1]})
    assert sorted(e.param for e in caught.value.errors) == ["bs", "nope", "numjobs"]


# --------------------------------------------------------------------------- sweeps


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("vsan-randread-small-blocks", ["bs=2k", "bs=4k", "bs=8k"]),
        ("sweep-qd-randread-4k", [f"iodepth={q}" for q in (1, 2, 4, 8, 16, 32, 64, 128)]),
        ("sweep-jobs-randread-4k", [f"numjobs={n}" for n in (1, 2, 4, 8, 16, 32)]),
        ("reportcard-oltp-8k-randread", ["numjobs=16", "numjobs=32"]),
        ("reportcard-dss-1m-seqread", [f"numjobs={n}" for n in (4, 8, 16, 32, 64)]),
        ("reportcard-log-1k-seqwrite", [f"numjobs={n}" for n in (1, 2, 4, 8)]),
        ("genomics-large-file", ["threads=1", "threads=4", "threads=8"]),
        ("genomics-small-files", ["threads=1", "threads=4", "threads=8"]),
        ("std-randread-4k", [""]),
        ("dd-seq-write-1m-dsync", [""]),
    ],
)
def test_default_sweep_labels(name: str, labels: list[str]) -> None:
    assert [v.label() for v, _ in runs(name)] == labels


def test_sweep_override_product_and_labels() -> None:
    profile = PROFILES["std-randread-4k"]
    overrides = check_params(profile, {"bs": ["2k", "1m"], "numjobs": [1, 16]})
    found = variants(profile, overrides, 1, FILESYSTEM_CONTEXTS[0])
    assert [v.label() for v in found] == [
        "bs=2k,numjobs=1",
        "bs=2k,numjobs=16",
        "bs=1m,numjobs=1",
        "bs=1m,numjobs=16",
    ]
    assert [dict(v.sweep) for v in found][1] == {"bs": "2k", "numjobs": 16}
    assert [v.values["bs"] for v in found] == [2048, 2048, MIB, MIB]


def test_override_replaces_a_default_sweep() -> None:
    profile = PROFILES["reportcard-oltp-8k-randread"]
    found = variants(profile, check_params(profile, {"numjobs": 8}), 1, FILESYSTEM_CONTEXTS[0])
    assert [v.label() for v in found] == [""]
    assert found[0].values["numjobs"] == 8


def test_swept_phases_differ_only_in_the_swept_value() -> None:
    built = runs("vsan-randread-small-blocks")
    options = [fio_options(phases)[0] for _, phases in built]
    assert [o["bs"] for o in options] == ["2k", "4k", "8k"]
    for o in options:
        assert (o["numjobs"], o["iodepth"], o["rw"]) == (32, 64, "randread")


# --------------------------------------------------------------------------- auto queue depth


def _auto(ctx: TargetContext, numjobs: int = 4) -> Any:
    return auto_iodepth({"numjobs": numjobs}, ctx)


@pytest.mark.parametrize(
    ("iops", "numjobs", "expected"),
    [
        (3000, 4, 2),  # 6 outstanding in all, 2 per job
        (3000, 1, 6),
        (16000, 4, 8),
        (64000, 4, 32),
        (100, 4, 1),  # at least 4 in all: 1 per job
        (100, 1, 4),
        (500, 2, 2),
        (256000, 1, 512),
    ],
)
def test_auto_iodepth_follows_one_per_500_iops(iops: float, numjobs: int, expected: int) -> None:
    assert _auto(TargetContext(mode="filesystem", media="ssd", expected_iops=iops), numjobs) == expected


@pytest.mark.parametrize("numjobs", [1, 2, 4, 8, 32])
def test_auto_iodepth_on_hdd_is_at_least_4(numjobs: int) -> None:
    depth = _auto(TargetContext(mode="raw", media="hdd", expected_iops=500), numjobs)
    assert isinstance(depth, int)
    assert depth >= 4


def test_auto_iodepth_unknown_target_is_32() -> None:
    assert _auto(TargetContext(mode="filesystem")) == 32
    assert _auto(TargetContext(mode="filesystem", media="network")) == 32


def test_auto_iodepth_reaches_the_fio_options() -> None:
    ctx = TargetContext(mode="filesystem", media="ssd", expected_iops=3000)
    options = first_options("std-randread-4k", ctx=ctx)
    assert (options["numjobs"], options["iodepth"]) == (4, 2)
    options = first_options("std-mixed-16k-70read", ctx=TargetContext(mode="filesystem"))
    assert options["iodepth"] == 32


def test_auto_iodepth_uses_the_swept_numjobs() -> None:
    profile = PROFILES["std-randread-4k"]
    ctx = TargetContext(mode="filesystem", media="ssd", expected_iops=16000)
    found = variants(profile, check_params(profile, {"numjobs": [1, 4, 32]}), 1, ctx)
    assert [v.values["iodepth"] for v in found] == [32, 8, 1]


def test_explicit_iodepth_overrides_auto() -> None:
    profile = PROFILES["std-randread-4k"]
    found = variants(profile, check_params(profile, {"iodepth": 7}), 1, FILESYSTEM_CONTEXTS[0])
    assert found[0].values["iodepth"] == 7


# --------------------------------------------------------------------------- the studies at scale 1


def test_study1_fio_randrw_4k_25read() -> None:
    options = first_options("fio-randrw-4k-25read")
    assert options["ioengine"] == "libaio"
    assert options["rw"] == "randrw"
    assert options["bs"] == "4k"
    assert options["iodepth"] == 4
    assert options["numjobs"] == 4
    assert options["size"] == "8g"
    assert options["rwmixread"] == 25
    assert options["nrfiles"] == 2
    assert options["direct"] == 0  # buffered, as the study ran it
    assert "time_based" not in options  # it ran until the 8 GiB were done


def test_study1_fio_randrw_scaled() -> None:
    options = first_options("fio-randrw-4k-25read", 0.01)
    assert options["size"] == "81m"
    assert (options["bs"], options["iodepth"], options["numjobs"], options["nrfiles"]) == ("4k", 4, 4, 2)


@pytest.mark.parametrize(
    ("name", "count"),
    [("dd-seq-write-1m-dsync", 1000), ("dd-seq-write-1g-dsync", 1024), ("dd-seq-write-4g-dsync", 4096)],
)
def test_study1_dd_writes(name: str, count: int) -> None:
    ((_, phases),) = runs(name)
    (phase,) = phases
    assert phase["engine"] == "dd"
    dd = phase["dd"]
    assert dd["direction"] == "write"
    assert dd["input"] == "/dev/zero"
    assert dd["bs"] == "1M"  # GNU dd's unit is upper case; 1m is an error there
    assert dd["count"] == count
    assert dd["oflag"] == "dsync"
    assert dd["parallel"] == 1


def test_study1_dd_scaled() -> None:
    assert runs("dd-seq-write-1m-dsync", 0.01)[0][1][0]["dd"]["count"] == 10
    assert runs("dd-seq-write-1m-dsync", 0.0001)[0][1][0]["dd"]["count"] == 1


def test_dd_size_is_upper_case() -> None:
    assert dd_size(MIB) == "1M"
    assert dd_size(100 * MIB) == "100M"
    assert dd_size(4096) == "4K"
    assert dd_size(1 << 30) == "1G"


@pytest.mark.parametrize(
    ("name", "rw", "bs", "numjobs", "iodepth", "rwmixread"),
    [
        ("vsan-randwrite-8k", "randwrite", "8k", 48, 14, None),
        ("vsan-randread-8k", "randread", "8k", 48, 14, None),
        ("vsan-randrw-8k", "randrw", "8k", 48, 14, 50),
        ("vsan-randwrite-256k", "randwrite", "256k", 48, 2, None),
        ("vsan-randrw-256k", "randrw", "256k", 96, 2, 50),
    ],
)
def test_study2_vsan_runs(
    name: str, rw: str, bs: str, numjobs: int, iodepth: int, rwmixread: int | None
) -> None:
    options = first_options(name)
    assert (options["rw"], options["bs"], options["numjobs"], options["iodepth"]) == (
        rw,
        bs,
        numjobs,
        iodepth,
    )
    assert options.get("rwmixread") == rwmixread
    assert options["ioengine"] == "libaio"
    assert options["direct"] == 1
    assert options["runtime"] == "30s"
    assert options["time_based"] == 1


def test_study2_vsan_small_blocks() -> None:
    options = [fio_options(phases)[0] for _, phases in runs("vsan-randread-small-blocks")]
    assert [(o["bs"], o["numjobs"], o["iodepth"]) for o in options] == [
        ("2k", 32, 64),
        ("4k", 32, 64),
        ("8k", 32, 64),
    ]


def test_study2_vsan_two_concurrent_groups() -> None:
    ((_, phases),) = runs("vsan-two-groups")
    (phase,) = phases
    jobs = phase["fio"]["jobs"]
    assert [j["options"]["bs"] for j in jobs] == ["8k", "128k"]
    assert all(j["options"]["rw"] == "randrw" and j["options"]["numjobs"] == 24 for j in jobs)
    assert "new_group" not in jobs[0]["options"]
    assert jobs[1]["options"]["new_group"] == 1
    assert all("stonewall" not in j["options"] for j in jobs)  # both groups run at once


def test_study3_genomics_large_file() -> None:
    built = runs("genomics-large-file")
    assert [v.values["threads"] for v, _ in built] == [1, 4, 8]
    for variant, phases in built:
        create, read = phases
        assert create["dd"]["input"] == "/dev/urandom"
        assert create["dd"]["bs"] == "100M"
        assert create["dd"]["count"] == 1024
        assert create["dd"]["iflag"] == "fullblock"
        assert create["dd"]["file"] == "large_100gb.txt"
        assert create["dd"]["parallel"] == variant.values["threads"]
        assert read["dd"]["direction"] == "read"
        assert read["dd"]["file"] == "large_100gb.txt"
        assert read["drop_caches"] is True
        assert "conv" not in read["dd"]
        assert read["dd"]["parallel"] == variant.values["threads"]


def test_study3_genomics_large_file_scaled() -> None:
    create, _ = runs("genomics-large-file", 0.01)[0][1]
    assert (create["dd"]["bs"], create["dd"]["count"]) == ("100M", 10)


def test_study3_genomics_small_files() -> None:
    built = runs("genomics-small-files")
    assert [v.values["threads"] for v, _ in built] == [1, 4, 8]
    for variant, phases in built:
        create, read = phases
        for phase in (create, read):
            command = phase["command"]
            assert command["env"] == {"SB_FILES": "100000", "SB_FILE_SIZE": "500000"}
            assert command["accounting"] == {"bytes": 100_000 * 500_000, "files": 100_000}
            assert command["parallel"] == variant.values["threads"]
        assert "head -c" in create["command"]["script"]
        assert "/dev/urandom" in create["command"]["script"]
        assert "randfile" in create["command"]["script"]
        assert "dd if=" in read["command"]["script"]
        assert read["drop_caches"] is True


def test_study3_genomics_small_files_scaled_keeps_file_size() -> None:
    create, _ = runs("genomics-small-files", 0.01)[0][1]
    assert create["command"]["env"] == {"SB_FILES": "1000", "SB_FILE_SIZE": "500000"}
    tiny, _ = runs("genomics-small-files", 0.00001)[0][1]
    assert tiny["command"]["env"]["SB_FILES"] == "100"  # floor


def test_study4_report_card() -> None:
    oltp = [fio_options(p)[0] for _, p in runs("reportcard-oltp-8k-randread")]
    assert [(o["rw"], o["bs"], o["numjobs"], o["iodepth"]) for o in oltp] == [
        ("randread", "8k", 16, 1),
        ("randread", "8k", 32, 1),
    ]
    dss = [fio_options(p)[0] for _, p in runs("reportcard-dss-1m-seqread")]
    assert [(o["rw"], o["bs"], o["numjobs"]) for o in dss] == [("read", "1m", n) for n in (4, 8, 16, 32, 64)]
    log = [fio_options(p)[0] for _, p in runs("reportcard-log-1k-seqwrite")]
    assert all((o["rw"], o["bs"], o["sync"]) == ("write", "1k", 1) for o in log)
    heavy = [fio_options(p)[0] for _, p in runs("reportcard-log-128k-seqwrite")]
    assert all((o["rw"], o["bs"], o["sync"]) == ("write", "128k", 1) for o in heavy)


def test_sequential_profiles_give_each_job_its_own_region_on_raw() -> None:
    raw = first_options("reportcard-dss-1m-seqread", ctx=RAW_CONTEXTS[0])
    assert raw["offset_increment"] == raw["size"]
    on_fs = first_options("reportcard-dss-1m-seqread")
    assert "offset_increment" not in on_fs


def test_standard_suite_uses_awss_guidance() -> None:
    for name in SUITES["standard"]:
        options = first_options(name)
        assert options["runtime"] == "180s"
        assert options["ramp_time"] == "10s"
        assert options["direct"] == 1
    assert first_options("std-latency-4k-qd1")["iodepth"] == 1
    assert first_options("std-mixed-16k-70read")["rwmixread"] == 70


# --------------------------------------------------------------------------- custom profiles


def test_fio_custom_passes_the_job_file_through() -> None:
    ((_, phases),) = runs("fio-custom")
    (phase,) = phases
    assert phase["fio"]["job_file"] == REQUIRED["fio-custom"]["job_file"]
    assert phase["fio"]["jobs"] == []
    assert phase["fio"]["timeseries"] is True


def test_command_profile_accounting() -> None:
    ((_, phases),) = runs("command")
    assert phases[0]["command"] == {
        "script": REQUIRED["command"]["command"],
        "parallel": 1,
        "accounting": {"bytes": MIB},
    }
    profile = PROFILES["command"]
    found = variants(profile, check_params(profile, {"command": "true"}), 1, FILESYSTEM_CONTEXTS[0])
    assert "accounting" not in build_phases(profile, found[0], FILESYSTEM_CONTEXTS[0])[0]["command"]


@pytest.mark.parametrize(
    "text",
    [
        "[job]\nrw=read\n",
        "[global]\nioengine=libaio\n[a]\nrw=read\n[b]\nrw=write\nstonewall\n",
        "; comment\n[job]\nrw=randrw\nrwmixread=70\nbssplit=4k/50:64k/50\niodepth=32\nioengine=io_uring\n",
    ],
)
def test_check_fio_job_file_accepts(text: str) -> None:
    check_fio_job_file(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rw=read\n", "not a fio job file"),
        ("", "no job section"),
        ("[global]\nrw=read\n", "no job section"),
        ("[job]\noutput=/tmp/x\n", "[job] sets output"),
        ("[job]\noutput-format=json\n", "sets output-format"),
        ("[global]\nexitall_on_error=1\n[job]\nrw=read\n", "[global] sets exitall_on_error"),
        ("; comment\n[job]\nfilename=${SB_TARGET}\n", "[job] sets filename, which the agent points"),
        (
            "[a]\nexec_prerun=id\n[b]\ninclude x\n",
            "[a] sets exec_prerun, which runs a program as root; [b] sets include",
        ),
        # configparser folds it into rw's value; fio runs it (issue 27, 10)
        ("[job]\nrw=read\n  exec_prerun=id\n", "line 3 is indented .'exec_prerun=id'.: fio reads it"),
        ("[job]\nrw=read\n\texec_prerun=id\n", "line 3 is indented"),
    ],
)
def test_check_fio_job_file_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_fio_job_file(text)


# --------------------------------------------------------------------------- scale must not invent work


@pytest.mark.parametrize("scale", [0.01, 2])
def test_scaling_keeps_a_zero_ramp_at_zero(scale: float) -> None:
    assert "ramp_time" not in first_options("vsan-randwrite-8k", 1)
    assert "ramp_time" not in first_options("vsan-randwrite-8k", scale)


# --------------------------------------------------------------------------- describe_library


def test_describe_library_lists_every_profile_with_params() -> None:
    library = describe_library()
    json.dumps(library)
    assert [p["name"] for p in library["profiles"]] == list(PROFILES)
    for entry in library["profiles"]:
        profile: Profile = PROFILES[entry["name"]]
        assert [p["name"] for p in entry["params"]] == list(profile.param_names)
        for key in ("title", "family", "intent", "engine", "needs", "source", "description"):
            assert entry[key] == getattr(profile, key)
        for described in entry["params"]:
            param = profile.param(described["name"])
            assert described["allowed"] == param.allowed()
            assert described["kind"] == param.kind
            assert described["scales"] == param.scales
            assert described["sweepable"] == param.sweepable
            assert described["help"]
    assert library["suites"] == {name: list(members) for name, members in SUITES.items()}


def test_describe_library_shows_sizes_and_sweeps_as_people_write_them() -> None:
    by_name = {p["name"]: {q["name"]: q for q in p["params"]} for p in describe_library()["profiles"]}
    assert by_name["fio-randrw-4k-25read"]["bs"]["default"] == "4k"
    assert by_name["fio-randrw-4k-25read"]["size"]["default"] == "8g"
    assert by_name["vsan-randread-small-blocks"]["bs"]["default"] == ["2k", "4k", "8k"]
    assert by_name["reportcard-oltp-8k-randread"]["numjobs"]["default"] == [16, 32]
    assert by_name["std-randread-4k"]["iodepth"]["default"] == "auto"
    assert by_name["fio-custom"]["job_file"]["default"] is None


def test_text_params_have_a_length_cap() -> None:
    from storagebench.workloads.params import TEXT_MAX_CHARS
    from storagebench.workloads.profile import ParamsError, check_params

    profile = get_profile("command")
    assert check_params(profile, {"command": "x" * TEXT_MAX_CHARS})["command"] == "x" * TEXT_MAX_CHARS
    with pytest.raises(ParamsError) as caught:
        check_params(profile, {"command": "x" * (5 << 20)})  # 5 MB was accepted (issue 27, 10)
    assert "at most 65,536 characters (5,242,880 given)" in str(caught.value.errors[0].allowed)
