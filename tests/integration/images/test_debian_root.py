"""The real document on a second distribution: a minimal Debian 12 root, only python3 in it.

The root is built once with debootstrap and cached (``.cache/images``); each run copies it, so
the instance starts as a fresh image would: no fio, no mkfs.btrfs. The config asks for
``"image": "debian-12"`` and a btrfs volume (refused on al2023): local mode publishes Debian's AMI,
Provision resolves it from Debian's public parameter, and the local SSM agent boots that AMI's
instance chrooted in a copy of the root. There the document fetches and verifies the agent from
the local S3 endpoint with python3, and the agent installs fio and btrfs-progs with apt, fetches
and verifies its plan, measures a scaled workload on an emulated gp3 volume (the kernel's counters
of the loop device as the volume's view), uploads its output and calls back with credentials from
the instance's metadata service.

Slow tier (``slow``, ``root``): about a minute with the root cached, a few more to build it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.host import missing_for_an_image

from storagebench.planning.local import LocalOptions
from storagebench_local.session import REPO, LocalSession
from storagebench_local.ssm.image_root import debian_root

pytestmark = [pytest.mark.root, pytest.mark.slow]
CACHE = REPO / ".cache" / "images"
MIB = 1 << 20


def _missing() -> str | None:
    return missing_for_an_image(
        "chroot, mount namespaces, loop devices",
        ("debootstrap", "losetup", "unshare", "chroot"),
        "make setup installs debootstrap",
    )


@dataclass
class OneConfigRun:
    result: dict[str, Any]  # the config's entry of the execution output
    manifest: dict[str, Any]  # the agent's manifest
    stderr: str  # the SSM command's stderr
    booted_images: list[bool]  # per booted instance: did it chroot into an image root


def _run_one_config(tmp_path: Path, request: dict[str, Any]) -> OneConfigRun:
    """Run a one-config request in a local session; it must succeed, measure and leave nothing."""
    options = LocalOptions(capacity_bytes=512 * MIB, knee_seconds=30.0)
    with LocalSession(tmp_path / "session", options, use_dynamodb_local=False) as session:
        execution = session.run(request)
        assert execution.status == "SUCCEEDED", (execution.error, execution.cause)
        assert execution.output is not None
        [result] = execution.output["configs"]
        assert result["status"] == "succeeded", json.dumps(result, indent=1)[:3000]
        assert result["records"] > 0
        assert session.services is not None
        prefix = session.instance_prefix(execution.run_id, result["config_id"])
        assert prefix is not None
        agent = session.services.artifacts.fetch(f"{prefix}agent/")
        ssm = session.services.artifacts.fetch(f"{prefix}ssm/")
        assert session.leaks(execution.run_id) == []
        return OneConfigRun(
            result=result,
            manifest=json.loads((agent / "manifest.json").read_text()),
            stderr="".join(p.read_text() for p in ssm.rglob("stderr")),
            booted_images=[i.image is not None for i in session.ssm_agent.instances.values()],
        )


def test_the_document_runs_on_a_fresh_debian_root(tmp_path: Path) -> None:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    started = time.monotonic()
    image, built_s = debian_root(CACHE)
    for absent in ("usr/bin/fio", "usr/sbin/mkfs.btrfs", "sbin/mkfs.btrfs", "usr/bin/aws"):
        assert not (image / absent).exists(), f"the cached root must stay pristine: {absent} is in it"
    assert (image / "usr/bin/python3").exists()

    request = {
        "name": "debian-root",
        "configs": [
            {
                "id": "deb-gp3",
                "instance_type": "c5.large",
                "image": "debian-12",
                "targets": [
                    {"kind": "ebs", "id": "main", "type": "gp3", "size_gib": 100, "filesystem": "btrfs"}
                ],
            }
        ],
        "prewarm": {"method": "none"},
        "workloads": [{"profile": "std-randread-4k", "scale": 0.01}],
        "repetitions": 1,
        "timing": {"ready_poll_s": 1, "command_poll_s": 30},
    }
    run = _run_one_config(tmp_path, request)
    assert run.result["errors"] == [], run.result
    assert run.booted_images == [True], "the debian-12 AMI boots the root"
    manifest, stderr = run.manifest, run.stderr
    # installed by the agent with apt inside the image, versions recorded
    assert set(manifest["packages"]) == {"fio", "btrfs-progs"}, manifest["packages"]
    assert "installing fio btrfs-progs" in stderr
    views = [p["volume"] for step in manifest["steps"] for p in step["phases"] if p.get("volume")]
    assert views and all(v[0]["source"] == "kernel-counters" for v in views)
    assert views[0][0]["directions"]["read"]["ops"] > 0
    assert manifest["system"].get("os", "").startswith("Debian GNU/Linux 12") or "bookworm" in json.dumps(
        manifest["system"]
    )
    print(f"debian root: built in {built_s:.0f} s (0: cached); test {time.monotonic() - started:.0f} s")


def test_the_genomics_moosefs_config_runs_its_setup_hook_on_debian(tmp_path: Path) -> None:
    """The field study's MooseFS config as shipped (LizardFS's stand-in): its setup hook installs
    MooseFS with apt, formats the chunk volume, starts master and chunk server and mounts the
    FUSE client; a dd workload writes through it; the teardown hook stops it all."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    study = json.loads((REPO / "events" / "genomics-file-systems.json").read_text())
    config = next(c for c in study["configs"] if c["id"] == "moosefs-ebs")
    config["targets"][0]["size_gib"] = 100  # the emulated chunk volume (a loop device) stays small
    request = {
        "name": "moosefs-debian",
        "configs": [config],
        "prewarm": {"method": "none"},
        "workloads": [{"profile": "dd-seq-write-1m-dsync", "scale": 0.01, "targets": ["shared"]}],
        "repetitions": 1,
        "timing": {"ready_poll_s": 1, "command_poll_s": 30},
    }
    manifest = _run_one_config(tmp_path, request).manifest
    hooks = manifest.get("hooks", {})
    assert (hooks["setup"]["rc"], hooks["teardown"]["rc"]) == (0, 0), hooks
