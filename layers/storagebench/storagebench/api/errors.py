"""The API's one error shape, and the errors the service raises with it.

Every 4xx and 5xx body is ``{"error": {"status", "code", "message", "details": [...]}}``; each
detail names the ``field`` (a body path such as ``configs[0].targets[0].iops``, a query parameter
or a path parameter), the ``value`` given, what is ``allowed`` and, for a guardrail, the stack
parameter (``limit``). Codes are stable; messages are for people.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str | None = Field(
        description="body path, query or path parameter; null for the request as a whole"
    )
    value: Any = Field(default=None, description="the value given (null when missing)")
    message: str
    allowed: Any = Field(default=None, description="what is allowed, when it can be said")
    limit: str | None = Field(
        default=None, description="the stack parameter of a guardrail, e.g. MaxRunCostUsd"
    )


class ErrorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int = Field(ge=400, le=599)
    code: str = Field(description="stable, e.g. invalid_request, over_limit, run_not_found")
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)


class ErrorBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    error: ErrorInfo


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


class ApiError(Exception):
    """A request the API answers with an error status (the handler turns it into ``ErrorBody``)."""

    def __init__(
        self, status: int, code: str, message: str, details: list[ErrorDetail] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []

    @classmethod
    def bad_parameter(
        cls, field: str, value: Any, message: str, allowed: Any = None, code: str = "bad_parameter"
    ) -> ApiError:
        detail = ErrorDetail(field=field, value=_json_safe(value), message=message, allowed=allowed)
        return cls(400, code, f"{field}: {message}", [detail])

    def body(self) -> ErrorBody:
        return ErrorBody(
            error=ErrorInfo(status=self.status, code=self.code, message=self.message, details=self.details)
        )


def detail(
    field: str | None, value: Any, message: str, allowed: Any = None, limit: str | None = None
) -> ErrorDetail:
    return ErrorDetail(field=field, value=_json_safe(value), message=message, allowed=allowed, limit=limit)
