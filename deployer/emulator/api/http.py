"""Plain request/response values passed between the server and the API modules
(docs/emulator.md "Streaming and waiting").

The server fills :class:`HttpRequest` from the raw request line, so ``raw_target`` is the path and
query exactly as received (signatures are computed over it); nothing here decodes ``%2F``. The
body is complete and de-chunked. An API module answers with an :data:`Answer`: a complete
:class:`HttpResponse`, a :class:`StreamingResponse` (chunked; :func:`event_stream` builds a
server-sent-events one, whose iterator runs on the server's event loop, waiting with
:func:`wait_for_wake` and calling synchronous code with :func:`run_blocking`, so an open stream
holds no thread) or a :class:`DeferredResponse` (a long poll answered after a wake-up or a
timeout, no thread waiting).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote_plus

__all__ = ["Answer", "DeferredResponse", "Headers", "HttpRequest", "HttpResponse",
           "ServerSentEvent", "StreamingResponse", "Subscribe", "compact_json", "event_stream",
           "hostname", "json_response", "run_blocking", "wait_for_wake", "wait_inline"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Headers:
    """Case-insensitive, multi-valued request headers in wire order."""

    items: tuple[tuple[str, str], ...] = ()
    _index: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False,
                                         compare=False)

    def __post_init__(self) -> None:
        index = self._index
        for key, value in self.items:
            index.setdefault(key.lower(), []).append(value)

    def get_all(self, name: str) -> list[str]:
        return list(self._index.get(name.lower(), ()))

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self._index.get(name.lower())
        return values[0] if values else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._index


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request as received."""

    method: str
    raw_target: str
    headers: Headers
    body: bytes = b""
    remote_addr: str = "127.0.0.1"
    _parsed: dict[str, dict[str, str]] = field(default_factory=dict, init=False, repr=False,
                                               compare=False)

    @property
    def raw_path(self) -> str:
        return self.raw_target.partition("?")[0] or "/"

    @property
    def raw_query(self) -> str:
        return self.raw_target.partition("?")[2]

    def query_params(self) -> dict[str, str]:
        """The query parsed with form rules (``+`` is a space), blank values kept (a new
        dict each call; the parse is done once per request)."""
        return dict(self._query())

    def rpc_params(self) -> Mapping[str, str]:
        """The query merged with a form body (the body wins): an RPC request's parameters,
        parsed once per request (read-only: do not change it)."""
        merged = self._parsed.get("rpc")
        if merged is None:
            merged = self._parsed["rpc"] = {**self._query(), **self._form()}
        return merged

    def _query(self) -> dict[str, str]:
        parsed = self._parsed.get("query")
        if parsed is None:
            parsed = self._parsed["query"] = _parse_form(self.raw_query)
        return parsed

    def _form(self) -> dict[str, str]:
        parsed = self._parsed.get("form")
        if parsed is None:
            parsed = self._parsed["form"] = self._parse_form_body()
        return parsed

    def _parse_form_body(self) -> dict[str, str]:
        ctype = (self.headers.get("content-type") or "").lower()
        if not ctype.startswith("application/x-www-form-urlencoded") or not self.body:
            return {}
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError:
            return {}
        return _parse_form(text)


def _parse_form(text: str) -> dict[str, str]:
    """What ``parse_qsl`` gives (``&``-separated, ``+`` is a space, bad UTF-8 replaced, the
    last of repeated names wins), decoding only the parts that hold an escape."""
    out: dict[str, str] = {}
    for pair in text.split("&"):
        if not pair:
            continue
        name, _, value = pair.partition("=")
        if "%" in name or "+" in name:
            name = _unquote_plus(name)
        if "%" in value or "+" in value:
            value = _unquote_plus(value)
        out[name] = value
    return out


_ASCII_ESCAPES = {f"{i:02{case}}": chr(i) for i in range(128) for case in "xX"}


def _unquote_plus(text: str) -> str:
    """``unquote_plus``, with a fast path for what signed requests hold: escapes of ASCII
    characters only (``%3A``, ``%3D``...); anything else (UTF-8 sequences, a stray ``%``)
    goes to the standard library, so the results are the same."""
    if "+" in text:
        text = text.replace("+", " ")
    head, *parts = text.split("%")
    out = [head]
    for part in parts:
        char = _ASCII_ESCAPES.get(part[:2])
        if char is None:
            return unquote_plus(text)
        out.append(char)
        out.append(part[2:])
    return "".join(out)


