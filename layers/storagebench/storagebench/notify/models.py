"""One notification: a one-line subject (SNS e-mail subjects take at most 100 characters) and a text
whose first line is the summary a reader needs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

NotificationKind = Literal["run-finished", "run-failed", "regression", "leak", "stuck-run"]
SUBJECT_MAX = 100  # SNS Publish refuses longer subjects
TEXT_MAX = 200_000  # SNS takes 256 KiB per message; leave room for the attributes


class Notification(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: NotificationKind
    subject: str = Field(min_length=1, max_length=SUBJECT_MAX)
    text: str = Field(min_length=1, max_length=TEXT_MAX)
    stack: str = Field(min_length=1)
    run_id: str | None = None

    @field_validator("subject")
    @classmethod
    def _one_line(cls, subject: str) -> str:
        if any(ch in subject for ch in "\r\n\t") or not subject.isprintable():
            raise ValueError(f"subject must be one printable line (got {subject!r})")
        return subject

    @property
    def summary(self) -> str:
        """The first line: what a log or a chat message shows."""
        return self.text.splitlines()[0]


def subject_line(text: str) -> str:
    """``text`` made a valid subject: one line, printable, cut to SUBJECT_MAX with an ellipsis."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= SUBJECT_MAX else flat[: SUBJECT_MAX - 3] + "..."
