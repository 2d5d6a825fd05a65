"""Complete responses written as one pre-built buffer (``httpd.responses``) are byte for byte
what aiohttp writes for the same answer, request version and keep-alive (the Date line aside),
and the cases it does not cover still go through aiohttp."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deployer.emulator.api.errors import Style
from deployer.emulator.api.http import HttpRequest, HttpResponse
from deployer.emulator.httpd import FrontDoor, HttpServer, ServerLimits, protocol


class _Answers:
    """The front door's dispatch: answers whatever the test set last."""

    answer = HttpResponse(200)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.answer


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[HttpServer, _Answers]]:
    answers = _Answers()
    limits = ServerLimits(max_connections=16, worker_threads=2)
    door = FrontDoor(answers, limits, lambda style: "rid" if style is Style.RPC else "fc",
                     "test-server/1")
    srv = HttpServer("127.0.0.1", 0, door, limits)
    srv.start()
    try:
        yield srv, answers
    finally:
        srv.stop()


def _raw(port: int, data: bytes) -> bytes:
    """One exchange; the whole response as sent (the server closes or the body ends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return buf
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if data.startswith(b"HEAD ") or status in (204, 304):
            return head + b"\r\n\r\n" + rest
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return head + b"\r\n\r\n" + rest


def _without_date(raw: bytes) -> bytes:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"date:")]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def _both(srv: HttpServer, data: bytes, monkeypatch: Any) -> tuple[bytes, bytes]:
    fast = _raw(srv.port, data)
    with monkeypatch.context() as m:
        m.setattr(protocol, "prebuilt", lambda *args: None)
        general = _raw(srv.port, data)
    return _without_date(fast), _without_date(general)


HEADERS = st.dictionaries(
    st.sampled_from(["Content-Type", "content-type", "x-acs-request-id", "X-Fc-Request-Id",
                     "Server", "Cache-Control", "Location", "x-note"]),
    st.sampled_from(["application/json", "text/plain; charset=utf-8", "abc", "", "a b",
                     "1-67a0b1c2-0123456789abcdef01234567"]), max_size=4)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(status=st.sampled_from([200, 201, 202, 400, 403, 404, 409, 429, 500, 503, 299, 599]),
       body=st.one_of(st.just(b""), st.binary(max_size=64), st.just(b"x" * 70_000)),
       headers=HEADERS,
       version=st.sampled_from(["1.1", "1.0"]),
       connection=st.sampled_from(["", "close", "keep-alive"]),
       method=st.sampled_from(["GET", "POST", "HEAD", "DELETE"]))
def test_prebuilt_bytes_are_what_aiohttp_writes(server, monkeypatch, status: int, body: bytes,
                                                headers: dict[str, str], version: str,
                                                connection: str, method: str) -> None:
    srv, answers = server
    answers.answer = HttpResponse(status, body, headers)
    extra = f"Connection: {connection}\r\n" if connection else ""
    data = f"{method} /x HTTP/{version}\r\nHost: h\r\n{extra}\r\n".encode()
    fast, general = _both(srv, data, monkeypatch)
    assert fast == general


@pytest.mark.parametrize("headers", [{"X-A": "a\r\nInjected: 1"}, {"X-A": "é"},
                                     {"Content-Length": "3"}, {"Connection": "close"},
                                     {"X-A": "a\x01b"}])
def test_unusual_headers_go_through_aiohttp(server, monkeypatch, headers) -> None:
    srv, answers = server
    answers.answer = HttpResponse(200, b"abc", headers)
    fast, general = _both(srv, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", monkeypatch)
    assert fast == general


def test_keep_alive_and_pipelining_with_prebuilt_answers(server, monkeypatch) -> None:
    srv, answers = server
    answers.answer = HttpResponse(200, b'{"ok":true}', {"Content-Type": "application/json"})
    built: list[object] = []
    real = protocol.prebuilt

    def spy(*args: Any) -> Any:
        built.append(real(*args))
        return built[-1]

    monkeypatch.setattr(protocol, "prebuilt", spy)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
        sock.sendall(b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n" * 3)
        buf = b""
        while buf.count(b'{"ok":true}') < 3:
            chunk = sock.recv(65536)
            assert chunk, "the connection closed early"
            buf += chunk
        assert buf.count(b"HTTP/1.1 200 OK\r\n") == 3
        assert len(built) == 3 and all(b is not None for b in built)
