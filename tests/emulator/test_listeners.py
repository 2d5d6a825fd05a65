"""Listening sockets added beside the first one (the function gateway's, one per function
instance) come and go while the server runs: removing one ends its accept loop quietly."""

from __future__ import annotations

import gc
import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from deployer.emulator.api.errors import Style
from deployer.emulator.api.http import HttpRequest, HttpResponse
from deployer.emulator.httpd import FrontDoor, HttpServer, ServerLimits
from deployer.emulator.httpd.listener import listening_socket


def _ok(request: HttpRequest) -> HttpResponse:
    return HttpResponse(200, body=b"ok")


@pytest.fixture
def server() -> Iterator[tuple[HttpServer, FrontDoor]]:
    limits = ServerLimits(max_connections=8, worker_threads=2)
    door = FrontDoor(_ok, limits, lambda style: "rid" if style is Style.RPC else "fc",
                     "test-server/1")
    srv = HttpServer("127.0.0.1", 0, door, limits)
    srv.start()
    try:
        yield srv, door
    finally:
        srv.stop()


def _get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_removing_an_idle_listener_ends_its_accept_loop_without_an_error(
        server, caplog: pytest.LogCaptureFixture) -> None:
    """The accept loop waits for the socket to be readable when it is removed and closed:
    it ends cancelled, not with the closed socket's ``ValueError`` (which asyncio logged as
    "Task exception was never retrieved", once per function instance reaped)."""
    srv, door = server
    sock = listening_socket("127.0.0.1", 0, 8)
    port = sock.getsockname()[1]
    remove = srv.add_listener(sock, door)
    for _ in range(3):  # each answer sends the loop back to wait on the idle socket
        assert _get(port).startswith(b"HTTP/1.1 200")
    accepting = srv._accepting[sock]
    ended = threading.Event()
    assert srv._loop is not None
    srv._loop.call_soon_threadsafe(accepting.add_done_callback, lambda _task: ended.set())
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        remove()
        assert ended.wait(10)
        assert accepting.cancelled(), accepting.exception()
        del accepting
        gc.collect()
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text
    with pytest.raises(OSError):
        _get(port)
    assert _get(srv.port).startswith(b"HTTP/1.1 200")  # the first listener goes on
