"""Deliberate faults for local runs: the fault-matrix tests break each step on purpose.

A fault names a point (``compute.launch``, ``agent.run``, ``node.run/server-0``, ``handler.collect``,
...), the config
it hits (or ``*``), what happens (an error name, an agent behaviour, or an ``action`` run just
before the step, which then goes on: damage a document, hold a step until a test lets it go; the
local endpoint serves one invocation at a time, so a held handler holds every other) and how many
times it fires, so "fails twice, then the retry succeeds" and "fails until the state machine gives
up" are both expressible. ``FaultPlan`` counts what fired, for the report.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from storagebench.core import errors

AGENT_BEHAVIOURS = (
    "agent_checksum",  # the agent's SHA-256 does not match: the document stops before the agent runs
    "plan_checksum",  # the plan's SHA-256 does not match: the agent refuses it and reports the step
    "package_install",  # the image's package manager fails: the agent reports the step
    "output_upload",  # every upload fails (no such bucket): the agent reports the step
    "callback",  # Step Functions refuses the final callback: the output is uploaded, the task times out
    "command_timed_out",  # the agent runs forever, heartbeating: the command's timeout ends it
    "instance_died",  # the machine disappears mid-run: no more heartbeats, nothing cleaned on it
    "output_missing",  # the agent finishes but its output never reaches the artifacts
    # Spot (adapters.spot_faults): the instance's metadata service gives the two-minute notice once
    # the agent reaches setup, pre-warm, its second step, its first step, or teardown
    "spot_notice_setup",
    "spot_notice_prewarm",
    "spot_notice_between",
    "spot_notice_inside",
    "spot_notice_teardown",
    "spot_reclaimed",  # EC2 reclaims the instance mid-run without a notice the agent saw
)
SPOT_READY_POINT = "instance.ready"
"""``spot_reclaimed`` here: EC2 reclaims the instance while the workflow waits for it to be ready."""


@dataclass
class Fault:
    point: str
    kind: str
    config_id: str = "*"
    times: int = 1
    message: str = "injected fault"
    action: Callable[[], None] | None = field(default=None, repr=False)  # instead of raising
    after_s: float | None = None  # instance_died on a node (point node.run/<name>): s after it is ready


@dataclass
class FaultPlan:
    faults: list[Fault] = field(default_factory=list)
    fired: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_json(cls, text: str) -> FaultPlan:
        return cls([Fault(**entry) for entry in json.loads(text)])

    def take(self, point: str, config_id: str) -> Fault | None:
        """The fault for this point and config, if one is left to fire (counted)."""
        with self._lock:
            for fault in self.faults:
                if fault.point == point and fault.config_id in ("*", config_id) and fault.times > 0:
                    fault.times -= 1
                    self.fired.append({"point": point, "config_id": config_id, "kind": fault.kind})
                    return fault
        return None

    def raise_if(self, point: str, config_id: str) -> None:
        """Raise the named workflow error (or a plain RuntimeError: a handler bug) at this point, or
        run the fault's action and go on."""
        fault = self.take(point, config_id)
        if fault is None:
            return
        if fault.action is not None:
            fault.action()
            return
        error = getattr(errors, fault.kind, None)
        if isinstance(error, type) and issubclass(error, Exception):
            raise error(f"{fault.message} at {point}")
        raise RuntimeError(f"{fault.message} at {point} ({fault.kind})")
