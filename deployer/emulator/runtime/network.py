"""Parent side of the instances' network: each instance has a network namespace of its own,
and the one way out of it leads to the function gateway (the cloud APIs, nothing else).

A worker that could enter its own network namespace (``sandbox.py``) sees only its own
loopback: not the emulator's admin API, console or log endpoints, not another instance, not
any other port of this machine. Before entering it, the worker connects to the
:class:`GatewayBroker`'s Unix socket (a path, which no network namespace hides); inside, it
binds ``127.0.0.1:<gateway port>``, listens, and sends that listening socket over the
connection (``SCM_RIGHTS``) with the ticket its config frame carried. The broker hands the
socket to ``attach`` — the HTTP server's gateway door, which serves the cloud APIs only — and
keeps the connection: when it ends (the worker exited or was killed, however), the listener is
detached and closed, which lets the kernel free the namespace.

So a handler's SDK call to ``127.0.0.1:<gateway port>`` (where ``routing.py`` sends it) is
accepted by the emulator itself, through a socket that lives in the instance's namespace.

An instance of a function with internet access also gets, through the same connection, a
user-mode network stack attached to its namespace (``internet.py``): the broker starts it for
the worker's pid (``SO_PEERCRED``) once the ticket came, answers once it is ready, and ends it
when the connection ends.
"""

from __future__ import annotations

import array
import contextlib
import logging
import os
import secrets
import selectors
import socket
import struct
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deployer.emulator.runtime.internet import InternetLinks, Relay

__all__ = ["DECLINE_INTERNET", "TICKET_BYTES", "Attach", "GatewayBroker", "InstanceNetworks"]

log = logging.getLogger("deployer.emulator")

Attach = Callable[[socket.socket], Callable[[], None]]  # listener -> detach
TICKET_BYTES = 43  # secrets.token_urlsafe(32)
DECLINE_INTERNET = "-"  # after the ticket: the worker withholds its internet link
_OUTSTANDING = 4096  # tickets handed out and not claimed yet (oldest dropped beyond)
_AWAITED = object()  # the data of a connection whose ticket has not arrived yet
_MAX_AWAITED = 256  # connections waiting for their ticket at once (more are closed)
_ACCEPTED, _REFUSED = b"\x01", b"\x00"


@dataclass(frozen=True, slots=True)
class _Grant:
    """What one ticket gives: the gateway's listener handed over, an internet link (the
    namespace's network, ``""``: none)."""

    gateway: bool
    internet: str


@dataclass(slots=True)
class _Linking:
    """An instance waiting for its relay to be ready."""

    conn: socket.socket
    relay: Relay
    detach: Callable[[], None]


