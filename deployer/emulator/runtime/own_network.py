"""Worker side of an instance's own network namespace (parent side: ``network.py`` and
``internet.py``; docs/runtime.md "Network").

Loaded by path inside the worker (standard library only) and used by ``sandbox.py``:

1. :func:`connect_broker`, before the namespaces are entered: the connection to the gateway
   broker (a Unix socket path, which no network namespace hides).
2. :func:`enter`, inside the new network namespace, while the worker still holds its
   capabilities there: loopback up; for an instance with internet access a ``prohibit`` route
   for each of the host's own addresses (and multicast), so no connection to one leaves the
   namespace; then the ticket goes to the broker with the listening socket of the gateway
   (``127.0.0.1:<gateway port>`` of the namespace, ``SCM_RIGHTS``); the broker answers once
   the gateway serves it and the instance's network stack is attached. The connection stays
   open for the life of the instance: its end tells the emulator the instance is gone.
3. :func:`open_resolv_conf` in the new mount namespace before the private /tmp hides the
   file, :func:`mount_resolv_conf` once /tmp is private: the resolv.conf naming the stack's
   DNS forwarder, read-only on ``/etc/resolv.conf``.
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import ipaddress
import os
import socket
import struct
from typing import Any

__all__ = ["connect_broker", "enter", "mount_resolv_conf", "open_resolv_conf", "prohibit"]

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP, _IFF_RUNNING = 0x8913, 0x8914, 0x1, 0x40
_MS_RDONLY, _MS_REMOUNT, _MS_BIND = 1, 32, 0x1000
# rtnetlink (linux/netlink.h, linux/rtnetlink.h)
_RTM_NEWROUTE, _NLMSG_ERROR = 24, 2
_NLM_F_REQUEST, _NLM_F_ACK, _NLM_F_EXCL, _NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
_RT_TABLE_MAIN, _RTPROT_STATIC, _RT_SCOPE_UNIVERSE, _RTN_PROHIBIT, _RTA_DST = 254, 4, 0, 8, 1
_EEXIST = 17
_DECLINE_INTERNET = "-"  # network.DECLINE_INTERNET


def connect_broker(network: dict[str, Any], report: list[str]) -> socket.socket | None:
    """The connection to the gateway broker, made before any namespace hides its path."""
    if not network.get("broker"):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(10.0)
        conn.connect(network["broker"])
    except OSError as exc:
        conn.close()
        report.append(f"network: gateway broker: {exc}")
        return None
    return conn


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        got = fcntl.ioctl(probe, _SIOCGIFFLAGS, struct.pack("16sH14x", b"lo", 0))
        flags = struct.unpack_from("16sH", got)[1] | _IFF_UP | _IFF_RUNNING
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags))


def _route_message(sequence: int, network: ipaddress.IPv4Network) -> bytes:
    """RTM_NEWROUTE: ``prohibit <network>`` in the main table."""
    attribute = struct.pack("HH4s", 8, _RTA_DST, network.network_address.packed)
    body = struct.pack("BBBBBBBBI", socket.AF_INET, network.prefixlen, 0, 0, _RT_TABLE_MAIN,
                       _RTPROT_STATIC, _RT_SCOPE_UNIVERSE, _RTN_PROHIBIT, 0) + attribute
    flags = _NLM_F_REQUEST | _NLM_F_ACK | _NLM_F_CREATE | _NLM_F_EXCL
    return struct.pack("IHHII", 16 + len(body), _RTM_NEWROUTE, flags, sequence, 0) + body


def prohibit(prefixes: list[str]) -> None:
    """Add a ``prohibit`` route for each IPv4 prefix (an existing one is fine); raises OSError
    naming the prefix the kernel refused."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as nl:
        nl.bind((0, 0))
        for sequence, prefix in enumerate(prefixes, start=1):
            network = ipaddress.IPv4Network(prefix, strict=False)
            nl.send(_route_message(sequence, network))
            answer = nl.recv(4096)
            kind = struct.unpack_from("IH", answer)[1]
            error = -struct.unpack_from("i", answer, 16)[0] if kind == _NLMSG_ERROR else 0
            if error and error != _EEXIST:
                raise OSError(error, f"prohibit {network}: {os.strerror(error)}")


def _hand_over(network: dict[str, Any], conn: socket.socket, declined: bool,
               report: list[str]) -> None:
    """The ticket (with the gateway's listener when there is a gateway; ``declined``: without
    the internet link it grants) to the broker; wait for its answer (the instance's network
    stack is attached by then)."""
    listener = None
    try:
        rights: list[tuple[int, int, bytes]] = []
        if network.get("port"):
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", int(network["port"])))
            listener.listen(128)
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                       array.array("i", [listener.fileno()]).tobytes())]
        ticket = str(network.get("ticket", "")) + (_DECLINE_INTERNET if declined else "")
        conn.sendmsg([ticket.encode("ascii")], rights)
        if conn.recv(1) != b"\x01":
            report.append("network: the emulator refused the instance's ticket")
            return
    except OSError as exc:
        report.append(f"network: gateway: {exc}")
        return
    finally:
        if listener is not None:
            listener.close()
    os.set_inheritable(conn.detach(), True)  # its end tells the emulator the instance is gone


def enter(network: dict[str, Any], conn: socket.socket | None, report: list[str]) -> bool:
    """Inside the new network namespace (see the module docstring); False when its loopback
    could not be brought up."""
    try:
        _loopback_up()
    except OSError as exc:
        report.append(f"network: loopback: {exc}")
        return False
    internet = network.get("internet") or {}
    declined = False
    if internet:
        try:
            prohibit(list(internet.get("blocked", [])))
        except OSError as exc:  # never on the internet without them
            report.append(f"network: internet access withheld: {exc}")
            declined = True
    if conn is not None:
        _hand_over(network, conn, declined, report)
    return True


def open_resolv_conf(network: dict[str, Any]) -> int:
    """The stack's resolv.conf (an ``O_PATH`` descriptor of the new mount namespace, opened
    before the private /tmp may hide it), or -1 when the instance has no internet link."""
    source = str((network.get("internet") or {}).get("resolv_conf") or "")
    try:
        return os.open(source, os.O_PATH | os.O_CLOEXEC) if source else -1
    except OSError:
        return -1


def mount_resolv_conf(source: int, report: list[str]) -> None:
    """``source`` (:func:`open_resolv_conf`), read-only on ``/etc/resolv.conf`` (private mount
    namespace), then closed."""
    if source < 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        if libc.mount(f"/proc/self/fd/{source}".encode(), b"/etc/resolv.conf", None, _MS_BIND,
                      None) != 0 or libc.mount(None, b"/etc/resolv.conf", None,
                                               _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None) != 0:
            report.append(f"network: resolv.conf: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(source)
