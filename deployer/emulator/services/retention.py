"""Retention: ended executions and invocation logs are deleted once their period is over.

:class:`RetentionSweeper` sweeps every ``retention.sweep_every`` real seconds (and at once
when :meth:`RetentionSweeper.wake` is called: the clock was moved), with cutoffs on the
emulator's clock (virtual or real): executions that ended more than ``retention.executions``
seconds ago go with their history (``store/retention.py``), invocation records older than
``retention.logs`` go too, and when enough of the database is free it is given back to the
file system (and the freed memory to the system). Deletions run in short batches, so API
calls and steps interleave with a sweep.
A sweep that fails (the disk is full) is logged and tried at the next one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.retention import Retention
from deployer.emulator.store.retention import RetentionRepo

__all__ = ["RetentionSweeper", "Swept"]

log = logging.getLogger("deployer.emulator")


@dataclass(frozen=True, slots=True)
class Swept:
    """What one sweep deleted."""

    executions: int = 0
    invocations: int = 0
    pages_freed: int = 0


class RetentionSweeper:
    """Deletes what :class:`Retention` no longer keeps (module docstring); an engine of the
    emulator (``start``/``stop`` with the server)."""

    def __init__(self, repo: RetentionRepo, clock: Clock, retention: Retention) -> None:
        self._repo = repo
        self._clock = clock
        self.retention = retention
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # one sweep at a time
        self._thread: threading.Thread | None = None
        self.total = Swept()

    def start(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="retention", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def wake(self) -> None:
        """Sweep soon (the clock moved)."""
        self._wake.set()

    def sweep(self) -> Swept:
        """Delete now what is past its retention; what was deleted."""
        with self._lock:
            now = self._clock.now()
            executions = invocations = 0
            while not self._stopping.is_set():
                done = self._repo.expire_executions(now - self.retention.executions)
                executions += len(done)
                if not done:
                    break
            while not self._stopping.is_set():
                count = self._repo.expire_invocations(now - self.retention.logs)
                invocations += count
                if not count:
                    break
            freed = self._repo.reclaim() if executions or invocations else 0
            swept = Swept(executions, invocations, freed)
            total = self.total
            self.total = Swept(total.executions + executions,
                               total.invocations + invocations, total.pages_freed + freed)
        if executions or invocations:
            log.info("retention: deleted %d ended executions and %d invocation records",
                     executions, invocations)
            _trim_heap()
        return swept

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self.retention.sweep_every)
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self.sweep()
            except Exception:
                log.exception("retention sweep failed; trying again at the next one")


def _trim_heap() -> None:
    """Give the memory freed by a sweep back to the system (glibc keeps freed heap pages,
    spread over one arena per thread, unless told; elsewhere nothing to do)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass
