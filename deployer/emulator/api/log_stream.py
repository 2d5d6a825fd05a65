"""``GET /_emulator/logs/stream?function=NAME[&region=R]``: a function's invocations as they are
recorded, as server-sent events (what ``deploy logs --follow`` reads on the local target).

Behind the admin API's guard (loopback, this daemon's Host, same Origin). Events:

* ``ready`` first (``{"function": NAME}``): the starting point is taken; every invocation
  recorded from now on follows;
* ``invocation`` per invocation (the fields of ``GET /_emulator/logs``), ``id`` its place in
  the order of recording: a client that reconnects with ``Last-Event-ID`` gets what it missed;
* ``gone`` when the function no longer exists (deleted); the stream then ends.

A function that does not exist at the start is ``404 NotFound`` (JSON), before any event. The
stream waits on :class:`~deployer.emulator.services.invocation_watch.InvocationWatch` (woken
when an invocation is recorded or the function deleted), holding no thread and reading the
database once per wake-up, never polling it; a comment line keeps it open during silence.
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

    def handle(self, request: HttpRequest) -> StreamingResponse:
        params = request.query_params()
        function = params.get("function") or ""
        if not function:
            raise e.InvalidArgument("query parameter 'function' is required")
        region = params.get("region") or self._region
        last = request.headers.get("last-event-id") or ""
        self._functions.get(self._account_id, region, function)  # ResourceNotFound: 404 NotFound
        key = (self._account_id, region, function)
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
