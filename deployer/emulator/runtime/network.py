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
"""

from __future__ import annotations

import array
import contextlib
import logging
import os
import secrets
import selectors
import socket
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

__all__ = ["TICKET_BYTES", "Attach", "GatewayBroker", "InstanceNetworks"]

log = logging.getLogger("deployer.emulator")

Attach = Callable[[socket.socket], Callable[[], None]]  # listener -> detach
TICKET_BYTES = 43  # secrets.token_urlsafe(32)
_OUTSTANDING = 4096  # tickets handed out and not claimed yet (oldest dropped beyond)
_AWAITED = object()  # the data of a connection whose listener has not arrived yet
_MAX_AWAITED = 256  # connections waiting for their listener at once (more are closed)


class GatewayBroker:
    """Receives the gateway listeners of instances; see the module docstring. Thread-safe."""

    def __init__(self, work_dir: Path, attach: Attach) -> None:
        self.path = _socket_path(Path(work_dir))
        self._attach = attach
        self._tickets: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
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

    def ticket(self) -> str:
        """A new single-use ticket for one instance's listener."""
        value = secrets.token_urlsafe(32)
        with self._lock:
            self._tickets[value] = None
            while len(self._tickets) > _OUTSTANDING:
                self._tickets.popitem(last=False)
        return value

    def _claim(self, ticket: str) -> bool:
        with self._lock:
            return self._tickets.pop(ticket, 0) is None

    def _run(self) -> None:
        while not self._closed:
            for key, _ in self._selector.select():
                if key.fileobj is self._wake_r:
                    return
                if key.fileobj is self._server:
                    self._accept()
                elif key.data is _AWAITED:
                    self._listener_arrived(key.fileobj)  # type: ignore[arg-type]
                else:
                    self._ended(key.fileobj, key.data)  # type: ignore[arg-type]

    def _accept(self) -> None:
        """A worker connected; its listener follows once it is in its namespace (never wait
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

    def _listener_arrived(self, conn: socket.socket) -> None:
        self._selector.unregister(conn)
        try:
            listener = self._receive(conn)
        except OSError as exc:
            log.warning("function gateway: a worker's listener was not received: %s", exc)
            listener = None
        if listener is None:
            with contextlib.suppress(OSError):
                conn.send(b"\x00")
            conn.close()
            return
        try:
            detach = self._attach(listener)
            conn.send(b"\x01")
        except OSError as exc:
            log.warning("function gateway: cannot serve a worker's listener: %s", exc)
            listener.close()
            conn.close()
            return
        self._selector.register(conn, selectors.EVENT_READ, detach)

    def _receive(self, conn: socket.socket) -> socket.socket | None:
        """The listening socket sent with a valid ticket, else None (what came is closed)."""
        fds = array.array("i")
        data, ancillary, _flags, _addr = conn.recvmsg(
            TICKET_BYTES, socket.CMSG_SPACE(fds.itemsize))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        received = [socket.socket(fileno=fd) for fd in fds]
        valid = (len(received) == 1 and self._claim(data.decode("ascii", "replace"))
                 and received[0].type == socket.SOCK_STREAM
                 and received[0].getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
        if not valid:
            for sock in received:
                sock.close()
            return None
        return received[0]

    def _ended(self, conn: socket.socket, detach: Callable[[], None]) -> None:
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
        detach()

    def close(self) -> None:
        """Stop; detach every listener still attached. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._thread.join(timeout=5)
        for key in list(self._selector.get_map().values()):
            if callable(key.data):
                with contextlib.suppress(Exception):
                    key.data()
            with contextlib.suppress(OSError):
                key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()
        self._wake_w.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        if self.path.parent.name.startswith(_SHORT_PREFIX):
            with contextlib.suppress(OSError):
                self.path.parent.rmdir()


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
    settings, and the broker once the emulator serves a gateway (:meth:`attach_gateway`)."""

    def __init__(self, work_dir: Path) -> None:
        self._work_dir = Path(work_dir)
        self._broker: GatewayBroker | None = None
        self._port = 0
        self._lock = threading.Lock()

    def attach_gateway(self, port: int, attach: Attach) -> None:
        """Instances started from now on reach the cloud APIs at ``127.0.0.1:port`` of their
        own namespace, through listeners given to ``attach``."""
        with self._lock:
            if self._broker is not None:
                self._broker.close()
            self._broker = GatewayBroker(self._work_dir, attach)
            self._port = port

    def settings(self, internet_access: bool) -> dict[str, object]:
        """A new instance's own network: the gateway's port and the broker's path and ticket;
        where no namespace can be made, the TCP ports it may still connect to (None: any, for
        a function with internet access)."""
        with self._lock:
            broker, port = self._broker, self._port
        if broker is None:
            return {"port": 0, "connect_ports": None if internet_access else []}
        return {"port": port, "broker": str(broker.path), "ticket": broker.ticket(),
                "connect_ports": None if internet_access else [port]}

    def close(self) -> None:
        with self._lock:
            broker, self._broker = self._broker, None
        if broker is not None:
            broker.close()
