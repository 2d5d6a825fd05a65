"""FC's python3 runtime's results and errors (reference fc3-api.md §8.3/§8.4): a handler's
return value as the response body, an exception as the error JSON with its stack.

Standard library only: the worker (``bootstrap.py``) loads it by path under a private name.
"""

from __future__ import annotations

import datetime
import decimal
import json
import traceback
from typing import Any

__all__ = ["RuntimeFailure", "error_body", "exception_only_stack", "handler_stack",
           "serialize_result", "to_json"]



class RuntimeFailure(Exception):
    """A runtime-level failure (import, handler name) with FC's errorType."""

    def __init__(self, error_type: str, message: str, stack: list[str]) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.stack = stack


def _default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    raise TypeError(f"{value!r} is not JSON serializable")


def to_json(value: Any) -> str:
    return json.dumps(value, indent=4, sort_keys=True, default=_default)


def serialize_result(value: Any) -> bytes:
    """Handler return value -> response body (§8.3); raises TypeError if not serializable."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return to_json(value).encode("utf-8")


def error_body(error_type: str, message: str, stack: list[Any]) -> bytes:
    body: dict[str, Any] = {"errorMessage": message, "errorType": error_type}
    if stack:
        body["stackTrace"] = stack
    return to_json(body).encode("utf-8")


def handler_stack(exc: BaseException) -> list[list[str]]:
    """``format_tb`` minus the runtime's own frame; each frame as [file, line, in, source]."""
    frames = []
    for text in traceback.format_tb(exc.__traceback__)[1:]:
        lines = text.splitlines()
        frame = [part.strip() for part in lines[0].split(",")]
        if len(lines) > 1 and lines[1].strip():
            frame.append(lines[1].strip())
        frames.append(frame)
    return frames


def exception_only_stack(exc: BaseException) -> list[str]:
    """``format_exception_only``: the File line split on commas, then the other lines."""
    stack: list[str] = []
    for line in "".join(traceback.format_exception_only(type(exc), exc)).splitlines():
        stripped = line.strip()
        if stripped.startswith('File "'):
            stack.extend(part.strip() for part in stripped.split(","))
        elif stripped:
            stack.append(stripped)
    return stack
