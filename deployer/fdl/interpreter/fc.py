"""Function Compute integration: how a task's raw result becomes ``$Output`` and how FC
errors become state error codes (reference §6). Pure functions, shared by the interpreter (which
shapes ``TaskSucceeded.output``) and by engines/mocks (which map FC errors before feeding
``TaskFailed``)."""

from __future__ import annotations

import json
from typing import Any

from deployer.fdl.expressions.values import decode_json
from deployer.fdl.syntax.ast import TaskMode

__all__ = [
    "FC_ACTION_PREFIX",
    "UNKNOWN_FUNCTION_ERROR",
    "decode_body",
    "map_function_error",
    "map_service_error",
    "shape_output",
]

FC_ACTION_PREFIX = "FC:"
UNKNOWN_FUNCTION_ERROR = "FC.Unknown"


def decode_body(text: str) -> Any:
    """The response text decoded as JSON when it is JSON, else the text itself (a lone
    surrogate escape reads as U+FFFD: :func:`~deployer.fdl.expressions.values.decode_json`)."""
    try:
        return decode_json(text)
    except (ValueError, RecursionError):
        return text


def shape_output(action: str, mode: TaskMode, raw: str) -> Any:
    """``$Output`` of a task: ``{"Body": <decoded>}`` for ``FC:*`` actions called in
    ``RequestComplete``/``WaitForSystemCallback`` mode; the decoded text otherwise (the
    ``Output`` of ``ReportTaskSucceeded`` for ``WaitForCustomCallback``, or another service's
    response)."""
    decoded = decode_body(raw)
    if action.startswith(FC_ACTION_PREFIX) and mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK:
        return {"Body": decoded}
    return decoded


def map_function_error(payload: str) -> tuple[str, str]:
    """An error raised inside the function (HTTP 200 with ``X-Fc-Error-Type``, handled or
    unhandled) -> ``("FC.Unknown", <the FC error JSON, compact>)``."""
    decoded = decode_body(payload)
    if isinstance(decoded, (dict, list)):
        detail = json.dumps(decoded, separators=(",", ":"), ensure_ascii=False)
    else:
        detail = str(decoded)
    return UNKNOWN_FUNCTION_ERROR, detail


def map_service_error(error_code: str, message: str) -> tuple[str, str]:
    """An FC service error (non-2xx, ``{"errorCode", "errorMessage"}``) ->
    ``("FC.<ErrorCode>", message)``, e.g. ``FC.ResourceThrottled``."""
    return f"FC.{error_code}", message
