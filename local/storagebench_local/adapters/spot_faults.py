"""Spot interruptions for the fault matrix, arriving the way they do on EC2.

* A notice: the instance's own metadata service (ec2-metadata-mock) starts answering
  ``spot/instance-action`` once the agent reaches a stage (``SpotNoticeArming``, watching the
  agent's ``progress.json`` on the instance); the agent sees it at its next poll and acts on it.
* A reclaimed instance: EC2 has already terminated it with ``Server.SpotInstanceTermination``
  (``reclaim``): every process on it dies, and moto records that state reason, which the
  workflow reads with DescribeInstances (CheckReady, or after the agent's heartbeats stop).
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from storagebench.core.interruption import SPOT_TERMINATION_CODE
from storagebench_local.ssm.instance import LocalInstance

LOG = logging.getLogger("storagebench_local.spot")
POLL_S = 0.1
MOTO_ACCOUNT = "123456789012"  # moto's default account, the local session's (session.ACCOUNT)
ARM_TIMEOUT_S = 300.0
SPOT_TERMINATION_MESSAGE = f"{SPOT_TERMINATION_CODE}: Spot instance termination"
# fault kind -> the agent's progress at which its notice is armed
NOTICE_STAGES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "spot_notice_setup": lambda p: p.get("stage") == "setup",
    "spot_notice_prewarm": lambda p: p.get("stage") == "prewarm",
    "spot_notice_between": lambda p: p.get("stage") == "workloads" and int(p.get("step") or 0) >= 2,
    "spot_notice_inside": lambda p: p.get("stage") == "workloads" and int(p.get("step") or 0) >= 1,
    "spot_notice_teardown": lambda p: p.get("stage") == "teardown",
}


def progress_path(instance: LocalInstance) -> Path:
    """The agent's progress.json as this machine sees the instance's /var/lib/storagebench/out."""
    return instance.directory / "root" / "var" / "lib" / "storagebench" / "out" / "progress.json"


class SpotNoticeArming(threading.Thread):
    """Arms the instance's Spot notice when the agent's progress meets the fault's stage."""

    def __init__(self, instance: LocalInstance, kind: str) -> None:
        super().__init__(name=f"spot-notice-{instance.instance_id}", daemon=True)
        if kind not in NOTICE_STAGES:
            raise ValueError(f"Spot fault {kind!r}: one of {', '.join(NOTICE_STAGES)} expected")
        self.instance = instance
        self.kind = kind
        self.reached = NOTICE_STAGES[kind]
        self.armed_at: float | None = None
        self.progress_seen: dict[str, Any] = {}

    def run(self) -> None:
        path = progress_path(self.instance)
        deadline = time.monotonic() + ARM_TIMEOUT_S
        while time.monotonic() < deadline and not self.instance.terminated:
            try:
                progress = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # not written yet, or being replaced
                progress = {}
            if isinstance(progress, dict) and self.reached(progress):
                self.progress_seen = progress
                self.instance.metadata.arm_spot_notice()
                self.armed_at = time.monotonic()
                LOG.info("%s: Spot notice armed at %s", self.instance.instance_id, progress)
                return
            time.sleep(POLL_S)
        LOG.warning("%s: the agent never reached the stage of %s", self.instance.instance_id, self.kind)


def scratch_directories(plan: Mapping[str, Any]) -> list[Path]:
    """What the agent makes in the plan's directory targets (``storagebench-<run>-<config>-<target>``):
    on EC2 it is on the instance's disk and goes with it; here the directory is this machine's."""
    tag = f"{plan['run_id']}-{plan['config_id']}"
    return [
        Path(str(target["path"])) / f"storagebench-{tag}-{target['id']}"
        for target in plan.get("targets") or []
        if target.get("path")
    ]


def reclaim(
    ec2: Any, instance: LocalInstance | None, instance_id: str, region: str, scratch: Iterable[Path] = ()
) -> None:
    """EC2 reclaims the Spot instance: it dies at once, terminated with Spot's state reason, and
    what its agent left in ``scratch`` goes with its disk."""
    if instance is not None:
        instance.terminate()
    for directory in scratch:
        shutil.rmtree(directory, ignore_errors=True)  # absent when the agent never got that far
    ec2.terminate_instances(InstanceIds=[instance_id])
    mark_spot_terminated(instance_id, region)


def mark_spot_terminated(instance_id: str, region: str) -> None:
    """moto records every terminate as the user's: give the instance the reason EC2 gives Spot's."""
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    found = ec2_backends[MOTO_ACCOUNT][region].get_instance(instance_id)
    found.state_reason = StateReason(SPOT_TERMINATION_MESSAGE, SPOT_TERMINATION_CODE)
