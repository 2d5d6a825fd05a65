"""Stopping the server: a request in progress gets ``shutdown_grace`` to finish and is
answered whole; a connection idle between requests (every SDK client keeps one) is closed at
once instead of holding the stop for the whole grace."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from deployer.emulator.api.errors import Style
from deployer.emulator.api.http import HttpRequest, HttpResponse
from deployer.emulator.httpd import FrontDoor, HttpServer, ServerLimits

GRACE = 30.0
release = threading.Event()
entered = threading.Event()


def _handle(request: HttpRequest) -> HttpResponse:
    if request.raw_path == "/slow":
        entered.set()
        release.wait(GRACE)
        return HttpResponse(200, body=b"slow done")
    return HttpResponse(200, body=b"ok")


@pytest.fixture
def server() -> Iterator[HttpServer]:
    release.clear()
    entered.clear()
    limits = ServerLimits(max_connections=8, worker_threads=2, shutdown_grace=GRACE)
    door = FrontDoor(_handle, limits, lambda style: "rid" if style is Style.RPC else "fc",
                     "test-server/1")
    srv = HttpServer("127.0.0.1", 0, door, limits)
    srv.start()
    try:
        yield srv
    finally:
        release.set()
        srv.stop()


def _send(sock: socket.socket, path: str) -> None:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_an_idle_keep_alive_connection_does_not_hold_the_stop(server: HttpServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=GRACE) as sock:
        _send(sock, "/")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200") and b"ok" in first
        began = time.monotonic()
        server.stop()
        assert time.monotonic() - began < GRACE / 3  # not the grace: nothing was in progress
        assert _read_all(sock) == b""  # closed by the server


def test_a_request_in_progress_is_answered_before_the_stop_ends(server: HttpServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=GRACE) as busy, \
            socket.create_connection(("127.0.0.1", server.port), timeout=GRACE) as idle:
        _send(idle, "/")
        assert idle.recv(65536).startswith(b"HTTP/1.1 200")
        _send(busy, "/slow")
        assert entered.wait(GRACE)
        stopping = threading.Thread(target=server.stop)
        stopping.start()
        assert _read_all(idle) == b""  # the idle one goes first, while the request runs
        assert stopping.is_alive()
        release.set()
        answer = _read_all(busy)
        stopping.join(GRACE)
        assert not stopping.is_alive()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"slow done")
