"""Delivering notifications without letting a channel failure fail what sent them.

A run whose measurements are stored must not fail because a topic refused a message, and neither
must a janitor sweep; but the failure is never silent: it is logged at ERROR with its cause, kept in
the ``Delivery`` (which the run summary and the sweep report carry) and counted in a metric by the
handler (NotificationFailures).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from storagebench.notify.models import Notification
from storagebench.notify.ports import NotificationError, Notifier

log = logging.getLogger("storagebench.notify")


class Delivery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sent: list[str] = Field(default_factory=list, description="kinds of the notifications handed over")
    failed: list[str] = Field(default_factory=list, description="'<kind>: <why>' of each one refused")


def deliver(notifier: Notifier, notifications: Iterable[Notification]) -> Delivery:
    """Publish each notification; a refused one is logged and recorded, and the others still go."""
    delivery = Delivery()
    for notification in notifications:
        try:
            notifier.publish(notification)
        except NotificationError as exc:
            log.error(
                "notification %s (%s) not sent: %s",
                notification.kind,
                notification.summary,
                exc,
                exc_info=True,
            )
            delivery.failed.append(f"{notification.kind}: {exc}")
        else:
            delivery.sent.append(notification.kind)
    return delivery
