"""The listening socket, the event-loop thread and the bounded accept loop.

The socket is bound and listening when :class:`HttpServer` is constructed (``SO_REUSEADDR``, so
a restart binds while old connections linger in ``TIME_WAIT``; a backlog of
``limits.backlog``), so clients connecting before :meth:`HttpServer.start` simply wait in the
queue. The accept loop takes a connection only while fewer than ``limits.max_connections`` are
open; beyond that, new ones stay queued in the kernel instead of being refused. Every accepted
socket gets ``TCP_NODELAY``: a response goes out as headers + body, and with Nagle on the body
would wait for the client's delayed ACK (about 40 ms a request).

More listening sockets can be served beside the first (:meth:`HttpServer.add_listener`), each
with its own front door, within the same connection bound: the function gateway (the cloud
APIs only) listens that way, on the host and inside each function instance's own network
namespace (docs/runtime.md "Network").
"""

from __future__ import annotations

import asyncio
import contextlib
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


async def _readable(sock: socket.socket) -> None:
    """Until ``sock`` has a connection to accept."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    fd = sock.fileno()
    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if sock.fileno() == fd:  # else closed while waiting: its reader went before it
            loop.remove_reader(fd)


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
        self._listeners: dict[socket.socket, FrontDoor] = {}
        self._accepting: dict[socket.socket, asyncio.Future[None]] = {}
        self._servers: dict[int, Server] = {}
        self._slots: asyncio.Semaphore | None = None

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

    def _closed(self) -> None:
        self._open -= 1
        assert self._slots is not None
        self._slots.release()

    def _server_for(self, door: FrontDoor) -> Server:
        """The aiohttp server of ``door`` (one per front door, shared by its listeners)."""
        server = self._servers.get(id(door))
        if server is None:
            limits = self.limits
            server = Server(door, self._closed, keepalive_timeout=limits.idle_timeout,
                            access_log=None, auto_decompress=False, lingering_time=10.0,
                            max_line_size=16 * 1024, max_field_size=16 * 1024, max_headers=256)
            self._servers[id(door)] = server
        return server

    def _listen(self, sock: socket.socket, door: FrontDoor) -> None:
        """Start accepting on ``sock`` (on the loop thread; once)."""
        if sock in self._accepting or (sock is not self._sock and sock not in self._listeners):
            return
        server = self._server_for(door)
        self._accepting[sock] = asyncio.ensure_future(self._accept(server, sock))

    async def _serve(self) -> None:
        limits = self.limits
        self._slots = asyncio.Semaphore(limits.max_connections)
        self._stopping = asyncio.Event()
        self._listen(self._sock, self._door)
        for sock, door in list(self._listeners.items()):
            self._listen(sock, door)
        self._ready.set()
        await self._stopping.wait()
        accepting = list(self._accepting.values())
        for task in accepting:
            task.cancel()
        await asyncio.gather(*accepting, return_exceptions=True)
        self._sock.close()
        for sock in list(self._listeners):
            sock.close()
        doors = {id(self._door): self._door, **{id(d): d for d in self._listeners.values()}}
        for door in doors.values():
            await door.end_streams()
        try:
            await asyncio.wait_for(
                asyncio.gather(*(s.shutdown(limits.shutdown_grace)
                                 for s in self._servers.values())), limits.shutdown_grace + 1)
        except (asyncio.TimeoutError, TimeoutError):
            log.debug("connections still open at shutdown")
        # the connections' handlers were cancelled: let them run to their end before the loop
        # closes (a task destroyed while pending says "Exception ignored ... GeneratorExit")
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        if others:
            await asyncio.wait(others, timeout=1.0)

    def add_listener(self, sock: socket.socket, door: FrontDoor) -> Callable[[], None]:
        """Also accept connections on ``sock`` (a listening socket this server now owns) and
        serve them with ``door``; returns the function that stops accepting on it and closes
        it (connections already open go on). Thread-safe, before or after :meth:`start`."""
        sock.setblocking(False)
        self._listeners[sock] = door
        loop = self._loop
        if loop is not None:  # else _serve starts it
            with contextlib.suppress(RuntimeError):  # closed: stopped already
                loop.call_soon_threadsafe(self._listen, sock, door)

        def remove() -> None:
            if self._listeners.pop(sock, None) is None:
                return
            running = self._loop
            if running is not None and not running.is_closed():
                try:
                    running.call_soon_threadsafe(self._unlisten, sock)
                    return
                except RuntimeError:  # the loop closed meanwhile
                    pass
            sock.close()

        return remove

    def _unlisten(self, sock: socket.socket) -> None:
        task = self._accepting.pop(sock, None)
        if task is not None:
            task.cancel()
        with contextlib.suppress(ValueError, OSError):  # before the number can be reused
            asyncio.get_running_loop().remove_reader(sock.fileno())
        sock.close()

    async def _accept(self, server: Server, sock: socket.socket) -> None:
        """Accept on ``sock`` while a connection slot is free. No slot is held while nothing
        arrives (several listeners share the slots); a connection that finds none stays
        queued in the kernel."""
        slots = self._slots
        assert slots is not None
        while True:
            await slots.acquire()
            try:
                conn, _ = sock.accept()
            except BlockingIOError:  # nothing queued: wait for a connection, holding no slot
                slots.release()
                await _readable(sock)
                continue
            except OSError as exc:
                slots.release()
                if exc.errno in _RESOURCE_ERRORS:  # out of file descriptors: wait, retry
                    log.warning("cannot accept a connection (%s); retrying", exc.strerror)
                    await asyncio.sleep(0.1)
                continue
            except BaseException:
                slots.release()
                raise
            await self._serve_connection(server, conn)

    async def _serve_connection(self, server: Server, conn: socket.socket) -> None:
        self._open += 1
        self.accepted += 1
        try:
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await asyncio.get_running_loop().connect_accepted_socket(server, conn)
        except OSError:  # the client went away before the connection was set up
            conn.close()
            self._closed()

    def stop(self) -> None:
        """Stop accepting, let requests in progress finish (``shutdown_grace``), end the loop
        thread and the worker pool. Idempotent."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(self._stopping.set)
            thread.join(timeout=self.limits.shutdown_grace + 5)
        self._sock.close()
        for sock in list(self._listeners):
            sock.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
