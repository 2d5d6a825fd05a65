"""Parent side of the sandbox: what the host offers, per-instance uids and directories, memory
accounting and killing a whole process tree.

:class:`Isolation` is probed once per :class:`ProcessRuntime`:

* **uid separation** (the emulator runs as root): every instance runs under its own uid/gid from
  a private range, its directory belongs to that uid (0700), the state directory is made
  traversable but not listable (0711) and its files private (0600), so DAC keeps instances from
  each other and from the emulator's state.
* **Landlock** (probed in the worker, see ``sandbox.py``): the worker reads the system, its code
  and FC's built-in packages, writes only its instance directory; ``private_dirs`` (the state
  directory) stay out of reach, for root too.
* **memory**: a cgroup per instance when a memory controller is writable (v2 ``memory.max`` /
  ``memory.peak`` / ``cgroup.kill``, else v1 ``memory.limit_in_bytes`` /
  ``memory.max_usage_in_bytes``): the kernel enforces ``memorySize`` and counts the whole tree.
  Otherwise the worker's resident set is sampled while it runs and its high-water mark
  (``VmHWM``, reset per request through ``clear_refs``) is read after each request; exceeding
  ``memorySize`` kills the instance.
* **process trees**: the worker is a child subreaper, so every process it starts stays below it;
  :func:`kill_tree` stops and kills all of them (and, with a cgroup, everything in it; with uid
  separation, everything of that uid), then the worker.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from deployer.emulator.runtime.network import InstanceNetworks
from deployer.emulator.runtime.pid_limits import PidsGroup, PidsGroups

__all__ = ["Isolation", "MemoryMonitor", "kill_tree", "readable_roots"]

_NOT_READABLE = frozenset((Path("/dev"),))  # device nodes: only those listed by the worker
# the host user's cloud credentials and keys (Alibaba Cloud CLI, credentials file, Serverless
# Devs, SSH): never readable by handlers
HOST_SECRETS = (".aliyun", ".alibabacloud", ".s", ".ssh")
UID_BASE = 2_140_000_000
UID_COUNT = 65536
_MB = 1024 * 1024


def readable_roots(private: Sequence[Path], root: Path = Path("/")) -> list[str]:
    """Every top-level path that contains none of ``private``, descending into the directories
    that do (so that a Landlock read rule on each result covers all but the private trees)."""
    private_resolved = [p.resolve() for p in private]
    out: list[str] = []

    def visit(directory: Path) -> None:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if any(path == p for p in private_resolved) or path in _NOT_READABLE:
                continue
            if any(_inside(p, path) for p in private_resolved):
                if entry.is_dir(follow_symlinks=False):
                    visit(path)
                continue
            out.append(str(path))

    visit(root)
    return out


def _world_readable(path: Path) -> bool:
    """Whether any uid can reach and read ``path`` (o+x on every directory above it)."""
    try:
        target = path.resolve()
        for directory in target.parents:
            if not directory.stat().st_mode & stat.S_IXOTH:
                return False
        return bool(target.stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def _inside(path: Path, ancestor: Path) -> bool:
    return path != ancestor and ancestor in path.parents


def _own_cgroup(kind: str) -> Path | None:
    """This process's cgroup directory for the v1 ``memory`` hierarchy or v2 (``""``)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if kind == "memory" and "memory" in controllers.split(","):
            return Path("/sys/fs/cgroup/memory") / path.lstrip("/")
        if kind == "" and controllers == "":
            for mount in (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
                candidate = mount / path.lstrip("/")
                if (candidate / "cgroup.procs").exists() and (mount / "cgroup.controllers") \
                        .exists():
                    return candidate
    return None


@dataclass(frozen=True, slots=True)
class _CgroupKind:
    version: int
    base: Path


def _probe_cgroup() -> _CgroupKind | None:
    v2 = _own_cgroup("")
    if v2 is not None:
        try:
            if "memory" in (v2 / "cgroup.controllers").read_text().split():
                base = v2 / f"deployer-{os.getpid()}"
                base.mkdir(exist_ok=True)
                (base / "cgroup.subtree_control").write_text("+memory")
                return _CgroupKind(2, base)
        except OSError:
            pass
    v1 = _own_cgroup("memory")
    if v1 is not None and (v1 / "memory.limit_in_bytes").exists():
        base = v1 / f"deployer-{os.getpid()}"
        try:
            base.mkdir(exist_ok=True)
            probe = base / "probe"
            probe.mkdir(exist_ok=True)
            (probe / "memory.limit_in_bytes").write_text(str(64 * _MB))
            probe.rmdir()
            return _CgroupKind(1, base)
        except OSError:
            with contextlib.suppress(OSError):
                base.rmdir()
    return None


class MemoryMonitor:
    """Peak memory and the ``memorySize`` limit of one instance (see the module docstring)."""

    def __init__(self, limit_mb: int, cgroup: Path | None, version: int) -> None:
        self.limit_mb = limit_mb
        self.cgroup = cgroup
        self.version = version
        self.pid = 0
        self._oom_before = 0
        self.process_limit: PidsGroup | None = None  # pid_limits.py

    def limit_processes(self, group: PidsGroup | None) -> MemoryMonitor:
        self.process_limit = group
        return self

    @property
    def kernel_enforced(self) -> bool:
        return self.cgroup is not None

    def attach(self, pid: int) -> None:
        self.pid = pid
        if self.cgroup is not None:
            (self.cgroup / "cgroup.procs").write_text(str(pid))
        if self.process_limit is not None:
            self.process_limit.attach(pid)

    def _file(self, v1: str, v2: str) -> Path:
        assert self.cgroup is not None
        return self.cgroup / (v2 if self.version == 2 else v1)

    def before_request(self) -> None:
        """Start a new peak measurement."""
        with contextlib.suppress(OSError):
            if self.cgroup is None:
                Path(f"/proc/{self.pid}/clear_refs").write_text("5")
            else:
                self._file("memory.max_usage_in_bytes", "memory.peak").write_text("0")
                self._oom_before = self._oom_kills()

    def peak_mb(self) -> float | None:
        try:
            if self.cgroup is None:
                return _status_kb(self.pid, "VmHWM") / 1024
            return int(self._file("memory.max_usage_in_bytes", "memory.peak")
                       .read_text()) / _MB
        except (OSError, ValueError):
            return None

    def over_limit(self) -> bool:
        """For sampling mode: the tree's resident memory is above the limit now."""
        if self.cgroup is not None or not self.pid:
            return False
        total = sum(_status_kb(p, "VmRSS") for p in [self.pid, *descendants(self.pid)])
        return total / 1024 > self.limit_mb

    def _oom_kills(self) -> int:
        try:
            name = "memory.oom_control" if self.version == 1 else "memory.events"
            for line in (self.cgroup / name).read_text().splitlines():  # type: ignore[operator]
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def oom_killed(self) -> bool:
        """The kernel killed a process of this instance for memory since ``before_request``."""
        return self.cgroup is not None and self._oom_kills() > self._oom_before

    def pids(self) -> list[int]:
        found = [] if self.process_limit is None else self.process_limit.pids()
        if self.cgroup is None:
            return found
        try:
            return found + [int(p) for p in (self.cgroup / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return found

    def close(self) -> None:
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()
        if self.process_limit is not None:
            self.process_limit.close()


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _parents() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, uid) of every process."""
    out: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
            ppid = int(text[text.rindex(")") + 2:].split()[1])
            out[int(entry.name)] = (ppid, entry.stat().st_uid)
        except (OSError, ValueError):
            continue
    return out


def descendants(pid: int, table: dict[int, tuple[int, int]] | None = None) -> list[int]:
    """Every process below ``pid`` (children first level, then theirs...)."""
    table = _parents() if table is None else table
    children: dict[int, list[int]] = {}
    for child, (parent, _) in table.items():
        children.setdefault(parent, []).append(child)
    found, frontier = [], [pid]
    while frontier:
        nxt = [c for p in frontier for c in children.get(p, [])]
        found.extend(nxt)
        frontier = nxt
    return found


def kill_tree(pid: int, *, monitor: MemoryMonitor | None = None, uid: int | None = None,
              include_root: bool = True) -> None:
    """SIGKILL everything below ``pid`` (stopped first so it cannot fork away), everything in
    the instance's cgroup and, with uid separation, every process of ``uid``; then ``pid``."""
    for _ in range(20):
        table = _parents()
        victims = set(descendants(pid, table))
        if monitor is not None:
            victims.update(monitor.pids())
        if uid is not None:
            victims.update(p for p, (_, owner) in table.items() if owner == uid)
        victims.discard(pid)
        victims.discard(os.getpid())
        if not victims:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for victim in victims:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(victim, sig)
    if include_root:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


class Isolation:
    """What one runtime uses to isolate its instances (probed once; thread-safe)."""

    def __init__(self, work_dir: Path, private_dirs: Iterable[Path], *,
                 separate_uids: bool | None = None, cgroups: bool = True,
                 needed: Iterable[Path] = ()) -> None:
        """``needed``: what a worker under another uid must be able to read (the interpreter,
        the standard library, the runtime's own files); uid separation is used only when the
        emulator runs as root and every one of them is world-readable."""
        self.work_dir = Path(work_dir)
        self.private_dirs = [Path(p) for p in private_dirs]
        self.host_secrets = [Path.home() / name for name in HOST_SECRETS]
        if separate_uids is None:
            separate_uids = os.geteuid() == 0 and all(_world_readable(p) for p in needed)
        self.separate_uids = separate_uids
        self._cgroup = _probe_cgroup() if cgroups else None
        self._pids = PidsGroups(self._cgroup.base if self._cgroup is not None
                                and self._cgroup.version == 2 else None) if cgroups else None
        self._uids = itertools.count()
        self._lock = threading.Lock()
        self._readable: list[str] | None = None
        self.instances_dir = self.work_dir / "instances"
        self.instances_dir.mkdir(parents=True, exist_ok=True)
        self.networks = InstanceNetworks(self.work_dir)
        if self.separate_uids:
            self._harden()

    @property
    def memory_mode(self) -> str:
        if self._cgroup is None:
            return "sampled"
        return f"cgroup v{self._cgroup.version}"

    def _harden(self) -> None:
        """DAC for uid separation: private dirs traversable only; their other files private."""
        for private in self.private_dirs:
            if not private.is_dir():
                continue
            private.chmod(0o711)
            for entry in private.iterdir():
                if self.work_dir == entry or _inside(self.work_dir, entry):
                    entry.chmod(0o711)
                    continue
                with contextlib.suppress(OSError):
                    entry.chmod(0o700 if entry.is_dir() else 0o600)
        self.work_dir.chmod(0o711)
        for sub in ("code", "instances"):
            (self.work_dir / sub).mkdir(exist_ok=True)
            (self.work_dir / sub).chmod(0o711)

    def readable(self) -> list[str]:
        """Landlock read roots (computed once: the filesystem minus the private dirs)."""
        with self._lock:
            if self._readable is None:
                self._readable = readable_roots(
                    [*self.private_dirs, self.work_dir, *self.host_secrets])
            return list(self._readable)

    def new_uid(self) -> int | None:
        if not self.separate_uids:
            return None
        with self._lock:
            return UID_BASE + next(self._uids) % UID_COUNT

    def instance_dir(self, instance_id: str, uid: int | None) -> Path:
        """A fresh private directory of the instance (its ``/tmp``)."""
        path = self.instances_dir / instance_id
        path.mkdir(mode=0o700)
        if uid is not None:
            os.chown(path, uid, uid)
        return path

    def memory_monitor(self, instance_id: str, limit_mb: int) -> MemoryMonitor:
        """The instance's memory accounting, with its process limit (pid_limits.py)."""
        monitor = self._memory_monitor(instance_id, limit_mb)
        if self._pids is None:
            return monitor
        v2 = monitor.cgroup if monitor.version == 2 else None
        return monitor.limit_processes(self._pids.limit(instance_id, v2))

    def _memory_monitor(self, instance_id: str, limit_mb: int) -> MemoryMonitor:
        if self._cgroup is None:
            return MemoryMonitor(limit_mb, None, 0)
        group = self._cgroup.base / instance_id
        try:
            group.mkdir()
            limit = str(limit_mb * _MB)
            if self._cgroup.version == 2:
                (group / "memory.max").write_text(limit)
                with contextlib.suppress(OSError):
                    (group / "memory.swap.max").write_text("0")
            else:
                (group / "memory.limit_in_bytes").write_text(limit)
                with contextlib.suppress(OSError):
                    (group / "memory.memsw.limit_in_bytes").write_text(limit)
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            return MemoryMonitor(limit_mb, None, 0)
        return MemoryMonitor(limit_mb, group, self._cgroup.version)

    @staticmethod
    def remove_instance_dir(path: Path) -> None:
        def unlock(function: object, name: str, _exc: object) -> None:
            with contextlib.suppress(OSError):
                os.chmod(os.path.dirname(name), stat.S_IRWXU)
                os.chmod(name, stat.S_IRWXU)
                os.unlink(name) if not os.path.isdir(name) else shutil.rmtree(name, True)

        shutil.rmtree(path, onerror=unlock)

    def close(self) -> None:
        self.networks.close()
        if self._pids is not None:
            self._pids.close()
        if self._cgroup is not None:
            with contextlib.suppress(OSError):
                for child in self._cgroup.base.iterdir():
                    if child.is_dir():
                        child.rmdir()
                self._cgroup.base.rmdir()
