"""Local mode rebinds a plan's EBS targets onto emulated volumes and keeps what the request said."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.core.errors import AgentError
from storagebench.planning.local import LocalOptions
from storagebench_local.adapters.local_plan import rebind


def _plan(**target: Any) -> Any:
    spec = {
        "id": "chunks",
        "kind": "ebs",
        "filesystem": "raw",
        "count": 1,
        "layout": "raid0",
        "volume": {"type": "gp2", "size_gib": 100, "iops": None, "throughput_mibps": None},
        **target,
    }
    return {"targets": [spec, {"id": "shared", "kind": "directory", "path": "/mnt/moosefs"}]}


def test_a_target_left_to_the_setup_hook_stays_left_to_it() -> None:
    rebound = rebind(_plan(prepare=False), LocalOptions())
    chunks, shared = rebound["targets"]
    assert chunks["prepare"] is False and chunks["emulate"][0]["volume_type"] == "gp2"
    assert shared == {"id": "shared", "kind": "directory", "path": "/mnt/moosefs"}


def test_a_prepared_target_stays_prepared() -> None:
    assert rebind(_plan(filesystem="xfs"), LocalOptions())["targets"][0]["prepare"] is True


def _nfs_plan() -> Any:
    share = {
        "id": "share",
        "kind": "nfs",
        "source": "127.42.1.7:/sb-share",
        "fstype": "nfs",
        "mount_options": "nolock,hard",
    }
    return {"targets": [share]}


def test_an_nfs_mount_stays_as_on_aws_where_the_instance_has_the_nfs_client() -> None:
    assert rebind(_nfs_plan(), LocalOptions(), nfs_client=True)["targets"] == _nfs_plan()["targets"]


def test_an_nfs_mount_is_refused_on_an_instance_without_the_nfs_client() -> None:
    with pytest.raises(AgentError, match=r"target share \(nfs 127\.42\.1\.7:/sb-share\).*image debian-12"):
        rebind(_nfs_plan(), LocalOptions())


def test_the_cpus_are_kept_awake_unless_asked_otherwise() -> None:
    held = rebind(_plan(), LocalOptions())["targets"][0]["emulate"][0]
    assert "cpu_wake" not in held  # the agent's default: hold (agent.twin.wake)
    freed = rebind(_plan(), LocalOptions(cpu_wake="free"))["targets"][0]["emulate"][0]
    assert freed["cpu_wake"] == "free"
    striped = rebind(_plan(count=2), LocalOptions(cpu_wake="free", can_stripe=False))["targets"][0]
    assert [e["cpu_wake"] for e in striped["emulate"]] == ["free"]  # the summed stand-in too
