"""check_plan: accepts a good plan, names every bad field (and never crashes on a bad one)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from storagebench.agent.emulate import trackable
from storagebench.protocol.plan import PLAN_VERSION, PlanError, check_plan


def good_plan() -> dict[str, Any]:
    return {
        "plan_version": PLAN_VERSION,
        "run_id": "r-20261121",
        "config_id": "c1",
        "targets": [
            {
                "id": "vol",
                "kind": "ebs",
                "filesystem": "xfs",
                "emulate": [
                    {
                        "volume_type": "gp3",
                        "size_gib": 100.0,
                        "capacity_bytes": 1 << 30,
                        "limits": {"iops": 3000, "mibps": 125, "io_size_kib": 256},
                    }
                ],
            },
            {"id": "real", "kind": "ebs", "filesystem": "raw", "volume_ids": ["vol-0123456789abcdef0"]},
            {"id": "nvme", "kind": "instance_store", "count": 0, "filesystem": "ext4"},
            {"id": "efs", "kind": "efs", "source": "fs-1234:/", "fstype": "nfs4"},
            {"id": "dir", "kind": "directory", "path": "/tmp"},
        ],
        "prewarm": {"method": "dd", "targets": ["vol"]},
        "steps": [
            {
                "id": "s1",
                "target": "vol",
                "repetition": 1,
                "phases": [
                    {
                        "name": "randread",
                        "engine": "fio",
                        "fio": {"jobs": [{"name": "j", "options": {"rw": "randread", "bs": "4k"}}]},
                        "timeout_s": 60,
                    }
                ],
            },
            {
                "id": "s2",
                "target": "dir",
                "repetition": 2,
                "phases": [
                    {"name": "userjob", "engine": "fio", "fio": {"job_file": "[x]\nrw=read\n", "jobs": []}},
                    {
                        "name": "dd",
                        "engine": "dd",
                        "dd": {"direction": "write", "file": "f", "bs": "1M", "count": 4, "parallel": 2},
                    },
                    {"name": "cmd", "engine": "command", "command": {"script": "true", "parallel": 1}},
                ],
            },
        ],
        "setup": None,
        "teardown": "true",
        "fail_fast": False,
    }


def problems_of(plan: Any) -> list[str]:
    with pytest.raises(PlanError) as caught:
        check_plan(plan)
    assert str(caught.value).startswith("invalid agent plan:")
    for problem in caught.value.problems:
        assert problem in str(caught.value)
    return caught.value.problems


def test_a_good_plan_is_returned_as_is() -> None:
    plan = good_plan()
    assert check_plan(plan) is plan


def test_prewarm_and_steps_may_be_empty() -> None:
    plan = good_plan()
    del plan["prewarm"]
    plan["steps"] = []
    assert check_plan(plan) is plan


def test_a_plan_with_a_cold_read_check() -> None:
    plan = good_plan()
    plan["prewarm"].update(sampled=["vol"], sample_bytes=1 << 30, sample_extents=32)
    assert check_plan(plan) is plan
    plan["prewarm"]["sample_extents"] = 0
    assert problems_of(plan) == ["prewarm.sample_extents: 0 must be an integer >= 1"]


def test_not_an_object() -> None:
    assert problems_of([1, 2]) == ["plan: expected a JSON object, got list"]


# Each case: (what to break, the path the problem must name, a fragment of its message).
def _set(path: list[Any], value: Any) -> Any:
    def mutate(plan: dict[str, Any]) -> None:
        node: Any = plan
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _delete(path: list[Any]) -> Any:
    def mutate(plan: dict[str, Any]) -> None:
        node: Any = plan
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


def _duplicate_target(plan: dict[str, Any]) -> None:
    plan["targets"].append(copy.deepcopy(plan["targets"][0]))


def _duplicate_step(plan: dict[str, Any]) -> None:
    plan["steps"].append(copy.deepcopy(plan["steps"][0]))


def _no_targets(plan: dict[str, Any]) -> None:
    plan["targets"] = []
    plan["steps"] = []
    del plan["prewarm"]


def _both_volume_ids_and_emulate(plan: dict[str, Any]) -> None:
    plan["targets"][0]["volume_ids"] = ["vol-0123456789abcdef0"]


BAD = {
    "wrong version": (_set(["plan_version"], 2), "plan_version", "is not supported (this agent reads 1)"),
    "missing version": (_delete(["plan_version"]), "plan_version", "None is not supported"),
    "bad run id": (_set(["run_id"], "has space"), "run_id", "must be 1-128 characters"),
    "missing config id": (_delete(["config_id"]), "config_id", "must be 1-128 characters"),
    "no targets": (_no_targets, "targets", "at least one target is required"),
    "duplicate target id": (_duplicate_target, "targets[5].id", "'vol' is used twice"),
    "unknown kind": (_set(["targets", 0, "kind"], "s3"), "targets[0].kind", "'s3' is not one of"),
    "bad filesystem": (_set(["targets", 0, "filesystem"], "zfs"), "targets[0].filesystem", "'zfs'"),
    "ebs with both": (
        _both_volume_ids_and_emulate,
        "targets[0]",
        "an ebs target needs exactly one of volume_ids or emulate",
    ),
    "ebs with neither": (
        _delete(["targets", 1, "volume_ids"]),
        "targets[1]",
        "an ebs target needs exactly one of volume_ids or emulate",
    ),
    "tiny emulated capacity": (
        _set(["targets", 0, "emulate", 0, "capacity_bytes"], 4096),
        "targets[0].emulate[0].capacity_bytes",
        "must be an integer >= 1048576",
    ),
    "zero emulated iops": (
        _set(["targets", 0, "emulate", 0, "limits", "iops"], 0),
        "targets[0].emulate[0].limits.iops",
        "must be a number > 0",
    ),
    "missing emulated mibps": (
        _delete(["targets", 0, "emulate", 0, "limits", "mibps"]),
        "targets[0].emulate[0].limits.mibps",
        "None must be a number > 0",
    ),
    "negative instance store count": (
        _set(["targets", 2, "count"], -1),
        "targets[2].count",
        "must be an integer >= 0",
    ),
    "network without source": (_delete(["targets", 3, "source"]), "targets[3].source", "required"),
    "directory without path": (_set(["targets", 4, "path"], ""), "targets[4].path", "required"),
    "bad prewarm method": (_set(["prewarm", "method"], "cat"), "prewarm.method", "'cat' is not one of"),
    "prewarm unknown target": (_set(["prewarm", "targets"], ["nope"]), "prewarm.targets[0]", "names no"),
    "sampled not a list": (_set(["prewarm", "sampled"], "vol"), "prewarm.sampled", "expected a list"),
    "sampled target not read": (
        _set(["prewarm", "sampled"], ["real"]),
        "prewarm.sampled[0]",
        "'real' is not one of prewarm.targets",
    ),
    "sample of 1000 bytes": (_set(["prewarm", "sample_bytes"], 1000), "prewarm.sample_bytes", ">= 1048576"),
    "steps not a list": (_set(["steps"], {}), "steps", "expected a list"),
    "duplicate step id": (_duplicate_step, "steps[2].id", "'s1' is used twice"),
    "unknown target in a step": (_set(["steps", 0, "target"], "ghost"), "steps[0].target", "names no target"),
    "repetition 0": (_set(["steps", 0, "repetition"], 0), "steps[0].repetition", ">= 1"),
    "repetition bool": (_set(["steps", 0, "repetition"], True), "steps[0].repetition", ">= 1"),
    "no phases": (_set(["steps", 0, "phases"], []), "steps[0].phases", "at least one phase"),
    "bad engine": (
        _set(["steps", 0, "phases", 0, "engine"], "iozone"),
        "steps[0].phases[0].engine",
        "'iozone' is not one of fio, dd, command",
    ),
    "bad phase name": (_set(["steps", 0, "phases", 0, "name"], "a/b"), "steps[0].phases[0].name", "must be"),
    "fio without jobs or job_file": (
        _set(["steps", 0, "phases", 0, "fio"], {"jobs": []}),
        "steps[0].phases[0].fio.jobs",
        "at least one job (or a job_file) is required",
    ),
    "fio without a fio section": (
        _delete(["steps", 0, "phases", 0, "fio"]),
        "steps[0].phases[0].fio.jobs",
        "at least one job",
    ),
    "dd without count": (
        _delete(["steps", 1, "phases", 1, "dd", "count"]),
        "steps[1].phases[1].dd.count",
        "",
    ),
    "dd bad direction": (
        _set(["steps", 1, "phases", 1, "dd", "direction"], "both"),
        "steps[1].phases[1].dd.direction",
        "'both'",
    ),
    "dd parallel 0": (
        _set(["steps", 1, "phases", 1, "dd", "parallel"], 0),
        "steps[1].phases[1].dd.parallel",
        ">= 1",
    ),
    "empty command": (
        _set(["steps", 1, "phases", 2, "command", "script"], "  "),
        "steps[1].phases[2].command.script",
        "a non-empty shell script is required",
    ),
    "timeout 0": (_set(["steps", 0, "phases", 0, "timeout_s"], 0), "steps[0].phases[0].timeout_s", ">= 1"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_field_is_named(case: str) -> None:
    mutate, path, fragment = BAD[case]
    plan = good_plan()
    mutate(plan)
    problems = problems_of(plan)
    assert len(problems) == 1, problems
    assert problems[0].startswith(path + ":"), problems
    assert fragment in problems[0]


def test_every_bad_field_is_named_at_once() -> None:
    plan = good_plan()
    plan["plan_version"] = 9
    plan["targets"][1]["kind"] = "tape"
    plan["steps"][0]["target"] = "ghost"
    plan["steps"][0]["phases"][0]["engine"] = "bonnie"
    del plan["steps"][1]["phases"][1]["dd"]["count"]
    _duplicate_step(plan)
    problems = problems_of(plan)
    named = [p.split(":", 1)[0] for p in problems]
    assert named == [
        "plan_version",
        "targets[1].kind",
        "steps[0].target",
        "steps[0].phases[0].engine",
        "steps[1].phases[1].dd.count",
        "steps[2].id",
        "steps[2].target",
        "steps[2].phases[0].engine",
    ]


def test_dd_without_file_or_bs_is_named() -> None:
    plan = good_plan()
    del plan["steps"][1]["phases"][1]["dd"]["file"]
    del plan["steps"][1]["phases"][1]["dd"]["bs"]
    assert problems_of(plan) == [
        "steps[1].phases[1].dd.file: required (text)",
        "steps[1].phases[1].dd.bs: required (text)",
    ]


@pytest.mark.parametrize("job", [{"name": "j"}, {"options": {}}, "rw=read", {"name": 3, "options": {}}])
def test_malformed_fio_jobs_are_named(job: Any) -> None:
    plan = good_plan()
    plan["steps"][0]["phases"][0]["fio"]["jobs"] = [{"name": "ok", "options": {}}, job]
    (problem,) = problems_of(plan)
    assert problem.startswith("steps[0].phases[0].fio.jobs[1]: expected {name, options}")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (_set(["targets", 0, "emulate"], ["gp3"]), "targets[0].emulate[0]: expected an object, got str"),
        (
            _set(["steps", 0, "phases", 0, "fio"], "randread"),
            "steps[0].phases[0].fio: expected an object, got str",
        ),
        (_set(["steps", 1, "phases", 1, "dd"], [1]), "steps[1].phases[1].dd: expected an object, got list"),
        (_set(["prewarm"], "dd"), "prewarm: expected an object, got str"),
        (
            _set(["targets", 0, "emulate", 0, "limits"], 3000),
            "targets[0].emulate[0].limits.iops: None must be a number > 0",
        ),
    ],
    ids=["emulate-entry-string", "fio-section-string", "dd-section-list", "prewarm-string", "limits-number"],
)
def test_non_object_sections_are_named_not_crashed(mutate: Any, expected: str) -> None:
    plan = good_plan()
    mutate(plan)
    assert problems_of(plan)[0] == expected


@pytest.mark.parametrize("env", [{"THREADS": 4}, ["A=1"], "A=1"], ids=["int-value", "list", "string"])
def test_command_env_must_be_text(env: Any) -> None:
    plan = good_plan()
    plan["steps"][1]["phases"][2]["command"]["env"] = env
    (problem,) = problems_of(plan)
    assert problem.startswith("steps[1].phases[2].command.env")


@pytest.mark.parametrize("requires", ["cellranger", [""], [3]], ids=["string", "empty-name", "number"])
def test_command_requires_must_list_names(requires: Any) -> None:
    plan = good_plan()
    plan["steps"][1]["phases"][2]["command"]["requires"] = requires
    (problem,) = problems_of(plan)
    assert (
        problem == f"steps[1].phases[2].command.requires: must list program names and paths, got {requires!r}"
    )


def test_command_requires_as_names_is_a_good_plan() -> None:
    plan = good_plan()
    plan["steps"][1]["phases"][2]["command"]["requires"] = ["cellranger", "/data/fastqs"]
    assert check_plan(plan) is plan


# ---------------------------------------------------------------- which phases a twin may track


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        (
            {"engine": "fio", "fio": {"jobs": [{"name": "r", "options": {"rw": "randread", "iodepth": 1}}]}},
            True,
        ),
        ({"engine": "fio", "fio": {"global_options": {"rate_iops": 500}, "jobs": []}}, False),
        ({"engine": "fio", "fio": {"jobs": [{"name": "r", "options": {"thinktime": "1ms"}}]}}, False),
        ({"engine": "fio", "fio": {"job_file": "[x]\nrw=read\n"}}, False),
        ({"engine": "fio", "search": {"percentile": 99}, "fio": {"jobs": []}}, False),
        ({"engine": "dd", "dd": {}}, False),
    ],
)
def test_twins_track_the_hosts_path_only_where_the_client_never_pauses_on_purpose(
    phase: dict[str, Any], expected: bool
) -> None:
    assert trackable(phase) is expected


def test_a_node_loss_on_a_fio_phase_is_a_good_plan() -> None:
    plan = good_plan()
    plan["steps"][0]["phases"][0]["node_loss"] = {"role": "controller", "index": 0, "at_s": 30.0}
    assert check_plan(copy.deepcopy(plan)) == plan


@pytest.mark.parametrize(
    ("loss", "engine", "fragment"),
    [
        (
            {"role": "controller", "index": -1, "at_s": 3},
            "fio",
            "node_loss.index: -1 must be an integer >= 0",
        ),
        (
            {"role": "controller", "index": 0, "at_s": 0},
            "fio",
            "node_loss.at_s: seconds into fio's measured run",
        ),
        ({"role": "a b", "index": 0, "at_s": 3}, "fio", "node_loss.role: 'a b' must be"),
        ("controller-0", "fio", "node_loss: expected {role, index, at_s}"),
        ({"role": "controller", "index": 0, "at_s": 3}, "dd", "a node loss is measured on a fio phase"),
    ],
)
def test_a_bad_node_loss_is_named(loss: Any, engine: str, fragment: str) -> None:
    plan = good_plan()
    phase = plan["steps"][1]["phases"][1] if engine == "dd" else plan["steps"][0]["phases"][0]
    phase["node_loss"] = loss
    with pytest.raises(PlanError) as caught:
        check_plan(plan)
    assert fragment in str(caught.value)
