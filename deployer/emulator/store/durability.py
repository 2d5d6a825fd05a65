"""Group commit to disk: a committed transaction becomes durable before it is acknowledged.

SQLite runs in WAL mode with ``synchronous=NORMAL``: a COMMIT appends the transaction's pages
to ``emulator.db-wal`` and returns without an fsync; SQLite itself syncs the WAL before every
checkpoint and the database file after it, so the files stay consistent, but the last commits
before a power cut are lost. :class:`WalSyncer` closes that gap outside the database lock:
whoever must acknowledge a commit asks for it to be durable (:meth:`WalSyncer.sync`, or
:meth:`WalSyncer.when_durable` without a thread), and one syncer thread fsyncs the WAL file
once for every commit made before that fsync began. Commits made while an fsync runs wait for
the next one, so N concurrent acknowledgements cost about one fsync, not N (group commit); no
read or write waits for the disk while holding the database lock.

Before an fsync the syncer lets the commits that are about to come join it:

* after an fsync that served more than one acknowledgement (a busy emulator) it gathers
  commits while they keep coming (up to :data:`GATHER_MAX`);
* for a lone acknowledgement it waits, up to :data:`SETTLE_MAX`, while the engine says work
  already under way will commit within moments (:meth:`WalSyncer.settle_on`: a StartExecution's
  first step, the instant states that follow it). One fsync then covers the start and that
  tail, and the engine's step is not competing with the syncer for the interpreter while the
  answer waits.

Commits nobody waits for (a timer's step, an FC task's result) are carried by the next
acknowledgement's fsync, and at the latest :data:`IDLE_SYNC` seconds after they were made
(a background sync, as PostgreSQL's WAL writer bounds what ``synchronous_commit=off`` may
lose): what a read shows is never more than that ahead of the disk.

Commits are numbered (:meth:`WalSyncer.committed`, called under the database lock right after
each COMMIT). ``durable=False`` (a throwaway state directory, ``mock_cloud()``'s temporary one)
makes every commit count as durable at once: nothing outlives the process there anyway.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["WalSyncer"]

log = logging.getLogger("deployer.emulator")

_Wake = Callable[[], None]
GATHER = 0.0005  # seconds the syncer waits for one more commit before an fsync
GATHER_MAX = 0.004  # seconds it gathers commits at most (group commit)
SETTLE_MAX = 0.004  # seconds a lone acknowledgement's fsync waits for the engine's work
IDLE_SYNC = 0.2  # seconds a commit nobody waits for stays unsynced at most


class WalSyncer:
    """Makes numbered commits of the database at ``path`` durable (module docstring)."""

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = Path(path)
        self.wal = self.path.with_name(self.path.name + "-wal")
        self.durable = durable
        self._cond = threading.Condition()
        self.commits = 0  # transactions committed (numbered from 1)
        self.synced = 0  # every commit up to this number is on disk
        self.syncs = 0  # fsyncs done (statistics and tests)
        self._wanted = 0  # the highest commit somebody waits for
        self._asked = 0  # acknowledgements asked for since the last fsync began
        self._crowded = False  # the last fsync served more than one acknowledgement
        self._callbacks: list[tuple[int, _Wake]] = []
        self._error: OSError | None = None  # the last fsync's failure (raised to waiters)
        self._dir_synced = False
        self._thread: threading.Thread | None = None
        self._closed = False
        self._busy: Callable[[], bool] = _idle  # the engine's work about to commit
        self.idle_sync = IDLE_SYNC

    def settle_on(self, busy: Callable[[], bool]) -> None:
        """Before a lone acknowledgement's fsync, wait (up to :data:`SETTLE_MAX`) while
        ``busy()`` says work under way will commit soon; whoever does that work calls
        :meth:`settled` when it stops."""
        self._busy = busy

    def settled(self) -> None:
        """The work :meth:`settle_on` watches has stopped: an fsync waiting for it starts."""
        with self._cond:
            self._cond.notify_all()

    def committed(self) -> int:
        """Count one more commit; its number. Call right after the COMMIT, under the
        database lock (so numbers follow commit order)."""
        self.commits += 1
        if not self.durable:
            self.synced = self.commits
        elif self._thread is None:
            with self._cond:
                if self._thread is None:
                    self._start()
        return self.commits

    def is_durable(self, upto: int) -> bool:
        return self.synced >= upto

    @property
    def failure(self) -> OSError | None:
        """The last fsync's error, until a later one succeeds."""
        return self._error

    def sync(self, upto: int | None = None) -> None:
        """Block until commit ``upto`` (default: every commit so far) is durable. Raises the
        :class:`OSError` of a failed fsync."""
        target = self.commits if upto is None else upto
        if self.synced >= target:
            return
        with self._cond:
            self._want(target)
            while self.synced < target:
                if self._error is not None:
                    raise self._error
                self._cond.wait(1.0)

    def when_durable(self, upto: int, wake: _Wake) -> Callable[[], None]:
        """Call ``wake()`` (from the syncer thread, or at once) when commit ``upto`` is
        durable or its fsync failed; returns the unsubscribe function."""
        entry = (upto, wake)
        with self._cond:
            if self.synced < upto:
                self._callbacks.append(entry)
                self._want(upto)  # tried again, even after a failed fsync
                return lambda: self._forget(entry)
        wake()
        return _nothing

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _forget(self, entry: tuple[int, _Wake]) -> None:
        with self._cond:
            if entry in self._callbacks:
                self._callbacks.remove(entry)

    def _want(self, upto: int) -> None:
        """Ask the syncer thread for commit ``upto`` (caller holds the condition)."""
        self._error = None
        self._asked += 1
        if upto > self._wanted:
            self._wanted = upto
            if self._thread is None:
                self._start()
            self._cond.notify_all()

    def _start(self) -> None:
        """Start the syncer thread (caller holds the condition)."""
        self._thread = threading.Thread(target=self._run, name="wal-syncer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            if not self._await_work():
                return
            if self._crowded:
                self._gather()
            else:
                self._settle()
            with self._cond:
                target = self.commits  # every commit so far: their pages are in the WAL
                self._crowded, self._asked = self._asked > 1, 0
            error = self._fsync()
            with self._cond:
                if error is None:
                    self.synced = max(self.synced, target)
                    self.syncs += 1
                else:
                    self._error = error
                    self._wanted = self.synced
                woken = [wake for upto, wake in self._callbacks
                         if upto <= self.synced or error is not None]
                self._callbacks = [(upto, wake) for upto, wake in self._callbacks
                                   if upto > self.synced and error is None]
                self._cond.notify_all()
            for wake in woken:
                try:
                    wake()
                except Exception:
                    log.exception("a durability wake-up failed")

    def _await_work(self) -> bool:
        """Wait until a commit is wanted durable, or commits nobody asked for have waited
        :attr:`idle_sync` seconds (looked at every ``idle_sync`` seconds, so at most twice
        that); False once closed."""
        unsynced_since: float | None = None
        with self._cond:
            while self._wanted <= self.synced and not self._closed:
                if self._error is None and self.commits > self.synced:
                    now = time.monotonic()
                    unsynced_since = unsynced_since or now
                    left = unsynced_since + self.idle_sync - now
                    if left <= 0:
                        break
                    self._cond.wait(left)
                else:
                    unsynced_since = None
                    self._cond.wait(self.idle_sync)
            return not self._closed

    def _gather(self) -> None:
        """Wait while commits keep coming (every :data:`GATHER` seconds at least one more,
        for :data:`GATHER_MAX` at most), so that they share the coming fsync: a busy emulator
        fsyncs once for many acknowledgements (only called when the last fsync served more
        than one)."""
        deadline = time.monotonic() + GATHER_MAX
        seen = self.commits
        while True:
            time.sleep(GATHER)
            if self.commits == seen or time.monotonic() >= deadline:
                return
            seen = self.commits

    def _settle(self) -> None:
        """Wait while the engine's work under way is about to commit (for
        :data:`SETTLE_MAX` at most), so that the coming fsync covers it too."""
        deadline = time.monotonic() + SETTLE_MAX
        with self._cond:
            while not self._closed and self._busy():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)

    def _fsync(self) -> OSError | None:
        """fsync the WAL (and, the first time, the directory holding it); the error if any.
        A missing WAL (checkpointed and removed at close) leaves the database file to sync."""
        try:
            try:
                fd = os.open(self.wal, os.O_RDONLY)
            except FileNotFoundError:
                fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fdatasync(fd)  # the data and the size, not the times (as SQLite does)
            finally:
                os.close(fd)
            if not self._dir_synced:
                fd = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                self._dir_synced = True
        except OSError as exc:
            log.error("the emulator's database could not be synced to disk: %s", exc)
            return exc
        return None


def _nothing() -> None:
    return None


def _idle() -> bool:
    return False
