"""One emulator per state directory: an exclusive ``flock`` on ``<state_dir>/emulator.lock``.

The lock is the kernel's, held for as long as the emulator's process keeps the file open, so a
process that dies (``kill -9`` included) releases it and no stale file can block a restart. The
holder records its pid and endpoint in the file, so a second emulator on the same directory is
refused with a message naming the first one. The file is never deleted (deleting a lock file
lets two processes lock two different files of the same name).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LOCK_FILE", "START_LOCK_FILE", "StartLock", "StateDirInUse", "StateLock",
           "lock_holder"]

LOCK_FILE = "emulator.lock"
START_LOCK_FILE = "emulator.start.lock"


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int | None
    endpoint: str | None


class StateDirInUse(RuntimeError):
    """Another emulator holds the state directory's lock."""

    def __init__(self, state_dir: Path, holder: Holder) -> None:
        who = f"pid {holder.pid}" if holder.pid else "another process"
        where = f" listening on {holder.endpoint}" if holder.endpoint else ""
        super().__init__(f"state directory {state_dir} is in use by the emulator {who}{where}")
        self.state_dir = state_dir
        self.holder = holder


def lock_holder(state_dir: Path) -> Holder:
    """What the lock file says about its holder (empty when unreadable)."""
    try:
        data = json.loads((state_dir / LOCK_FILE).read_text() or "{}")
    except (OSError, ValueError):
        return Holder(None, None)
    if not isinstance(data, dict):
        return Holder(None, None)
    pid = data.get("pid")
    endpoint = data.get("endpoint")
    return Holder(pid if isinstance(pid, int) else None,
                  endpoint if isinstance(endpoint, str) else None)


class StateLock:
    """The held lock; :meth:`acquire` takes it or raises :class:`StateDirInUse`."""

    def __init__(self, state_dir: Path, fd: int) -> None:
        self.state_dir = state_dir
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, state_dir: Path) -> StateLock:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(state_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateDirInUse(state_dir, lock_holder(state_dir)) from None
        except BaseException:
            os.close(fd)
            raise
        lock = cls(state_dir, fd)
        lock.record(None)
        return lock

    def record(self, endpoint: str | None) -> None:
        """Write this process's pid and ``endpoint`` into the lock file (best effort: a full
        disk must not stop the emulator)."""
        if self._fd is None:
            return
        data = json.dumps({"pid": os.getpid(), "endpoint": endpoint}).encode()
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)
        except OSError:
            pass

    def release(self) -> None:
        """Give the lock up. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class StartLock:
    """Held by a process while it starts the state directory's daemon (``emulator.start.lock``,
    a kernel ``flock`` like :class:`StateLock`, never inherited by the daemon), so commands
    started together start one daemon: the others wait here, then find it running."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, state_dir: Path, timeout: float,
                sleep: Callable[[float], None]) -> StartLock:
        """Wait up to ``timeout`` seconds for the lock; TimeoutError if it stays taken."""
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(state_dir / START_LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return cls(fd)
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"another command is starting the emulator of "
                                           f"{state_dir} and has not finished") from None
                    sleep(0.05)
        except BaseException:
            os.close(fd)
            raise

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> StartLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
