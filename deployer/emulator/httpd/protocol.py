"""aiohttp's low-level server, adapted: requests in, the router in a worker thread, answers out.

``FrontDoor.handle`` runs on the event loop for every request aiohttp has parsed (llhttp,
strict): it reads the body (de-chunked; ``Expect: 100-continue`` answered once the body is
accepted; large bodies wait for the :class:`~.limits.BodyBudget`), builds an
:class:`HttpRequest`, runs the synchronous router in the worker pool (or, for requests the
router calls quick, right on the loop), and writes the :class:`Answer`: a complete response (one
pre-built buffer when small, :mod:`.responses`), a stream, or a deferred one awaited without a
thread.

:class:`Connection` is aiohttp's per-connection protocol with the emulator's touches: a
header-read timeout (``408``), and the cloud's JSON error body for requests the parser refuses.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from deployer.emulator.api import errors as e
from deployer.emulator.api.errors import ApiError, Style, error_response
from deployer.emulator.api.http import (
    Answer,
    DeferredResponse,
    Headers,
    HttpRequest,
    HttpResponse,
    StreamingResponse,
    wait_for_wake,
    wait_inline,
)
from deployer.emulator.httpd.limits import BodyBudget, ServerLimits
from deployer.emulator.httpd.responses import prebuilt

__all__ = ["Connection", "FrontDoor", "Server"]

log = logging.getLogger("deployer.emulator")
Dispatch = Callable[[HttpRequest], Answer]
IsQuick = Callable[[HttpRequest], bool]
RequestId = Callable[[Style], str]


def _deadline(seconds: float) -> AbstractAsyncContextManager[Any]:
    if sys.version_info >= (3, 11):
        return asyncio.timeout(seconds)
    return nullcontext()  # Python 3.10: the connection's idle timeout still applies


class _Refused(Exception):
    def __init__(self, error: ApiError, *, close: bool) -> None:
        super().__init__(error.message)
        self.error = error
        self.close = close


def _style_of(target: str) -> Style:
    return Style.RPC if target.partition("?")[0] == "/" else Style.ROA


class FrontDoor:
    """Everything a request goes through between aiohttp and the router."""

    def __init__(self, dispatch: Dispatch, limits: ServerLimits, request_id: RequestId,
                 server_header: str, is_quick: IsQuick | None = None) -> None:
        self._dispatch = dispatch
        self._is_quick = is_quick
        self.limits = limits
        self._request_id = request_id
        self._server_header = server_header
        self.budget = BodyBudget(limits.body_memory)
        self._streams: set[asyncio.Task[Any]] = set()  # handlers sending a stream right now
        self._client_streams: collections.Counter[str] = collections.Counter()

    async def end_streams(self) -> None:
        """Stop every stream being sent (at shutdown: a stream never ends by itself)."""
        streams, self._streams = list(self._streams), set()
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, return_exceptions=True)

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        conn = request.protocol
        if isinstance(conn, Connection):
            conn.head_done()
        target = request.raw_path
        reserved = 0
        try:
            try:
                body, reserved = await self._read_body(request)
            except _Refused as refused:
                return self._error(request, target, refused.error, close=refused.close)
            if "text/event-stream" in request.headers.get("Accept", ""):
                refused = self._no_room_for_stream(request.remote or "")
                if refused is not None:  # answered before any work (checked again below)
                    return self._error(request, target, refused, close=True)
            http_request = HttpRequest(request.method, target,
                                       Headers(tuple(request.headers.items())), body,
                                       request.remote or "")
            del body
            loop = asyncio.get_running_loop()
            if self._is_quick is not None and self._is_quick(http_request):
                answer = self._dispatch(http_request)  # saves two thread hand-offs
            else:
                answer = await loop.run_in_executor(None, self._dispatch, http_request)
            if reserved:
                self.budget.release(reserved)
                reserved = 0
            while isinstance(answer, DeferredResponse):
                if answer.inline:
                    await wait_inline(answer.subscribe, answer.timeout)
                    answer = answer.then()
                    continue
                await wait_for_wake(answer.subscribe, answer.timeout)
                answer = await loop.run_in_executor(None, answer.then)
            if isinstance(answer, StreamingResponse):
                refused = self._no_room_for_stream(request.remote or "")
                if refused is not None:
                    await _close_chunks(answer)
                    return self._error(request, target, refused, close=True)
                return await self._stream(request, answer)
            headers = {"Server": self._server_header, **answer.headers}
            fast = prebuilt(request, answer.status, answer.body, headers)
            if fast is not None:  # (a response is a mapping: never test its truth)
                return fast
            return web.Response(status=answer.status, body=answer.body, headers=headers)
        finally:
            if reserved:
                self.budget.release(reserved)
            if isinstance(conn, Connection):
                conn.request_done()

    # --- bodies -------------------------------------------------------------------------------

    async def _read_body(self, request: web.BaseRequest) -> tuple[bytes, int]:
        """The whole body and the budget reserved for it (release it when done)."""
        expect = request.headers.get("Expect")
        if expect is not None and expect.strip().lower() != "100-continue":
            raise _Refused(e.ExpectationFailed(f"Expect: {expect!r} is not supported; only "
                                               "100-continue is"), close=True)
        if not request.body_exists:
            return b"", 0
        limits = self.limits
        declared = request.content_length
        if declared is not None and declared > limits.max_body:
            raise _Refused(self._too_large(), close=True)
        reserved = 0
        if declared is not None and declared > limits.small_body:
            reserved = await self._reserve(declared)
        try:
            if expect is not None and request.version >= (1, 1):
                await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            chunks: list[bytes] = []
            total = 0
            reader = request.content
            while True:
                chunk = reader.read_nowait()  # what is buffered already: no deadline needed
                if not chunk:
                    if reader.at_eof():
                        break
                    async with _deadline(limits.idle_timeout):
                        chunk = await reader.readany()
                    if not chunk:
                        break
                total += len(chunk)
                if total > limits.max_body:
                    raise _Refused(self._too_large(), close=True)
                if declared is None and not reserved and total > limits.small_body:
                    reserved = await self._reserve(limits.max_body)  # chunked: size unknown
                chunks.append(chunk)
        except (asyncio.TimeoutError, TimeoutError):
            self.budget.release(reserved)
            raise _Refused(e.RequestTimeout(
                f"no part of the request body arrived for {limits.idle_timeout:g} s"),
                close=True) from None
        except (HttpProcessingError, web.RequestPayloadError) as exc:
            self.budget.release(reserved)
            raise _Refused(e.InvalidArgument(f"malformed request body: {_first_line(exc)}"),
                           close=True) from None
        except BaseException:
            self.budget.release(reserved)
            raise
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), reserved

    @property
    def server_header(self) -> str:
        """The ``Server`` header of every answer."""
        return self._server_header

    def oversized(self, target: str, host: str, size: int) -> HttpResponse | None:
        """The answer to a whole body of ``size`` bytes that the limits refuse
        (``EntityTooLarge``), else None: for requests handed over without a socket."""
        if size <= self.limits.max_body:
            return None
        return self.error(target, host, self._too_large())

    def _too_large(self) -> ApiError:
        return e.EntityTooLarge(
            f"payload size exceeds maximum allowed size ({self.limits.max_body} bytes)")

    async def _reserve(self, n: int) -> int:
        try:
            return await self.budget.acquire(n, self.limits.body_wait)
        except (asyncio.TimeoutError, TimeoutError):
            raise _Refused(e.ServiceUnavailable(
                "too many large request bodies are being received at once; retry later"),
                close=True) from None

    # --- answers ------------------------------------------------------------------------------

    def response(self, answer: HttpResponse) -> web.Response:
        headers = {"Server": self._server_header, **answer.headers}
        return web.Response(status=answer.status, body=answer.body, headers=headers)

    def _no_room_for_stream(self, client: str) -> ApiError | None:
        """``TooManyStreams`` when a new stream would pass a cap (``ServerLimits``)."""
        total, per_client = self.limits.stream_caps()
        if len(self._streams) >= total:
            return e.TooManyStreams(
                f"this emulator already serves {total} event streams, its limit; close "
                "console pages or `deploy logs --follow` readers, then retry")
        if self._client_streams[client] >= per_client:
            return e.TooManyStreams(
                f"this client already has {per_client} event streams open, the limit per "
                "client; close console pages or `deploy logs --follow` readers, then retry")
        return None

    async def _stream(self, request: web.BaseRequest,
                      answer: StreamingResponse) -> web.StreamResponse:
        resp = web.StreamResponse(status=answer.status,
                                  headers={"Server": self._server_header, **answer.headers})
        resp.enable_chunked_encoding()
        task = asyncio.current_task()
        client = request.remote or ""
        if task is not None:
            self._streams.add(task)
        self._client_streams[client] += 1
        try:
            await resp.prepare(request)
            async for chunk in answer.chunks:
                await resp.write(chunk)
            await resp.write_eof()
        finally:
            self._streams.discard(task)  # type: ignore[arg-type]
            self._client_streams[client] -= 1
            if self._client_streams[client] <= 0:
                del self._client_streams[client]
            await _close_chunks(answer)
        return resp

    def error(self, target: str, host: str, err: ApiError) -> HttpResponse:
        """The cloud's error body for ``err`` (RPC style for ``/``, FC style otherwise)."""
        style = _style_of(target)
        return error_response(err, self._request_id(style), style, host)

    def _error(self, request: web.BaseRequest, target: str, err: ApiError, *,
               close: bool) -> web.Response:
        resp = self.response(self.error(target, request.headers.get("Host") or "", err))
        if close:
            resp.force_close()
        return resp

    def raw_error(self, head: bytes, err: ApiError) -> bytes:
        """A whole ``Connection: close`` response for ``err``, as bytes (written when no
        request object exists: header timeout)."""
        target = _target_of(head)
        answer = self.error(target, "", err)
        lines = [f"HTTP/1.1 {answer.status} {_reason(answer.status)}",
                 f"Server: {self._server_header}", f"Content-Length: {len(answer.body)}",
                 "Connection: close", *(f"{k}: {v}" for k, v in answer.headers.items())]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + answer.body


