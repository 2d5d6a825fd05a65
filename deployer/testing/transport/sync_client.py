"""requests' side of the in-process transport: ``HTTPAdapter.send`` answered without a socket.

The ``PreparedRequest`` becomes the emulator's request value as urllib3 would send it (the
target is ``path_url``; ``Host`` from the URL when the client set none; a ``str`` body in
UTF-8). The answer comes back through the adapter's own ``build_response`` over a urllib3
``HTTPResponse``, so hooks, cookies, redirects, ``stream=True`` and ``raise_for_status`` are
requests' own. A long poll blocks the calling thread until its wake-up, its time or the
client's read timeout (then ``ReadTimeout``, as on the wire). A streaming answer is read
chunk by chunk from the transport's event-loop thread, framed as HTTP/1.1 chunks in memory,
so urllib3 reads it as it reads a socket's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import http.client
import io
import threading
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from requests.adapters import HTTPAdapter
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import ReadTimeout
from urllib3 import HTTPHeaderDict, HTTPResponse

from deployer.emulator.api.http import (
    Answer,
    DeferredResponse,
    Headers,
    HttpRequest,
    HttpResponse,
    StreamingResponse,
)

if TYPE_CHECKING:
    from deployer.testing.transport import InProcessTransport

__all__ = ["LoopThread", "send"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def send(transport: InProcessTransport, adapter: Any, request: Any, stream: bool,
         timeout: Any) -> Any:
    """The ``requests.Response`` for ``request``, or None when it goes over HTTP instead (the
    vendored copy of requests, a body that is a file or a generator)."""
    if not isinstance(adapter, HTTPAdapter):
        return None
    body = request.body
    if body is None:
        body = b""
    elif isinstance(body, str):
        body = body.encode("utf-8")
    elif isinstance(body, bytearray | memoryview):
        body = bytes(body)
    elif not isinstance(body, bytes):
        return None
    headers = tuple(request.headers.lower_items())  # names are case-insensitive
    if not any(name == "host" for name, _ in headers):
        headers = (("host", _host(request.url)), *headers)
    incoming = HttpRequest(request.method, _target(request.url), Headers(headers), body,
                           transport.client_address)
    read_timeout = _read_timeout(timeout)
    try:
        answer = _settled(transport.answer(incoming), read_timeout, request)
    except ConnectionRefusedError as exc:
        raise RequestsConnectionError(str(exc), request=request) from None
    transport.settle()
    if isinstance(answer, StreamingResponse):
        raw: Any = _streamed(transport, answer, request.method, read_timeout)
    else:
        raw = _Complete(answer.body, answer.status, transport.head(answer))
    return adapter.build_response(request, raw)


class _Complete(io.BytesIO):
    """A complete answer as requests reads a raw response that is a plain file (no urllib3
    stream to decode): the body, and the status, reason and headers ``build_response``
    copies."""

    def __init__(self, body: bytes, status: int, headers: list[tuple[str, str]]) -> None:
        super().__init__(body)
        self.status = status
        self.reason = _reason(status)
        self.headers = headers

    def release_conn(self) -> None:
        """Nothing to give back: there is no connection."""


def _target(url: str) -> str:
    """The request target urllib3 writes for ``url``: path (``/`` when empty) and query."""
    _, _, rest = url.partition("://")
    start = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if 0 <= found < start:
            start = found
    target = rest[start:].partition("#")[0]
    return target if target.startswith("/") else "/" + target


def _host(url: str) -> str:
    """The ``Host`` header http.client writes for ``url`` (no default port)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{port}"
    return host


def _read_timeout(timeout: Any) -> float | None:
    """The read part of requests' ``timeout`` (a number, a pair, or urllib3's Timeout)."""
    if isinstance(timeout, tuple):
        timeout = timeout[1]
    timeout = getattr(timeout, "read_timeout", timeout)
    return float(timeout) if isinstance(timeout, int | float) else None


