"""aiohttp's side of the in-process transport: ``ClientSession.request`` answered without a
socket.

The call's options become the emulator's request value as aiohttp would send it: the URL
through yarl (requoted, ``params`` appended), the session's default headers under the call's,
``Host`` from the URL, the body and its ``Content-Type`` from ``data`` (bytes, text or a form
mapping) or ``json``. The router runs on the caller's event loop when the emulator calls the
request quick, else in the loop's default executor; long polls wait without a thread. The
answer is an :class:`~.response.InProcessResponse` (aiohttp's ``ClientResponse`` surface),
awaited or used as ``async with``, as aiohttp's own call is; the session's and the call's
``raise_for_status``, redirects (followed through the routing again) and timeouts
(``sock_read``/``total``: ``ServerTimeoutError``) behave as aiohttp's.

Declined (sent over HTTP instead): options it does not model (``auth``, ``cookies``,
``compress``, ``chunked``, ``expect100``, ...), a session with trace configs, default auth or
cookies, and bodies of other kinds (``FormData``, files, generators).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from deployer.emulator.api.http import (
    Answer,
    DeferredResponse,
    Headers,
    HttpRequest,
    StreamingResponse,
    wait_for_wake,
)
from deployer.testing.transport.response import InProcessResponse, Pump

if TYPE_CHECKING:
    from deployer.testing.transport import InProcessTransport

__all__ = ["request"]

# options whose every value is modelled (the others must hold their default)
_MODELLED = frozenset({"params", "data", "json", "headers", "timeout", "ssl", "verify_ssl",
                       "ssl_context", "fingerprint", "proxy", "server_hostname",
                       "allow_redirects", "max_redirects", "raise_for_status",
                       "read_until_eof", "skip_auto_headers", "trace_request_ctx",
                       "read_bufsize", "auto_decompress", "proxy_headers"})
_DEFAULTS: dict[str, Any] = {"cookies": None, "auth": None, "compress": None, "chunked": None,
                             "expect100": False, "proxy_auth": None, "middlewares": None,
                             "max_line_size": None, "max_field_size": None,
                             "max_headers": None, "upload_tracker": None}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def request(transport: InProcessTransport, session: Any, method: str, url: str,
            options: dict[str, Any]) -> Any:
    """What ``session.request(method, url, **options)`` returns, answered in-process; None
    when it goes over HTTP instead (see the module docstring)."""
    if not _modelled(session, options):
        return None
    if session is not None and session.closed:
        raise RuntimeError("Session is closed")
    built = _build(session, method.upper(), url, options)
    if built is None:
        return None
    return _Call(_respond(transport, session, built, options))


def _modelled(session: Any, options: Mapping[str, Any]) -> bool:
    for name, value in options.items():
        if name not in _MODELLED and (name not in _DEFAULTS or value != _DEFAULTS[name]):
            return False
    if session is None:
        return True
    return not (session.trace_configs or session.auth is not None or len(session.cookie_jar))


class _Built:
    """A call's request as aiohttp would send it."""

    def __init__(self, method: str, url: URL, headers: CIMultiDict[str], body: bytes) -> None:
        self.method, self.url, self.headers, self.body = method, url, headers, body


def _build(session: Any, method: str, url: str, options: Mapping[str, Any]) -> _Built | None:
    target = URL(url)
    params = options.get("params")
    if params:
        target = target.extend_query(params)
    headers: CIMultiDict[str] = CIMultiDict(session.headers if session is not None else ())
    headers.update(CIMultiDict(options.get("headers") or ()))
    skip = {h.lower() for h in options.get("skip_auto_headers") or ()}
    if session is not None:
        skip |= {h.lower() for h in session.skip_auto_headers}
    body, content_type = _body(session, options)
    if body is None:
        return None
    out: CIMultiDict[str] = CIMultiDict()
    if "Host" not in headers:
        out["Host"] = _host(target)
    out.extend(headers)
    for name, value in (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate")):
        if name not in out and name.lower() not in skip:
            out[name] = value
    if content_type and "Content-Type" not in out and "content-type" not in skip:
        out["Content-Type"] = content_type
    if body or method in ("POST", "PUT", "PATCH"):
        out["Content-Length"] = str(len(body))
    return _Built(method, target, out, body)


def _host(url: URL) -> str:
    """The ``Host`` header aiohttp writes for ``url`` (no default port)."""
    host = url.raw_host or ""
    if ":" in host:
        host = f"[{host}]"
    if url.port is not None and not url.is_default_port():
        host = f"{host}:{url.port}"
    return host


def _body(session: Any, options: Mapping[str, Any]) -> tuple[bytes | None, str]:
    """The body and its default ``Content-Type``; (None, "") for a kind not modelled."""
    data, payload = options.get("data"), options.get("json")
    if payload is not None:
        if data is not None:
            raise ValueError("data and json parameters can not be used at the same time")
        dumps = session.json_serialize if session is not None else _json_dumps
        return dumps(payload).encode("utf-8"), "application/json"
    if data is None:
        return b"", ""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data), "application/octet-stream"
    if isinstance(data, str):
        return data.encode("utf-8"), "text/plain; charset=utf-8"
    if isinstance(data, Mapping) or (isinstance(data, Sequence) and all(
            isinstance(pair, tuple) and len(pair) == 2 for pair in data)):
        return urlencode(list(data.items()) if isinstance(data, Mapping) else list(data),
                         doseq=True).encode("utf-8"), "application/x-www-form-urlencoded"
    return None, ""


