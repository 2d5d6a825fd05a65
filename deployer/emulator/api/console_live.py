"""The console's live channel: one server-sent-event stream per page (HTTP only; what it sends
comes from :mod:`deployer.console.live`).

An execution page's stream (``…/executions/N/stream?state=&visit=&page=&since=V``) sends
``step`` events (``id`` = the execution's ``version``: the graph's changed nodes and edges, the
summary and the re-rendered fragments) as the engine commits steps and when the virtual clock
moved, ``engine`` events (the header's engine facts, at most every :data:`FACTS_INTERVAL`
seconds), then ``end`` once the execution ended, or ``gone``. A reconnecting ``EventSource``
sends ``Last-Event-ID``, which wins over ``since``, so nothing is missed. Every other page reads
``/_console/api/engine/stream`` (``engine`` events only).

No thread waits: the iterators run on the event loop, wait on the engine's change
notifications and compute in the worker pool; pages on the same execution share each
computation (:class:`_Shared`), so fifty open pages cost one model per step, not fifty.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any

from deployer.console import live
from deployer.console.sources import Sources
from deployer.emulator.api.http import (
    ServerSentEvent,
    StreamingResponse,
    compact_json,
    event_stream,
    run_blocking,
    wait_for_wake,
)
from deployer.emulator.services.errors import ResourceNotFound

__all__ = ["CONSOLE_HEARTBEAT", "FACTS_INTERVAL", "LiveStreams"]

log = logging.getLogger("deployer.emulator")

FACTS_INTERVAL = 0.25  # seconds between two engine-facts events of one page, at the most
CONSOLE_HEARTBEAT = 25.0  # a comment line after this much silence (a dead client is noticed)
IDLE_WAIT = 300.0  # re-read the execution after this long without a wake-up
RETRY_MS = 1000  # how soon a browser reconnects after losing the stream


def _event(kind: str, data: Any, event_id: str = "", retry: bool = False) -> ServerSentEvent:
    return ServerSentEvent(compact_json(data), event=kind, id=event_id,
                           retry_ms=RETRY_MS if retry else None)


class _Shared:
    """Results computed once in the worker pool and shared by every stream asking for the
    same key meanwhile (single flight; a small LRU). Lives on the event loop."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, asyncio.Future[Any]] = OrderedDict()

    def get(self, key: Hashable, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        future = self._items.get(key)
        if future is None or (future.done() and future.exception() is not None):
            future = asyncio.ensure_future(run_blocking(fn, *args))
            self._items[key] = future
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(key)
        return asyncio.shield(future)


class LiveStreams:
    """The two kinds of stream of one console (see the module docstring)."""

    def __init__(self, sources: Sources) -> None:
        self._src = sources
        self._models = _Shared(64)
        self._facts = _Shared(4)

    # --- engine facts (every page) ----------------------------------------------------------------

    async def _facts_at(self, generation: int) -> dict[str, Any]:
        """The engine facts as of ``generation`` or later (shared by every stream)."""
        result: dict[str, Any] = await self._facts.get(generation, live.engine_facts, self._src)
        return result

    def engine(self) -> StreamingResponse:
        """Engine facts only: whenever they change."""
        return event_stream(self._engine_events(), heartbeat=CONSOLE_HEARTBEAT)

    async def _engine_events(self) -> AsyncIterator[ServerSentEvent]:
        src, sent, first = self._src, None, True
        while True:
            generation = src.facts_generation()
            facts = await self._facts_at(generation)
            if facts != sent:
                yield _event("engine", facts, retry=first)
                sent, first = facts, False
            await asyncio.sleep(FACTS_INTERVAL)
            await wait_for_wake(lambda wake, g=generation: src.watch_facts(g, wake), IDLE_WAIT)

    # --- an execution ---------------------------------------------------------------------------

    def execution(self, region: str, flow: str, name: str, selection: dict[str, Any],
                  since: int | None) -> StreamingResponse:
        """The stream of one execution page; ResourceNotFound (before any byte is sent) when the
        execution does not exist. ``since``: the version the page shows (None: unknown)."""
        self._src.executions.describe(self._src.account_id, region, flow, name)
        return event_stream(self._execution_events(region, flow, name, selection, since),
                            heartbeat=CONSOLE_HEARTBEAT)

    def _update(self, region: str, flow: str, name: str, selection: dict[str, Any],
                version: int) -> Awaitable[dict[str, Any]]:
        instant = int(self._src.clock.now())  # "running for", "fires in" depend on the clock
        key = (region, flow, name, version, instant, selection["state"], selection["visit"],
               selection["page"])
        return self._models.get(key, lambda: live.execution_update(
            self._src, region, flow, name, **selection))

    async def _execution_events(self, region: str, flow: str, name: str,
                                selection: dict[str, Any],
                                since: int | None) -> AsyncIterator[ServerSentEvent]:
        src, account = self._src, self._src.account_id
        shown: live.Shown | None = None  # the graph as the page shows it (None: unknown)
        version, first, stale = since, True, False
        facts_sent: dict[str, Any] | None = None
        facts_generation, facts_at = -1, 0.0
        while True:
            try:
                view = await run_blocking(src.executions.describe, account, region, flow, name)
                running = view.status in ("Running", "Starting")
                if view.version != version or (stale and running):
                    update = await self._update(region, flow, name, selection, view.version)
                    version = update["summary"]["version"]
                    yield _event("step", live.live_delta(update, shown), str(version), first)
                    shown, first, stale = live.shown(update), False, False
            except ResourceNotFound:
                yield _event("gone", {"name": name})
                return
            if time.monotonic() - facts_at >= FACTS_INTERVAL:
                generation = src.facts_generation()
                if generation != facts_generation:
                    facts = await self._facts_at(generation)
                    facts_generation, facts_at = generation, time.monotonic()
                    if facts != facts_sent:
                        # the virtual clock moved: the summary's times move with it
                        stale = facts_sent is not None and facts["now"] != facts_sent["now"]
                        yield _event("engine", facts, retry=first)
                        facts_sent, first = facts, False
                        if stale and running:
                            continue
            if not running and view.version == version:
                yield _event("end", {"status": view.status, "version": version})
                return
            await self._wait(region, flow, name, version, facts_generation, facts_at)

    async def _wait(self, region: str, flow: str, name: str, version: int | None,
                    facts_generation: int, facts_at: float) -> None:
        """Until the execution commits a step after ``version``, or the engine's facts move
        past ``facts_generation`` (when they moved already, until they may be sent again)."""
        src = self._src
        throttled = FACTS_INTERVAL - (time.monotonic() - facts_at)
        pending = throttled > 0 and src.facts_generation() != facts_generation

        def subscribe(wake: Callable[[], None]) -> Callable[[], None]:
            try:
                stop = src.executions.watch_changes(src.account_id, region, flow, name,
                                                    after_version=-1 if version is None
                                                    else version, wake=wake)
            except ResourceNotFound:
                wake()
                return lambda: None
            if pending:
                return stop
            facts_stop = src.watch_facts(facts_generation, wake)

            def both() -> None:
                stop()
                facts_stop()
            return both

        await wait_for_wake(subscribe, throttled if pending else IDLE_WAIT)
