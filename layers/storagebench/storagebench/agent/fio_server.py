"""``fio --server`` on a client of a multi-client config: the primary's ``fio --client`` drives it.

It listens on the machine's own address and the topology's ``fio_port`` from the moment the
client is ready until it finishes; a server that exits meanwhile is reported (``on_exit``), since
the next multi-client step would silently miss this client otherwise.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Callable, Optional

from storagebench.agent.proc import Child, CommandError, in_cgroup

LISTEN_TIMEOUT_S = 15.0


class FioServer:
    def __init__(
        self,
        ip: str,
        port: int,
        directory: str,
        procs_file: Optional[str],
        on_exit: Callable[[str], None],
    ) -> None:
        self.ip = ip
        self.port = port
        self.log_path = os.path.join(directory, "fio-server.log")
        self._stopping = threading.Event()
        self._on_exit = on_exit
        os.makedirs(directory, exist_ok=True)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - open while the server runs
        try:
            self._child = Child(
                in_cgroup(["fio", f"--server={ip},{port}"], procs_file),
                cwd=directory,
                stdout=self._log,
                stderr=self._log,
            )
        except CommandError:
            self._log.close()
            raise
        self._watch = threading.Thread(target=self._watch_exit, name="fio-server", daemon=True)
        self._watch.start()

    def _watch_exit(self) -> None:
        done = self._child.wait()
        if not self._stopping.is_set():
            self._on_exit(
                f"fio --server on {self.ip},{self.port} exited with status {done.rc} (see {self.log_path})"
            )

    def wait_listening(self, timeout_s: float = LISTEN_TIMEOUT_S) -> None:
        """Return once the server accepts connections; CommandError if it exits or never listens."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self._watch.is_alive():
                raise CommandError(
                    f"fio --server on {self.ip},{self.port} exited at start (see {self.log_path})"
                )
            try:
                with socket.create_connection((self.ip, self.port), timeout=1.0):
                    return
            except OSError:
                time.sleep(0.1)
        raise CommandError(f"fio --server on {self.ip},{self.port} did not listen within {timeout_s:.0f} s")

    def stop(self) -> Optional[int]:
        """Stop it (its jobs too); its exit status."""
        self._stopping.set()
        self._child.kill(grace_s=5)
        done = self._child.wait()
        self._log.close()
        return done.rc
