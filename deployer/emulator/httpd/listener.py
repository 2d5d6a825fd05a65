"""The listening socket, the event-loop thread and the bounded accept loop.

The socket is bound and listening when :class:`HttpServer` is constructed (``SO_REUSEADDR``, so
a restart binds while old connections linger in ``TIME_WAIT``; a backlog of
``limits.backlog``), so clients connecting before :meth:`HttpServer.start` simply wait in the
queue. The accept loop takes a connection only while fewer than ``limits.max_connections`` are
open; beyond that, new ones stay queued in the kernel instead of being refused. Every accepted
socket gets ``TCP_NODELAY``: a response goes out as headers + body, and with Nagle on the body
would wait for the client's delayed ACK (about 40 ms a request).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from deployer.emulator.httpd.limits import ServerLimits
from deployer.emulator.httpd.protocol import FrontDoor, Server

__all__ = ["HttpServer"]

log = logging.getLogger("deployer.emulator")
_RESOURCE_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def listening_socket(host: str, port: int, backlog: int) -> socket.socket:
    """A non-blocking TCP socket bound to ``(host, port)`` and listening."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class HttpServer:
    """Serve ``door`` on ``(host, port)`` from a background event-loop thread."""

    def __init__(self, host: str, port: int, door: FrontDoor, limits: ServerLimits) -> None:
        self.limits = limits
        self.door = door
        self._door = door
        self._sock = listening_socket(host, port, limits.backlog)
        self.port = int(self._sock.getsockname()[1])
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._pool = ThreadPoolExecutor(limits.worker_threads, thread_name_prefix="http-worker")
        self._open = 0
        self.accepted = 0

    @property
    def open_connections(self) -> int:
        return self._open

    def start(self) -> None:
        """Start the event-loop thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=self._run, name=f"http-{self.port}", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        loop.set_default_executor(self._pool)
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve(self) -> None:
        limits = self.limits
        slots = asyncio.Semaphore(limits.max_connections)

        def closed() -> None:
            self._open -= 1
            slots.release()

        server = Server(self._door, closed, keepalive_timeout=limits.idle_timeout,
                        access_log=None, auto_decompress=False, lingering_time=10.0,
                        max_line_size=16 * 1024, max_field_size=16 * 1024, max_headers=256)
        self._stopping = asyncio.Event()
        accept = asyncio.ensure_future(self._accept(server, slots, closed))
        self._ready.set()
        await self._stopping.wait()
        accept.cancel()
        await asyncio.gather(accept, return_exceptions=True)
        self._sock.close()
        await self._door.end_streams()
        try:
            await asyncio.wait_for(server.shutdown(limits.shutdown_grace),
                                   limits.shutdown_grace + 1)
        except (asyncio.TimeoutError, TimeoutError):
            log.debug("connections still open at shutdown")

    async def _accept(self, server: Server, slots: asyncio.Semaphore,
                      closed: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await slots.acquire()
            try:
                conn, _ = await loop.sock_accept(self._sock)
            except asyncio.CancelledError:
                slots.release()
                raise
            except OSError as exc:
                slots.release()
                if exc.errno in _RESOURCE_ERRORS:  # out of file descriptors: wait, retry
                    log.warning("cannot accept a connection (%s); retrying", exc.strerror)
                    await asyncio.sleep(0.1)
                continue
            self._open += 1
            self.accepted += 1
            try:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                await loop.connect_accepted_socket(server, conn)
            except OSError:  # the client went away before the connection was set up
                conn.close()
                closed()

    def stop(self) -> None:
        """Stop accepting, let requests in progress finish (``shutdown_grace``), end the loop
        thread and the worker pool. Idempotent."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(self._stopping.set)
            thread.join(timeout=self.limits.shutdown_grace + 5)
        self._sock.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
