"""Worker side of a custom runtime instance: the function's own HTTP server, started and relayed.

Loaded by path inside the worker (standard library only), after the sandbox is entered: the
server inherits it, its limits and its log pipe (fd 1 and 2). What it does, as FC does it
(docs/runtime.md, "Custom runtimes"):

1. **Start** ``customRuntimeConfig.command`` + ``args`` (a relative executable path is taken
   from the code root), or the code package's ``bootstrap`` when no command is set, in the code
   root, with the function's environment, ``FC_CUSTOM_LISTEN_PORT`` and the role's credentials.
2. **Ready** when a process of this instance listens on the port (FC's check is a TCP connect
   within 120 s). A server bound to 127.0.0.1 only is refused as FC refuses it (FC connects to
   the instance's address); a port some other process of the machine already listens on is
   refused by name (instances share the machine's network here).
3. **Relay**: the parent hands over one end of a socket pair per HTTP request (over the control
   socket, ``SCM_RIGHTS``); a thread pumps its bytes to and from ``127.0.0.1:port``. So the
   parent never needs the instance's network, and requests of one instance may overlap
   (``instanceConcurrency``).
4. **Stop** on EOF of the request pipe, or when the server exits (the worker exits with it, so
   the parent sees the instance die).

Only the ready frame goes over the frame pipes; every request, hook included, is HTTP.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

__all__ = ["run"]

_HOOKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "custom_hooks")
_LISTEN = "0A"
_POLL_S = 0.01
_stopping = threading.Event()


def _frames() -> Any:
    return sys.modules["_fc_emulator_frames"]


def run(config: dict[str, Any], request_fd: int, response_fd: int, control_fd: int,
        report: list[str]) -> int:
    """Start the server, answer the ready frame, relay until the parent or the server stops."""
    frames = _frames()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(143))  # a timeout: the parent kills all
    custom = config["custom"]
    port = int(custom["port"])
    code_root = os.getcwd()
    problem, command = _command(custom, code_root)
    server: subprocess.Popen[bytes] | None = None
    if problem is None:
        problem = _port_taken(port)
    if problem is None:
        try:
            server = subprocess.Popen(command, cwd=code_root, env=_environment(config, port),
                                      stdin=subprocess.DEVNULL)
        except OSError as exc:
            problem = f"Failed to start function instance. Error: {command[0]}: {exc.strerror}"
    if problem is None and server is not None:
        problem = _wait_ready(server, port, float(custom.get("startup_timeout", 120.0)))
    if problem is not None:
        sys.stdout.flush()
        frames.write_all(response_fd, frames.encode_frame({"ok": False, "error": problem}))
        _stop(server)
        return 0
    assert server is not None
    frames.write_all(response_fd, frames.encode_frame(
        {"ok": True, "sandbox": report, "netns": _netns()}))
    threading.Thread(target=_relay, args=(control_fd, port), daemon=True).start()
    threading.Thread(target=_watch, args=(server,), daemon=True).start()
    while os.read(request_fd, 1 << 16):  # nothing but EOF is expected
        pass
    _stop(server)
    return 0


def _command(custom: dict[str, Any], code_root: str) -> tuple[str | None, list[str]]:
    """(problem, argv) of the server's start command."""
    command = [str(c) for c in custom.get("command") or []]
    args = [str(a) for a in custom.get("args") or []]
    if command:
        first = command[0]
        if "/" in first and not os.path.isabs(first):
            command[0] = os.path.join(code_root, first)
        return None, command + args
    bootstrap = os.path.join(code_root, "bootstrap")
    if not os.path.isfile(bootstrap):
        return (f"Failed to start function instance. Error: the file {bootstrap} does not "
                "exist (add an executable bootstrap to the code package or set "
                "customRuntimeConfig.command)"), []
    if not os.access(bootstrap, os.X_OK):
        return (f"Failed to start function instance. Error: the file {bootstrap} is not "
                "executable (chmod +x it before zipping)"), []
    return None, [bootstrap, *args]


def _environment(config: dict[str, Any], port: int) -> dict[str, str]:
    """The server's environment: the worker's (cleaned), the port, the role's credentials and,
    when the emulator routes cloud calls, the hooks that install the routing in Python and
    Node.js servers (``custom_hooks/``; other languages get no routing)."""
    env = dict(os.environ)
    env["FC_CUSTOM_LISTEN_PORT"] = str(port)
    if config.get("cloud_endpoint"):
        env["_FC_LOCAL_ROUTING"] = json.dumps({
            "endpoint": config["cloud_endpoint"], "hosts": config.get("emulated_hosts", ""),
            "internetAccess": config.get("internet_access", True)})
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.path.join(_HOOKS, "python"), env.get("PYTHONPATH", "")) if p)
        preload = os.path.join(_HOOKS, "node_preload.js")
        env["NODE_OPTIONS"] = " ".join(
            p for p in (f"--require={preload}", env.get("NODE_OPTIONS", "")) if p)
    credentials = config.get("credentials")
    if credentials and config.get("disable_inject_credentials", "None") not in ("Env", "All"):
        env.update({"ALIBABA_CLOUD_ACCESS_KEY_ID": credentials.get("access_key_id", ""),
                    "ALIBABA_CLOUD_ACCESS_KEY_SECRET": credentials.get("access_key_secret", ""),
                    "ALIBABA_CLOUD_SECURITY_TOKEN": credentials.get("security_token", "")})
    return env


