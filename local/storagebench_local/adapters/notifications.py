"""Notifications in local mode: appended to ``.storagebench/notifications.jsonl`` and logged.

What SNS would have carried, one JSON object per line (sent_at, kind, subject, text, stack, run), so
``tail -f`` shows them as a run ends and a test can read them back.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

from storagebench.core.clock import iso
from storagebench.notify.models import Notification
from storagebench.notify.ports import NotificationError

log = logging.getLogger("storagebench.notify.local")


class FileNotifier:
    def __init__(self, path: Path) -> None:
        self.path = path

    def publish(self, notification: Notification) -> str:
        record = {
            "sent_at": iso(datetime.now(UTC)),
            **notification.model_dump(mode="json"),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, sort_keys=True) + "\n")
                position = handle.tell()
        except OSError as exc:
            raise NotificationError(f"cannot append {notification.kind} to {self.path}: {exc}") from exc
        log.info("notification %s: %s", notification.kind, notification.summary)
        return f"{self.path}:{position}"

    def read(self) -> list[dict[str, object]]:
        """Every notification recorded so far, oldest first."""
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line]