class GatewayBroker:
    """Receives the gateway listeners of instances and starts their internet links; see the
    module docstring. Thread-safe."""

    def __init__(self, work_dir: Path, attach: Attach | None, links: InternetLinks) -> None:
        self.path = _socket_path(Path(work_dir))
        self.attach = attach
        self._links = links
        self._tickets: OrderedDict[str, _Grant] = OrderedDict()
        self._lock = threading.Lock()
        self._failure_noted = False
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        os.chmod(self.path, 0o666)  # workers run under their own uids; a ticket is needed
        self._server.listen(128)
        self._server.setblocking(False)
        self._wake_r, self._wake_w = socket.socketpair()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._server, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="gateway-broker", daemon=True)
        self._thread.start()

    def ticket(self, *, gateway: bool, internet: str = "") -> str:
        """A new single-use ticket for one instance: its gateway listener (``gateway``), an
        internet link on the namespace network ``internet`` (``""``: none)."""
        value = secrets.token_urlsafe(32)
        with self._lock:
            self._tickets[value] = _Grant(gateway, internet)
            while len(self._tickets) > _OUTSTANDING:
                self._tickets.popitem(last=False)
        return value

    def _claim(self, ticket: str) -> _Grant | None:
        with self._lock:
            return self._tickets.pop(ticket, None)

    def _run(self) -> None:
        while not self._closed:
            for key, _ in self._selector.select():
                if key.fileobj is self._wake_r:
                    return
                if key.fileobj is self._server:
                    self._accept()
                elif key.data is _AWAITED:
                    self._ticket_arrived(key.fileobj)  # type: ignore[arg-type]
                elif isinstance(key.data, _Linking):
                    self._linked(key.data)
                else:
                    self._ended(key.fileobj, key.data)  # type: ignore[arg-type]

    def _accept(self) -> None:
        """A worker connected; its ticket follows once it is in its namespace (never wait
        for it here: other workers connect meanwhile)."""
        try:
            conn, _ = self._server.accept()
        except OSError:
            return
        awaited = sum(1 for key in self._selector.get_map().values() if key.data is _AWAITED)
        if awaited >= _MAX_AWAITED:  # a flood (the socket is reachable by any local user)
            conn.close()
            return
        conn.setblocking(False)
        self._selector.register(conn, selectors.EVENT_READ, _AWAITED)

    def _ticket_arrived(self, conn: socket.socket) -> None:
        self._selector.unregister(conn)
        try:
            received = self._receive(conn)
        except OSError as exc:
            log.warning("function gateway: a worker's ticket was not received: %s", exc)
            received = None
        if received is None:
            with contextlib.suppress(OSError):
                conn.send(_REFUSED)
            conn.close()
            return
        grant, listener = received
        detach: Callable[[], None] = _nothing
        if listener is not None:
            try:
                assert self.attach is not None
                detach = self.attach(listener)
            except OSError as exc:
                log.warning("function gateway: cannot serve a worker's listener: %s", exc)
                listener.close()
                conn.close()
                return
        if grant.internet:
            self._link(conn, grant.internet, detach)
        else:
            self._serve(conn, detach)

    def _receive(self, conn: socket.socket) -> tuple[_Grant, socket.socket | None] | None:
        """The grant of a valid ticket and the listening socket sent with it (when the ticket
        grants one), else None (what came is closed)."""
        fds = array.array("i")
        data, ancillary, _flags, _addr = conn.recvmsg(
            TICKET_BYTES + len(DECLINE_INTERNET), socket.CMSG_SPACE(fds.itemsize))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        received = [socket.socket(fileno=fd) for fd in fds]
        text = data.decode("ascii", "replace")
        declined = text.endswith(DECLINE_INTERNET)
        grant = self._claim(text.removesuffix(DECLINE_INTERNET)) if len(received) <= 1 else None
        if grant is not None and declined:  # the worker could not fence the host's addresses
            grant = _Grant(grant.gateway, "")
        valid = grant is not None and len(received) == int(grant.gateway) and all(
            sock.type == socket.SOCK_STREAM and self.attach is not None
            and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) for sock in received)
        if grant is None or not valid:
            for sock in received:
                sock.close()
            return None
        return grant, (received[0] if received else None)

    def _link(self, conn: socket.socket, cidr: str, detach: Callable[[], None]) -> None:
        """Start the relay of the worker at the other end of ``conn``; answer once it is ready
        (:meth:`_linked`), the worker waits meanwhile."""
        try:
            pid = struct.unpack("3i", conn.getsockopt(
                socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
            if os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat("/proc/self/ns/net").st_ino:
                raise OSError(f"process {pid} has no network namespace of its own")
            relay = self._links.start(pid, cidr)
        except OSError as exc:
            self._link_failed(str(exc))
            self._serve(conn, detach)
            return
        self._selector.register(relay, selectors.EVENT_READ, _Linking(conn, relay, detach))

    def _linked(self, linking: _Linking) -> None:
        self._selector.unregister(linking.relay)
        relay, detach = linking.relay, linking.detach
        if not relay.ready():
            self._link_failed(relay.error())
            self._serve(linking.conn, detach)
            return

        def end() -> None:
            detach()
            relay.stop()

        self._serve(linking.conn, end)

    def _link_failed(self, reason: str) -> None:
        if not self._failure_noted:
            self._failure_noted = True
            log.warning("function internet access failed: %s; the instance reaches the cloud "
                        "APIs only", reason)

    def _serve(self, conn: socket.socket, end: Callable[[], None]) -> None:
        """Tell the worker it may go on; ``end`` runs when its connection ends."""
        try:
            conn.send(_ACCEPTED)
        except OSError:
            conn.close()
            end()
            return
        self._selector.register(conn, selectors.EVENT_READ, end)

    def _ended(self, conn: socket.socket, end: Callable[[], None]) -> None:
        """A worker's connection has data or ended: it ends only with the worker."""
        try:
            if conn.recv(64):
                return  # nothing is expected; ignore it
        except BlockingIOError:
            return
        except OSError:
            pass
        self._selector.unregister(conn)
        conn.close()
        end()

    def close(self) -> None:
        """Stop; detach every listener still attached, stop every relay. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._thread.join(timeout=5)
        for key in list(self._selector.get_map().values()):
            data = key.data
            with contextlib.suppress(Exception):
                if isinstance(data, _Linking):
                    data.detach()
                    data.relay.stop()
                    data.conn.close()
                elif callable(data):
                    data()
            with contextlib.suppress(OSError):
                if not isinstance(data, _Linking):
                    key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()
        self._wake_w.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        if self.path.parent.name.startswith(_SHORT_PREFIX):
            with contextlib.suppress(OSError):
                self.path.parent.rmdir()


def _nothing() -> None:
    return None


_SHORT_PREFIX = "deployer-gw-"
_MAX_UNIX_PATH = 100  # sun_path holds 108 bytes


def _socket_path(work_dir: Path) -> Path:
    """``<work_dir>/gateway.sock``, or a short private directory's when that is too long for
    a Unix socket address."""
    path = work_dir / "gateway.sock"
    if len(os.fsencode(path)) <= _MAX_UNIX_PATH:
        return path
    short = Path(tempfile.mkdtemp(prefix=_SHORT_PREFIX))
    short.chmod(0o711)
    return short / "gw.sock"


class InstanceNetworks:
    """The network of a runtime's instances: the ``network`` part of each new worker's sandbox
    settings; the broker, once the emulator serves a gateway (:meth:`attach_gateway`) or an
    instance with internet access starts."""

    def __init__(self, work_dir: Path, links: InternetLinks | None = None) -> None:
        self._work_dir = Path(work_dir)
        self.links = links or InternetLinks(self._work_dir)
        self._broker: GatewayBroker | None = None
        self._port = 0
        self._lock = threading.Lock()

    def _broker_locked(self) -> GatewayBroker:
        if self._broker is None:
            self._broker = GatewayBroker(self._work_dir, None, self.links)
        return self._broker

    def attach_gateway(self, port: int, attach: Attach) -> None:
        """Instances started from now on reach the cloud APIs at ``127.0.0.1:port`` of their
        own namespace, through listeners given to ``attach``."""
        with self._lock:
            self._broker_locked().attach = attach
            self._port = port

    def settings(self, internet_access: bool) -> dict[str, object]:
        """A new instance's own network: the gateway's port, the broker's path and ticket, its
        internet link (``internet.py``; None without internet access or without a relay on
        this host); where no namespace can be made, the TCP ports it may still connect to
        (None: any, for a function with internet access)."""
        internet = self.links.instance_settings() if internet_access else None
        with self._lock:
            port = self._port
            if not port and internet is None:
                return {"port": 0, "internet": None,
                        "connect_ports": None if internet_access else []}
            broker = self._broker_locked()
            ticket = broker.ticket(gateway=bool(port),
                                   internet=str(internet["cidr"]) if internet else "")
        return {"port": port, "broker": str(broker.path), "ticket": ticket, "internet": internet,
                "connect_ports": None if internet_access else [port]}

    def close(self) -> None:
        with self._lock:
            broker, self._broker = self._broker, None
        if broker is not None:
            broker.close()
