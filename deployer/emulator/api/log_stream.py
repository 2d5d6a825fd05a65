"""The recent invocations of a function (``GET /_emulator/logs?function=NAME[&region=R]
[&limit=N]``) and, live, ``GET /_emulator/logs/stream?function=NAME[&region=R]``: server-sent
events as invocations are recorded (what ``deploy logs --follow`` reads on the local target).

Stream events: ``ready`` first (the starting point is taken), ``invocation`` per invocation
(``id`` its place in the order of recording: a client reconnecting with ``Last-Event-ID`` gets
what it missed), ``gone`` when the function is deleted (the stream then ends). A function that
does not exist at the start is ``404 NotFound``. The stream waits on the function's
:class:`~deployer.emulator.services.invocation_watch.InvocationWatch`, holding no thread and
never polling the database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.http import (
    HttpRequest,
    ServerSentEvent,
    StreamingResponse,
    compact_json,
    event_stream,
    run_blocking,
    wait_for_wake,
)
from deployer.emulator.services.errors import ResourceNotFound
from deployer.emulator.services.functions import FunctionService

__all__ = ["LOG_STREAM_HEARTBEAT", "LogStreamApi", "invocation_fields"]

LOG_STREAM_HEARTBEAT = 15.0
BATCH = 100  # records read per wake-up (more are read at once if there are more)


def invocation_fields(r: Any) -> dict[str, Any]:
    """An invocation record (``FunctionService.recent_invocations``) as
    ``GET /_emulator/logs`` and the stream show it."""
    return {"requestId": r.request_id, "invokedAt": r.invoked_at,
            "invocationType": r.invocation_type, "status": r.status,
            "errorType": r.error_type, "durationMs": r.duration_ms, "log": r.log,
            "instanceId": r.instance_id, "coldStart": r.cold_start}


class LogStreamApi:
    """The log stream of one emulator's functions."""

    def __init__(self, functions: FunctionService, account_id: str, region: str) -> None:
        self._functions = functions
        self._account_id = account_id
        self._region = region

    def _key(self, params: dict[str, str]) -> tuple[str, str, str]:
        """The account, region and function that ``?function=NAME[&region=R]`` name."""
        function = params.get("function") or ""
        if not function:
            raise e.InvalidArgument("query parameter 'function' is required")
        return self._account_id, params.get("region") or self._region, function

    def recent(self, request: HttpRequest) -> dict[str, Any]:
        """``GET /_emulator/logs``: the ``limit`` (1-1000, 20) newest invocations."""
        params = request.query_params()
        key = self._key(params)
        limit = params.get("limit") or "20"
        if not is_decimal(limit) or not 1 <= int(limit) <= 1000:
            raise e.InvalidArgument("limit must be a whole number in 1-1000")
        records = self._functions.recent_invocations(*key, int(limit))
        return {"function": key[2], "invocations": [invocation_fields(r) for r in records]}

    def handle(self, request: HttpRequest) -> StreamingResponse:
        key = self._key(request.query_params())
        last = request.headers.get("last-event-id") or ""
        self._functions.get(*key)  # ResourceNotFound: 404 NotFound
        generation = self._functions.invocation_watch.generation(key)
        numeric = is_decimal(last) and len(last) < 19
        after = int(last) if numeric else self._newest(key)
        return event_stream(self._events(key, generation, after), heartbeat=LOG_STREAM_HEARTBEAT)

    def _newest(self, key: tuple[str, str, str]) -> int:
        newest = self._functions.recent_invocations(*key, limit=1)
        return newest[0].seq if newest else 0

    async def _events(self, key: tuple[str, str, str], generation: int,
                      after: int) -> AsyncIterator[ServerSentEvent]:
        watch = self._functions.invocation_watch
        yield ServerSentEvent(compact_json({"function": key[2]}), event="ready", retry_ms=1000)
        while True:
            records = await run_blocking(self._functions.invocations_after, *key, after, BATCH)
            for record in records:
                after = record.seq
                yield ServerSentEvent(compact_json(invocation_fields(record)),
                                      event="invocation", id=str(record.seq))
            if len(records) == BATCH:
                continue  # more are waiting
            if not await run_blocking(self._exists, key):
                yield ServerSentEvent(compact_json({"function": key[2]}), event="gone")
                return
            await wait_for_wake(lambda wake, g=generation: watch.watch(key, g, wake), 3600.0)
            generation = watch.generation(key)

    def _exists(self, key: tuple[str, str, str]) -> bool:
        try:
            self._functions.get(*key)
        except ResourceNotFound:
            return False
        return True
