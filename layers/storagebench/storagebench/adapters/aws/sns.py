"""Notifications on the stack's SNS topic (e-mail subscribers read the subject and the text).

Message attributes carry the kind, stack and run, so a subscription can filter (for example only
``leak`` and ``run-failed`` to a pager). Any refusal or transport failure is a NotificationError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped, unused-ignore]

from storagebench.adapters.aws.errors import ClientError, error_code
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.notify.models import Notification
from storagebench.notify.ports import LogNotifier, NotificationError, Notifier

TOPIC_VARIABLE = "NOTIFICATION_TOPIC_ARN"


class SnsNotifier:
    def __init__(self, sns: Any, topic_arn: str) -> None:
        if not topic_arn.startswith("arn:"):
            raise ValueError(f"{TOPIC_VARIABLE} must be an SNS topic ARN (got {topic_arn!r})")
        self.sns = sns
        self.topic_arn = topic_arn

    @classmethod
    def from_settings(cls, settings: AwsSettings, topic_arn: str) -> SnsNotifier:
        return cls(settings.client("sns"), topic_arn)

    def publish(self, notification: Notification) -> str:
        attributes = {
            "kind": notification.kind,
            "stack": notification.stack,
            **({"run_id": notification.run_id} if notification.run_id else {}),
        }
        try:
            answer = self.sns.publish(
                TopicArn=self.topic_arn,
                Subject=notification.subject,
                Message=notification.text,
                MessageAttributes={
                    name: {"DataType": "String", "StringValue": value} for name, value in attributes.items()
                },
            )
        except ClientError as exc:
            raise NotificationError(
                f"SNS refused {notification.kind} for {self.topic_arn}: {error_code(exc)}: {exc}"
            ) from exc
        except BotoCoreError as exc:
            raise NotificationError(f"SNS unreachable for {notification.kind}: {exc}") from exc
        return str(answer["MessageId"])


def notifier_from_env(settings: AwsSettings, env: Mapping[str, str]) -> Notifier:
    """The topic the template names in NOTIFICATION_TOPIC_ARN; without one, notifications are logged."""
    topic = env.get(TOPIC_VARIABLE, "").strip()
    return SnsNotifier.from_settings(settings, topic) if topic else LogNotifier()
