"""The CPUs kept awake while EBS twins serve: a PM QoS CPU latency request of 0 us.

A twin's replies are timed wake-ups. An idle CPU halts, and on a virtual machine a halted vCPU is
woken by the hypervisor: on the nested-virtualisation VM this project is built on, that made a
timed wake-up 50-100 us late at the median and milliseconds late at p99, so the twin answered at
the model's rate but with p99 up to +218 % of the model's (12 of the 18 rows of
``make bench-fidelity --loads quiet`` within the goals). While this request holds, the kernel's
idle loop polls instead of halting and the same run met 18 of 18, every p99 within 3 % (both
2026-12-08, side by side). A low-latency device driver asks the kernel the same way
(``cpu_latency_qos_add_request``); user space does it through ``/dev/cpu_dma_latency``, and the
request lasts as long as the file stays open (or the process lives).

What it costs: idle CPUs spin instead of sleeping while twins serve, on a VM the host CPU it was
given; the agent holds it only from the first twin to the fleet's end, and never on AWS (no twin
runs there). Without the file or the right to open it (not root), the twins serve without it and
the manifest says why.
"""

from __future__ import annotations

import os
import struct
from typing import Dict, Optional, Union

CPU_DMA_LATENCY = "/dev/cpu_dma_latency"


class WakeLatencyHold:
    """Asks every CPU to wake within 0 us (to poll when idle) until :meth:`release`."""

    def __init__(self, path: str = CPU_DMA_LATENCY) -> None:
        self.path = path
        self.fd: Optional[int] = None
        self.refused: Optional[str] = None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            self.refused = f"{path}: {exc.strerror or exc}"
            return
        try:
            os.write(fd, struct.pack("=i", 0))  # a native s32, in microseconds
        except OSError as exc:
            os.close(fd)
            self.refused = f"{path}: writing 0: {exc.strerror or exc}"
            return
        self.fd = fd

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        """The request ends when its file closes."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def summary(self) -> Dict[str, Union[int, str, None]]:
        """For the manifest: the latency asked for, or why none could be."""
        return {"cpu_wake_latency_us": 0 if self.refused is None else None, "refused": self.refused}
