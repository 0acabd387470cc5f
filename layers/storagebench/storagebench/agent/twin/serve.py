"""The twin's own process: mount one volume file over FUSE and answer every I/O when the model says.

Started by ``agent.twin.volume`` as ``python3 -m storagebench.agent.twin.serve`` with the agent's
own code on PYTHONPATH. It talks to its parent over a pipe, one line per message:

* stdout ``ready``: the mount answers (the parent may put a loop device on ``<mount>/volume``);
* stdin ``delay <s>``: until the model starts, answer every I/O this long after it arrives (the
  parent times I/Os through the loop device against this known delay: what they take beyond it
  is this machine's own I/O path, sleep and wake-ups included);
* stdin ``overhead <s>``: that path's time, measured by the parent; every modelled service time
  is shortened by it, so fio sees the model's latency and not the model's plus this machine's;
* stdin ``model``: from now on I/Os are admitted and delayed by the model (before it they are
  answered at once: file-system creation and calibration are not part of any measurement);
* stdin ``track on|off``: follow the host's path while it runs (the compiled twin does, see
  native/twin/src/tracking.rs; this one accepts the command and keeps its calibration);
* stdin ``stop`` or end of input: answer what is pending, print ``state <json>`` and exit.

The state line carries the counters, the credit balance, the burst events and the CPU time the
twin used while modelling, for the agent's manifest and the fidelity bench.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from storagebench.agent.twin.fuse import FuseError, VolumeServer, mount, set_timer_slack
from storagebench.agent.twin.model import ModelError, VolumeModel


class Twin:
    """The handler behind the FUSE server: the backing file plus the model, and their counters."""

    def __init__(self, backing_fd: int, model: VolumeModel, clock: Any = time.monotonic) -> None:
        self.backing_fd = backing_fd
        self.model = model
        self.clock = clock
        self.modelling = False
        self.overhead_s = 0.0
        self.fixed_delay_s = 0.0  # before the model: every I/O answered this late (calibration)
        self.started: Optional[float] = None
        self.started_unix: Optional[float] = None  # wall clock of the model's start (stall times)
        self.cpu_started: Optional[float] = None
        self.modelled_ios = 0
        self.clamped = 0  # service time shorter than the path's overhead: answered at once
        self.forgiven_s = 0.0  # stalls of the twin itself the buckets were allowed to catch up on

    def handle(
        self, offset: int, length: int, write: bool, data: Optional[memoryview], now: float
    ) -> Tuple[float, bytes]:
        if write:
            assert data is not None
            os.pwrite(self.backing_fd, data, offset)
            payload = b""
        else:
            payload = os.pread(self.backing_fd, length, offset)
        if not self.modelling:
            return now + self.fixed_delay_s, payload
        self.modelled_ios += 1
        admission = self.model.admission
        start = admission.admit(now, offset, length, write)
        service = self.model.service.sample() - self.overhead_s
        if service < 0:
            self.clamped += 1
            service = 0.0
        return start + service, payload

    def forgive(self, seconds: float) -> None:
        """The machine stalled the twin this long: the model's buckets may catch up on it."""
        if self.modelling:
            self.model.admission.forgive(seconds)
            self.forgiven_s += seconds

    def start_model(self) -> None:
        self.modelling = True
        self.started_unix = time.time()
        self.started = self.clock()
        times = os.times()
        self.cpu_started = times.user + times.system

    def state(self) -> Dict[str, Any]:
        admission = self.model.admission
        events: List[Dict[str, Any]] = []
        for at, name, credits, iops, mibps in admission.events:
            events.append(
                {
                    "elapsed_s": round(at - (self.started or at), 3),
                    "event": name,
                    "credits": round(credits, 1),
                    "ceiling_iops": iops,
                    "ceiling_mibps": mibps,
                }
            )
        times = os.times()
        cpu = times.user + times.system - self.cpu_started if self.cpu_started is not None else 0.0
        return {
            "modelled_s": round(self.clock() - self.started, 3) if self.started is not None else 0.0,
            "cpu_s": round(cpu, 3),
            "ios": admission.ios,
            "operations": admission.operations,
            "bytes": admission.bytes,
            "overhead_s": self.overhead_s,
            "clamped_ios": self.clamped,
            "stalls_forgiven_s": round(self.forgiven_s, 4),
            "implementation": "python",
            "model_started_unix": self.started_unix,
            "credits_left": round(admission.credits, 1) if admission.limits.credit_capacity else None,
            "events": events,
        }


class Control:
    """The parent's commands on stdin, read without blocking the I/O loop."""

    def __init__(self, twin: Twin, stream: Any = None) -> None:
        self.twin = twin
        self.fd = (stream or sys.stdin).fileno()
        os.set_blocking(self.fd, False)
        self._partial = b""
        self.stopped = False

    def poll(self) -> None:
        try:
            chunk = os.read(self.fd, 4096)
        except BlockingIOError:
            return
        if not chunk:
            self.stopped = True
            return
        self._partial += chunk
        while b"\n" in self._partial:
            line, self._partial = self._partial.split(b"\n", 1)
            self._command(line.decode("ascii", "replace").strip())

    def _command(self, line: str) -> None:
        word, _, argument = line.partition(" ")
        if word in ("overhead", "delay"):
            try:
                value = min(max(float(argument), 0.0), 0.01)
            except ValueError:
                _say(f"error {word} {argument!r}: seconds expected")
                return
            if word == "overhead":
                self.twin.overhead_s = value
            else:
                self.twin.fixed_delay_s = value
        elif word == "model":
            self.twin.start_model()
        elif word == "track":
            # The compiled twin follows the host's path while tracking is on; this data path
            # keeps its start-up calibration (it costs far more than the path it would follow).
            if argument not in ("on", "off"):
                _say(f"error track {argument!r}: on or off expected")
        elif word == "stop":
            self.stopped = True
        elif word:
            _say(f"error unknown command {word!r}: overhead, delay, model, track or stop expected")


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="storagebench-twin", description=__doc__)
    parser.add_argument("--backing", required=True, help="sparse file holding the volume's data")
    parser.add_argument("--mountpoint", required=True, help="empty directory to mount the volume file on")
    parser.add_argument("--capacity", required=True, type=int, help="volume size in bytes")
    parser.add_argument("--spec", required=True, help='JSON: {"limits": {...}, "latency": {"modes": [...]}}')
    parser.add_argument("--seed", type=int, default=None, help="seed of the service-time draws")
    args = parser.parse_args(argv)
    try:
        spec = json.loads(args.spec)
        model = VolumeModel(spec["limits"], spec["latency"], args.seed)
    except (ValueError, KeyError, TypeError, ModelError) as exc:
        _say(f"error spec: {exc}")
        return 2
    try:
        backing_fd = os.open(args.backing, os.O_RDWR)
        fuse_fd = os.open("/dev/fuse", os.O_RDWR)
    except OSError as exc:  # one line the parent quotes, not a traceback
        _say(f"error {exc.filename}: {exc.strerror}")
        return 3
    set_timer_slack()
    twin = Twin(backing_fd, model)
    try:
        mount(args.mountpoint, fuse_fd)
    except FuseError as exc:
        _say(f"error {exc}")
        return 3
    _say("ready")
    control = Control(twin)
    server = VolumeServer(fuse_fd, args.capacity, twin.handle, on_stall=twin.forgive)
    server.serve(extra_fd=control.fd, on_extra=control.poll, should_stop=lambda: control.stopped)
    _say("state " + json.dumps(twin.state(), sort_keys=True))
    os.close(fuse_fd)
    os.close(backing_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
