"""Fixes to moto 5.2.5 that local mode needs to behave as AWS does.

* ``SendTaskFailure`` drops its ``cause``: ``StepFunctionResponse.send_task_failure`` passes only
  the token and the error to the backend, whose parser-based implementation accepts a cause
  too. On AWS the cause reaches the state's Catch (``$.caught.Cause``); the workflow records it
  as the config's error ("step 'verify plan' failed: ..."), so local mode must carry it.
"""

from __future__ import annotations

from typing import Any

_APPLIED: list[bool] = []


def apply() -> None:
    if _APPLIED:
        return
    import inspect

    from moto.core.responses import EmptyResult
    from moto.stepfunctions.responses import StepFunctionResponse

    def send_task_failure(self: Any) -> Any:
        backend = self.stepfunction_backend
        extra = {}
        if "cause" in inspect.signature(backend.send_task_failure).parameters:  # the ASL-running backend
            extra["cause"] = self._get_param("cause")
        backend.send_task_failure(self._get_param("taskToken"), error=self._get_param("error"), **extra)
        return EmptyResult()

    StepFunctionResponse.send_task_failure = send_task_failure  # type: ignore[method-assign]
    _APPLIED.append(True)
