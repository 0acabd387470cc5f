"""The recorded answer: GetServiceQuota answers kept in a JSON file, read instead of the API.

``recorded.json`` (bundled) holds a new account's answers; local mode and the tests read it, and
any file of the same shape can stand for an account (``{"answers": {"L-1216C47A": {"Quota":
{...}}}}``, each value what ``aws service-quotas get-service-quota`` prints). A file that is not
of that shape is refused when it is read, naming the field, its value and what is allowed.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from storagebench.catalog.quota_models import QUOTA_CODE_PATTERN
from storagebench.quotas.models import QuotaAnswerError, QuotaNotReadError, ServiceQuota, decode_quota

BUNDLED = "recorded.json"


class RecordedQuotas:
    """A ``QuotaReader`` over recorded answers; every answer is decoded when the file is read."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            text = resources.files("storagebench.quotas").joinpath(BUNDLED).read_text(encoding="utf-8")
            self.name = f"storagebench/quotas/{BUNDLED}"
        else:
            text = path.read_text(encoding="utf-8")
            self.name = str(path)
        self.quotas = decode_recorded(text, self.name)

    @property
    def source(self) -> str:
        return f"recorded answer {self.name}"

    def vcpu_quota(self, code: str) -> ServiceQuota:
        if code not in self.quotas:
            held = ", ".join(sorted(self.quotas))
            raise QuotaNotReadError(code, self.name, f"no recorded answer (it holds {held})")
        return self.quotas[code]


def decode_recorded(text: str, name: str) -> dict[str, ServiceQuota]:
    """Every answer of a recorded file, by quota code; ``QuotaAnswerError`` names what is wrong."""
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuotaAnswerError(f"{name}: not JSON ({exc})") from None
    answers = document.get("answers") if isinstance(document, dict) else None
    if not isinstance(answers, dict):
        got = type(answers).__name__ if isinstance(document, dict) else type(document).__name__
        raise QuotaAnswerError(
            f"{name}: answers: {got}; an object of quota code -> GetServiceQuota answer expected"
        )
    quotas: dict[str, ServiceQuota] = {}
    for code, answer in answers.items():
        if not re.fullmatch(QUOTA_CODE_PATTERN, code):
            raise QuotaAnswerError(f"{name}: answers.{code}: not a quota code (L- and 8 hex digits expected)")
        quotas[code] = decode_quota(answer, code, "recorded", f"{name}: answers.{code}")
    return quotas
