"""A File Gateway share end to end on this machine (issue 28, item 6): the shipped local variant of
field study 1 (``events/local-file-gateway.json``) through the real workflow. The gateway lifecycle
launches, activates, caches and shares a local gateway (nfs-ganesha on the appliance's address,
``adapters.local_gateway``); the c5.large client, chrooted in Debian 12, installs nfs-common with
apt as on AWS, mounts the share with ``mount -t nfs -o nolock,hard`` (mount(8) runs the image's
mount.nfs: the user-space client over FUSE, ``ssm.nfs_client``), and dd and fio measure through it;
results land in the results store; cleanup unmounts, stops the server and leaves nothing.

Slow tier (``slow``, ``root``): about two minutes with the Debian root cached.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.host import missing_for_an_image

from storagebench.planning.local import LocalOptions
from storagebench_local.session import REPO, LocalSession, gateway_unavailable

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.fio]
EVENT = REPO / "events" / "local-file-gateway.json"
TOOLS = REPO / ".tools"
MIB = 1 << 20


def _missing() -> str | None:
    missing = missing_for_an_image(
        "chroot, mount namespaces, FUSE, nfs-ganesha",
        ("debootstrap", "unshare", "chroot", "fio"),
        "make setup installs it",
    )
    if missing is not None:
        return missing
    if not Path("/dev/fuse").exists():
        return "no /dev/fuse: the local NFS client mounts through FUSE"
    return gateway_unavailable()


def _ganesha_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "ganesha.nfsd":
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_the_file_gateway_share_is_mounted_and_measured_over_nfs(tmp_path: Path) -> None:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    request = json.loads(EVENT.read_text())
    servers_before = set(_ganesha_pids())
    options = LocalOptions(capacity_bytes=512 * MIB, knee_seconds=30.0)
    with LocalSession(tmp_path / "session", options, use_dynamodb_local=False) as session:
        execution = session.run(request)
        assert execution.status == "SUCCEEDED", (execution.error, execution.cause)
        assert execution.output is not None
        [result] = execution.output["configs"]
        assert result["status"] == "succeeded", json.dumps(result, indent=1)[:3000]
        assert result["errors"] == [], result
        assert session.services is not None

        prefix = session.instance_prefix(execution.run_id, result["config_id"])
        assert prefix is not None
        agent = session.services.artifacts.fetch(f"{prefix}agent/")
        manifest = json.loads((agent / "manifest.json").read_text())
        [target] = manifest["targets"]
        [label] = target["labels"]
        # the appliance's address and /<FileShareName>, as the gateway exports the share
        assert label.startswith("nfs:127.42.1.") and ":/sb-" in label, label
        assert set(manifest["packages"]) == {"fio", "nfs-common"}, manifest["packages"]

        # the client image: nfs-common's mount.nfs diverted, the stand-in in its place
        [instance] = session.ssm_agent.instances.values()
        assert instance.image is not None
        assert (instance.image / "sbin" / "mount.nfs.distrib").exists(), "apt installed nfs-common, diverted"
        assert (instance.image / "etc" / "storagebench-nfs-client").exists()

        # measured over the share: dd and fio records in the results store
        stored = session.services.store.get_run(execution.run_id)
        workloads = {r["record"]["workload"] for r in stored["results"]}
        assert {"dd-1mb-file", "fio-randrw-4k-25read"} <= {w.split("[")[0] for w in workloads}, workloads
        fio = [r["record"] for r in stored["results"] if r["record"]["workload"].startswith("fio-randrw")]
        assert fio and all(r["iops"] > 0 for r in fio), fio

        # cleanup: unmounted, server stopped, appliance gone
        assert session.leaks(execution.run_id) == []
        mounts = Path("/proc/self/mounts").read_text().splitlines()
        assert not any(execution.run_id in line for line in mounts), "the share is unmounted"
        assert set(_ganesha_pids()) <= servers_before
        assert not any((tmp_path / "session" / "gateways").iterdir())