async def _close_chunks(answer: StreamingResponse) -> None:
    close = getattr(answer.chunks, "aclose", None)
    if close is not None:
        await close()


def _first_line(exc: BaseException) -> str:
    """The parser's reason, without the echoed bytes it appends."""
    text = str(getattr(exc, "message", None) or exc).strip()
    if not text:
        return type(exc).__name__
    line = text.splitlines()[0].split(": b'", 1)[0].split(': b"', 1)[0]
    return line.rstrip(": ")[:200]


def _target_of(head: bytes) -> str:
    parts = head.split(b"\r\n", 1)[0].split(b" ")
    return parts[1].decode("latin-1") if len(parts) >= 3 else ""


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


class Connection(web.RequestHandler):
    """aiohttp's connection protocol plus a header-read timeout and the cloud's error bodies."""

    def __init__(self, manager: web.Server, *, door: FrontDoor, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._door = door
        # the header-read timeout: when the pending request's first byte came (None: no head
        # pending) and one timer per connection, re-armed only when it fires early, so a
        # keep-alive connection pays no timer per request
        self._head_started: float | None = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._busy = False
        self._head = b""

    def data_received(self, data: bytes) -> None:
        if not self._busy and self._head_started is None and data:
            self._head = data[:512]
            self._head_started = started = self._loop.time()
            if self._head_timer is None:
                self._head_timer = self._loop.call_at(
                    started + self._door.limits.header_timeout, self._head_check)
        super().data_received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def head_done(self) -> None:
        """A request's head was parsed and its handler runs."""
        self._busy = True
        self._head_started = None

    def request_done(self) -> None:
        self._busy = False

    def _cancel_head_timer(self) -> None:
        self._head_started = None
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_check(self) -> None:
        self._head_timer = None
        started = self._head_started
        if started is None or self._busy:
            return  # no head pending: the next request's first byte arms the timer again
        deadline = started + self._door.limits.header_timeout
        if self._loop.time() < deadline:  # a later request's head: wait for its own deadline
            self._head_timer = self._loop.call_at(deadline, self._head_check)
            return
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        seconds = self._door.limits.header_timeout
        transport.write(self._door.raw_error(self._head, e.RequestTimeout(
            f"the request line and headers did not arrive within {seconds:g} s")))
        self.force_close()

    def handle_error(self, request: web.BaseRequest, status: int = 500,
                     exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """The parser refused the request (4xx), or a bug escaped (500): the cloud's JSON
        error, then the connection is closed."""
        if status >= 500:
            log.error("internal error on a request", exc_info=exc)
            err: ApiError = e.InternalServerError("an internal error has occurred. Please retry.")
        else:
            detail = _first_line(exc) if exc is not None else (message or "bad request")
            err = e.InvalidArgument(f"malformed HTTP request: {detail}")
            log.debug("refused a malformed request: %s", detail)
        err.http_status = status if 400 <= status < 500 else err.http_status
        answer = self._door.error(_target_of(self._head), "", err)
        resp = self._door.response(answer)
        resp.headers["Connection"] = "close"
        resp.force_close()
        return resp


class Server(web.Server):
    """aiohttp's low-level server making :class:`Connection` protocols; ``on_closed`` is
    called once per connection that ends."""

    def __init__(self, door: FrontDoor, on_closed: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(door.handle, handler_cancellation=True, **kwargs)
        self._door = door
        self._on_closed = on_closed

    def __call__(self) -> Connection:
        return Connection(self, loop=self._loop, door=self._door, **self._kwargs)

    async def shutdown(self, timeout: float | None = None) -> None:
        """aiohttp's shutdown, except that a connection idle between requests (keep-alive)
        is closed at once: aiohttp waits the whole ``timeout`` for it, as for one with a
        request in progress (every SDK client keeps one: each stop took the full grace)."""
        for connection in self.connections:
            connection.close()  # idle: ends now; busy: after the request in progress
        await super().shutdown(timeout)

    def connection_lost(self, handler: web.RequestHandler,
                        exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        self._on_closed()
