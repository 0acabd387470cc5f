"""Notifications: what a run or the janitor tells its operators (run finished or failed, regressions,
leaks), the port that carries them (SNS on AWS, a file locally) and their delivery, which never fails
the run that sends them."""

from storagebench.notify.deliver import Delivery, deliver
from storagebench.notify.models import Notification, NotificationKind
from storagebench.notify.ports import LogNotifier, NotificationError, Notifier

__all__ = [
    "Delivery",
    "LogNotifier",
    "Notification",
    "NotificationError",
    "NotificationKind",
    "Notifier",
    "deliver",
]
