"""What a function's code may reach, inside a worker: the SDK routing plus FC's network rules.

``install_cloud_routing(endpoint, internet_access=...)`` is the one entry point, called by
``bootstrap.py`` before any user code runs. Like ``routing.py``, on which it builds, it needs
only the standard library (the worker sees no emulator packages). It installs:

1. **The SDK routing** (``routing.py``, the same one ``mock_cloud()`` installs in tests): SDK
   clients on ``requests`` or ``aiohttp`` (sync and ``*_async``, from the function's zip or FC's
   built-in packages, imported before or after this call) that call an emulated endpoint (FC,
   CloudFlow, RAM, STS, Log Service; http or https) reach ``endpoint`` over plain HTTP, every
   header as signed, ``host`` included (the emulator takes the region from it). The handler's
   code does not change: a client built with its default endpoint just works. Any other Alibaba
   Cloud endpoint (``*.aliyuncs.com``, ``*.aliyun.com``) and the ECS metadata address
   ``100.100.100.200`` fail at once with ``CloudEndpointNotEmulated`` naming the service.
2. **``internetAccess: false``**: every other non-loopback host fails with
   :class:`InternetAccessDisabled`; emulated endpoints stay routed (the emulator is local).
3. **A socket guard** on ``socket.getaddrinfo`` and ``socket.socket.connect``/``connect_ex``,
   judged by the same routing decision, for HTTP libraries the routing does not wrap
   (``urllib``, ``http.client``, ...): a host the routing refuses is refused there too, and a
   lookup of an emulated host (a client that would bypass the emulator) is refused with a
   message saying which clients are routed. No packet, DNS included, leaves the machine for
   any of them.

``uninstall_cloud_routing()`` undoes it (for tests that install it in-process).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

if __package__:  # imported as deployer.emulator.runtime.cloud_access
    from . import routing
else:  # loaded by path in a worker: bootstrap.py loads routing.py first, under this name
    routing = sys.modules["_fc_emulator_routing"]

__all__ = ["InternetAccessDisabled", "install_cloud_routing", "uninstall_cloud_routing"]


class InternetAccessDisabled(routing.UnmockedRequestError):
    """The function has ``internetAccess: false`` and tried to reach a non-loopback host."""


def _no_internet(host: str, url: str | None) -> InternetAccessDisabled:
    return InternetAccessDisabled(
        f"the function has internetAccess disabled: {url or host} cannot be reached")


_undo: list[Callable[[], None]] = []


def install_cloud_routing(endpoint: str, *, internet_access: bool = True) -> None:
    """Route this process's SDK calls for the emulated services to ``endpoint`` (``host:port``
    of the emulator, plain HTTP), refuse every other Alibaba Cloud endpoint and, without
    ``internet_access``, every other non-loopback host; see the module docstring.

    Idempotent per process: a second call changes nothing."""
    if _undo:
        return
    installed = routing.Routing({routing.EMULATED_HOSTS: endpoint},
                                other_hosts=None if internet_access else _no_internet).install()
    _undo.append(installed.uninstall)
    _guard_sockets(installed)


def uninstall_cloud_routing() -> None:
    """Undo :func:`install_cloud_routing` (in reverse order; idempotent)."""
    while _undo:
        _undo.pop()()


def _check(decide: routing.Routing, host: str) -> None:
    """Raise unless a raw socket may resolve or reach ``host`` (``""``: a local address)."""
    if host and decide.route(host) is not None:
        raise routing.CloudEndpointNotEmulated(
            f"{host} was looked up by an HTTP client the local emulator does not route; SDK "
            "clients built on requests or aiohttp reach the emulator, other clients cannot")


def _guard_sockets(decide: routing.Routing) -> None:
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, (str, bytes)):
            _check(decide, host.decode() if isinstance(host, bytes) else host)
        return real_getaddrinfo(host, *args, **kwargs)

    def _check_address(address: Any) -> None:
        if isinstance(address, tuple) and address and isinstance(address[0], str):
            _check(decide, address[0])

    def connect(sock: socket.socket, address: Any) -> None:
        _check_address(address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        _check_address(address)
        return real_connect_ex(sock, address)

    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]

    def undo() -> None:
        socket.getaddrinfo = real_getaddrinfo
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]

    _undo.append(undo)
