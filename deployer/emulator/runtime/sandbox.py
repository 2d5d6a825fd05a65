"""Worker-side sandbox: applied by ``bootstrap.py`` to itself before any user code runs.

Loaded by path inside the worker (standard library only). :func:`enter_sandbox` takes the
``sandbox`` part of the instance config and applies, in this order, what the host offers:

1. ``PR_SET_CHILD_SUBREAPER``: every process the handler starts stays a descendant of the worker,
   even after a double fork or ``setsid``, so the parent can find and kill the whole tree.
2. Resource limits (``setrlimit``): open files (FC: 100,000, capped by the hard limit), processes
   (FC: 1,024; only meaningful when the worker runs under its own uid), the size of any one file
   written (the function's ``diskSize``; ``SIGXFSZ`` is ignored so the write fails with ``EFBIG``),
   no core files.
3. Namespaces, with unprivileged user namespaces (same uid/gid inside):

   * ``/tmp``: a private mount namespace where the instance's own directory is bind-mounted on
     ``/tmp`` (as on FC, ``/tmp`` is the writable scratch space); otherwise only ``TMPDIR``
     points there; the function's merged layers (``opt``) are bind-mounted read-only on
     ``/opt`` in the same namespace;
   * the network (``network``): a network namespace of the instance's own, with its own
     loopback: no port of this machine (the emulator's admin API, console and log endpoints,
     other instances, any other service) can be reached from it. Before entering it the worker
     connects to the gateway broker's Unix socket; inside, it binds ``127.0.0.1:<gateway
     port>`` and sends that listening socket to the emulator, which serves the cloud APIs on it
     (``network.py``); with internet access, the emulator attaches a user-mode network stack
     that reaches the internet but none of this host's addresses (``internet.py``,
     ``own_network.py``). Every process the handler starts, in any language, inherits the
     namespace.

4. Landlock (Linux ≥ 5.13): the process keeps read access to the paths listed in ``read`` (the
   system, the code root, the built-in packages) and write access to ``write`` (the instance
   directory, ``/dev/null``...); everything else — the emulator's state directory with its
   identity, database, code store and other functions' code — is unreachable, for root too.
   ABI ≥ 6 also stops signals to, and abstract sockets of, processes outside the sandbox. Where
   no network namespace could be made, ABI ≥ 4 limits TCP connections to the ports in
   ``network.connect_ports`` (a function without internet access: the gateway alone).

Each step is best effort: what could not be applied is returned in the report so the parent
can log it; docs/runtime.md says what each step protects and what it does not.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
from typing import Any

if __package__:  # imported as deployer.emulator.runtime.sandbox
    from . import own_network
else:  # loaded by path in a worker: bootstrap.py loads own_network.py first, under this name
    own_network = sys.modules["_fc_emulator_own_network"]

__all__ = ["enter_sandbox"]

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 0x1000, 0x4000, 1 << 18
_PR_CAPBSET_DROP = 24
_CAP_VERSION_3 = 0x20080522

# Landlock filesystem rights by ABI version (linux/landlock.h)
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ALL_V1 = (1 << 13) - 1
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_NET_CONNECT_TCP = 1 << 1
_RULE_NET_PORT = 2


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _limit(kind: int, wanted: int) -> None:
    """Set ``kind`` to ``wanted`` (a worker left with root may raise its hard limit), else to
    as much of it as the hard limit allows."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(kind, (wanted, wanted))
        return
    _soft, hard = resource.getrlimit(kind)
    value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(kind, (value, value if hard != resource.RLIM_INFINITY else hard))


