"""The CloudFlow engine: one object wiring stepping, scheduling, the time-jump policy and the
waiters (see the package docstring). ``start()``/``stop()`` follow the server's lifecycle."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.engine import recovery
from deployer.emulator.engine.changes import ExecutionChanges
from deployer.emulator.engine.ports import ScheduleKey, ScheduleSource, TaskRunner
from deployer.emulator.engine.scheduler import Scheduler
from deployer.emulator.engine.stepping import EventFactory, Stepper
from deployer.emulator.engine.time_jump import TimeJumpPolicy
from deployer.emulator.engine.waiters import Waiters
from deployer.emulator.records import FlowRecord
from deployer.emulator.store import engine_meta, steps
from deployer.emulator.store.db import Database
from deployer.fdl.interpreter import Event, Execution, TimerFired
from deployer.fdl.syntax.ast import Flow

__all__ = ["EngineStats", "FlowEngine"]

log = logging.getLogger("deployer.emulator.engine")


@dataclass(frozen=True, slots=True)
class EngineStats:
    running_executions: int
    pending_timers: int
    in_flight: int
    schedules: int = 0  # enabled schedules waiting for their next fire
    steps_committed: int = 0  # steps written since the engine started
    step_transactions: int = 0  # transactions they took (group commit: fewer than steps)


class FlowEngine:
    """Drives the deterministic interpreter durably for every execution of one emulator.

    Thread-safe. ``auto_advance`` (virtual clock only) may be switched at any time; see
    :mod:`deployer.emulator.engine.time_jump`.
    """

    def __init__(self, db: Database, clock: Clock, runner: TaskRunner, *,
                 workers: int = 8, step_latency: float = 0.0, auto_advance: bool = True) -> None:
        self._db = db
        self._policy = TimeJumpPolicy(db, clock, auto_advance=auto_advance)
        self._waiters = Waiters()
        self._changes = ExecutionChanges()  # wake-ups for live readers (the console)
        self._scheduler = Scheduler(db, clock, self._policy, self, workers=workers,
                                    on_idle=self._changes.touched)
        self._stepper = Stepper(db, clock, runner, self._scheduler, self._waiters,
                                self._changes, step_latency=step_latency)
        self._schedule_source: ScheduleSource | None = None

    @property
    def step_latency(self) -> float:
        return self._stepper.step_latency

    @property
    def auto_advance(self) -> bool:
        return self._policy.auto_advance

    @auto_advance.setter
    def auto_advance(self, value: bool) -> None:
        self._policy.auto_advance = value

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Restore the virtual clock, re-dispatch unfinished tasks (not callback tasks whose
        invocation completed: they wait for their token), run the first step of executions
        started but not stepped yet, start the scheduler."""
        self._scheduler.open()
        with self._db.transaction() as conn:
            saved = engine_meta.saved_clock(conn)
            tasks = recovery.tasks_to_invoke(steps.pending_tasks(conn),
                                             recovery.invoked_tasks(conn))
            unstarted = steps.unstarted(conn)
        self.resync(reload_schedules=False)
        self._policy.restore(saved)
        if self._schedule_source is not None:  # after the clock is where it was
            self._scheduler.load_schedules(self._schedule_source.pending(after_downtime=True))
        self._stepper.redispatch(tasks)
        self._stepper.resume_unstarted(unstarted)  # answered starts whose first step was lost
        self._scheduler.run()

    def stop(self) -> None:
        self._scheduler.stop()

    def stats(self) -> EngineStats:
        with self._db.read() as conn:
            running, timers = engine_meta.counts(conn)
        queue = self._stepper.queue
        return EngineStats(running, timers, self._scheduler.in_flight,
                           self._scheduler.schedule_count, queue.steps, queue.batches)

    def resync(self, *, reload_schedules: bool = True) -> None:
        """Reload the in-memory mirrors from the database; call after rows changed behind
        the engine (reset, DeleteFlow). Wakes the scheduler and waiters."""
        with self._db.lock:
            with self._db.transaction() as conn:
                rows = steps.all_timers(conn)
            self._stepper.live.clear()
            self._scheduler.load_timers(rows)
        if reload_schedules and self._schedule_source is not None:
            self._scheduler.load_schedules(self._schedule_source.pending(after_downtime=False))
        self._changes.wake_all()
        self.notify()

    # --- schedules ----------------------------------------------------------------------------

    def attach_schedules(self, source: ScheduleSource) -> None:
        """Fire the schedules of ``source`` (wired once, before :meth:`start`)."""
        self._schedule_source = source

    def schedule_changed(self, key: ScheduleKey, next_fire_at: float | None) -> None:
        """A schedule was created, updated or deleted: it fires next at ``next_fire_at``."""
        self._scheduler.set_schedule(key, next_fire_at)

    def wait_for_schedule(self, key: ScheduleKey, is_done: Callable[[], bool],
                          timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_done()`` (tested whenever a
        schedule fired or an execution ended). Until schedule ``key`` fires, virtual time may
        jump to its next instant when the engine is idle (a schedule instant is otherwise no
        jump target: it recurs forever)."""
        if is_done():  # before wanting a fire: a wanted fire lets time jump
            return True
        with self._scheduler.waiting_for_schedule(key):
            self._scheduler.wake()
            return self._waiters.wait(is_done, timeout)

    # --- entry points for the execution service -------------------------------------------------

    def begin(self, flow: FlowRecord, *, name: str, input_text: str,
              input_value: object, flow_version: str = "", qualifier: str = "") -> Execution:
        """Create an execution on a snapshot of ``flow`` and commit it (``Running``, nothing
        run yet); its first step runs from the engine's queue after this returns (and, should
        the daemon die first, when the engine starts again). Returns it as committed.

        Raises :class:`~deployer.emulator.store.errors.ExecutionNameTaken` when the name is
        taken (the caller re-reads). ``flow_version`` and ``qualifier`` record the published
        version and the alias it was started with (ListExecutions' Qualifier filter)."""
        return self._stepper.begin(flow, name=name, input_text=input_text,
                                   input_value=input_value, flow_version=flow_version,
                                   qualifier=qualifier)

    def deliver(self, seq: int, make_event: EventFactory) -> Execution | None:
        """Apply one event now, in the caller's thread; the new execution (None if gone)."""
        with self._scheduler.activity():
            return self._stepper.step(seq, make_event)

    def flow(self, definition: str) -> Flow:
        """The parsed flow for a (validated) definition, from the engine's cache."""
        return self._stepper.flow(definition)

    def wait_ended(self, is_ended: Callable[[], bool], timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_ended()``; the predicate is tested
        (outside the engine's locks) at first and whenever an execution ends or
        :meth:`notify` is called. Returns its last value."""
        return self._waiters.wait(is_ended, timeout)

    def watch_changes(self, seq: int, after_version: int,
                      wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once execution ``seq`` commits a version above ``after_version``
        (or rows change behind the engine); returns the unsubscribe function. Not engine
        activity: an open subscription never stops virtual time from jumping."""
        return self._changes.watch(seq, after_version, wake)

    @property
    def facts_generation(self) -> int:
        """Moves on whenever :meth:`stats` or the clock may read differently: a step was
        committed, the clock moved, the last job in flight finished."""
        return self._changes.generation

    def watch_facts(self, after_generation: int,
                    wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once :attr:`facts_generation` is above ``after_generation``;
        returns the unsubscribe function (no engine activity, like :meth:`watch_changes`)."""
        return self._changes.watch_engine(after_generation, wake)

    def wait_for_waiters(self, count: int, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``count`` callers are blocked in
        :meth:`wait_ended`; True when they are."""
        return self._waiters.wait_parked(count, timeout)

    def notify(self) -> None:
        """Wake the scheduler and waiters (clock advanced, flow deleted...)."""
        self._scheduler.wake()
        self._waiters.wake()

    def clock_moved(self) -> None:
        """The virtual clock was advanced from outside: remember it, fire what is due."""
        self.persist_clock()
        self.notify()
        self._changes.touched()

    def persist_clock(self) -> None:
        """Remember the virtual clock's instant (a restarted daemon never goes back)."""
        self._policy.persist()

    # --- the scheduler's DueHandler ---------------------------------------------------------------

    def fire_schedule(self, key: ScheduleKey, fire_at: float) -> float | None:
        if self._schedule_source is None:
            return None
        try:
            return self._schedule_source.fire(key, fire_at)
        except Exception:
            log.exception("schedule %s could not fire", "/".join(key))
            return None
        finally:
            self._waiters.wake()

    def fire_timer(self, seq: int, timer_id: str) -> None:
        self._stepper.step(seq, lambda now: TimerFired(now, timer_id), fired=timer_id)

    def deliver_event(self, seq: int, event: Event) -> None:
        self._stepper.step(seq, lambda _now: event)
