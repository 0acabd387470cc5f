"""The client's mount of a File Gateway share: the exact command, options and cleanup the agent issues.

No NFS server is needed: the agent's command runner is replaced by a recorder (this machine's
kernel has no nfs file system), so what is checked is the argv ``mount`` would get.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from storagebench.agent import targets as agent_targets
from storagebench.agent.emulate import EmulatedFleet
from storagebench.agent.log import Progress
from storagebench.agent.proc import CommandError
from storagebench.kinds.file_gateway import file_gateway_mount
from storagebench.protocol.plan import TargetSpec
from storagebench.request import FileGatewayTarget, parse_request

GATEWAY: dict[str, Any] = {
    "id": "share",
    "kind": "file_gateway",
    "gateway_instance_type": "c5.4xlarge",
    "root_volume": {"type": "io1", "size_gib": 80, "iops": 4000},
    "cache_volumes": [{"type": "io1", "size_gib": 512, "iops": 1500}],
}


def gateway(**extra: Any) -> FileGatewayTarget:
    document = {
        "name": "gw",
        "configs": [{"id": "alpha", "instance_type": "c5.large", "targets": [{**GATEWAY, **extra}]}],
        "workloads": [{"profile": "dd-seq-write-1m-dsync"}],
    }
    target = parse_request(document).configs[0].targets[0]
    assert isinstance(target, FileGatewayTarget)
    return target


class Recorder:
    """Stands in for agent.proc.run: records each argv; ``fail`` makes the first matching one fail."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def __call__(self, argv: Sequence[str], **_: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if self.fail is not None and argv[0] == self.fail:
            raise CommandError(f"{' '.join(argv)} failed with status 32: mount.nfs: Connection refused")
        return subprocess.CompletedProcess(list(argv), 0, "", "")


def prepare(tmp_path: Path, spec: TargetSpec, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(agent_targets, "run", recorder)
    fleet = EmulatedFleet(str(tmp_path / "backing"), "sb-test")
    return agent_targets.Targets("run", str(tmp_path / "mnt"), fleet, Progress(None, quiet=True))


@pytest.mark.parametrize(
    ("extra", "options"),
    [
        ({}, "nolock,hard"),
        ({"nfs_version": "3"}, "nolock,hard,nfsvers=3"),
        ({"mount_options": "hard"}, "hard"),
    ],
)
def test_the_share_is_mounted_with_the_requested_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, Any], options: str
) -> None:
    spec = file_gateway_mount(gateway(**extra), "10.0.1.25", "/sb-share-alpha")
    assert spec == {
        "id": "share",
        "kind": "nfs",
        "source": "10.0.1.25:/sb-share-alpha",
        "fstype": "nfs",
        "mount_options": options,
    }
    recorder = Recorder()
    targets = prepare(tmp_path, spec, recorder, monkeypatch)
    prepared = targets.prepare(spec)
    mountpoint = str(tmp_path / "mnt" / "share")
    # The study's command: mount -t nfs -o nolock,hard <gateway-ip>:/<bucket> <mountpoint>
    assert recorder.calls == [["mount", "-t", "nfs", "-o", options, "10.0.1.25:/sb-share-alpha", mountpoint]]
    assert (prepared.mode, prepared.path) == ("filesystem", mountpoint)
    assert "nfs:10.0.1.25:/sb-share-alpha" in prepared.labels
    report = targets.teardown()
    assert recorder.calls[-1] == ["umount", mountpoint]
    assert report["status"] == "ok" and not Path(mountpoint).exists()


def test_a_refused_mount_names_the_target_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = file_gateway_mount(gateway(), "10.0.1.25", "/sb-share-alpha")
    recorder = Recorder(fail="mount")
    targets = prepare(tmp_path, spec, recorder, monkeypatch)
    with pytest.raises(
        agent_targets.TargetError, match=r"target share \(nfs\): mount -t nfs .* Connection refused"
    ):
        targets.prepare(spec)
    report = targets.teardown()
    assert report["status"] == "ok" and not (tmp_path / "mnt" / "share").exists()
    assert [call[0] for call in recorder.calls] == ["mount"]  # nothing to unmount


def test_a_share_path_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="share_path 'bucket' must be absolute"):
        file_gateway_mount(gateway(), "10.0.1.25", "bucket")