def _rlimits(settings: dict[str, Any], report: list[str]) -> None:
    try:
        _limit(resource.RLIMIT_NOFILE, int(settings.get("max_open_files", 100000)))
        _limit(resource.RLIMIT_CORE, 0)
        if settings.get("file_size"):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            _limit(resource.RLIMIT_FSIZE, int(settings["file_size"]))
        if settings.get("max_processes"):
            _limit(resource.RLIMIT_NPROC, int(settings["max_processes"]))
    except (OSError, ValueError) as exc:
        report.append(f"rlimits: {exc}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _unshare(flags: int, report: list[str]) -> bool:
    """Enter new namespaces (``flags``) with a new user namespace mapping this uid/gid."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    try:
        if libc.unshare(_CLONE_NEWUSER | flags) != 0:
            report.append(f"namespaces: unshare: {os.strerror(ctypes.get_errno())}")
            return False
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        report.append(f"namespaces: {exc}")
        return False
    return True


def _private_tmp(directory: str, keep: list[str], report: list[str]) -> bool:
    """In the new mount namespace, bind-mount ``directory`` on /tmp; paths of ``keep`` that
    lived under the host's /tmp (the code root...) are bind-mounted read-only at the same place
    inside the new /tmp."""
    libc = _libc()
    hidden: dict[str, int] = {}
    try:
        if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
            report.append(f"private /tmp: mount: {os.strerror(ctypes.get_errno())}")
            return False
        hidden = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for p in keep
                  if (p == "/tmp" or p.startswith("/tmp/")) and os.path.isdir(p)}
        if libc.mount(
                directory.encode(), b"/tmp", None, _MS_BIND | _MS_REC, None) != 0:
            report.append(f"private /tmp: bind: {os.strerror(ctypes.get_errno())}")
            return False
        for path, fd in hidden.items():
            os.makedirs(path, exist_ok=True)
            source = f"/proc/self/fd/{fd}".encode()
            if libc.mount(source, path.encode(), None, _MS_BIND | _MS_REC, None) != 0 or \
                    libc.mount(None, path.encode(), None,
                               _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None) != 0:
                report.append(f"private /tmp: {path}: {os.strerror(ctypes.get_errno())}")
                return False
    except OSError as exc:
        report.append(f"private /tmp: {exc}")
        return False
    finally:
        for fd in hidden.values():
            os.close(fd)
    return True


def _mount_opt(tree: str, report: list[str]) -> None:
    """The function's merged layers, read-only on ``/opt`` (in the private mount namespace)."""
    libc = _libc()
    if not os.path.isdir("/opt"):
        report.append("layers: this host has no /opt to mount them on")
        return
    if libc.mount(tree.encode(), b"/opt", None, _MS_BIND | _MS_REC, None) != 0 or libc.mount(
            None, b"/opt", None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None) != 0:
        report.append(f"layers: mount on /opt: {os.strerror(ctypes.get_errno())}")


def _cover(missing: str, report: list[str]) -> str:
    """The deepest existing directory above ``missing``, to cover with a tmpfs where the mount
    directory can be made ("" when that would be ``/``)."""
    parent = os.path.dirname(missing.rstrip("/"))
    while parent != "/" and not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    if parent == "/":
        report.append(f"mounts: {missing} cannot be made on this host (no directory above it "
                      "but /)")
        return ""
    return parent


def _tmpfs_over(cover: str, keep: list[str], writable: set[str], report: list[str]) -> bool:
    """A tmpfs on ``cover`` (so mount directories can be made below it), with each path of
    ``keep`` that was below it bind-mounted back at its place (read-only unless writable)."""
    libc = _libc()
    below = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for p in keep
             if p.startswith(cover.rstrip("/") + "/") and os.path.exists(p)}
    try:
        if libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 0, b"mode=0755") != 0:
            report.append(f"mounts: tmpfs on {cover}: {os.strerror(ctypes.get_errno())}")
            return False
        for path, fd in sorted(below.items()):
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()  # a mount point for the file
            source = f"/proc/self/fd/{fd}".encode()
            flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY
            if libc.mount(source, path.encode(), None, _MS_BIND | _MS_REC, None) != 0 or (
                    path not in writable and libc.mount(None, path.encode(), None, flags,
                                                        None) != 0):
                report.append(f"mounts: {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        for fd in below.values():
            os.close(fd)
    return True


def _open_mounts(mounts: Any, report: list[str]) -> list[dict[str, Any]]:
    """Each mount point's directory opened (before /tmp is replaced), if it is still where
    the emulator checked it: inside its mount root, so a symbolic link swapped in since
    cannot mount another host directory into the instance."""
    opened = []
    for mount in mounts:
        if mount.get("outside") or not os.path.isdir(mount["source"]):
            report.append(f"mounts: {mount['target']}: not mounted: "
                          f"{mount.get('outside') or 'its directory is missing'}")
            continue
        fd = os.open(mount["source"], os.O_PATH | os.O_CLOEXEC)
        real = os.readlink(f"/proc/self/fd/{fd}")
        root = mount.get("root") or ""
        if real != mount["source"] or not (real == root or real.startswith(root + "/")):
            os.close(fd)
            report.append(f"mounts: {mount['target']}: not mounted: its directory moved "
                          f"outside {root}")
            continue
        opened.append({**mount, "fd": fd})
    return opened


def _mount_points(mounts: list[dict[str, Any]], keep: list[str], writable: set[str],
                  report: list[str]) -> None:
    """NAS and OSS mount points: each ``source`` directory bind-mounted on its ``target``
    (read-only when ``read_only``); a target whose directory cannot be made on this host gets
    a tmpfs on the deepest existing directory above it first (``keep`` put back)."""
    libc = _libc()
    covers = {c for m in mounts if not os.path.isdir(m["target"])
              for c in [_cover(m["target"], report)] if c}
    for cover in sorted(covers):
        if not any(cover.startswith(other.rstrip("/") + "/") for other in covers):
            _tmpfs_over(cover, keep, writable, report)
    for mount in mounts:
        target = mount["target"]
        try:
            os.makedirs(target, exist_ok=True)
        except OSError as exc:
            report.append(f"mounts: {target}: {exc.strerror}")
            continue
        flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY
        source = f"/proc/self/fd/{mount['fd']}".encode()  # opened before /tmp was replaced
        if libc.mount(source, target.encode(), None, _MS_BIND | _MS_REC,
                      None) != 0 or (mount["read_only"] and libc.mount(
                          None, target.encode(), None, flags, None) != 0):
            report.append(f"mounts: {target}: {os.strerror(ctypes.get_errno())}")


def _drop_capabilities(report: list[str]) -> None:
    """A worker left with uid 0 keeps no capability (no DAC override, no mount, no raw IO)."""
    libc = _libc()
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(header, data) != 0:
        report.append(f"capabilities: capset: {os.strerror(ctypes.get_errno())}")


def _landlock(read: list[str], write: list[str], ports: list[int] | None,
              report: list[str]) -> bool:
    """Restrict this process and its future children (see the module docstring); ``ports``:
    the only TCP ports it may connect to (None: any)."""
    libc = _libc()
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        report.append(f"landlock: unavailable ({os.strerror(ctypes.get_errno())})")
        return False
    handled = _FS_ALL_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0) \
        | (_IOCTL_DEV if abi >= 5 else 0)
    net = _NET_CONNECT_TCP if ports is not None and abi >= 4 else 0
    if ports is not None and not net:
        report.append("network: TCP connections not limited (Landlock ABI < 4)")
    attr = _RulesetAttr(handled, net, (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
                        if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (24 if abi >= 4 else 8)
    ruleset = syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
    if ruleset < 0:
        report.append(f"landlock: create_ruleset: {os.strerror(ctypes.get_errno())}")
        return False
    try:
        reading = _EXECUTE | _READ_FILE | _READ_DIR
        for paths, rights in ((read, reading), (write, handled)):
            for path in paths:
                _add_rule(syscall, ruleset, path, rights & handled, report)
        for port in ports if net else []:
            rule = _NetPort(_NET_CONNECT_TCP, port)
            if syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_NET_PORT),
                       ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                report.append(f"landlock: port {port}: {os.strerror(ctypes.get_errno())}")
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or syscall(
                _SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            report.append(f"landlock: restrict_self: {os.strerror(ctypes.get_errno())}")
            return False
    finally:
        os.close(ruleset)
    return True


def _add_rule(syscall: Any, ruleset: int, path: str, rights: int, report: list[str]) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist needs no rule
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = _PathBeneath(rights, fd)
        if syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                   ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            report.append(f"landlock: rule for {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def enter_sandbox(settings: dict[str, Any]) -> list[str]:
    """Apply ``settings`` (see the module docstring) to this process; return what failed."""
    report: list[str] = []
    with contextlib.suppress(OSError, AttributeError):
        if _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            report.append("subreaper: prctl failed")
    _rlimits(settings, report)
    tmp = settings.get("tmp_dir")
    network: dict[str, Any] = settings.get("network") or {}
    private_tmp = bool(tmp and settings.get("private_tmp"))
    conn = own_network.connect_broker(network, report) if network else None
    flags = (_CLONE_NEWNS if private_tmp else 0) | (_CLONE_NEWNET if network else 0)
    entered = bool(flags) and _unshare(flags, report)
    mounts = _open_mounts(settings.get("mounts") or (), report)
    resolv_conf = own_network.open_resolv_conf(network) if entered else -1
    if entered and private_tmp and _private_tmp(tmp, list(settings.get("keep", [])), report):
        os.environ["TMPDIR"] = "/tmp"
        if settings.get("opt"):
            _mount_opt(settings["opt"], report)
        if mounts:
            _mount_points(mounts, [*settings.get("read", []), *settings.get("write", [])],
                          set(settings.get("write", [])), report)
        own_network.mount_resolv_conf(resolv_conf, report)
    else:
        if resolv_conf >= 0:
            os.close(resolv_conf)
        if tmp:
            os.environ["TMPDIR"] = tmp
        if mounts:
            report.append("mounts: NAS and OSS mount points need the sandbox's private mount "
                          "namespace, which this host does not give; nothing is mounted")
    for mount in mounts:
        os.close(mount["fd"])
    isolated = entered and bool(network) and own_network.enter(network, conn, report)
    if network and not isolated:
        report.append("network: no namespace of its own; the instance shares this host's")
        if conn is not None:
            conn.close()
    if settings.get("code_root"):
        os.chdir(settings["code_root"])
    if os.geteuid() == 0 or entered:
        _drop_capabilities(report)
    if settings.get("landlock"):
        ports = None if isolated or not network else network.get("connect_ports")
        _landlock(list(settings.get("read", [])), list(settings.get("write", [])),
                  None if ports is None else [int(p) for p in ports], report)
    return report