def _settled(answer: Answer, read_timeout: float | None,
             request: Any) -> HttpResponse | StreamingResponse:
    """``answer`` once no longer deferred: each deferral waits (blocking this thread) for its
    wake-up or its time, then asks again; past the read timeout, ``ReadTimeout``."""
    deadline = None if read_timeout is None else time.monotonic() + read_timeout
    while isinstance(answer, DeferredResponse):
        wait = answer.timeout
        late = deadline is not None and deadline - time.monotonic() < wait
        if late:
            wait = max(0.0, deadline - time.monotonic())  # type: ignore[operator]
        woken = threading.Event()
        unsubscribe = answer.subscribe(woken.set)
        try:
            if not woken.wait(wait) and late:
                raise ReadTimeout(f"Read timed out. (read timeout={read_timeout})",
                                  request=request)
        finally:
            unsubscribe()
        answer = answer.then()
    return answer


def _reason(status: int) -> str:
    return http.client.responses.get(status, "")


# --- streams -----------------------------------------------------------------------------------

class LoopThread:
    """An event loop in a daemon thread, running the streams that sync clients read."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="in-process-streams",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def stop(self) -> None:
        """Cancel what runs there (streams end), then stop the loop and its thread."""
        def cancel_all() -> None:
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_soon(self.loop.stop)

        if self.loop.is_running():
            self.loop.call_soon_threadsafe(cancel_all)
        self._thread.join(timeout=10)


def _streamed(transport: InProcessTransport, answer: StreamingResponse, method: str,
              read_timeout: float | None) -> HTTPResponse:
    """A urllib3 response over ``answer``'s chunks, as urllib3 reads one from a socket."""
    head = [f"HTTP/1.1 {answer.status} {_reason(answer.status)}",
            *(f"{k}: {v}" for k, v in transport.stream_head(answer.headers))]
    wire = _ChunkedBody(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"), answer.chunks,
                        transport.loop_thread().loop, read_timeout)
    original = http.client.HTTPResponse(_Socket(wire), method=method)  # type: ignore[arg-type]
    original.begin()
    return HTTPResponse(body=original, headers=HTTPHeaderDict(original.msg.items()),
                        status=original.status, version=original.version,
                        reason=original.reason, preload_content=False, decode_content=True,
                        original_response=original, request_method=method)


class _Socket:
    """What ``http.client.HTTPResponse`` needs of a socket: ``makefile``."""

    def __init__(self, raw: io.RawIOBase) -> None:
        self._raw = raw

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(self._raw)


class _ChunkedBody(io.RawIOBase):
    """The head, then each chunk of a streaming answer as an HTTP/1.1 chunk, pulled from the
    stream loop when read; ``TimeoutError`` when the next chunk takes over ``timeout``."""

    def __init__(self, head: bytes, chunks: AsyncIterator[bytes],
                 loop: asyncio.AbstractEventLoop, timeout: float | None) -> None:
        super().__init__()
        self._buffer = bytearray(head)
        self._chunks = chunks
        self._loop = loop
        self._timeout = timeout
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._buffer and not self._done:
            self._pull()
        count = min(len(target), len(self._buffer))
        target[:count] = self._buffer[:count]
        del self._buffer[:count]
        return count

    def _pull(self) -> None:
        future = asyncio.run_coroutine_threadsafe(_next(self._chunks), self._loop)
        try:
            chunk = future.result(self._timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            self._done = True
            raise TimeoutError(f"read timed out after {self._timeout} s") from None
        except concurrent.futures.CancelledError:
            self._done = True
            raise ConnectionResetError("the in-process cloud ended the stream") from None
        if chunk is None:
            self._buffer += b"0\r\n\r\n"
            self._done = True
        elif chunk:
            self._buffer += b"%x\r\n%b\r\n" % (len(chunk), chunk)

    def close(self) -> None:
        if not self.closed:
            self._done = True
            close = getattr(self._chunks, "aclose", None)
            if close is not None and self._loop.is_running():
                asyncio.run_coroutine_threadsafe(_quietly(close()), self._loop)
        super().close()


async def _next(chunks: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await chunks.__anext__()
    except StopAsyncIteration:
        return None


async def _quietly(closing: Any) -> None:
    with contextlib.suppress(RuntimeError, asyncio.CancelledError):  # still running: its
        await closing  # task was cancelled
