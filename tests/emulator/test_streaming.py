"""The server's streaming answers: server-sent events written as they come, without a thread,
and closed when the client leaves."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from deployer.emulator.api.fc import FC_AUTH
from deployer.emulator.api.http import (
    ServerSentEvent,
    event_stream,
    run_blocking,
    wait_for_wake,
)
from deployer.emulator.api.router import RequestContext
from tests.emulator.wire import Wire, request, signed_headers


class _Ticks:
    """A test API under /_test/: /_test/ticks streams one event per wake-up."""

    prefix = "/_test/"
    auth = FC_AUTH

    def __init__(self) -> None:
        self.wakes: list = []
        self.closed = threading.Event()
        self.subscribed = threading.Semaphore(0)

    def subscribe(self, wake):
        self.wakes.append(wake)
        self.subscribed.release()
        return lambda: None

    def handle(self, ctx: RequestContext):
        async def events() -> AsyncIterator[ServerSentEvent]:
            try:
                for i in range(3):
                    text = await run_blocking(lambda i=i: f"tick {i}")
                    yield ServerSentEvent(text, event="tick", id=str(i))
                    await wait_for_wake(self.subscribe, 30)
                while True:  # until the client goes away
                    await asyncio.sleep(0.01)
                    yield ServerSentEvent("more")
            finally:
                self.closed.set()
        return event_stream(events(), heartbeat=30)


def test_server_sent_events_stream_as_they_come(cloud) -> None:
    api = _Ticks()
    cloud.server.router.add_roa(api)
    with Wire(cloud.server.port) as wire:
        wire.send(request("GET", "/_test/ticks", signed_headers(cloud, "GET", "/_test/ticks")))
        head = wire.fp.readline()
        assert head.startswith(b"HTTP/1.1 200")
        headers = {}
        while (line := wire.fp.readline()) != b"\r\n":
            name, _, value = line.decode().partition(":")
            headers[name.lower()] = value.strip()
        assert headers["content-type"].startswith("text/event-stream")
        assert headers["transfer-encoding"] == "chunked"
        for i in range(3):
            size = int(wire.fp.readline(), 16)
            chunk = wire.fp.read(size + 2)[:size]
            assert chunk == f"event: tick\nid: {i}\ndata: tick {i}\n\n".encode()
            assert api.subscribed.acquire(timeout=10)  # parked, holding no thread
            api.wakes[-1]()
    assert api.closed.wait(10)  # the iterator was closed once the client left
