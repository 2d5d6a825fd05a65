"""The one routing of Alibaba Cloud SDK traffic, used by ``mock_cloud()`` and by function workers.

**The host table.** :data:`EMULATED_SERVICES` lists which Alibaba Cloud endpoints the local
emulator serves (Function Compute 3.0, CloudFlow, RAM, STS, Log Service: public, internal/VPC
and regional forms; http and https alike); :data:`EMULATED_HOSTS` is the same table as one pattern.

**The decision.** :meth:`Routing.route` judges a host by an endpoint map (host pattern ->
``host:port`` of a local endpoint speaking plain HTTP), in this order:

* a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``): the request goes out as is;
* an authority (``host:port``) of the routing's ``addresses``, loopback or not: that endpoint;
* a host one of the map's patterns fully matches: it goes to that endpoint, with the same
  method, path, query, headers (the ``Host`` header the client signed included) and body,
  bypassing proxies;
* the ECS metadata address and any other Alibaba Cloud host: :class:`CloudEndpointNotEmulated`
  naming the service (``oss``, ``log``, ``ecs``, ...);
* any other host: the routing's policy, :class:`UnmockedRequestError` by default (tests: nothing
  leaves the machine) or sent as is (a function allowed to reach the internet).

Every refusal is raised before a connection is made.

**In-process endpoints.** An endpoint is ``"host:port"`` of a local server speaking plain HTTP,
or an :class:`InProcessEndpoint`: an object that answers the request inside this process
without a socket (``mock_cloud()`` plugs one in; its module, not this one, imports the HTTP
libraries). The wrappers hand it the request as the library holds it; what it declines goes
to its ``address`` over plain HTTP, as for a ``"host:port"`` endpoint.

**The wrappers.** The SDK cores (darabonba-core, and the older Tea core) send sync calls
through a ``requests`` session and ``*_async`` calls through an ``aiohttp.ClientSession`` they
open themselves; neither core nor library offers a process-wide hook (requests' adapters and
hooks, aiohttp's middlewares and trace configs are per session). Interception libraries fake
responses instead of redirecting requests (and aioresponses, building aiohttp's
``ClientResponse`` by hand, broke with aiohttp 3.14). So a routing wraps the libraries'
**public** request methods, which stay stable across releases: ``HTTPAdapter.send`` of
``requests.adapters`` (the transport-adapter method every session calls; also in the copy of
requests that ``aliyunsdkcore`` vendors), ``aiohttp.ClientSession.request`` with its verb
methods and ``ws_connect``, and ``aiohttp.request``. A wrapper only rewrites where a request
goes, then calls the library's own method: responses, streaming, timeouts and errors stay the
library's; or, for an in-process endpoint, returns that endpoint's answer. No private
attribute of either library is touched.

**Installing.** :func:`install` (or :meth:`Routing.install`) takes effect at once for every
thread and event loop of the process. Modules already imported are wrapped then; an import hook
(a ``sys.meta_path`` finder) wraps the ones imported later, right after they execute, so a
function handler that imports ``requests`` or ``aiohttp`` itself is covered too. Routings nest
(the innermost decides); when the last is uninstalled every wrapped method and the hook are
restored.

**Loading.** Standard library only, nothing else of ``deployer``: ``mock_cloud()`` imports it
as ``deployer.emulator.runtime.routing``; a function worker loads it by path
(``bootstrap.py``), where ``sys.path`` holds only the function's code and FC's built-in
packages, and ``cloud_access.py`` adds the worker's network rules on top.
``tests/sdk_matrix`` checks both uses against the lowest and highest SDK, aiohttp and requests
versions ``pyproject.toml`` allows.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

__all__ = [
    "EMULATED_HOSTS",
    "EMULATED_SERVICES",
    "METADATA_ADDRESS",
    "CloudEndpointNotEmulated",
    "InProcessEndpoint",
    "Routing",
    "UnmockedRequestError",
    "install",
    "is_loopback",
    "service_of",
]

EMULATED_SERVICES: dict[str, str] = {
    "Function Compute": r"fcv3\.[a-z0-9-]+|\d+\.[a-z0-9-]+\.fc|[a-z0-9-]+\.fc|fc\.[a-z0-9-]+",
    "CloudFlow": r"[a-z0-9-]+\.fnf|fnf\.[a-z0-9-]+",
    "RAM": r"ram",
    "STS": r"sts(?:-vpc)?(?:\.[a-z0-9-]+)?",
    "Log Service": r"(?:[a-z0-9-]+\.)?[a-z0-9-]+\.log",
}
"""The one table of emulated endpoints: service -> its host names below ``.aliyuncs.com``
(``fcv3.<region>``, ``<account>.<region>[-internal].fc``, ``<region>.fnf``, ``ram``,
``sts[-vpc][.<region>]``, ``[<project>.]<region>.log``, ...). A service the emulator learns to
serve is one line here."""

EMULATED_HOSTS = re.compile(r"(?:" + "|".join(EMULATED_SERVICES.values()) + r")\.aliyuncs\.com")
""":data:`EMULATED_SERVICES` as one pattern, to be matched against a whole lower-case host."""

METADATA_ADDRESS = "100.100.100.200"
"""The ECS instance metadata service (the credentials chain's last resort)."""

ALIBABA_DOMAINS = (".aliyuncs.com", ".aliyun.com", ".aliyun-inc.com")
_EMULATED_NAMES = ", ".join(list(EMULATED_SERVICES)[:-1]) + " and " + list(EMULATED_SERVICES)[-1]
_REGION_LABEL = re.compile(r"^(?:[a-z]{2}-[a-z0-9]+(?:-[a-z0-9]+)*|\d+|vpc|internal|share)$")

# aiohttp's public entry points -> the position of their URL argument (``self`` counted)
AIOHTTP_SESSION_METHODS = {"request": 2, "get": 1, "options": 1, "head": 1, "post": 1,
                           "put": 1, "patch": 1, "delete": 1, "ws_connect": 1}
# the verb each sends ("": named by the call; ws_connect has none: never in-process)
_VERBS = {name: ("" if name == "request" else name.upper())
          for name in AIOHTTP_SESSION_METHODS if name != "ws_connect"}


class UnmockedRequestError(ConnectionError):
    """A request was refused before any connection: no route serves its host and it is not a
    loopback address."""


class CloudEndpointNotEmulated(UnmockedRequestError):
    """A request for an Alibaba Cloud endpoint (or the ECS metadata service) that the local
    emulator does not serve."""


def is_loopback(host: str) -> bool:
    """``localhost`` or an address in ``127.0.0.0/8`` or ``::1`` (brackets allowed)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def service_of(host: str) -> str:
    """The service part of an Alibaba Cloud host: ``oss`` for ``oss-cn-hangzhou.aliyuncs.com``
    and ``bucket.oss-cn-hangzhou-internal.aliyuncs.com``, ``log`` for
    ``project.cn-hangzhou.log.aliyuncs.com``, ``ecs`` for ``ecs.aliyuncs.com``: the last label
    before the domain that is not a region (a bucket or project name comes first)."""
    labels = host.lower().split(".")[:-2]
    for label in reversed(labels):
        name = re.sub(r"-(?:[a-z]{2}-[a-z0-9-]+|internal|vpc)$", "", label)
        if not _REGION_LABEL.match(name):
            return name
    return labels[0] if labels else host


class InProcessEndpoint(Protocol):
    """An endpoint answered inside this process, without a socket.

    ``address`` (``host:port``) serves the same requests over plain HTTP: what the endpoint
    declines (answers None) goes there, as do aiohttp's ``ws_connect`` calls."""

    address: str

    def send(self, adapter: Any, request: Any, stream: bool, timeout: Any) -> Any:
        """``requests``: what ``HTTPAdapter.send`` answers for the ``PreparedRequest``
        ``request`` (a ``requests.Response``), or None to decline it."""

    def request(self, session: Any, method: str, url: str, options: dict[str, Any]) -> Any:
        """``aiohttp``: what ``ClientSession.request(method, url, **options)`` returns (awaitable
        and an async context manager); ``session`` is None for ``aiohttp.request``. None to
        decline it."""


Endpoint = str | InProcessEndpoint
"""Where routed requests go: ``"host:port"`` over plain HTTP, or an in-process endpoint."""

Refusal = Callable[[str, "str | None"], Exception]
"""A routing's policy for hosts outside the map: ``(host, url or None) -> the error to raise``."""


def refuse_unrouted(host: str, url: str | None) -> UnmockedRequestError:
    """The default policy: every other host is refused (nothing leaves the machine)."""
    return UnmockedRequestError(
        f"request to {url or host} blocked: host {host!r} is not routed to a local endpoint "
        f"(only {_EMULATED_NAMES} endpoints are emulated)")


def _not_emulated(host: str, url: str | None) -> CloudEndpointNotEmulated:
    prefix = f"request to {url} blocked: " if url else ""
    if host == METADATA_ADDRESS:
        return CloudEndpointNotEmulated(
            f"{prefix}{METADATA_ADDRESS} (the ECS instance metadata service) is not available "
            "locally; credentials come from ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET/_SECURITY_TOKEN "
            "(in a function: the role credentials FC injects)")
    return CloudEndpointNotEmulated(
        f"{prefix}the local emulator does not serve the Alibaba Cloud service "
        f"'{service_of(host)}' ({host}); only {_EMULATED_NAMES} are emulated, and nothing "
        "leaves this machine for other Alibaba Cloud endpoints")


class Routing:
    """An endpoint map and a policy for other hosts; a context manager that uninstalls it.

    ``endpoints``: host pattern (a regular expression, matched against the whole lower-case
    host name) -> its :data:`Endpoint`, e.g. ``{EMULATED_HOSTS: "127.0.0.1:9125"}``.
    ``addresses``: authority (``host:port``, lower-case) -> its endpoint, decided first,
    loopback included (an in-process endpoint's own address, say). ``other_hosts``: what to
    raise for a host that is neither loopback, nor routed, nor Alibaba Cloud's; ``None`` lets
    such requests go out."""

    def __init__(self, endpoints: Mapping[str | re.Pattern[str], Endpoint], *,
                 other_hosts: Refusal | None = refuse_unrouted,
                 addresses: Mapping[str, Endpoint] | None = None) -> None:
        self._routes = [(re.compile(p) if isinstance(p, str) else p, endpoint)
                        for p, endpoint in endpoints.items()]
        self._other_hosts = other_hosts
        self._addresses = dict(addresses or {})
        self._decided: dict[str, Endpoint | None] = {}  # authority -> decision (no refusals)

    def route(self, host: str, url: str | None = None) -> Endpoint | None:
        """The decision for ``host`` (see the module docstring): the endpoint its requests go
        to, or None when they go out unchanged. Raises :class:`CloudEndpointNotEmulated` for
        the metadata address and unserved Alibaba Cloud hosts, and the policy's error for
        refused other hosts; ``url`` only words the error."""
        name = host.lower().rstrip(".")
        if is_loopback(name):
            return None
        for pattern, endpoint in self._routes:
            if pattern.fullmatch(name):
                return endpoint
        if name == METADATA_ADDRESS or name.endswith(ALIBABA_DOMAINS):
            raise _not_emulated(name, url)
        if self._other_hosts is not None:
            raise self._other_hosts(name, url)
        return None

    def resolve(self, url: str) -> str | InProcessEndpoint | None:
        """Where a request for ``url`` goes: None when unchanged, an in-process endpoint, or
        the ``http://`` URL of a ``host:port`` endpoint (same path and query); raises as
        :meth:`route` does. Decisions are remembered per authority (refusals are not)."""
        authority = _authority(url)
        if authority in self._decided:
            endpoint = self._decided[authority]
        else:
            endpoint = self._addresses.get(authority.lower())
            if endpoint is None:
                endpoint = self.route(urlsplit(url).hostname or "", url)
            if len(self._decided) >= 256:
                self._decided.clear()
            self._decided[authority] = endpoint
        if endpoint is None or not isinstance(endpoint, str):
            return endpoint
        return over_http(endpoint, url)

    def target(self, url: str) -> str | None:
        """Where ``url`` goes over HTTP: None when unchanged, the endpoint's ``http://`` URL
        (same path and query) for a routed host (an in-process endpoint's ``address``);
        raises as :meth:`route` does."""
        where = self.resolve(url)
        if where is None or isinstance(where, str):
            return where
        return over_http(where.address, url)

    def install(self) -> Routing:
        """Route this process's HTTP traffic by this routing until :meth:`uninstall`."""
        _PATCHES.add(self)
        return self

    def uninstall(self) -> None:
        """Stop this routing (idempotent); with no routing left, requests go out as usual."""
        _PATCHES.remove(self)

    def __enter__(self) -> Routing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()


def _authority(url: str) -> str:
    """The ``[userinfo@]host[:port]`` part of an absolute URL ("" for a relative one)."""
    _, sep, rest = url.partition("//")
    if not sep:
        return ""
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark, 0, end)
        if found >= 0:
            end = found
    return rest[:end]


