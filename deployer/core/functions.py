"""Invoke a deployed function and read its recent logs."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from deployer.cloud.fc import FunctionComputeClient
from deployer.cloud.log_stream import LogStream
from deployer.cloud.logs import FollowState, InvocationLog, LogSource
from deployer.core.documents import read_json_document
from deployer.errors import ExitCode, NotFoundError

__all__ = ["AsyncInvokeResult", "AsyncTaskResult", "InvocationLog", "InvokeRequest",
           "InvokeResult", "LogsResult", "async_task", "follow_logs", "invoke_function",
           "next_logs", "parse_event", "recent_logs", "template_event"]

#: How often ``deploy logs --follow`` asks for new logs (seconds) where they are not streamed.
FOLLOW_POLL_SECONDS = 1.0
Following = FollowState | LogStream
"""Where following stands: a poll's state, or the target's open log stream."""
_sleep = time.sleep  # the wait between polls when none is injected
_receive = LogStream.next_batch  # the wait on a log stream


def parse_event(text: str | None, base: Path | None = None) -> bytes:
    """The event bytes: ``text`` (JSON inline, or ``@FILE`` relative to ``base``) as given, or
    ``{}``. The JSON is checked so typos fail early (InvalidInputError, exit 3)."""
    if text is None:
        return b"{}"
    document = read_json_document(text, option="--event", base=base or Path.cwd())
    return document.text.encode("utf-8")


@dataclass(frozen=True, slots=True)
class InvokeResult:
    """A synchronous invocation: the response, or the error the handler raised."""

    function: str
    request_id: str
    response: Any  # parsed JSON when the payload is JSON, else text
    error_type: str | None  # FC's x-fc-error-type (e.g. UnhandledInvocationError)
    error_message: str | None  # the handler's exception "Type: message"
    log: str

    @property
    def exit_code(self) -> int:
        return int(ExitCode.FAILURE) if self.error_type else int(ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        error = None
        if self.error_type:
            error = {"type": self.error_type, "message": self.error_message}
        return {"function": self.function, "request_id": self.request_id,
                "response": None if self.error_type else self.response, "error": error,
                "log": self.log}


def _decode(payload: bytes) -> Any:
    text = payload.decode("utf-8", "replace")
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


def _error_message(response: Any) -> str | None:
    if isinstance(response, dict) and ("errorType" in response or "errorMessage" in response):
        return f"{response.get('errorType', 'Error')}: {response.get('errorMessage', '')}"
    return None if response is None else str(response)[:500]


@dataclass(frozen=True, slots=True)
class InvokeRequest:
    """What ``deploy invoke`` asks for: the event, the qualifier (None: LATEST) and whether
    the call is asynchronous."""

    function: str
    event: bytes = b"{}"
    qualifier: str | None = None
    asynchronous: bool = False


@dataclass(frozen=True, slots=True)
class AsyncInvokeResult:
    """An accepted asynchronous invocation: the task to ask about (``deploy invoke --task``)."""

    function: str
    task_id: str
    request_id: str
    qualifier: str | None

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "task_id": self.task_id,
                "request_id": self.request_id, "qualifier": self.qualifier or "LATEST"}


@dataclass(frozen=True, slots=True)
class AsyncTaskResult:
    """An asynchronous task as the service describes it (GetAsyncTask, API names)."""

    function: str
    task: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.task.get("status") or "")

    @property
    def exit_code(self) -> int:
        failed = self.status in ("Failed", "Stopped", "Expired", "Invalid")
        return int(ExitCode.FAILURE) if failed else int(ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "task": self.task}


def template_event(template: str, spec: Any, account_id: str, region: str) -> bytes:
    """The event of ``--event-template`` for the function ``spec`` (a FunctionSpec, or None
    when s.yaml does not declare it: placeholders then stand for its trigger's settings)."""
    from deployer.core.event_templates import EventContext, build_event

    triggers = tuple(getattr(spec, "triggers", ()) or ())
    name = getattr(spec, "function_name", "function")
    return build_event(template, EventContext(name, account_id, region, triggers,
                                              datetime.now(timezone.utc)))


def invoke_function(fc: FunctionComputeClient, request: InvokeRequest | str,
                    event: bytes | None = None) -> InvokeResult | AsyncInvokeResult:
    """Invoke a function: synchronously (blocks for the function's run time, up to its
    timeout), or asynchronously (returns the task at once).

    A function that raised is a result with ``error_type`` (exit code 1), not an exception;
    a function that does not exist raises NotFoundError.
    """
    if isinstance(request, str):
        request = InvokeRequest(request, event if event is not None else b"{}")
    name = request.function
    _require_function(fc, name)
    if request.asynchronous:
        task_id = f"task-{uuid.uuid4().hex}"
        request_id = fc.invoke_async(name, request.event, task_id=task_id,
                                     qualifier=request.qualifier)
        return AsyncInvokeResult(name, task_id, request_id, request.qualifier)
    call = fc.invoke(name, request.event, qualifier=request.qualifier)
    response = _decode(call.payload)
    return InvokeResult(name, call.request_id, response, call.error_type,
                        _error_message(response) if call.error_type else None, call.log)


def async_task(fc: FunctionComputeClient, name: str, task_id: str,
               qualifier: str | None = None) -> AsyncTaskResult:
    """The asynchronous task ``task_id`` of ``name``; NotFoundError when there is none."""
    task = fc.get_async_task(name, task_id, qualifier)
    if task is None:
        raise NotFoundError(f"function {name} has no asynchronous task {task_id}",
                            hint="the id is what `deploy invoke --async` printed")
    return AsyncTaskResult(name, task)


@dataclass(frozen=True, slots=True)
class LogsResult:
    function: str
    invocations: tuple[InvocationLog, ...]
    following: bool = False  # more will follow (deploy logs --follow)


def recent_logs(fc: FunctionComputeClient, source: LogSource, function: str, limit: int
                ) -> LogsResult:
    """The ``limit`` most recent invocations of ``function`` and their logs, newest first.

    Raises NotFoundError (exit 4) when the function does not exist, rather than reporting no
    invocations of a misspelt name.
    """
    _require_function(fc, function)
    return LogsResult(function, tuple(source.recent(function, limit)))


def _require_function(fc: FunctionComputeClient, name: str) -> None:
    if fc.get_function(name) is None:
        raise NotFoundError(f"function {name} does not exist",
                            hint="deploy it with `deploy up`; s.yaml names its functions under "
                            "functionName")


def next_logs(source: LogSource, function: str, state: Following | None, *,
              sleep: Callable[[float], None] | None = None,
              interval: float = FOLLOW_POLL_SECONDS) -> tuple[list[InvocationLog], Following]:
    """Wait for what ``function`` logs next. The first call (``state`` None) takes the starting
    point and returns at once: it opens the target's log stream when the target offers one
    (the local emulator), else polls once. Later calls block on the stream until the target
    sends something, or sleep ``interval`` seconds and poll (Log Service). The one place that
    waits."""
    if state is None:
        stream = source.open_stream(function)
        return ([], stream) if stream is not None else source.poll(function, None)
    if isinstance(state, LogStream):
        return _receive(state), state
    (sleep or _sleep)(interval)
    return source.poll(function, state)


def follow_logs(fc: FunctionComputeClient, source: LogSource, function: str, *,
                sleep: Callable[[float], None] | None = None) -> Iterator[InvocationLog]:
    """Every invocation log of ``function`` from this call on, as it arrives (until the caller
    stops iterating, or NotFoundError, exit 4, once the function is deleted). The starting
    point is taken here, before anything is iterated, so nothing logged after the call is
    missed."""
    _require_function(fc, function)
    found, state = next_logs(source, function, None, sleep=sleep)

    def arriving(found: list[InvocationLog], state: Following) -> Iterator[InvocationLog]:
        try:
            while True:
                yield from found
                found, state = next_logs(source, function, state, sleep=sleep)
        finally:
            if isinstance(state, LogStream):
                state.close()

    return arriving(found, state)
