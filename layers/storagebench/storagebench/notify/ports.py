"""The port notifications leave through, its error, and the notifier of last resort (the log)."""

from __future__ import annotations

import logging
from typing import Protocol

from storagebench.notify.models import Notification

log = logging.getLogger("storagebench.notify")


class NotificationError(Exception):
    """A notification could not be handed to its channel (the message says which and why)."""


class Notifier(Protocol):
    def publish(self, notification: Notification) -> str:
        """Hand the notification to its channel; returns the channel's message id.

        Raises NotificationError when the channel refuses it or cannot be reached."""


class LogNotifier:
    """Notifications as log records: what a stack without a topic (and unit tests) gets."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def publish(self, notification: Notification) -> str:
        log.info("notification %s: %s", notification.kind, notification.summary)
        self.sent.append(notification)
        return f"log-{len(self.sent)}"