@dataclass(slots=True)
class HttpResponse:
    """A complete response; the server adds Content-Length and never compresses."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Subscribe = Callable[[Callable[[], None]], Callable[[], None]]
"""``subscribe(wake) -> unsubscribe``: call ``wake()`` (from any thread, at most once needed)
when whatever is awaited may have happened; ``unsubscribe()`` stops the calls."""


@dataclass(frozen=True, slots=True)
class StreamingResponse:
    """A response whose body ``chunks`` yields piece by piece (chunked transfer encoding).

    Each chunk is written and flushed as it comes; the response ends when the iterator does or
    the client goes away (the iterator is then closed, so its ``finally`` runs)."""

    status: int
    chunks: AsyncIterator[bytes]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeferredResponse:
    """Answer after a wake-up or ``timeout`` seconds, whichever comes first, with ``then()``
    (which may defer again: an injected latency before a long poll).

    ``subscribe`` is called in a worker thread; ``wake`` may be called from any thread, even
    before ``subscribe`` returns. ``then`` runs in a worker thread too. No thread waits.
    ``inline``: ``subscribe`` and ``then`` never block, so they run on the event loop itself
    (no hand-off to a worker: an answer waiting for the disk)."""

    subscribe: Subscribe
    timeout: float
    then: Callable[[], Answer]
    inline: bool = False


Answer = HttpResponse | StreamingResponse | DeferredResponse
"""What the router hands back to the server for one request."""


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One server-sent event (``text/event-stream``); ``data`` may span lines."""

    data: str
    event: str = ""
    id: str = ""
    retry_ms: int | None = None

    def encode(self) -> bytes:
        lines = []
        if self.event:
            lines.append(f"event: {_one_line(self.event)}")
        if self.id:
            lines.append(f"id: {_one_line(self.id)}")
        if self.retry_ms is not None:
            lines.append(f"retry: {int(self.retry_ms)}")
        lines.extend(f"data: {line}" for line in self.data.splitlines() or [""])
        return ("\n".join(lines) + "\n\n").encode("utf-8")


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def event_stream(events: AsyncIterator[ServerSentEvent], *,
                 heartbeat: float = 15.0) -> StreamingResponse:
    """A ``text/event-stream`` response sending ``events`` as they come, with a comment line
    every ``heartbeat`` seconds of silence (so proxies and browsers keep the stream open)."""

    async def chunks() -> AsyncIterator[bytes]:
        pending: asyncio.Task[ServerSentEvent] | None = None
        iterator = events.__aiter__()
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(iterator.__anext__())
                done, _ = await asyncio.wait((pending,), timeout=heartbeat)
                if not done:
                    yield b": keep-alive\n\n"
                    continue
                try:
                    event = pending.result()
                except StopAsyncIteration:
                    return
                finally:
                    pending = None
                yield event.encode()
        finally:
            if pending is not None:  # let the generator stop before closing it
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()

    return StreamingResponse(200, chunks(), {
        "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store",
        "X-Accel-Buffering": "no"})


async def run_blocking(fn: Callable[..., T], *args: Any) -> T:
    """Run synchronous ``fn(*args)`` in the server's worker pool and await its result (for
    streaming iterators: services and stores are synchronous)."""
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def wait_inline(subscribe: Subscribe, timeout: float) -> bool:
    """Like :func:`wait_for_wake` for a ``subscribe`` that never blocks: called on the loop,
    with a plain timer for the timeout (the cheapest wait the loop offers)."""
    loop, woken, wake = _waker()
    unsubscribe = subscribe(wake)
    timer = loop.call_later(timeout, _settle, woken)
    try:
        await woken
        return timer.when() > loop.time()
    finally:
        timer.cancel()
        unsubscribe()


async def wait_for_wake(subscribe: Subscribe, timeout: float) -> bool:
    """Wait, holding no thread, until ``subscribe``'s wake is called (True) or ``timeout``
    seconds pass (False). ``subscribe`` itself runs in the worker pool."""
    _loop, woken, wake = _waker()
    unsubscribe = await run_blocking(subscribe, wake)
    try:
        await asyncio.wait_for(asyncio.shield(woken), timeout)
        return True
    except asyncio.TimeoutError:
        return False
    finally:
        unsubscribe()


def _waker() -> tuple[asyncio.AbstractEventLoop, asyncio.Future[None], Callable[[], None]]:
    """The running loop, a future and the ``wake`` that settles it from any thread."""
    loop = asyncio.get_running_loop()
    woken: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        loop.call_soon_threadsafe(_settle, woken)
    return loop, woken, wake


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def json_response(status: int, payload: Mapping[str, Any] | list[Any],
                  headers: Mapping[str, str]) -> HttpResponse:
    """A JSON response (UTF-8, compact) with ``headers`` added."""
    body = compact_json(payload).encode("utf-8")
    return HttpResponse(status, body, {"Content-Type": "application/json", **headers})


compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, one encoder for all."""


def hostname(host: str) -> str:
    """The name of a ``Host`` header: lower case, without the port (``[::1]`` kept whole)."""
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host
    return name.strip().lower()
