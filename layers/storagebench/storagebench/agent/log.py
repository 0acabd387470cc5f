"""Progress for people (stderr and agent.log) and for machines (progress.json)."""

from __future__ import annotations

import datetime
import os
import sys
import threading
from typing import Any, Dict, Optional, TextIO

from storagebench.protocol.manifest import write_json_atomic


def utc_now() -> str:
    return (
        datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


class Progress:
    """Writes one line per event and keeps ``progress.json`` current for a watcher."""

    def __init__(
        self, output_dir: Optional[str], stream: Optional[TextIO] = None, quiet: bool = False
    ) -> None:
        self._stream = stream
        self._quiet = quiet
        self._lock = threading.Lock()
        self._log: Optional[TextIO] = None
        self._progress_path: Optional[str] = None
        self.state: Dict[str, Any] = {"stage": "starting", "step": 0, "steps": 0, "current": None}
        if output_dir:
            self._log = open(os.path.join(output_dir, "agent.log"), "a", encoding="utf-8")  # noqa: SIM115
            self._progress_path = os.path.join(output_dir, "progress.json")

    def say(self, message: str) -> None:
        line = f"[storagebench-agent {utc_now()[11:19]}] {message}"
        with self._lock:
            if not self._quiet:
                # sys.stderr is read now, not at import: callers (tests, the CLI) may replace it.
                print(line, file=self._stream or sys.stderr, flush=True)
            if self._log is not None:
                self._log.write(line + "\n")
                self._log.flush()

    def update(self, **state: Any) -> None:
        with self._lock:
            self.state.update(state)
            self.state["updated_at"] = utc_now()
            if self._progress_path is not None:
                write_json_atomic(self._progress_path, self.state)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
