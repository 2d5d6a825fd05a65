"""The front door's limits, and the memory budget shared by large request bodies."""

from __future__ import annotations

import asyncio
import collections
import resource
from dataclasses import dataclass, field

__all__ = ["MAX_BODY", "BodyBudget", "ServerLimits"]

MAX_BODY = 140 * 1024 * 1024
"""Largest request body: a 100 MB zip, base64-encoded, inside CreateFunction's JSON."""


def _default_max_connections() -> int:
    """4,096, or fewer when the process may not open that many files (128 kept for the
    database, the log, function workers)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(64, min(4096, int(soft) - 128))


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Every bound of the HTTP server (seconds, bytes, counts)."""

    backlog: int = 2048
    """Listen queue: connections the kernel holds before the server accepts them."""
    max_connections: int = field(default_factory=_default_max_connections)
    """Open connections at once; beyond it the server stops accepting (they wait queued)."""
    header_timeout: float = 30.0
    """From a request's first byte until its head (request line and headers) is complete."""
    idle_timeout: float = 75.0
    """An idle keep-alive connection is closed after this; also the longest silence allowed
    while a body is being received."""
    max_body: int = MAX_BODY
    """Larger bodies are refused with ``EntityTooLarge`` before they are read."""
    body_memory: int = 256 * 1024 * 1024
    """Bytes of large bodies (over ``small_body``) held at once, over all connections; a body
    that does not fit waits for others to finish (the client is simply not read from)."""
    small_body: int = 64 * 1024
    """Bodies up to this size never wait for the budget."""
    body_wait: float = 120.0
    """How long a large body may wait for the budget before ``ServiceUnavailable``."""
    worker_threads: int = 64
    """Threads running the synchronous API code (a long poll or an event stream holds none)."""
    shutdown_grace: float = 2.0
    """How long ``stop()`` lets requests in progress finish."""
    max_streams: int = 1024
    """Event streams (console live views, ``deploy logs --follow``) open at once; one more is
    answered ``429 TooManyStreams`` and its connection closed. Never more than half of
    ``max_connections``, so open streams cannot take the connections API clients need."""
    max_streams_per_client: int = 256
    """Event streams open at once from one client address (every local client is one:
    127.0.0.1); one more is answered ``429 TooManyStreams`` too."""

    def stream_caps(self) -> tuple[int, int]:
        """(total, per client) as enforced."""
        total = max(1, min(self.max_streams, self.max_connections // 2))
        return total, max(1, min(self.max_streams_per_client, total))


class BodyBudget:
    """A byte budget for bodies in memory; used on the event loop thread only.

    :meth:`acquire` waits (first come, first served) until ``n`` bytes are free; a request for
    more than the capacity is granted the whole capacity, so it runs alone."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._free = capacity
        self._waiters: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()

    @property
    def free(self) -> int:
        return self._free

    async def acquire(self, n: int, timeout: float) -> int:
        """Reserve ``n`` bytes (at most the capacity) and return the amount reserved; raises
        ``TimeoutError`` after ``timeout`` seconds."""
        n = min(n, self.capacity)
        if not self._waiters and n <= self._free:
            self._free -= n
            return n
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (n, future)
        self._waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(n)  # granted just as we gave up
            else:
                if entry in self._waiters:
                    self._waiters.remove(entry)
                self._grant()
            raise
        return n

    def release(self, n: int) -> None:
        self._free = min(self.capacity, self._free + n)
        self._grant()

    def _grant(self) -> None:
        while self._waiters and self._waiters[0][0] <= self._free:
            n, future = self._waiters.popleft()
            if future.done():
                continue
            self._free -= n
            future.set_result(None)
