"""Timers and scheduling: one scheduler thread and a bounded worker pool for every execution.

The scheduler fires due timers and delayed deliveries on the pool; otherwise it waits on its
condition until the next ``fire_at`` (or until woken), or, when the
:class:`~deployer.emulator.engine.time_jump.TimeJumpPolicy` allows it, jumps virtual time to the
next due instant. No thread, process or sleep per execution.

It counts the jobs in flight (pool jobs, callers inside :meth:`Scheduler.activity`, tasks out
with their runner, writes waiting to be tried again), which is what "the engine is idle" means
to the time-jump policy. A write the database refuses (a full disk) is tried again after a
real-time back-off (:meth:`Scheduler.after`, :func:`storage_retry_delay`): a due timer keeps firing
until its step is saved, so every execution goes on once the disk has room, without a restart.
What a due timer or a delivery *does* is not known here: the :class:`DueHandler` (the engine)
turns it into a step.

Lock order: the database lock, then the scheduler's condition (jobs in flight, delayed
deliveries, the timer mirror), then the waiters'.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from deployer.emulator.clock import Clock
from deployer.emulator.engine.pool import WorkerPool
from deployer.emulator.engine.schedules import ScheduleIndex
from deployer.emulator.engine.time_jump import Instant, TimeJumpPolicy
from deployer.emulator.engine.timers import TimerIndex
from deployer.emulator.ports import ScheduleKey
from deployer.emulator.store import steps
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import TimerRow
from deployer.fdl.interpreter import Command, Event, Execution

__all__ = ["DueHandler", "Scheduler", "storage_retry_delay"]

log = logging.getLogger("deployer.emulator.engine")
DUE_BATCH = 512  # timers taken per scheduler iteration
RETRY_FIRST, RETRY_MAX = 0.05, 2.0  # real seconds between tries of a write the disk refused


def storage_retry_delay(attempt: int) -> float:
    """Real seconds before try ``attempt + 1`` of a write the database refused: doubling
    from 50 ms, at most 2 s (so work resumes within 2 s of the disk having room again)."""
    return min(RETRY_MAX, RETRY_FIRST * 2.0 ** min(attempt, 16))


class DueHandler(Protocol):
    """What happens when something is due (called on a pool worker)."""

    def fire_timer(self, seq: int, timer_id: str) -> None: ...

    def deliver_event(self, seq: int, event: Event) -> None: ...

    def resync(self) -> None:
        """The timer mirror disagrees with the database: reload it."""
        ...

    def fire_schedule(self, key: ScheduleKey, fire_at: float) -> float | None:
        """Start the scheduled execution due at ``fire_at``; the schedule's next fire."""
        ...


