"""Worker-side sandbox: applied by ``bootstrap.py`` to itself before any user code runs.

Loaded by path inside the worker (standard library only). :func:`enter_sandbox` takes the
``sandbox`` part of the instance config and applies, in this order, what the host offers:

1. ``PR_SET_CHILD_SUBREAPER``: every process the handler starts stays a descendant of the worker,
   even after a double fork or ``setsid``, so the parent can find and kill the whole tree.
2. Resource limits (``setrlimit``): open files (FC: 100,000, capped by the hard limit), processes
   (FC: 1,024; only meaningful when the worker runs under its own uid), the size of any one file
   written (the function's ``diskSize``; ``SIGXFSZ`` is ignored so the write fails with ``EFBIG``),
   no core files.
3. ``/tmp``: with unprivileged user namespaces, a private mount namespace where the instance's
   own directory is bind-mounted on ``/tmp`` (as on FC, ``/tmp`` is the writable scratch space);
   otherwise only ``TMPDIR`` points there. The function's merged layers (``opt``) are
   bind-mounted read-only on ``/opt`` in the same namespace.
4. Landlock (Linux ≥ 5.13): the process keeps read access to the paths listed in ``read`` (the
   system, the code root, the built-in packages) and write access to ``write`` (the instance
   directory, ``/dev/null``...); everything else — the emulator's state directory with its
   identity, database, code store and other functions' code — is unreachable, for root too.
   ABI ≥ 6 also stops signals to, and abstract sockets of, processes outside the sandbox.

Each step is best effort: what could not be applied is returned in the report so the parent
can log it; docs/runtime.md says what each step protects and what it does not.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
from typing import Any

__all__ = ["enter_sandbox"]

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 0x1000, 0x4000, 1 << 18
_PR_CAPBSET_DROP = 24
_CAP_VERSION_3 = 0x20080522

# Landlock filesystem rights by ABI version (linux/landlock.h)
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ALL_V1 = (1 << 13) - 1
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _limit(kind: int, wanted: int) -> None:
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


def _private_tmp(directory: str, keep: list[str], report: list[str]) -> bool:
    """Bind-mount ``directory`` on /tmp in a new user + mount namespace (same uid/gid); paths of
    ``keep`` that lived under the host's /tmp (the code root...) are bind-mounted read-only at
    the same place inside the new /tmp."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    hidden: dict[str, int] = {}
    try:
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            report.append(f"private /tmp: unshare: {os.strerror(ctypes.get_errno())}")
            return False
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
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


def _drop_capabilities(report: list[str]) -> None:
    """A worker left with uid 0 keeps no capability (no DAC override, no mount, no raw IO)."""
    libc = _libc()
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(header, data) != 0:
        report.append(f"capabilities: capset: {os.strerror(ctypes.get_errno())}")


def _landlock(read: list[str], write: list[str], report: list[str]) -> bool:
    libc = _libc()
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        report.append(f"landlock: unavailable ({os.strerror(ctypes.get_errno())})")
        return False
    handled = _FS_ALL_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0) \
        | (_IOCTL_DEV if abi >= 5 else 0)
    attr = _RulesetAttr(handled, 0, (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
                        if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16
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
    keep = list(settings.get("keep", []))
    if tmp and settings.get("private_tmp") and _private_tmp(tmp, keep, report):
        os.environ["TMPDIR"] = "/tmp"
        if settings.get("opt"):
            _mount_opt(settings["opt"], report)
    elif tmp:
        os.environ["TMPDIR"] = tmp
    if settings.get("code_root"):
        os.chdir(settings["code_root"])
    if os.geteuid() == 0:
        _drop_capabilities(report)
    if settings.get("landlock"):
        _landlock(list(settings.get("read", [])), list(settings.get("write", [])), report)
    return report
