"""The CloudFlow engine: one object wiring stepping, scheduling, the time-jump policy and the
waiters (see the package docstring). ``start()``/``stop()`` follow the server's lifecycle."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.engine import recovery
from deployer.emulator.engine.changes import ExecutionChanges
from deployer.emulator.engine.group_commit import EventFactory
from deployer.emulator.engine.scheduler import Scheduler
from deployer.emulator.engine.stepping import Stepper
from deployer.emulator.engine.time_jump import TimeJumpPolicy
from deployer.emulator.engine.waiters import Waiters
from deployer.emulator.ports import ScheduleKey, ScheduleSource, TaskRunner
from deployer.emulator.records import ExecutionLinks, FlowRecord
from deployer.emulator.store import engine_meta, steps
from deployer.emulator.store import recovery as stored_recovery
from deployer.emulator.store.db import Database
from deployer.fdl.interpreter import Event, Execution, TimerFired

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
    waiting_tasks: int = 0  # tasks handed to the runner whose outcome has not come back


class FlowEngine:
    """Drives the deterministic interpreter durably for every execution of one emulator.

    Thread-safe. What callers use: the lifecycle (:meth:`start`, :meth:`stop`), the
    execution service's port (:meth:`begin`, :meth:`deliver`, :meth:`wait_ended`,
    :meth:`watch_changes`, :meth:`resync`), the schedules (:meth:`attach_schedules`,
    :meth:`schedule_changed`, :meth:`wait_for_schedule`), the clock (:meth:`clock_moved`,
    :attr:`auto_advance`), :meth:`stats`; and three parts as they are: :attr:`waiters`
    (callers blocked until an execution ends), :attr:`changes` (wake-ups for live readers)
    and :attr:`flows` (the compiled flows by definition).
    """

    def __init__(self, db: Database, clock: Clock, runner: TaskRunner, *,
                 workers: int = 8, step_latency: float = 0.0, auto_advance: bool = True) -> None:
        self._db = db
        self._policy = TimeJumpPolicy(db, clock, auto_advance=auto_advance)
        self.waiters = Waiters()
        self.changes = ExecutionChanges()
        self._schedule_source: ScheduleSource | None = None
        self._scheduler = Scheduler(db, clock, self._policy, _DueWork(self), workers=workers,
                                    on_idle=self.changes.touched)
        self._stepper = Stepper(db, clock, runner, self._scheduler, self.waiters,
                                self.changes, step_latency=step_latency)
        self.flows = self._stepper.flows

    @property
    def step_latency(self) -> float:
        return self._stepper.step_latency

    @property
    def auto_advance(self) -> bool:
        """Whether virtual time jumps when the engine is idle (:mod:`.time_jump`)."""
        return self._policy.auto_advance

    @auto_advance.setter
    def auto_advance(self, value: bool) -> None:
        self._policy.auto_advance = value
        self._wake()  # switched on: time may jump now

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Restore the virtual clock, re-dispatch unfinished tasks (not callback tasks whose
        invocation completed: they wait for their token), run the first step of executions
        started but not stepped yet, start the scheduler."""
        self._scheduler.open()
        with self._db.transaction() as conn:
            saved = engine_meta.saved_clock(conn)
            tasks = recovery.tasks_to_invoke(steps.pending_tasks(conn),
                                             stored_recovery.invoked_tasks(conn))
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
        self._stepper.queue.close()  # a step queued for a job the pool dropped fails now

    def stats(self) -> EngineStats:
        with self._db.read() as conn:
            running, timers = engine_meta.counts(conn)
        queue = self._stepper.queue
        return EngineStats(running, timers, self._scheduler.in_flight,
                           self._scheduler.schedule_count, queue.steps, queue.batches,
                           self._stepper.tasks_out)

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
        self.changes.wake_all()
        self._wake()

    def clock_moved(self) -> None:
        """The virtual clock was advanced from outside: remember its instant (a restarted
        daemon never goes back), fire what is due, wake live readers."""
        self._policy.persist()
        self._wake()
        self.changes.touched()

    def _wake(self) -> None:
        self._scheduler.wake()
        self.waiters.wake()

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
            return self.waiters.wait(is_done, timeout)

    # --- the execution service's port (emulator/ports.py, ExecutionEngine) ---------------------

    def begin(self, flow: FlowRecord, *, name: str, input_text: str,
              input_value: object, flow_version: str = "", qualifier: str = "",
              links: ExecutionLinks | None = None) -> Execution:
        """Create an execution on a snapshot of ``flow`` and commit it (``Running``, nothing
        run yet); its first step runs from the engine's queue after this returns (and, should
        the daemon die first, when the engine starts again). Returns it as committed.

        Raises :class:`~deployer.emulator.store.errors.ExecutionNameTaken` when the name is
        taken (the caller re-reads). ``flow_version`` and ``qualifier`` record the published
        version and the alias it was started with (ListExecutions' Qualifier filter);
        ``links`` (mock case, parent task, callback token, map run) are committed with it."""
        execution = self._stepper.begin(flow, name=name, input_text=input_text,
                                        input_value=input_value, flow_version=flow_version,
                                        qualifier=qualifier, links=links)
        self.waiters.wake()  # a waiter may be looking for it (a sub-flow, a map run's child)
        return execution

    def post(self, seq: int, make_event: EventFactory) -> None:
        """Queue one event for execution ``seq``; returns at once (tried again while the
        disk refuses it)."""
        self._stepper.post(seq, make_event)



    def on_ended(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(seq)`` on the engine's pool each time an execution ends that may
        have links (``execution_links``: one begun without any is never given them; wired
        once, before :meth:`start`)."""
        self._stepper.end_listeners.append(listener)

    def deliver(self, seq: int, make_event: EventFactory) -> Execution | None:
        """Apply one event now, in the caller's thread; the new execution (None if gone)."""
        with self._scheduler.activity():
            return self._stepper.step(seq, make_event)

    def commit_queued(self, target: int) -> None:
        """Commit queued steps in the calling thread until ``target`` steps are done (see
        :attr:`step_counts`); return at once when an engine thread is committing them."""
        with self._scheduler.activity():
            self._stepper.queue.lead_until(target)

    @property
    def step_counts(self) -> tuple[int, int]:
        """(steps queued, steps done) since the engine started: the steps queued before a
        moment are all committed (or failed) once the second count reaches the first's value
        read at that moment."""
        queue = self._stepper.queue
        return queue.queued, queue.steps

    def wait_idle(self, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until the engine has nothing in flight: the
        steps queued so far are committed and no task is being carried out (a Wait's timer
        that is not due yet is not in flight). True when idle."""
        return self._scheduler.wait_idle(timeout)

    def wait_ended(self, is_ended: Callable[[], bool], timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_ended()``; the predicate is tested
        (outside the engine's locks) at first and whenever an execution begins or ends or
        the engine is woken. Returns its last value."""
        return self.waiters.wait(is_ended, timeout)

    def watch_changes(self, seq: int, after_version: int,
                      wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once execution ``seq`` commits a version above ``after_version``
        (or rows change behind the engine); returns the unsubscribe function. Not engine
        activity: an open subscription never stops virtual time from jumping."""
        return self.changes.watch(seq, after_version, wake)


class _DueWork:
    """What the scheduler's due work becomes (its :class:`DueHandler`): a due timer or a
    delayed delivery is a step, a due schedule starts an execution."""

    def __init__(self, engine: FlowEngine) -> None:
        self._engine = engine

    def fire_schedule(self, key: ScheduleKey, fire_at: float) -> float | None:
        engine = self._engine
        if engine._schedule_source is None:
            return None
        try:
            return engine._schedule_source.fire(key, fire_at)
        except Exception:
            log.exception("schedule %s could not fire", "/".join(key))
            return None
        finally:
            engine.waiters.wake()

    def fire_timer(self, seq: int, timer_id: str) -> None:
        self._engine._stepper.step(seq, lambda now: TimerFired(now, timer_id), fired=timer_id)

    def deliver_event(self, seq: int, event: Event) -> None:
        self._engine._stepper.post(seq, lambda _now: event)  # tried again if refused

    def resync(self) -> None:
        self._engine.resync()