class Scheduler:
    """See the module docstring. :meth:`open` the pool, then :meth:`run` the thread."""

    def __init__(self, db: Database, clock: Clock, policy: TimeJumpPolicy, handler: DueHandler,
                 *, workers: int = 8, on_idle: Callable[[], None] | None = None) -> None:
        self._db = db
        self._on_idle = on_idle  # called (outside the lock) when the last job in flight ends
        self._clock = clock
        self._policy = policy
        self._handler = handler
        self._workers = workers
        self._cond = threading.Condition()
        self._timers = TimerIndex()
        self._schedules = ScheduleIndex()
        self._delayed: list[tuple[float, int, int, Event]] = []
        self._later: list[tuple[float, int, Callable[[], None]]] = []  # (monotonic due, n, job)
        self._seq = itertools.count()
        self.in_flight = 0
        self._pool: WorkerPool | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    # --- lifecycle ----------------------------------------------------------------------------

    def open(self) -> None:
        """Start the worker pool (jobs may be submitted from now on)."""
        self._stopping = False
        self._pool = WorkerPool(self._workers, "flow-worker")

    def run(self) -> None:
        """Start the scheduler thread."""
        self._thread = threading.Thread(target=self._loop, name="flow-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._pool is not None:
            self._pool.shutdown()

    # --- work in flight -----------------------------------------------------------------------

    @contextmanager
    def activity(self) -> Iterator[None]:
        """Count the caller as in-flight work (virtual time does not jump meanwhile)."""
        with self._cond:
            self.in_flight += 1
        try:
            yield
        finally:
            self._job_done()

    def hold(self) -> Callable[[], None]:
        """Count one piece of work done outside the pool (a task being carried out) as in
        flight until the returned function is called; calling it again does nothing."""
        with self._cond:
            self.in_flight += 1
        released = threading.Lock()

        def release() -> None:
            if released.acquire(blocking=False):
                self._job_done()

        return release

    def submit(self, fn: Callable[..., object], *args: Any) -> bool:
        """Run ``fn(*args)`` on the pool, counted in flight; dropped once stopping. Whether
        it was taken."""
        with self._cond:
            if self._stopping or self._pool is None:
                return False
            self.in_flight += 1

        def job() -> None:
            try:
                if not self._stopping:
                    fn(*args)
            except Exception:
                if not self._stopping:  # the database may close under a job at shutdown
                    log.exception("flow engine job failed")
            finally:
                self._job_done()

        try:
            self._pool.submit(job)
        except RuntimeError:  # pool shut down
            self._job_done()
            return False
        return True

    def wait_idle(self, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until no work is in flight (timers not yet
        due are not work); True when none is."""
        with self._cond:
            return self._cond.wait_for(lambda: self.in_flight == 0, timeout)

    def _job_done(self) -> None:
        with self._cond:
            self.in_flight -= 1
            idle = self.in_flight == 0
            if idle or self._timers.firing:
                self._cond.notify_all()
        if idle and self._on_idle is not None:
            self._on_idle()

    # --- the timer mirror and delayed deliveries ------------------------------------------------

    def load_timers(self, rows: Sequence[TimerRow]) -> None:
        """Replace the timer mirror (the caller holds the database lock)."""
        with self._cond:
            self._timers.load(rows)

    def mirror(self, seq: int, ex: Execution, commands: Sequence[Command],
               delay: float) -> None:
        """Mirror one committed step's timers (the caller holds the database lock)."""
        with self._cond:
            if self._timers.apply(seq, ex, commands, delay):
                self._cond.notify_all()

    def load_schedules(self, entries: Sequence[tuple[ScheduleKey, float]]) -> None:
        """Replace the schedule mirror."""
        with self._cond:
            self._schedules.load(entries)
            self._cond.notify_all()

    def set_schedule(self, key: ScheduleKey, at: float | None) -> None:
        """A schedule was created, changed or deleted: it fires next at ``at``."""
        with self._cond:
            self._schedules.set(key, at)
            self._cond.notify_all()

    @contextmanager
    def waiting_for_schedule(self, key: ScheduleKey) -> Iterator[None]:
        """While inside and until schedule ``key`` fires, virtual time may jump to its next
        instant (when the engine is idle)."""
        token = object()
        with self._cond:
            self._schedules.want(key, token)
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._schedules.unwant(key, token)

    @property
    def schedule_count(self) -> int:
        with self._cond:
            return len(self._schedules)

    def forget_timer(self, seq: int, timer_id: str) -> None:
        with self._cond:
            self._timers.remove(seq, timer_id)

    def deliver_at(self, at: float, seq: int, event: Event) -> None:
        """Hand ``event`` to execution ``seq`` once the clock reaches ``at``."""
        with self._cond:
            heapq.heappush(self._delayed, (at, next(self._seq), seq, event))
            self._cond.notify_all()

    def after(self, seconds: float, job: Callable[[], None]) -> None:
        """Run ``job`` on the pool ``seconds`` of real time from now (a write the database
        refused, tried again: the disk frees in real time, whatever the clock). Counted in
        flight meanwhile, so virtual time does not jump past work that is not saved yet."""
        release = self.hold()

        def run() -> None:
            try:
                job()
            finally:
                release()

        with self._cond:
            heapq.heappush(self._later, (time.monotonic() + seconds, next(self._seq), run))
            self._cond.notify_all()

    def wake(self) -> None:
        """Look again at what is due (clock advanced, rows changed)."""
        with self._cond:
            self._cond.notify_all()

    # --- the scheduler thread -----------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
            try:
                if self._dispatch_due():
                    continue
                self._idle_wait()
            except Exception:
                log.exception("flow scheduler iteration failed")
                with self._cond:
                    self._cond.wait(timeout=0.5)

    def _dispatch_due(self) -> bool:
        now = self._clock.now()
        ready: list[tuple[int, Event]] = []
        with self._cond:
            while self._delayed and self._delayed[0][0] <= now:
                _, _, seq, event = heapq.heappop(self._delayed)
                ready.append((seq, event))
            due = self._timers.take_due(now, DUE_BATCH)
            scheduled = self._schedules.take_due(now)
            later = []
            real_now = time.monotonic()
            while self._later and self._later[0][0] <= real_now:
                later.append(heapq.heappop(self._later)[2])
        for job in later:
            self.submit(job)
        for seq, event in ready:
            self.submit(self._handler.deliver_event, seq, event)
        for seq, timer_id in due:
            self.submit(self._fire, seq, timer_id)
        for key, at in scheduled:
            self.submit(self._fire_schedule, key, at)
        return bool(ready or due or scheduled or later)

    def _fire_schedule(self, key: ScheduleKey, at: float) -> None:
        next_at = None
        try:
            next_at = self._handler.fire_schedule(key, at)
        finally:
            with self._cond:
                self._schedules.fired(key, next_at)
                self._cond.notify_all()

    def _fire(self, seq: int, timer_id: str, attempt: int = 0) -> None:
        key = (seq, timer_id)
        try:
            self._handler.fire_timer(seq, timer_id)
        except sqlite3.Error as exc:  # not saved (the disk is full...): fire it again later
            if attempt == 0:
                log.error("timer %s of execution %s could not be saved; trying again: %s",
                          timer_id, seq, exc)
            self.after(storage_retry_delay(attempt), lambda: self._fire(seq, timer_id, attempt + 1))
            return  # still marked firing: not taken again meanwhile
        except BaseException:
            with self._cond:
                self._timers.fired(key)
            raise
        with self._cond:
            self._timers.fired(key)

    def _idle_wait(self) -> None:
        with self._cond:
            if self._stopping:
                return
            jump = self._jump_target()
            if jump is None:
                now = self._clock.now()
                nxt = self._next_instant()
                if nxt is not None and nxt[0] <= now:
                    return
                wait = 0.5
                if nxt is not None and not self._clock.is_virtual:
                    wait = min(max(nxt[0] - now, 0.0), 0.5)
                if self._later:
                    wait = min(wait, max(self._later[0][0] - time.monotonic(), 0.0))
                self._cond.wait(timeout=wait)
                return
        self._jump(*jump)

    def _next_instant(self, *, schedules: bool = True,
                      wanted_only: bool = False) -> Instant | None:
        """The next instant something is due (caller holds the condition); schedule fires
        count too (``wanted_only``: only those somebody waits for, the jump targets)."""
        first: Instant | None = None if self._timers.firing else self._timers.next_timer()
        delayed = self._delayed[0][0] if self._delayed else None
        if delayed is not None and (first is None or delayed <= first[0]):
            first = (delayed, None)
        scheduled = None
        if schedules:
            scheduled = (self._schedules.next_wanted_at() if wanted_only
                         else self._schedules.next_at())
        if scheduled is not None and (first is None or scheduled < first[0]):
            return scheduled, None
        return first

    def _jump_target(self) -> Instant | None:
        """Where virtual time may jump now (caller holds the condition)."""
        if not self._policy.may_jump(self.in_flight):
            return None
        wanted = self._schedules.next_wanted_at() is not None
        skip_pending = self._timers.next_skip_at() is not None or bool(self._delayed) or wanted
        return self._policy.target(self._next_instant(schedules=True, wanted_only=True),
                                   skip_pending=skip_pending)

    def _jump(self, instant: float, key: tuple[int, str] | None) -> None:
        """Advance virtual time to ``instant`` if the engine is still idle and the timer row
        is really there (otherwise the mirror is reloaded)."""
        if not self._policy.can_advance:
            return
        with self._db.transaction() as conn:  # check and remember the instant: one commit
            if key is not None and not steps.timer_exists(conn, *key):
                exists = False
            else:
                exists = True
                with self._cond:
                    if self._jump_target() != (instant, key):
                        return
                    self._policy.advance(instant)
                self._policy.remember(conn)
        if not exists:
            log.debug("timer %s was not in the database: reloading timers", key)
            self._handler.resync()