def over_http(address: str, url: str) -> str:
    """``url`` sent to ``address`` (``host:port``) over plain HTTP: same path and query."""
    parts = urlsplit(url)
    return urlunsplit(("http", address, parts.path or "/", parts.query, ""))


def install(endpoints: Mapping[str | re.Pattern[str], str]) -> Routing:
    """Route this process's HTTP traffic by ``endpoints`` (see :class:`Routing`); every other
    non-loopback host raises :class:`UnmockedRequestError` when a request is made to it.

    Takes effect at once for every thread and event loop of the process, for ``requests`` and
    ``aiohttp`` (imported now or later), sync and async SDK calls alike, and lasts until
    :meth:`Routing.uninstall` (or the end of a ``with`` block on the returned routing). Routed
    requests keep the client's own timeouts and error behaviour."""
    return Routing(endpoints).install()


# ------------------------------------------------------------------ the wrappers

_ORIGINAL = "_deployer_routing_original"


def _wrap_adapter_send(original: Any) -> Any:
    @functools.wraps(original)
    def send(adapter: Any, request: Any, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> Any:
        routing = _PATCHES.current()
        where = None if routing is None else routing.resolve(request.url or "")
        if where is not None:
            if not isinstance(where, str):
                answer = where.send(adapter, request, stream, timeout)
                if answer is not None:
                    return answer
                where = over_http(where.address, request.url)
            request = request.copy()
            request.url = where
            verify, cert, proxies = False, None, {}
        return original(adapter, request, stream=stream, timeout=timeout, verify=verify,
                        cert=cert, proxies=proxies)

    return send


def _wrap_aiohttp(original: Any, url_index: int, method: str | None = "") -> Any:
    """``method``: the verb a method sends ("" for ``request``, whose first argument after the
    session names it; None for ``ws_connect``, which never goes in-process)."""
    session_call = url_index > 1 or method != ""

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        routing = _PATCHES.current()
        if routing is not None:
            positional = len(args) > url_index
            url = str(args[url_index] if positional else kwargs.get("url"))
            base = getattr(args[0], "_base_url", None) if args else None
            if base is not None and not urlsplit(url).netloc:  # relative to the session's
                url = urljoin(str(base), url)  # base URL (unknown base: judged as it is)
            where = routing.resolve(url)
            if where is not None and not isinstance(where, str) and method is not None:
                verb = method or str(args[url_index - 1] if len(args) >= url_index
                                     else kwargs.get("method"))
                options = {k: v for k, v in kwargs.items() if k not in ("url", "method")}
                answer = where.request(args[0] if session_call else None, verb, url, options)
                if answer is not None:
                    return answer
            if where is not None:
                if not isinstance(where, str):
                    where = over_http(where.address, url)
                if positional:
                    args = (*args[:url_index], where, *args[url_index + 1:])
                else:
                    kwargs["url"] = where
                kwargs["ssl"] = False
                kwargs["proxy"] = None
        return original(*args, **kwargs)

    return call


_Wrap = tuple[str | None, str, Callable[[Any], Any]]  # (class in the module or None, name, wrap)
_ADAPTER: tuple[_Wrap, ...] = (("HTTPAdapter", "send", _wrap_adapter_send),)
_AIOHTTP_REQUEST: _Wrap = (None, "request", functools.partial(_wrap_aiohttp, url_index=1))
WRAPPED: dict[str, tuple[_Wrap, ...]] = {
    "requests.adapters": _ADAPTER,
    "aliyunsdkcore.vendored.requests.adapters": _ADAPTER,  # the old core SDK's own copy
    "aiohttp.client": (*(("ClientSession", name, functools.partial(
        _wrap_aiohttp, url_index=i, method=_VERBS.get(name)))
        for name, i in AIOHTTP_SESSION_METHODS.items()), _AIOHTTP_REQUEST),
    "aiohttp": (_AIOHTTP_REQUEST,),  # aiohttp.request, re-exported from aiohttp.client
}
"""Module -> the public methods wrapped in it."""


class _Patches:
    """The wrapped methods and the import hook, in place while at least one routing is."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._stack: list[Routing] = []
        self._originals: list[tuple[Any, str, Any]] = []
        self._hook = _WrapOnImport(self)

    def current(self) -> Routing | None:
        stack = self._stack
        return stack[-1] if stack else None

    def add(self, routing: Routing) -> None:
        with self._lock:
            if not self._stack:
                sys.meta_path.insert(0, self._hook)
                for name in WRAPPED:
                    module = sys.modules.get(name)
                    if module is not None:
                        self._wrap_module(name, module)
            self._stack.append(routing)

    def remove(self, routing: Routing) -> None:
        with self._lock:
            if routing in self._stack:
                self._stack.remove(routing)
                if not self._stack:
                    self._restore()

    def imported(self, name: str, module: ModuleType) -> None:
        """Called by the import hook once ``module`` has executed."""
        with self._lock:
            if self._stack:
                self._wrap_module(name, module)

    def _wrap_module(self, name: str, module: ModuleType) -> None:
        for owner_name, attribute, wrap in WRAPPED[name]:
            owner = module if owner_name is None else vars(module).get(owner_name)
            if owner is None or attribute not in vars(owner):
                continue
            current = vars(owner)[attribute]
            original = getattr(current, _ORIGINAL, current)  # a re-export of a wrapped one
            self._originals.append((owner, attribute, original))
            if current is original:
                wrapper = wrap(original)
                setattr(wrapper, _ORIGINAL, original)
                setattr(owner, attribute, wrapper)

    def _restore(self) -> None:
        if self._hook in sys.meta_path:
            sys.meta_path.remove(self._hook)
        while self._originals:
            owner, attribute, original = self._originals.pop()
            setattr(owner, attribute, original)


class _WrapOnImport:
    """A ``sys.meta_path`` finder: the modules of :data:`WRAPPED` get a loader that wraps their
    methods right after the module executed (found by the other finders, loaded by theirs)."""

    def __init__(self, patches: _Patches) -> None:
        self._patches = patches
        self._local = threading.local()

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> Any:
        if fullname not in WRAPPED or getattr(self._local, "finding", False):
            return None
        self._local.finding = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is not self and find is not None:
                    spec = find(fullname, path, target)
                    if spec is not None:
                        break
        finally:
            self._local.finding = False
        if spec is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _WrappingLoader(spec.loader, fullname, self._patches)
        return spec


class _WrappingLoader:
    """Another loader, then :meth:`_Patches.imported`; anything else is the other loader's."""

    def __init__(self, inner: Any, name: str, patches: _Patches) -> None:
        self._inner = inner
        self._name = name
        self._patches = patches

    def create_module(self, spec: Any) -> ModuleType | None:
        create = getattr(self._inner, "create_module", None)
        module: ModuleType | None = None if create is None else create(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        self._patches.imported(self._name, module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...
        return getattr(self._inner, name)


_PATCHES = _Patches()
