"""The cold-read check on emulated EBS volumes: sampled extents read cold, then warm, by dd.

A new volume is not read end to end (AWS: empty volumes need no initialisation); the agent reads
an eighth of each emulated volume at most (256 MiB of a sparse 2 GiB one) in 32 extents, twice, and
collect turns both passes into one pre-warm record whose ``cold_read`` compares them. The emulation
has no lazy loading, so both passes must read at the volume's rate (an unthrottled loop device reads
at the host disk's GB/s) and the penalty must be small. Measured on a 2-core host shared with other
jobs (four runs): passes 121.9-123.9 MiB/s (envelope 125), 7.4-7.8 ms per 1 MiB read (8 expected),
a jbod pair 239-248 MiB/s (250), a penalty between -3.9 and +5.2 %. The tolerances leave room for
the governor (``agent.emulate``), which moves its read/write split to reads in 0.25 s ticks after
mkfs wrote: the first pass pays it, +11 % on a 512 MiB volume (docs/agent.md, "Pre-warm where it matters").
"""

from __future__ import annotations

from typing import Any

import pytest
from agent_plans import GIB, MIB, ebs_target, emulated, python39

from storagebench.results.collect import collect

pytestmark = [pytest.mark.root]

GP3 = {"iops": 3000, "mibps": 125}


def sampled(*targets: str) -> dict[str, Any]:
    return {
        "method": "dd",
        "targets": list(targets),
        "sampled": list(targets),
        "sample_bytes": 4 * GIB,
        "sample_extents": 32,
    }


def test_a_new_volume_gets_the_sampled_cold_read_check(agent_env: Any, fidelity: dict[str, Any]) -> None:
    target = ebs_target("gp3", [emulated("gp3", 2 * GIB, **GP3)], filesystem="xfs")
    code, manifest = agent_env.run(agent_env.plan([target], [], prewarm=sampled("gp3")))
    assert code == 0, manifest["error"]

    (check,) = manifest["prewarm"]
    assert (check["mode"], check["method"], check["status"]) == ("sampled", "dd", "ok")
    (device,) = check["devices"]
    assert device["sampled_bytes"] == 256 * MIB  # an eighth of the volume, not 4 GiB
    assert len(device["extents"]) == 32 and {e["bytes"] for e in device["extents"]} == {8 * MIB}
    offsets = [e["offset"] for e in device["extents"]]
    assert offsets == sorted(offsets) and offsets[-1] > 1984 * MIB  # spread over the whole volume
    directory = agent_env.out / "prewarm" / "gp3"
    assert (directory / device["files"][0]).read_text().count("copied") == 32  # one dd per extent
    assert "iflag=direct" in (directory / "commands.cold.txt").read_text()
    assert set(check["pass_seconds"]) == {"cold", "warm"}

    collection = collect(agent_env.out)
    assert collection.problems == []
    (record,) = collection.records
    result = record.cold_read
    assert result is not None and record.labels[-1] == "prewarm:sampled"
    fidelity["gp3 cold-read check: cold MiB/s, warm MiB/s (envelope 125)"] = (
        round(result.cold.mibps, 1),
        round(result.warm.mibps, 1),
    )
    fidelity["gp3 cold-read check: ms per 1 MiB read cold, warm (mean, p50, max)"] = [
        tuple(round(v, 2) for v in (p.read_ms_mean, p.read_ms_p50, p.read_ms_max))
        for p in (result.cold, result.warm)
    ]
    fidelity["gp3 cold-read check: first-access penalty % (no lazy loading emulated)"] = round(
        result.penalty_pct, 1
    )
    for measured in (result.cold, result.warm):
        assert measured.mibps == pytest.approx(125, rel=0.15)
    assert abs(result.penalty_pct) < 20
    assert manifest["emulation"]["errors"] == []
    agent_env.assert_clean()


def test_members_of_a_jbod_are_sampled_together(agent_env: Any, fidelity: dict[str, Any]) -> None:
    member = emulated("gp3", 2 * GIB, **GP3)
    target = ebs_target("pair", [member, member], layout="jbod")
    code, manifest = agent_env.run(agent_env.plan([target], [], prewarm=sampled("pair")))
    assert code == 0, manifest["error"]
    (check,) = manifest["prewarm"]
    assert [d["sampled_bytes"] for d in check["devices"]] == [256 * MIB, 256 * MIB]
    (record,) = collect(agent_env.out).records
    assert record.cold_read is not None and record.cold_read.volumes == 2
    assert record.bytes == 512 * MIB and record.jobs == 2
    fidelity["gp3 jbod x2 cold-read check: cold MiB/s (envelope 2 x 125)"] = round(
        record.cold_read.cold.mibps, 1
    )
    assert record.cold_read.cold.mibps == pytest.approx(250, rel=0.15)
    agent_env.assert_clean()


def test_a_full_read_and_a_check_in_one_plan(agent_env: Any) -> None:
    restored = ebs_target("restored", [emulated("gp3", 256 * MIB, **GP3)])
    new = ebs_target("new", [emulated("gp3", 256 * MIB, **GP3)])
    prewarm = {**sampled("new"), "targets": ["restored", "new"]}
    code, manifest = agent_env.run(agent_env.plan([restored, new], [], prewarm=prewarm))
    assert code == 0, manifest["error"]
    assert [(p["target"], p["mode"]) for p in manifest["prewarm"]] == [
        ("restored", "full"),
        ("new", "sampled"),
    ]
    assert manifest["prewarm"][0]["devices"][0]["bytes"] == 256 * MIB
    records = {r.target_id: r for r in collect(agent_env.out).records}
    assert records["restored"].cold_read is None and records["restored"].bytes == 256 * MIB
    assert records["new"].cold_read is not None and records["new"].bytes == 32 * MIB
    agent_env.assert_clean()


@pytest.mark.py39
def test_the_check_under_python39(agent_env: Any) -> None:
    """Amazon Linux 2023's python3 runs the check as the deployed agent would."""
    target = ebs_target("vol", [emulated("gp3", 256 * MIB, **GP3)])
    agent = agent_env.start(agent_env.plan([target], [], prewarm=sampled("vol")), python=python39())
    assert agent.wait(timeout=120) == 0, agent_env.stderr_path.read_text()
    manifest = agent_env.manifest()
    assert manifest["system"]["python"].startswith("3.9.")
    (check,) = manifest["prewarm"]
    assert (check["mode"], check["status"]) == ("sampled", "ok")
    assert [len(d["extents"]) for d in check["devices"]] == [4]  # 32 MiB of 256 MiB, 8 MiB extents
    assert "cold-read check of vol: cold" in (agent_env.out / "agent.log").read_text()
    agent_env.assert_clean()
