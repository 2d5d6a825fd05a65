"""Small complete responses written as one pre-built buffer instead of through aiohttp's
response, header and writer objects.

Every API answer is a complete body of a few hundred bytes; building it through
``web.Response`` (a header multidict, ``prepare``, the stream writer, ``write_eof``) cost more
than the rest of the front door. :func:`prebuilt` writes the same bytes aiohttp writes (status
line of the request's HTTP version, the answer's headers in order, ``Content-Length``,
``Content-Type: application/octet-stream`` for an untyped non-empty body, ``Date``, and
``Connection`` as aiohttp decides it) for the common case only, and answers None for anything
else, which then goes through aiohttp as before: HEAD requests and statuses without a body,
bodies over 64 KiB (aiohttp's writer drains those), headers that set the framing
(``Content-Length``, ``Transfer-Encoding``, ``Connection``, ``Date``), and any header that
is not plain ASCII text (aiohttp refuses line breaks, against header injection).
"""

from __future__ import annotations

import re
import time
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

from aiohttp import web

__all__ = ["MAX_PREBUILT", "prebuilt"]

MAX_PREBUILT = 64 * 1024
"""Largest body written this way (aiohttp's writer drains the transport beyond it)."""
_REASONS = {s.value: s.phrase for s in HTTPStatus}
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "date"})
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # what aiohttp refuses in a header
_date: list[Any] = [0, ""]  # the second and its HTTP date, as aiohttp caches it


def _http_date() -> str:
    now = int(time.time())
    if now != _date[0]:
        _date[1] = formatdate(now, usegmt=True)
        _date[0] = now
    return str(_date[1])


class _Prebuilt(web.StreamResponse):
    """What aiohttp's connection needs of a response (``prepare``, ``write_eof``,
    ``keep_alive``), writing ``data`` at once."""

    def __init__(self, data: bytes, keep_alive: bool) -> None:  # no StreamResponse state
        self._data = data
        self._keep_alive = keep_alive
        self._eof_sent = False
        self._state: dict[str, Any] = {}

    async def prepare(self, request: web.BaseRequest) -> None:  # type: ignore[override]
        if self._eof_sent:
            return
        self._eof_sent = True
        transport = request.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("Cannot write to closing transport")
        transport.write(self._data)

    async def write_eof(self, data: bytes = b"") -> None:
        return None


def prebuilt(request: web.BaseRequest, status: int, body: bytes,
             headers: dict[str, str]) -> web.StreamResponse | None:
    """The response for ``status``/``body``/``headers`` (``Server`` first) as one buffer,
    or None when it is not one of the simple cases above (then use ``web.Response``)."""
    if (type(body) is not bytes or len(body) > MAX_PREBUILT or request.method == "HEAD"
            or status < 200 or status in (204, 304)):
        return None
    lines = []
    typed = False
    for name, value in headers.items():
        lower = name.lower()
        if lower in _FRAMING:
            return None
        typed = typed or lower == "content-type"
        lines.append(f"{name}: {value}")
    text = "".join(headers) + "".join(headers.values())
    if not text.isascii() or _CONTROL.search(text) is not None:
        return None
    version = request.version
    keep_alive = request.keep_alive
    lines.append(f"Content-Length: {len(body)}")
    if body and not typed:
        lines.append("Content-Type: application/octet-stream")
    lines.append(f"Date: {_http_date()}")
    if keep_alive:
        if version == (1, 0):
            lines.append("Connection: keep-alive")
    elif version == (1, 1):
        lines.append("Connection: close")
    head = "\r\n".join(lines)
    status_line = f"HTTP/{version[0]}.{version[1]} {status} {_REASONS.get(status, '')}"
    return _Prebuilt(f"{status_line}\r\n{head}\r\n\r\n".encode() + body, keep_alive)
