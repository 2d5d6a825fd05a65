"""The answer an in-process aiohttp call gets: aiohttp's ``ClientResponse`` surface, and the
``StreamReader`` surface of its ``content``.

Written against aiohttp's documented client API only (attributes, ``read``/``text``/``json``,
``raise_for_status``, ``release``/``close``, ``async with``; ``content.read``, ``readline``,
``readany``, ``readexactly``, ``iter_chunked``, ``iter_any``, ``iter_chunks``, line iteration),
never by constructing aiohttp's own response or reader, whose constructors are private and
change between releases. A streaming answer is fed into ``content`` by a :class:`Pump` task
on the caller's loop, which waits while 64 KiB are unread (as a socket's reader pauses).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING, Any

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

if TYPE_CHECKING:
    from deployer.testing.transport import InProcessTransport

__all__ = ["Content", "InProcessResponse", "Pump"]

HIGH_WATER = 64 * 1024


class Content:
    """A response body read as it arrives (aiohttp's ``StreamReader`` reading methods)."""

    def __init__(self, body: bytes | None = None) -> None:
        self._buffer = bytearray(body or b"")
        self._eof = body is not None
        self._exception: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.total_bytes = len(self._buffer)
        self.on_read: Callable[[], None] | None = None  # the pump's wake-up: room again

    # --- fed by the pump --------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        self.total_bytes += len(chunk)
        self._wake()

    def feed_eof(self) -> None:
        self._eof = True
        self._wake()

    def set_exception(self, exc: BaseException) -> None:
        self._exception = exc
        self._wake()

    def unread(self) -> int:
        return len(self._buffer)

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _more(self) -> bool:
        """Wait for data or the end; False at the end with nothing buffered."""
        while not self._buffer:
            if self._exception is not None:
                raise self._exception
            if self._eof:
                return False
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return True

    def _take(self, n: int) -> bytes:
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        if self.on_read is not None and len(self._buffer) < HIGH_WATER:
            self.on_read()
        return data

    # --- StreamReader's reading surface ---------------------------------------------------------

    def exception(self) -> BaseException | None:
        return self._exception

    def is_eof(self) -> bool:
        return self._eof

    def at_eof(self) -> bool:
        return self._eof and not self._buffer

    async def read(self, n: int = -1) -> bytes:
        if n < 0:
            parts = []
            while await self._more():
                parts.append(self._take(len(self._buffer)))
            return b"".join(parts)
        if n == 0 or not await self._more():
            return b""
        return self._take(n)

    async def readany(self) -> bytes:
        return self._take(len(self._buffer)) if await self._more() else b""

    def read_nowait(self, n: int = -1) -> bytes:
        if self._exception is not None:
            raise self._exception
        return self._take(len(self._buffer) if n < 0 else n)

    async def readchunk(self) -> tuple[bytes, bool]:
        data = await self.readany()
        return data, bool(data)

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        while True:
            found = self._buffer.find(separator)
            if found >= 0:
                return self._take(found + len(separator))
            if self._eof or self._exception is not None:
                if self._exception is not None and not self._buffer:
                    raise self._exception
                return self._take(len(self._buffer))
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter

    async def readline(self) -> bytes:
        return await self.readuntil(b"\n")

    async def readexactly(self, n: int) -> bytes:
        parts: list[bytes] = []
        left = n
        while left:
            part = await self.read(left)
            if not part:
                raise asyncio.IncompleteReadError(b"".join(parts), n)
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        while chunk := await self.read(n):
            yield chunk

    async def iter_any(self) -> AsyncIterator[bytes]:
        while chunk := await self.readany():
            yield chunk

    async def iter_chunks(self) -> AsyncIterator[tuple[bytes, bool]]:
        while chunk := await self.readany():
            yield chunk, True

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[bytes]:
        while line := await self.readline():
            yield line


class Pump:
    """Feeds a streaming answer's chunks into a :class:`Content` on the caller's loop;
    :meth:`end` stops it from any thread (the reader then sees the payload cut short)."""

    def __init__(self, chunks: AsyncIterator[bytes], transport: InProcessTransport) -> None:
        self.content = Content()
        self._chunks = chunks
        self._transport = transport
        self._room = asyncio.Event()
        self._room.set()
        self.content.on_read = self._room.set
        self._loop = asyncio.get_running_loop()
        self._closed_by_reader = False
        self._task = self._loop.create_task(self._run())
        transport.track(self)

    async def _run(self) -> None:
        content = self.content
        try:
            async for chunk in self._chunks:
                content.feed(chunk)
                if content.unread() >= HIGH_WATER:
                    self._room.clear()
                    await self._room.wait()
            content.feed_eof()
        except asyncio.CancelledError:
            if not self._closed_by_reader:
                content.set_exception(aiohttp.ClientPayloadError(
                    "Response payload is not completed: the in-process cloud stopped"))
        except Exception as exc:
            content.set_exception(aiohttp.ClientPayloadError(f"stream failed: {exc}"))
        finally:
            self._transport.untrack(self)
            close = getattr(self._chunks, "aclose", None)
            if close is not None:
                with contextlib.suppress(RuntimeError, asyncio.CancelledError):
                    await close()

    def close(self) -> None:
        """The reader is done (release, close): stop feeding."""
        self._closed_by_reader = True
        self._task.cancel()

    def end(self) -> None:
        """The transport closes: cut the stream short (thread-safe)."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)


class InProcessResponse:
    """An in-process answer with aiohttp's ``ClientResponse`` surface."""

    version = aiohttp.HttpVersion11
    connection = None

    def __init__(self, method: str, url: URL, request_headers: CIMultiDict[str], status: int,
                 headers: list[tuple[str, str]], body: bytes | None, pump: Pump | None) -> None:
        from http.client import responses

        self.method = method
        self.url = self.real_url = url
        self.status = status
        self.reason = responses.get(status, "")
        self.headers = CIMultiDictProxy(CIMultiDict(headers))
        self.raw_headers = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers)
        self.history: tuple[Any, ...] = ()
        self.cookies: SimpleCookie = SimpleCookie()
        self._request_headers = CIMultiDictProxy(request_headers)
        self._body = body
        self._pump = pump
        self._content: Content | None = pump.content if pump is not None else None
        self.closed = False

    @property
    def request_info(self) -> aiohttp.RequestInfo:
        return aiohttp.RequestInfo(self.url, self.method, self._request_headers, self.url)

    @property
    def ok(self) -> bool:
        return self.status < 400

    @property
    def content(self) -> Content:
        if self._content is None:
            self._content = Content(self._body or b"")
        return self._content

    @property
    def content_type(self) -> str:
        raw = self.headers.get("Content-Type", "application/octet-stream")
        return raw.split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for part in self.headers.get("Content-Type", "").split(";")[1:]:
            name, _, value = part.strip().partition("=")
            if name.lower() == "charset":
                return value.strip('"') or None
        return None

    @property
    def content_length(self) -> int | None:
        value = self.headers.get("Content-Length")
        return int(value) if value is not None else None

    def get_encoding(self) -> str:
        return self.charset or "utf-8"

    async def read(self) -> bytes:
        if self._body is None:
            self._body = await self.content.read()
        return self._body

    async def text(self, encoding: str | None = None, errors: str = "strict") -> str:
        return (await self.read()).decode(encoding or self.get_encoding(), errors)

    async def json(self, *, encoding: str | None = None, loads: Callable[[str], Any] = json.loads,
                   content_type: str | None = "application/json") -> Any:
        if content_type and not _expected(self.content_type, content_type):
            raise aiohttp.ContentTypeError(
                self.request_info, self.history, status=self.status, headers=self.headers,
                message=f"Attempt to decode JSON with unexpected mimetype: {self.content_type}")
        text = (await self.read()).decode(encoding or self.get_encoding()).strip()
        return loads(text) if text else None

    def raise_for_status(self) -> None:
        if self.status >= 400:
            self.release()
            raise aiohttp.ClientResponseError(self.request_info, self.history,
                                              status=self.status, message=self.reason,
                                              headers=self.headers)

    def release(self) -> None:
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._pump is not None:
                self._pump.close()

    async def wait_for_close(self) -> None:
        self.close()

    async def __aenter__(self) -> InProcessResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<InProcessResponse({self.url}) [{self.status} {self.reason}]>"


def _expected(actual: str, expected: str) -> bool:
    if expected == "application/json":
        return actual == expected or (actual.startswith("application/")
                                      and actual.endswith("+json"))
    return expected in actual
