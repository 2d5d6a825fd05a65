"""Internet access of instances that have a network namespace of their own (docs/runtime.md
"Network").

An instance of a function with ``internetAccess: true`` gets a user-mode network stack attached
to its namespace: ``slirp4netns`` (Debian package ``slirp4netns``; a separate program, run and
never linked, so its GPL-2.0 licence does not reach this code). The emulator starts one per
instance for the worker's pid, once the worker is inside its namespace (``network.py``'s
broker), and ends it with the instance. It gives the namespace an ``eth0`` (``.100`` of
:data:`CIDR_CANDIDATES`' first free block, gateway ``.2``, DNS forwarder ``.3``) whose packets
it turns into ordinary sockets of this host: the internet and the network the host is on.

What the namespace still cannot reach:

* **this host's loopback** — inside, ``127.0.0.0/8`` is the instance's own; the stack's gateway
  address, which would lead to the host's loopback, is closed (``--disable-host-loopback``),
  except port 53 of the DNS forwarder, which reaches the host's first resolver (wherever it
  listens: systemd-resolved's ``127.0.0.53`` too) and nothing else;
* **this host's own addresses** (where a service listening on ``0.0.0.0`` answers): before
  the stack is attached, the worker adds a ``prohibit`` route for each local and broadcast
  address of the host's local routing table (:func:`host_local_prefixes`, read when the
  instance starts) and for multicast; a connection to one fails in the namespace with
  ``EACCES``, and the stack never opens a socket for it;
* IPv6 destinations: the stack carries IPv4 only.

The namespace resolves names through the stack's forwarder: the worker mounts a resolv.conf of
its own (:meth:`InternetLinks.instance_settings`) on ``/etc/resolv.conf`` in its private mount
namespace.

Without ``slirp4netns`` on PATH an instance stays in its namespace with the gateway as its one
way out (logged once: "function internet access unavailable: install slirp4netns"); it never
falls back to the host's network.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["CIDR_CANDIDATES", "RELAY", "InternetLinks", "Relay", "host_local_prefixes",
           "namespace_network"]

log = logging.getLogger("deployer.emulator")

RELAY = "slirp4netns"
CIDR_CANDIDATES = ("10.0.2.0/24", "10.201.17.0/24", "172.31.251.0/24", "192.168.253.0/24")
INTERFACE = "eth0"
MTU = 65520
ALWAYS_BLOCKED = ("224.0.0.0/4", "255.255.255.255/32")  # multicast, limited broadcast
STOP_TIMEOUT_S = 2.0
_KEPT_RESOLVER_LINES = ("search", "domain", "options", "sortlist")


def host_local_prefixes(fib_trie: str) -> list[str]:
    """The IPv4 prefixes of the host's local routing table (its own addresses, its broadcast
    addresses) in ``/proc/net/fib_trie`` text, loopback excepted, in order, without repeats."""
    found: dict[str, None] = {}
    leaf = ""
    for raw in fib_trie.splitlines():
        line = raw.strip()
        if line.startswith("|--"):
            leaf = line[3:].strip()
            continue
        parts = line.split()
        if not leaf or len(parts) < 3 or not parts[0].startswith("/"):
            continue
        if parts[-1] not in ("LOCAL", "BROADCAST"):
            continue
        with contextlib.suppress(ValueError):
            network = ipaddress.IPv4Network(f"{leaf}{parts[0]}", strict=False)
            if not network.is_loopback:
                found[str(network)] = None
    return list(found)


def _route_networks(route_table: str) -> list[ipaddress.IPv4Network]:
    """The destinations of ``/proc/net/route`` (hex, little-endian), the default one aside."""
    networks = []
    for line in route_table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        with contextlib.suppress(ValueError):
            dest = ipaddress.IPv4Address(int(fields[1], 16).to_bytes(4, "little"))
            mask = ipaddress.IPv4Address(int(fields[7], 16).to_bytes(4, "little"))
            network = ipaddress.IPv4Network(f"{dest}/{mask}", strict=False)
            if network.prefixlen:
                networks.append(network)
    return networks


def namespace_network(local: list[str], route_table: str) -> str:
    """The first of :data:`CIDR_CANDIDATES` that overlaps no network this host routes to or
    owns an address in (so the namespace can still reach the host's own networks)."""
    taken = [*_route_networks(route_table),
             *(ipaddress.IPv4Network(p, strict=False) for p in local)]
    for candidate in CIDR_CANDIDATES:
        block = ipaddress.IPv4Network(candidate)
        if not any(block.overlaps(other) for other in taken):
            return candidate
    return CIDR_CANDIDATES[0]


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the next instances get: their namespace's network and the blocked prefixes."""

    cidr: str
    blocked: tuple[str, ...]

    @property
    def dns(self) -> str:
        return str(ipaddress.IPv4Network(self.cidr)[3])


class Relay:
    """One running ``slirp4netns``: ready once :meth:`fileno` is readable (:meth:`ready`);
    :meth:`stop` ends it. Its stderr goes to an unnamed file, read only when it failed."""

    def __init__(self, process: subprocess.Popen[bytes], ready_fd: int, exit_fd: int,
                 stderr: IO[bytes]) -> None:
        self.process = process
        self._ready_fd = ready_fd
        self._exit_fd = exit_fd
        self._stderr = stderr

    def fileno(self) -> int:
        return self._ready_fd

    def ready(self) -> bool:
        """Read the readiness pipe (call once it is readable): True when the namespace has its
        network, False when the relay failed (then stopped)."""
        try:
            ok = os.read(self._ready_fd, 1) == b"1"
        except OSError:
            ok = False
        os.close(self._ready_fd)
        self._ready_fd = -1
        if not ok:
            self.stop()
        return ok

    def error(self) -> str:
        """The relay's last words (after a failed start)."""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
            return " / ".join(lines[-3:]) or f"exit status {self.process.poll()}"
        return "no message"

    def stop(self) -> None:
        """End the relay (it exits when its exit pipe closes) and reap it. Idempotent."""
        for fd in (self._exit_fd, self._ready_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._exit_fd = self._ready_fd = -1
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError):
            self._stderr.close()


class InternetLinks:
    """The internet links of a runtime's instances (see the module docstring). Thread-safe."""

    def __init__(self, work_dir: Path, executable: str | None = None) -> None:
        """``executable``: the relay program (default: ``slirp4netns`` on PATH, looked up when
        the first instance asks)."""
        self._dir = Path(work_dir) / "network"
        self._executable = executable
        self._looked_up = executable is not None
        self._lock = threading.Lock()
        self._noted = False

    def _relay_program(self) -> str | None:
        with self._lock:
            if not self._looked_up:
                self._executable = shutil.which(RELAY)
                self._looked_up = True
            if self._executable is None and not self._noted:
                self._noted = True
                log.warning("function internet access unavailable: install %s (Debian package "
                            "%s); instances of functions with internetAccess reach the cloud "
                            "APIs only", RELAY, RELAY)
            return self._executable

    def instance_settings(self) -> dict[str, object] | None:
        """The ``internet`` part of a new instance's network settings (None when this host has
        no relay): the namespace's network, the prefixes to refuse, the resolv.conf to mount."""
        if self._relay_program() is None:
            return None
        local = host_local_prefixes(_read("/proc/net/fib_trie"))
        plan = _Plan(namespace_network(local, _read("/proc/net/route")),
                     (*local, *ALWAYS_BLOCKED))
        return {"cidr": plan.cidr, "blocked": list(plan.blocked),
                "resolv_conf": str(self._resolv_conf(plan.dns))}

    def _resolv_conf(self, dns: str) -> Path:
        """A resolv.conf naming the stack's forwarder, with the host's search domains and
        options (rewritten only when it changes; readable by every instance's uid)."""
        kept = [line for line in _read("/etc/resolv.conf").splitlines()
                if line.split()[:1] and line.split()[0] in _KEPT_RESOLVER_LINES]
        text = "\n".join([f"nameserver {dns}", *kept]) + "\n"
        path = self._dir / f"resolv-{dns}.conf"
        with self._lock:
            if _read(str(path)) != text:
                self._dir.mkdir(mode=0o711, exist_ok=True)
                fd, temp = tempfile.mkstemp(dir=self._dir, prefix=".resolv")
                with os.fdopen(fd, "w") as out:
                    out.write(text)
                os.chmod(temp, 0o644)
                os.replace(temp, path)
        return path

    def start(self, pid: int, cidr: str) -> Relay:
        """Attach a relay to the network namespace of process ``pid`` (in its user namespace);
        raises OSError when it cannot be started."""
        program = self._relay_program()
        if program is None:
            raise OSError(f"{RELAY} is not installed")
        ready_r, ready_w = os.pipe()
        exit_r, exit_w = os.pipe()
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - the relay's, closed by Relay.stop
        command = [program, "--configure", f"--mtu={MTU}", "--disable-host-loopback",
                   f"--cidr={cidr}", f"--ready-fd={ready_w}", f"--exit-fd={exit_r}",
                   *_sandbox_options(), str(pid), INTERFACE]
        try:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=stderr,
                                       pass_fds=(ready_w, exit_r), start_new_session=True)
        except OSError:
            for fd in (ready_r, exit_w):
                os.close(fd)
            stderr.close()
            raise
        finally:
            os.close(ready_w)
            os.close(exit_r)
        return Relay(process, ready_r, exit_w, stderr)


def _sandbox_options() -> list[str]:
    """slirp4netns' own sandbox (a mount namespace with /etc and /run, seccomp), which needs
    /etc/resolv.conf to resolve inside /etc or /run."""
    target = os.path.realpath("/etc/resolv.conf")
    if target.startswith(("/etc/", "/run/")):
        return ["--enable-sandbox", "--enable-seccomp"]
    return []
