"""``mock_cloud()``'s emulator reached without a socket: the in-process endpoint of the routing.

moto's ``mock_aws`` answers boto3 inside the process; this does the same for the Alibaba Cloud
SDKs. :class:`InProcessTransport` is an
:class:`~deployer.emulator.runtime.routing.InProcessEndpoint`: ``mock_cloud()`` installs the SDK
routing with it for the emulated cloud hosts and for the emulator's own ``127.0.0.1:PORT``, so
a request of either SDK core (darabonba, Tea) goes, in the calling thread or task:

    the SDK builds and signs it → requests' ``HTTPAdapter.send`` (sync) or aiohttp's
    ``ClientSession.request`` (async), wrapped by the routing → :mod:`.sync_client` or
    :mod:`.async_client` turns it into the emulator's request value (method, target exactly as
    it would be sent, headers, body) → the body limit of the front door → the emulator's
    router (signature, freshness, RAM authorization, injected faults, the API) → the answer,
    as a ``requests.Response`` built by the adapter's own ``build_response`` or an object
    with aiohttp's ``ClientResponse`` surface.

Nothing is serialized to HTTP and parsed again, except a streaming answer read through
``requests`` (urllib3 reads chunked bodies itself: the chunks are framed in memory). Long polls
wait without a thread in asyncio and block the calling thread in sync code (up to the client's
read timeout: ``ReadTimeout`` as on the wire). Streaming answers (server-sent events) are read
as they come: in asyncio on the caller's loop, in sync code from a small event-loop thread of
the transport. What the transport cannot represent exactly (a body that is a file or a
generator, aiohttp options it does not know, ``ws_connect``, the copy of requests vendored by
the old core SDK) goes to the emulator's socket instead, as before; function workers, being
other processes, always do.

**The cloud keeps pace with its caller.** Over the wire the emulator runs beside its client;
in-process they share one interpreter lock, and a busy caller (a test polling in a loop, eight
threads calling at once) would starve the flow engine, so executions would lag behind as they
never do in the cloud. So after each answer the steps queued by then (work of this process,
ready to run: the first step of an execution just started, a task's result) are committed
before the caller goes on: by the caller's thread itself when no engine thread is committing
(as ``FlowEngine.deliver`` commits in its caller's), else it waits for them, at most
:data:`SETTLE` (20 ms). Functions
running in worker processes and timers are not waited for, and the answer itself is
unchanged (StartExecution answers ``Running`` before the execution's first step, as always).

Differences from the wire, by design: a request being handled is not abandoned at the read
timeout (the handler runs in the caller's thread); ``Expect: 100-continue`` and the
header-read timeout have no meaning without a connection. See docs/architecture.md "SDK traffic".
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from typing import TYPE_CHECKING, Any

from deployer.emulator.api.http import Answer, HttpRequest, HttpResponse
from deployer.testing.transport import async_client, sync_client

if TYPE_CHECKING:
    from deployer.emulator.server import EmulatorServer

__all__ = ["InProcessTransport"]

class InProcessTransport:
    """The in-process endpoint of one running :class:`EmulatorServer`; :meth:`close` ends its
    open streams (before the server stops)."""

    def __init__(self, server: EmulatorServer) -> None:
        http = server.http
        if http is None:
            raise RuntimeError("the emulator is not running")
        self.address = server.endpoint
        self._engine = server.emulator.flow_engine
        self.client_address = "127.0.0.1"  # what the emulator sees (its local guard: loopback)
        self._door = http.door
        self._dispatch = server.router.dispatch
        self.is_quick = server.router.is_quick
        self.server_header = http.door.server_header
        self._lock = threading.Lock()
        self._loop_thread: sync_client.LoopThread | None = None  # by the first stream
        self._async_streams: set[Any] = set()  # async_client pumps, ended by close()
        self.closed = False

    # --- the two clients (InProcessEndpoint) ----------------------------------------------

    def send(self, adapter: Any, request: Any, stream: bool, timeout: Any) -> Any:
        """requests' ``HTTPAdapter.send`` answered in-process (None: over HTTP instead)."""
        return sync_client.send(self, adapter, request, stream, timeout)

    def request(self, session: Any, method: str, url: str, options: dict[str, Any]) -> Any:
        """aiohttp's ``ClientSession.request`` answered in-process (None: over HTTP)."""
        return async_client.request(self, session, method, url, options)

    # --- shared by both ---------------------------------------------------------------------

    def answer(self, request: HttpRequest) -> Answer:
        """What the emulator answers ``request`` (a body over the front door's limit is
        refused as it refuses it); ConnectionRefusedError once closed."""
        if self.closed:
            raise ConnectionRefusedError(f"the in-process cloud at {self.address} has stopped")
        door = self._door
        if len(request.body) > door.limits.max_body:
            refused = door.oversized(request.raw_target, request.headers.get("host") or "",
                                     len(request.body))
            if refused is not None:
                return refused
        return self._dispatch(request)

    def settle(self) -> None:
        """Return once the engine has committed the steps queued so far, so the caller does
        not run ahead of the cloud (see the module docstring): the calling thread commits
        them itself when no engine thread is at it (as a step delivered in the caller's
        thread is), else it waits for them up to :data:`SETTLE` seconds, looking after 0.1,
        0.2, ... ms (at most 1 ms apart), holding no lock and asking for no notification."""
        engine = self._engine
        target, done = engine.step_counts
        if done >= target:
            return
        engine.commit_queued(target)
        for pause in self._settle_pauses(target):
            time.sleep(pause)

    async def settle_async(self) -> None:
        """:meth:`settle` for asyncio callers, waiting only: the loop goes on meanwhile."""
        for pause in self._settle_pauses(self._engine.step_counts[0]):
            await asyncio.sleep(pause)

    def _settle_pauses(self, target: int) -> Iterator[float]:
        """The pauses of :meth:`settle`: yielded while the engine has not committed
        ``target`` steps, until :data:`SETTLE` seconds have passed."""
        engine = self._engine
        if engine.step_counts[1] >= target:
            return
        deadline = time.monotonic() + SETTLE
        pause = _FIRST_PAUSE
        while engine.step_counts[1] < target:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            yield min(pause, left)
            pause = min(pause * 2, _LONGEST_PAUSE)

    def head(self, answer: HttpResponse) -> list[tuple[str, str]]:
        """The headers the front door writes with a complete answer."""
        headers = [("Server", self.server_header), *answer.headers.items()]
        headers.append(("Content-Length", str(len(answer.body))))
        if answer.body and not any(k.lower() == "content-type" for k in answer.headers):
            headers.append(("Content-Type", "application/octet-stream"))
        headers.append(("Date", http_date()))
        return headers

    def stream_head(self, headers: dict[str, str]) -> list[tuple[str, str]]:
        """The headers the front door writes with a streaming answer (chunked)."""
        return [("Server", self.server_header), *headers.items(),
                ("Transfer-Encoding", "chunked"), ("Date", http_date())]

    def loop_thread(self) -> sync_client.LoopThread:
        """The event-loop thread that runs streams read by sync clients (started once)."""
        with self._lock:
            if self.closed:
                raise ConnectionRefusedError(f"the in-process cloud at {self.address} has stopped")
            if self._loop_thread is None:
                self._loop_thread = sync_client.LoopThread()
            return self._loop_thread

    def track(self, pump: Any) -> None:
        """Remember an async stream's pump until it ends (``close`` ends it)."""
        with self._lock:
            self._async_streams.add(pump)

    def untrack(self, pump: Any) -> None:
        with self._lock:
            self._async_streams.discard(pump)

    def close(self) -> None:
        """End every open stream and refuse new requests (the server stops next)."""
        with self._lock:
            self.closed = True
            loop_thread, self._loop_thread = self._loop_thread, None
            pumps, self._async_streams = list(self._async_streams), set()
        for pump in pumps:
            pump.end()
        if loop_thread is not None:
            loop_thread.stop()


SETTLE = 0.02
"""The longest a caller waits after an answer for the engine's ready steps (seconds)."""
_FIRST_PAUSE = 0.0001
_LONGEST_PAUSE = 0.001


_date: list[Any] = [0, ""]


def http_date() -> str:
    """The ``Date`` header's value, made once a second."""
    now = int(time.time())
    if now != _date[0]:
        _date[1] = formatdate(now, usegmt=True)
        _date[0] = now
    return str(_date[1])
