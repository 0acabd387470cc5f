"""One twin volume seen from the agent: start its process, calibrate, switch the model on, stop.

The twin serves ``<mountpoint>/volume``; the emulation puts a loop device with direct I/O on it
(``agent.emulate``). Calibration times QD1 4 KiB direct reads through that loop device while
the twin still answers at once: what they take is this machine's own I/O path (block layer,
loop, FUSE, the twin's loop), which the twin then takes off every modelled service time.

Two programs serve a twin, on one protocol (``agent.twin.serve``'s): the compiled data path
(``native/twin``, ``storagebench-twin``; a few µs of CPU per I/O, real-time scheduling) where
the plan names it and this machine has it, else the Python one (about 0.1 ms per I/O), with the
reason in the manifest (``implementation``, ``fallback_reason``).
"""

from __future__ import annotations

import json
import mmap
import os
import random
import select
import shutil
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import storagebench
from storagebench.agent.twin.fuse import unmount

CALIBRATION_IOS = 240
CALIBRATION_DELAY_S = 0.0003  # about an SSD service time: the twin sleeps and wakes as it will later
CALIBRATION_WARMUP = 40
# The least of a few medians: a burst of load beside one round (another fio, the suite's unit tier)
# inflated a single median by ~90 us, the twin then subtracted it from every service time and QD1
# p50 read 0.51 ms against the model's 0.60 (make test-busy). A round is ~0.1 s.
CALIBRATION_ROUNDS = 3
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 30.0


class TwinError(RuntimeError):
    """The twin could not be started, calibrated or stopped."""


def code_root() -> str:
    """What to put on PYTHONPATH for the twin's process: the zipapp, or the source tree."""
    return os.path.dirname(os.path.dirname(os.path.abspath(storagebench.__file__)))


NATIVE, PYTHON = "native", "python"
NATIVE_NAME = "storagebench-twin"  # the compiled program's name, which sweep looks for


def native_problem(program: Optional[str]) -> Optional[str]:
    """Why the compiled twin ``program`` cannot serve here, or None."""
    if not program:
        return "the plan names no compiled twin (local mode passes it where make setup built it)"
    if not os.path.isabs(program) or os.path.basename(program) != NATIVE_NAME:
        return f"twin_program {program!r}: an absolute path to {NATIVE_NAME} expected"
    if not os.path.isfile(program):
        return f"twin_program {program}: not found on this machine (make setup builds it)"
    if not os.access(program, os.X_OK):
        return f"twin_program {program}: not executable"
    return None


def twin_unavailable() -> Optional[str]:
    """Why this machine cannot run a twin, or None (checked before anything is created)."""
    if not sys.platform.startswith("linux"):
        return f"FUSE twin needs Linux, this is {sys.platform}"
    if os.geteuid() != 0:
        return "FUSE twin needs root (it mounts without fusermount)"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine (FUSE module not loaded)"
    return None


