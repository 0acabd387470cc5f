"""The CPUs kept awake while twins serve: the PM QoS request's bytes, its end, and its refusal."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from storagebench.agent.twin.wake import WakeLatencyHold


def test_the_request_is_a_native_s32_of_0_us_held_until_released(tmp_path: Path) -> None:
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"")
    hold = WakeLatencyHold(str(device))
    assert hold.held
    assert device.read_bytes() == struct.pack("=i", 0)
    fd = hold.fd
    assert fd is not None
    hold.release()
    assert not hold.held
    try:
        os.fstat(fd)
        still_open = True
    except OSError:
        still_open = False
    assert not still_open  # the kernel drops the request when its file closes
    hold.release()  # twice is harmless
    assert hold.summary() == {"cpu_wake_latency_us": 0, "refused": None}


def test_without_the_device_the_twins_serve_without_it_and_say_why(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-device"
    hold = WakeLatencyHold(str(missing))
    assert not hold.held
    summary = hold.summary()
    assert summary["cpu_wake_latency_us"] is None
    assert str(summary["refused"]).startswith(f"{missing}: ")
    assert "No such file" in str(summary["refused"])
    hold.release()


def test_a_path_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    hold = WakeLatencyHold(str(tmp_path))  # a directory cannot be opened for writing
    assert not hold.held
    assert str(hold.summary()["refused"]).startswith(f"{tmp_path}: ")


def test_a_device_refusing_the_value_is_named() -> None:
    hold = WakeLatencyHold("/dev/full")  # opens, and refuses every write (ENOSPC)
    assert not hold.held
    assert hold.fd is None
    assert str(hold.summary()["refused"]).startswith("/dev/full: writing 0: ")