def _json_dumps(value: Any) -> str:
    import json

    return json.dumps(value)


class _Call:
    """What ``ClientSession.request`` returns: awaited for the response, or ``async with``
    (the response released on exit)."""

    def __init__(self, coro: Any) -> None:
        self._coro = coro
        self._response: InProcessResponse | None = None

    def __await__(self) -> Any:
        return self._coro.__await__()

    async def __aenter__(self) -> InProcessResponse:
        self._response = await self._coro
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            self._response.release()


async def _respond(transport: InProcessTransport, session: Any, built: _Built,
                   options: Mapping[str, Any]) -> InProcessResponse:
    read_timeout = _read_timeout(session, options.get("timeout"))
    incoming = HttpRequest(built.method, built.url.raw_path_qs,
                           Headers(tuple(built.headers.items())), built.body,
                           transport.client_address)
    loop = asyncio.get_running_loop()
    try:
        if transport.is_quick(incoming):
            answer = transport.answer(incoming)  # as the front door runs it: on the loop
        else:
            answer = await loop.run_in_executor(None, transport.answer, incoming)
        answer = await _settled(answer, read_timeout)
    except ConnectionRefusedError as exc:
        raise aiohttp.ClientConnectionError(str(exc)) from None
    await transport.settle_async()
    response = _response(transport, built, answer)
    if response.status in _REDIRECTS and options.get("allow_redirects", True):
        redirected: InProcessResponse = await _redirected(session, built, response, options)
        return redirected
    check = options.get("raise_for_status")
    if check is None and session is not None:
        check = session.raise_for_status
    if callable(check):
        await check(response)
    elif check:
        response.raise_for_status()
    return response


def _response(transport: InProcessTransport, built: _Built, answer: Answer) -> InProcessResponse:
    if isinstance(answer, StreamingResponse):
        pump = Pump(answer.chunks, transport)
        return InProcessResponse(built.method, built.url, built.headers, answer.status,
                                 transport.stream_head(answer.headers), None, pump)
    assert not isinstance(answer, DeferredResponse)
    return InProcessResponse(built.method, built.url, built.headers, answer.status,
                             transport.head(answer), answer.body, None)


def _read_timeout(session: Any, timeout: Any) -> float | None:
    """The least of ``sock_read`` and ``total`` of the call's timeout (else the session's)."""
    if isinstance(timeout, int | float):  # a number: the total, as aiohttp reads it
        return float(timeout) or None
    if not isinstance(timeout, aiohttp.ClientTimeout):
        timeout = session.timeout if session is not None else None
    if timeout is None:
        return None
    bounds = [t for t in (timeout.sock_read, timeout.total) if t]
    return min(bounds) if bounds else None


async def _settled(answer: Answer, read_timeout: float | None) -> Answer:
    """``answer`` once no longer deferred (no thread waits); past the read timeout,
    ``ServerTimeoutError`` as aiohttp raises it."""
    deadline = None if read_timeout is None else time.monotonic() + read_timeout
    loop = asyncio.get_running_loop()
    while isinstance(answer, DeferredResponse):
        wait = answer.timeout
        late = deadline is not None and deadline - time.monotonic() < wait
        if late:
            wait = max(0.0, deadline - time.monotonic())  # type: ignore[operator]
        if not await wait_for_wake(answer.subscribe, wait) and late:
            raise aiohttp.ServerTimeoutError("Timeout on reading data from socket")
        answer = await loop.run_in_executor(None, answer.then)
    return answer


async def _redirected(session: Any, built: _Built, response: InProcessResponse,
                      options: Mapping[str, Any]) -> Any:
    """Follow a redirect as aiohttp does: through the session (and so the routing) again."""
    left = int(options.get("max_redirects", 10))
    if left <= 0:
        raise aiohttp.TooManyRedirects(response.request_info, (response,))  # type: ignore[arg-type]
    target = built.url.join(URL(response.headers.get("Location", "")))
    method, follow = built.method, {**options, "max_redirects": left - 1}
    if response.status == 303 or (response.status in (301, 302) and method == "POST"):
        method = "GET"
        follow.pop("data", None)
        follow.pop("json", None)
    response.release()
    if session is not None:
        redirected = await session.request(method, str(target), **follow)
    else:  # aiohttp.request: its session lives as long as the call
        async with aiohttp.ClientSession() as own:
            redirected = await own.request(method, str(target), **follow)
            await redirected.read()
    if isinstance(redirected, InProcessResponse):
        redirected.history = (response, *redirected.history)
    return redirected