class TwinVolume:
    """A twin's process and its files; ``volume_path`` is what the loop device goes on."""

    def __init__(
        self,
        backing_file: str,
        mountpoint: str,
        capacity_bytes: int,
        spec: Dict[str, Any],
        program: Optional[str] = None,
    ) -> None:
        """``program``: the compiled twin to run (checked with ``native_problem`` first); None
        runs the Python twin."""
        self.backing_file = backing_file
        self.mountpoint = mountpoint
        self.capacity_bytes = capacity_bytes
        self.spec = spec
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.overhead_s: Optional[float] = None
        self.calibrated_by: Optional[str] = None
        self.state: Optional[Dict[str, Any]] = None
        self.program = program
        self._stdout = b""

    @property
    def implementation(self) -> str:
        return NATIVE if self.program else PYTHON

    @property
    def volume_path(self) -> str:
        return os.path.join(self.mountpoint, "volume")

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        if os.path.exists(self.backing_file):
            raise TwinError(f"{self.backing_file} already exists; refusing to reuse another run's volume")
        os.makedirs(self.mountpoint, exist_ok=False)
        with open(self.backing_file, "wb") as handle:
            handle.truncate(self.capacity_bytes)
        server = [self.program] if self.program else [sys.executable, "-m", "storagebench.agent.twin.serve"]
        argv = [
            *server,
            "--backing",
            self.backing_file,
            "--mountpoint",
            self.mountpoint,
            "--capacity",
            str(self.capacity_bytes),
            "--spec",
            json.dumps(self.spec, sort_keys=True),
        ]
        env = dict(os.environ, PYTHONPATH=code_root())
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
        )
        line = self._read_line(timeout_s)
        if line != "ready":
            self._abandon()
            raise TwinError(f"twin for {self.backing_file} did not start: {line or 'no answer'}")

    def calibrate(self, device_path: str) -> float:
        """This machine's own share of a QD1 4 KiB direct read through ``device_path``: the twin
        answers every I/O a known ``CALIBRATION_DELAY_S`` after it arrives, and what the I/O takes
        beyond that is the path (block layer, loop, FUSE, the twin's and the reader's wake-ups).
        Timed by fio where it is installed (the path fio will see, libaio included), else by
        direct reads from here; the least of ``CALIBRATION_ROUNDS`` medians of a few hundred I/Os."""
        self.command(f"delay {CALIBRATION_DELAY_S:.6f}")
        medians = [self._fio_median(device_path) for _ in range(CALIBRATION_ROUNDS)]
        by_fio = [m for m in medians if m is not None]
        method = "fio"
        if by_fio:
            measured = min(by_fio)
        else:
            measured = min(self._direct_read_median(device_path) for _ in range(CALIBRATION_ROUNDS))
            method = "direct reads"
        self.overhead_s = max(0.0, measured - CALIBRATION_DELAY_S)
        self.calibrated_by = method
        self.command("delay 0")
        self.command(f"overhead {self.overhead_s:.9f}")
        return self.overhead_s

    def _fio_median(self, device_path: str) -> Optional[float]:
        fio = shutil.which("fio")
        if fio is None:
            return None
        argv = [
            fio,
            "--name=calibrate",
            f"--filename={device_path}",
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=1",
            f"--number_ios={CALIBRATION_IOS}",
            "--randrepeat=1",
            "--lat_percentiles=1",  # submission to completion, as the agent's own jobs report it
            "--output-format=json",
        ]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
            document = json.loads(done.stdout)
            percentile = document["jobs"][0]["read"]["lat_ns"]["percentile"]["50.000000"]
        except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, IndexError, TypeError):
            return None  # no usable fio here: the reads below measure the same path less closely
        return float(percentile) / 1e9 if done.returncode == 0 and percentile > 0 else None

    def _direct_read_median(self, device_path: str) -> float:
        buffer = mmap.mmap(-1, 4096)
        samples: List[float] = []
        blocks = max(1, self.capacity_bytes // 4096)
        draw = random.Random(1)
        fd = os.open(device_path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
        try:
            for index in range(CALIBRATION_IOS):
                offset = draw.randrange(blocks) * 4096
                started = time.perf_counter()
                os.preadv(fd, [buffer], offset)
                if index >= CALIBRATION_WARMUP:
                    samples.append(time.perf_counter() - started)
        except OSError as exc:
            raise TwinError(f"calibrating {device_path}: {exc.strerror}") from None
        finally:
            os.close(fd)
            buffer.close()
        samples.sort()
        return samples[len(samples) // 2]

    def command(self, line: str) -> None:
        process = self._running()
        assert process.stdin is not None
        try:
            process.stdin.write(line.encode("ascii") + b"\n")
            process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise TwinError(
                f"twin for {self.backing_file} is gone ({exc}); exit code {process.poll()}"
            ) from None

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> Dict[str, Any]:
        """Stop the process (after the loop device let go), unmount, delete the files."""
        problems: List[str] = []
        process = self.process
        if process is not None and process.poll() is None:
            try:
                self.command("stop")
                line = self._read_line(timeout_s)
                while line and not line.startswith("state "):
                    line = self._read_line(timeout_s)
                if line.startswith("state "):
                    self.state = json.loads(line[len("state ") :])
                else:
                    problems.append(f"no final state from the twin: {line or 'no answer'}")
                process.wait(timeout=timeout_s)
            except (TwinError, subprocess.TimeoutExpired, ValueError) as exc:
                problems.append(str(exc))
                process.kill()
                process.wait(timeout=timeout_s)
        self._unmount()
        removals: List[Tuple[Callable[[str], None], str]] = [
            (os.rmdir, self.mountpoint),
            (os.unlink, self.backing_file),
        ]
        for remove, path in removals:
            try:
                remove(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                problems.append(f"{exc.filename}: {exc.strerror}")
        if problems:
            raise TwinError("; ".join(problems))
        return self.state or {}

    # --- internals -----------------------------------------------------------------------------

    def _running(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            raise TwinError(f"twin for {self.backing_file} was never started")
        return self.process

    def _read_line(self, timeout_s: float) -> str:
        process = self._running()
        assert process.stdout is not None
        fd = process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._stdout:
            left = deadline - time.monotonic()
            if left <= 0:
                return ""
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                return ""
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self._stdout += chunk
        line, _, self._stdout = self._stdout.partition(b"\n")
        return line.decode("utf-8", "replace").strip()

    def _unmount(self) -> None:
        """Always asked of the kernel: once the twin has exited, stat() on the mount fails with
        ENOTCONN, so ``os.path.ismount`` would say "not mounted" and leave it behind."""
        unmount(self.mountpoint)  # "not mounted" (EINVAL, ENOENT) is not an error

    def _abandon(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        self._unmount()
        shutil.rmtree(self.mountpoint, ignore_errors=True)
        if os.path.exists(self.backing_file):
            os.unlink(self.backing_file)
