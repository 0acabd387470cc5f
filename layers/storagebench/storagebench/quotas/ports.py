"""The port the quota check reads through, and how a deployment wants its verdict used."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from storagebench.quotas.models import ServiceQuota


class QuotaReader(Protocol):
    @property
    def source(self) -> str:
        """Where the values come from, for people: ``Service Quotas API, us-east-1``."""

    def vcpu_quota(self, code: str) -> ServiceQuota:
        """The EC2 quota ``code`` (L-1216C47A, ...): the account's applied value, else AWS's default.
        Raises ``QuotaNotReadError`` when it cannot be read (throttled, access denied, no answer)."""


@dataclass(frozen=True)
class QuotaPolicy:
    """A reader and what a need over its quota does: ``refuse`` (a stack: its instances would not
    launch), or only say so (local mode, which launches nothing on AWS)."""

    reader: QuotaReader
    refuse: bool = True
