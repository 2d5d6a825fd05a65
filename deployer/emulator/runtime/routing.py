"""Cloud routing inside a function worker: SDK calls to Alibaba Cloud reach the local emulator.

``install_cloud_routing(endpoint, internet_access=...)`` is the one entry point. It is called by
``bootstrap.py`` before any user code runs, and needs only the standard library (the worker sees
no emulator packages). It does three things:

1. **HTTP clients**: an import hook wraps ``requests.Session.send`` (sync SDK clients, ``oss2``,
   anything on ``requests``) and ``aiohttp.ClientSession._request`` (``*_async`` SDK clients) the
   moment those modules are imported, from the function's zip or FC's built-in packages. A
   request for a host the emulator serves (:data:`EMULATED_HOSTS`: FC, CloudFlow, RAM, STS; http
   or https) is sent as plain HTTP to ``endpoint`` with path, query, body and every header as
   signed, including ``host`` (the emulator takes the region from it). The handler's code does
   not change: a client built with its default endpoint just works.
2. **Other Alibaba Cloud endpoints** (``*.aliyuncs.com``, ``*.aliyun.com``) and the ECS metadata
   address ``100.100.100.200`` fail at once with :class:`CloudEndpointNotEmulated`, naming the
   service, both in the wrapped clients and at ``socket.getaddrinfo``/``socket.connect`` level
   (for any other HTTP library), so no packet leaves the machine for them.
3. With ``internet_access=False`` (the function's ``internetAccess``), connections to anything
   but loopback fail as on FC without internet access.

``uninstall_cloud_routing()`` undoes it (used by tests that install it in-process). The same
host table is what ``deployer.testing.mock_cloud()`` routes; once that module's routing is a
standalone install/uninstall pair the two can share this one.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
import sys
from collections.abc import Callable
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "EMULATED_HOSTS",
    "CloudEndpointNotEmulated",
    "install_cloud_routing",
    "service_of",
    "uninstall_cloud_routing",
]

EMULATED_HOSTS = re.compile(
    r"^(?:fcv3\.[a-z0-9-]+|\d+\.[a-z0-9-]+\.fc|[a-z0-9-]+\.fc|fc\.[a-z0-9-]+|ram"
    r"|sts(?:-vpc)?(?:\.[a-z0-9-]+)?|[a-z0-9-]+\.fnf|fnf\.[a-z0-9-]+)\.aliyuncs\.com$"
)
_ALIBABA_DOMAINS = (".aliyuncs.com", ".aliyun.com", ".aliyun-inc.com")
METADATA_ADDRESS = "100.100.100.200"
_REGION_LABEL = re.compile(r"^(?:[a-z]{2}-[a-z0-9]+(?:-[a-z0-9]+)*|\d+|vpc|internal|share)$")


class CloudEndpointNotEmulated(ConnectionError):
    """A function called a cloud endpoint the local emulator does not serve."""


def service_of(host: str) -> str:
    """The service part of an Alibaba Cloud host: ``oss`` for ``oss-cn-hangzhou.aliyuncs.com``,
    ``log`` for ``cn-hangzhou.log.aliyuncs.com``, ``ecs`` for ``ecs.aliyuncs.com``."""
    labels = host.lower().split(".")[:-2]
    for label in labels:
        name = re.sub(r"-(?:[a-z]{2}-[a-z0-9-]+|internal|vpc)$", "", label)
        if not _REGION_LABEL.match(name):
            return name
    return labels[0] if labels else host


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Router:
    def __init__(self, endpoint: str, internet_access: bool) -> None:
        self.endpoint = endpoint
        self.internet_access = internet_access

    def refuse(self, host: str, *, resolving: bool = False) -> None:
        """Raise for hosts a function may not reach; return for the others. ``resolving``: a
        name lookup, which routed clients never make for emulated hosts (they connect to the
        emulator's address), so an emulated host is refused there too (no DNS query leaves)."""
        name = host.lower().rstrip(".")
        if resolving and EMULATED_HOSTS.match(name):
            raise CloudEndpointNotEmulated(
                f"{name} was looked up by an HTTP client the local emulator does not route; "
                "the emulator routes SDK clients built on requests or aiohttp")
        if name == METADATA_ADDRESS:
            raise CloudEndpointNotEmulated(
                f"{METADATA_ADDRESS} (the ECS instance metadata service) is not available to "
                "functions run by the local emulator; use the role credentials FC injects "
                "(ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET/_SECURITY_TOKEN)")
        if name.endswith(_ALIBABA_DOMAINS) and not EMULATED_HOSTS.match(name):
            raise CloudEndpointNotEmulated(
                f"the local emulator does not serve the Alibaba Cloud service "
                f"'{service_of(name)}' ({name}); only Function Compute, CloudFlow, RAM and STS "
                "are emulated, and nothing leaves this machine for other endpoints")
        if not self.internet_access and not _is_loopback(name) and not \
                EMULATED_HOSTS.match(name):
            raise CloudEndpointNotEmulated(
                f"the function has internetAccess disabled: {name} cannot be reached")

    def target(self, url: str) -> str | None:
        """The emulator URL for a cloud URL, None to leave the request alone."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if EMULATED_HOSTS.match(host):
            return urlunsplit(("http", self.endpoint, parts.path or "/", parts.query, ""))
        self.refuse(host)
        return None


_state: dict[str, Any] = {}


def _patch_requests(module: ModuleType, router: _Router) -> None:
    session_cls = module.Session
    real_send = session_cls.send

    def send(session: Any, request: Any, **kwargs: Any) -> Any:
        target = router.target(request.url or "")
        if target is not None:
            request = request.copy()
            request.url = target
            kwargs["verify"] = False
            kwargs["proxies"] = {}
        return real_send(session, request, **kwargs)

    session_cls.send = send
    _state.setdefault("undo", []).append(lambda: setattr(session_cls, "send", real_send))


def _patch_aiohttp(module: ModuleType, router: _Router) -> None:
    session_cls = module.ClientSession
    real_request = session_cls._request

    async def _request(session: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
        target = router.target(str(str_or_url))
        if target is not None:
            str_or_url = target
            kwargs["ssl"] = False
            kwargs["proxy"] = None
        return await real_request(session, method, str_or_url, **kwargs)

    session_cls._request = _request
    _state.setdefault("undo", []).append(lambda: setattr(session_cls, "_request", real_request))


_PATCHES: dict[str, Callable[[ModuleType, _Router], None]] = {
    "requests.sessions": _patch_requests,
    "aliyunsdkcore.vendored.requests.sessions": _patch_requests,
    "aiohttp.client": _patch_aiohttp,
}


class _PatchingLoader(Loader):
    def __init__(self, inner: Loader, patch: Callable[[ModuleType], None]) -> None:
        self._inner = inner
        self._patch = patch

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        self._patch(module)


def _apply(patch: Callable[[ModuleType, _Router], None], router: _Router,
           module: ModuleType) -> None:
    patch(module, router)


class _PatchingFinder(MetaPathFinder):
    """Wraps the loader of the HTTP-client modules so they are patched right after import."""

    def __init__(self, router: _Router) -> None:
        self._router = router

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> ModuleSpec | None:
        patch = _PATCHES.get(fullname)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader,
                                              functools.partial(_apply, patch, self._router))
                return spec
        return None


def _guard_sockets(router: _Router) -> None:
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, (str, bytes)):
            router.refuse(host.decode() if isinstance(host, bytes) else host, resolving=True)
        return real_getaddrinfo(host, *args, **kwargs)

    def _check(address: Any) -> None:
        if isinstance(address, tuple) and address and isinstance(address[0], str):
            router.refuse(address[0], resolving=True)

    def connect(sock: socket.socket, address: Any) -> None:
        _check(address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        _check(address)
        return real_connect_ex(sock, address)

    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]

    def undo() -> None:
        socket.getaddrinfo = real_getaddrinfo
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]

    _state.setdefault("undo", []).append(undo)


def install_cloud_routing(endpoint: str, *, internet_access: bool = True) -> None:
    """Route this process's SDK calls for FC, CloudFlow, RAM and STS to ``endpoint``
    (``host:port`` of the emulator, plain HTTP) and refuse every other Alibaba Cloud endpoint.

    Idempotent per process; HTTP-client modules already imported are patched at once, later ones
    when they are imported.
    """
    if _state.get("router") is not None:
        return
    router = _Router(endpoint, internet_access)
    _state["router"] = router
    finder = _PatchingFinder(router)
    sys.meta_path.insert(0, finder)
    _state.setdefault("undo", []).append(lambda: sys.meta_path.remove(finder))
    for name, patch in _PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module, router)
    _guard_sockets(router)


def uninstall_cloud_routing() -> None:
    """Undo :func:`install_cloud_routing` (patches are removed in reverse order)."""
    for undo in reversed(_state.pop("undo", [])):
        undo()
    _state.pop("router", None)
