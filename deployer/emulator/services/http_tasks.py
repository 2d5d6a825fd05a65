"""Carrying out ``HTTP:Request`` tasks for real, without holding an engine thread.

Parameters (CloudFlow's "Integrate HTTP" page, help.aliyun.com document 2593203): ``url``
(a full ``http``/``https`` URL), ``method`` (GET, POST, PATCH, PUT, DELETE, HEAD; any letter
case), ``body`` (a string goes as is, an object or array as JSON), ``headers`` (a mapping).
``query`` (a mapping of query parameters added to the URL) is accepted too. Any other
parameter is refused by name (``HTTP.InvalidArgument``).

The task's output is ``{"Header": {...}, "Code": <status>, "Body": "<text>"}`` (the documented
shape: ``Body`` is the response text, which a flow reads with ``stringToJson``). A status
outside 2xx fails the task with ``HTTP.<status>`` (e.g. ``HTTP.404``) and that output as its
cause; no answer within the time limit fails it with ``HTTP.Timeout``, a refused or broken
connection with ``HTTP.ConnectionError``. The time limit is the Task's ``Timeout`` when it has
one, else :data:`DEFAULT_TIMEOUT` seconds. In ``WaitForCustomCallback`` mode the request
carries the task token in the ``X-FnF-Http-Callback-Task-Token`` header and, once answered
with a 2xx status, the task waits for ReportTaskSucceeded/Failed (docs/fdl-semantics.md,
"HTTP:Request").

Requests run on one event loop thread of their own (aiohttp's client): a thousand waiting
requests hold no thread.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from deployer.emulator.ports import TaskDone, TaskOutcome, TaskRequest
from deployer.fdl import TaskMode

__all__ = ["CALLBACK_HEADER", "DEFAULT_TIMEOUT", "HTTP_ACTION", "HttpTasks"]

HTTP_ACTION = "HTTP:Request"
CALLBACK_HEADER = "X-FnF-Http-Callback-Task-Token"
DEFAULT_TIMEOUT = 60.0
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE", "HEAD")
HTTP_PARAMETERS = ("url", "method", "body", "headers", "query")
_MAX_RESPONSE_BYTES = 6 * 1024 * 1024  # a response body is read up to this many bytes


class _Refused(ValueError):
    """The task's parameters cannot make a request."""


@dataclass(frozen=True, slots=True)
class _Call:
    method: str
    url: str
    headers: dict[str, str]
    query: dict[str, str]
    body: bytes | None
    timeout: float


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _mapping(params: dict[str, Any], key: str) -> dict[str, str]:
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Refused(f"{key} must be a mapping of names to values")
    return {str(k): _text(v) for k, v in value.items()}


def _call(request: TaskRequest) -> _Call:
    cmd = request.command
    params = cmd.parameters if isinstance(cmd.parameters, dict) else {}
    unknown = sorted(set(params) - set(HTTP_PARAMETERS))
    if unknown:
        advice = "; the Task's Timeout bounds the request" if unknown[0].lower() == "timeout" \
            else ""
        raise _Refused(f"unknown parameter {unknown[0]!r} (HTTP:Request takes "
                       f"{', '.join(HTTP_PARAMETERS)}){advice}")
    url = params.get("url")
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise _Refused(f"url must be a full http:// or https:// URL, got {url!r}")
    method = str(params.get("method", "GET")).upper()
    if method not in METHODS:
        raise _Refused(f"method {params.get('method')!r} is not one of {', '.join(METHODS)}")
    headers = _mapping(params, "headers")
    body = params.get("body")
    data = None if body is None else _text(body).encode("utf-8")
    if data is not None and not isinstance(body, str) \
            and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    if cmd.task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK:
        headers[CALLBACK_HEADER] = cmd.task_token
    timeout = float(cmd.timeout_seconds) if cmd.timeout_seconds > 0 else DEFAULT_TIMEOUT
    return _Call(method, str(url), headers, _mapping(params, "query"), data, timeout)


class HttpTasks:
    """Performs HTTP:Request tasks on its own event loop thread (started on first use)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: aiohttp.ClientSession | None = None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, daemon=True,
                                          name="http-tasks")
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def start(self, request: TaskRequest, done: TaskDone) -> None:
        """Send the request and return at once; ``done`` gets the outcome from the loop's
        thread (``None`` for a callback task once its request was answered)."""
        try:
            call = _call(request)
        except _Refused as exc:
            done(TaskOutcome.failed("HTTP.InvalidArgument", str(exc)))
            return
        callback = request.command.task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK
        future = asyncio.run_coroutine_threadsafe(self._perform(call), self._ensure_loop())

        def finished(f: Any) -> None:
            try:
                outcome = f.result()
            except Exception as exc:  # a defect: the task fails, never hangs
                outcome = TaskOutcome.failed("HTTP.ConnectionError",
                                             f"{type(exc).__name__}: {exc}")
            done(None if callback and outcome.succeeded else outcome)

        future.add_done_callback(finished)

    async def _perform(self, call: _Call) -> TaskOutcome:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        timeout = aiohttp.ClientTimeout(total=call.timeout)
        try:
            async with self._session.request(call.method, call.url, headers=call.headers,
                                             params=call.query or None, data=call.body,
                                             timeout=timeout) as response:
                raw = await response.content.read(_MAX_RESPONSE_BYTES)
                output = {"Header": {k: v for k, v in response.headers.items()},
                          "Code": response.status,
                          "Body": raw.decode(response.charset or "utf-8", errors="replace")}
        except asyncio.TimeoutError:
            return TaskOutcome.failed("HTTP.Timeout", f"{call.method} {call.url} was not "
                                      f"answered within {call.timeout:g} seconds")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return TaskOutcome.failed("HTTP.ConnectionError",
                                      f"{call.method} {call.url}: {type(exc).__name__}: {exc}")
        text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        if not 200 <= response.status < 300:
            return TaskOutcome.failed(f"HTTP.{response.status}", text)
        return TaskOutcome(text)

    def close(self) -> None:
        """Close the client and stop the loop (requests in flight are dropped: the engine
        sends unfinished tasks again when it starts)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None:
            return
        session = self._session
        if session is not None:
            asyncio.run_coroutine_threadsafe(session.close(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