# ---------------------------------------------------------------- listeners (/proc/net/tcp)


def _listeners(port: int) -> list[tuple[str, int]]:
    """(local address hex, socket inode) of every TCP socket listening on ``port``."""
    found = []
    needle = f":{port:04X} "
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                lines = [line for line in fh.read().splitlines()[1:] if needle in line]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            address, _, hex_port = fields[1].rpartition(":")
            if int(hex_port, 16) == port:
                found.append((address, int(fields[9])))
    return found


def _our_sockets() -> set[int]:
    """Inodes of the sockets open in this process and every process below it."""
    inodes: set[int] = set()
    for pid in [os.getpid(), *_descendants(os.getpid())]:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:["):
                        inodes.add(int(target[8:-1]))
    return inodes


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat") as fh:
                    text = fh.read()
                children.setdefault(int(text[text.rindex(")") + 2:].split()[1]), []).append(
                    int(entry))
    found, frontier = [], [root]
    while frontier:
        frontier = [c for p in frontier for c in children.get(p, [])]
        found.extend(frontier)
    return found


def _loopback_only(address: str) -> bool:
    """127.x.x.x (``0100007F``...) or ::1 in /proc/net's little-endian hex."""
    if len(address) == 8:
        return address.endswith("7F")
    return address == "00000000000000000000000001000000"


def _port_taken(port: int) -> str | None:
    """Why the server could not listen on ``port`` (None when it is free): a bind test, which
    a listening socket of any address makes fail (connections in TIME_WAIT do not)."""
    for family, address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((address, port))
            return None
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                break
    else:
        return None
    return (f"Failed to start function instance. Error: port {port} is already in use on this "
            "machine by another process; instances of custom runtimes share the machine's "
            "network here, so stop that process or set customRuntimeConfig.port")


def _accepts(port: int) -> bool:
    for address in ("127.0.0.1", "::1"):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            if probe.connect_ex((address, port)) == 0:
                return True
    return False


def _wait_ready(server: subprocess.Popen[bytes], port: int, timeout: float) -> str | None:
    """None once a process of this instance listens on ``port`` (a TCP connect succeeds, as in
    FC's check, and the listener is this instance's); else why it never did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = server.poll()
        if code is not None:
            return (f"Function instance exited unexpectedly (code {code}) before it listened "
                    f"on port {port}")
        if _accepts(port):
            return _check_listener(port)
        time.sleep(_POLL_S)
    return f"Function instance health check failed on port {port} in {timeout:g} seconds."


def _check_listener(port: int) -> str | None:
    ours = _our_sockets()
    mine = [address for address, inode in _listeners(port) if inode in ours]
    if not mine:
        return _port_taken(port) or (f"Failed to start function instance. Error: port {port} "
                                     "is in use by another process of this machine")
    if all(_loopback_only(address) for address in mine):
        return (f"Function instance health check failed on port {port}: the server listens "
                f"on 127.0.0.1 only; listen on 0.0.0.0:{port} (Function Compute connects to "
                "the instance's address)")
    return None


def _netns() -> int:
    """This process's network namespace (the parent compares it with its own)."""
    try:
        return os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return 0


# ---------------------------------------------------------------- relay and life


def _relay(control_fd: int, port: int) -> None:
    control = socket.socket(fileno=control_fd)
    while True:
        try:
            _msg, fds, _flags, _addr = socket.recv_fds(control, 16, 4)
        except OSError:
            return
        if not fds:
            return  # the parent closed the control socket
        for fd in fds:
            threading.Thread(target=_pump, args=(socket.socket(fileno=fd), port),
                             daemon=True).start()


def _pump(client: socket.socket, port: int) -> None:
    """Copy bytes both ways between ``client`` and the server until both sides are done."""
    try:
        server = socket.create_connection(("127.0.0.1", port))
    except OSError:
        try:
            server = socket.create_connection(("::1", port))
        except OSError:
            client.close()
            return
    server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    open_ends = {client: server, server: client}
    try:
        while open_ends:
            readable, _, _ = select.select(list(open_ends), [], [])
            for source in readable:
                data = source.recv(1 << 16)
                if data:
                    open_ends[source].sendall(data)
                    continue
                with contextlib.suppress(OSError):
                    open_ends[source].shutdown(socket.SHUT_WR)
                del open_ends[source]
    except OSError:
        pass
    finally:
        client.close()
        server.close()


def _watch(server: subprocess.Popen[bytes]) -> None:
    """The server exited on its own: the instance is dead, the worker exits with its code."""
    code = server.wait()
    if _stopping.is_set():
        return
    sys.stdout.flush()
    os._exit(code if 0 < code < 256 else 1)


def _stop(server: subprocess.Popen[bytes] | None) -> None:
    _stopping.set()
    if server is None or server.poll() is not None:
        return
    with contextlib.suppress(OSError):
        server.send_signal(signal.SIGTERM)
    try:
        server.wait(1.0)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
