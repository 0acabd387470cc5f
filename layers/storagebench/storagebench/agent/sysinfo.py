"""Facts about the machine a result came from, for the manifest.

The EC2 identity document is read through IMDSv2 (token first) and only when DMI says the
machine is an EC2 instance, so a laptop never waits on 169.254.169.254.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import sys
import urllib.request
from typing import Any, Dict, Optional

from storagebench import __version__
from storagebench.agent.proc import CommandError, run

IMDS = "http://169.254.169.254"


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _cpu_model() -> Optional[str]:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware"):
            return value.strip()
    return None


def _mem_bytes() -> Optional[int]:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def _os_release() -> Optional[str]:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return None


def fio_version() -> Optional[str]:
    try:
        version: str = run(["fio", "--version"], timeout_s=10).stdout
        return version.strip()
    except CommandError:
        return None


def on_ec2() -> bool:
    vendor = (_read("/sys/devices/virtual/dmi/id/board_vendor") or "") + (
        _read("/sys/devices/virtual/dmi/id/sys_vendor") or ""
    )
    return "Amazon" in vendor or (_read("/sys/hypervisor/uuid") or "").startswith("ec2")


def instance_identity(timeout_s: float = 1.0) -> Optional[Dict[str, Any]]:
    """The instance identity document through IMDSv2, or None off EC2 or when IMDS is unreachable."""
    if not on_ec2():
        return None
    try:
        token_request = urllib.request.Request(
            f"{IMDS}/latest/api/token", method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"}
        )
        with urllib.request.urlopen(token_request, timeout=timeout_s) as response:
            token = response.read().decode()
        request = urllib.request.Request(
            f"{IMDS}/latest/dynamic/instance-identity/document", headers={"X-aws-ec2-metadata-token": token}
        )
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            document = json.loads(response.read().decode())
    except (OSError, ValueError):
        return None
    keys = (
        "instanceId",
        "instanceType",
        "region",
        "availabilityZone",
        "imageId",
        "architecture",
        "accountId",
    )
    return {k: document.get(k) for k in keys}


def cgroup_version() -> Optional[int]:
    if os.path.isfile("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device"):
        return 1
    if os.path.isfile("/sys/fs/cgroup/cgroup.controllers") or os.path.isfile(
        "/sys/fs/cgroup/unified/cgroup.controllers"
    ):
        return 2
    return None


def system_facts() -> Dict[str, Any]:
    return {
        "agent_version": __version__,
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": _os_release(),
        "arch": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "mem_bytes": _mem_bytes(),
        "python": sys.version.split()[0],
        "fio_version": fio_version(),
        "root": os.geteuid() == 0,
        "cgroup_version": cgroup_version(),
        "instance": instance_identity(),
    }
