"""Route the Alibaba Cloud SDKs' HTTP traffic to local endpoints, in whatever process runs it.

How the official SDKs send requests (darabonba-core, and the older Tea core of
``alibabacloud-tea``): a sync call prepares a ``requests.PreparedRequest`` and hands it to a
``requests.Session`` the core keeps per host, whose ``HTTPAdapter.send`` does the I/O; an
``*_async`` call opens an ``aiohttp.ClientSession`` of its own and calls its ``request()``.
Neither core offers a hook, and neither HTTP library has a process-wide one (requests' adapters
and hooks, aiohttp's middlewares and trace configs are per session, and the cores build their
sessions themselves). The interception libraries fake responses rather than redirect requests,
and the one for aiohttp (aioresponses) builds ``ClientResponse`` objects by hand, which broke
with aiohttp 3.14. So routing wraps the libraries' **public** request methods, which both keep
stable across releases: ``requests.adapters.HTTPAdapter.send`` (the transport-adapter method
every requests session calls) and ``aiohttp.ClientSession.request`` with its verb methods
(``get``, ``post``, ..., ``ws_connect``) and ``aiohttp.request``. A wrapper only rewrites where
a request goes, then calls the library's
own method; responses, streaming, timeouts and errors stay the library's. ``tests/sdk_matrix``
runs it against the lowest and highest SDK and aiohttp versions ``pyproject.toml`` allows.

With a :class:`Routing` installed, every HTTP request of the process is treated alike, SDK or
not:

* to a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``): sent as it is;
* to a host that fully matches a pattern of the endpoint map: sent over plain HTTP to that
  pattern's endpoint (``host:port``) with the same method, path, query, headers (the ``Host``
  header the client signed included) and body, bypassing proxies;
* anything else raises :class:`UnmockedRequestError` naming the URL before any connection is
  made: nothing leaves the machine.

A URL relative to an aiohttp session's ``base_url`` is judged joined to it.

The module imports nothing else of ``deployer`` and needs only the HTTP libraries themselves,
so the same routing can be installed in a fresh process (a function worker) with
:func:`install`. Routings nest: the innermost installed one decides.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

__all__ = ["EMULATED_HOSTS", "Routing", "UnmockedRequestError", "install"]

EMULATED_HOSTS = re.compile(
    r"(?:fcv3\.[a-z0-9-]+|\d+\.[a-z0-9-]+\.fc|[a-z0-9-]+\.fc|fc\.[a-z0-9-]+|ram"
    r"|sts(?:-vpc)?(?:\.[a-z0-9-]+)?|[a-z0-9-]+\.fnf|fnf\.[a-z0-9-]+"
    r"|[a-z0-9-]+\.[a-z0-9-]+\.log)\.aliyuncs\.com"
)
"""Function Compute 3.0, CloudFlow, RAM, STS and Log Service (``<project>.<region>.log``)
endpoints (public, VPC and regional forms)."""

# aiohttp's public entry points -> the position of their URL argument (``self`` counted)
AIOHTTP_SESSION_METHODS = {"request": 2, "get": 1, "options": 1, "head": 1, "post": 1,
                           "put": 1, "patch": 1, "delete": 1, "ws_connect": 1}


class UnmockedRequestError(ConnectionError):
    """A request went to a host that no route serves and that is not a loopback address."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Routing:
    """An endpoint map (see :func:`install`); a context manager that uninstalls itself."""

    def __init__(self, endpoints: Mapping[str | re.Pattern[str], str]) -> None:
        self._routes = [(re.compile(p) if isinstance(p, str) else p, endpoint)
                        for p, endpoint in endpoints.items()]

    def target(self, url: str) -> str | None:
        """Where ``url`` goes: None when unchanged (loopback), the endpoint's URL for a routed
        host; raises :class:`UnmockedRequestError` for any other host."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if _is_loopback(host):
            return None
        for pattern, endpoint in self._routes:
            if pattern.fullmatch(host):
                return urlunsplit(("http", endpoint, parts.path or "/", parts.query, ""))
        raise UnmockedRequestError(
            f"request to {url} blocked: host {host!r} is not routed to a local endpoint "
            "(only Function Compute, CloudFlow, RAM and STS endpoints are emulated)")

    def uninstall(self) -> None:
        """Stop this routing (idempotent); with no routing left, requests go out as usual."""
        _PATCHES.remove(self)

    def __enter__(self) -> Routing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()


def install(endpoints: Mapping[str | re.Pattern[str], str]) -> Routing:
    """Route this process's HTTP traffic by ``endpoints``: host pattern (a regular
    expression matched against the whole lower-case host name) -> ``"host:port"`` of a local
    endpoint speaking plain HTTP, e.g. ``{EMULATED_HOSTS: "127.0.0.1:9125"}``.

    Takes effect at once for every thread and event loop of the process, for ``requests``
    and ``aiohttp`` (whichever is installed), sync and async SDK calls alike, and lasts until
    :meth:`Routing.uninstall` (or the end of a ``with`` block on the returned
    :class:`Routing`). Requests to other non-loopback hosts raise
    :class:`UnmockedRequestError` when they are made; routed requests keep the client's own
    timeouts and error behaviour."""
    routing = Routing(endpoints)
    _PATCHES.add(routing)
    return routing


class _Patches:
    """The wrapped library methods, applied while at least one routing is installed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stack: list[Routing] = []
        self._originals: list[tuple[Any, str, Any]] = []

    def current(self) -> Routing | None:
        stack = self._stack
        return stack[-1] if stack else None

    def add(self, routing: Routing) -> None:
        with self._lock:
            if not self._stack:
                self._apply()
            self._stack.append(routing)

    def remove(self, routing: Routing) -> None:
        with self._lock:
            if routing in self._stack:
                self._stack.remove(routing)
                if not self._stack:
                    self._restore()

    def _apply(self) -> None:
        try:
            import requests.adapters
        except ImportError:  # pragma: no cover - the SDKs require requests
            pass
        else:
            self._wrap(requests.adapters.HTTPAdapter, "send", _wrap_adapter_send)
        try:
            import aiohttp
            import aiohttp.client
        except ImportError:  # pragma: no cover - the SDKs require aiohttp
            return
        for name, url_index in AIOHTTP_SESSION_METHODS.items():
            if name in aiohttp.ClientSession.__dict__:
                self._wrap(aiohttp.ClientSession, name,
                           functools.partial(_wrap_aiohttp, url_index=url_index))
        for module in (aiohttp.client, aiohttp):  # aiohttp.request(method, url, ...)
            if "request" in module.__dict__:
                self._wrap(module, "request", functools.partial(_wrap_aiohttp, url_index=1))

    def _wrap(self, owner: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
        original = owner.__dict__[name]
        self._originals.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def _restore(self) -> None:
        while self._originals:
            owner, name, original = self._originals.pop()
            setattr(owner, name, original)


_PATCHES = _Patches()


def _wrap_adapter_send(original: Any) -> Any:
    @functools.wraps(original)
    def send(adapter: Any, request: Any, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> Any:
        routing = _PATCHES.current()
        target = None if routing is None else routing.target(request.url or "")
        if target is not None:
            request = request.copy()
            request.url = target
            verify, cert, proxies = False, None, {}
        return original(adapter, request, stream=stream, timeout=timeout, verify=verify,
                        cert=cert, proxies=proxies)

    return send


def _wrap_aiohttp(original: Any, url_index: int) -> Any:
    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        routing = _PATCHES.current()
        if routing is not None:
            positional = len(args) > url_index
            url = str(args[url_index] if positional else kwargs.get("url"))
            base = getattr(args[0], "_base_url", None) if args else None
            if base is not None and not urlsplit(url).netloc:  # relative to the session's
                url = urljoin(str(base), url)  # base URL (unknown base: blocked, not sent)
            target = routing.target(url)
            if target is not None:
                if positional:
                    args = (*args[:url_index], target, *args[url_index + 1:])
                else:
                    kwargs["url"] = target
                kwargs["ssl"] = False
                kwargs["proxy"] = None
        return original(*args, **kwargs)

    return call
