"""The CloudFlow engine: drives the deterministic interpreter durably.

* Every happening (start, task result, due timer, stop, callback report) becomes one interpreter
  ``step``. The step's new execution state, its history events, its timers and its tasks are
  committed in ONE transaction (guarded by the execution's ``version``) before any command is
  carried out; then tasks are handed to the worker pool and the scheduler is woken.
* One scheduler thread and a bounded pool (``workers`` threads) serve every execution: the
  scheduler fires due timers and delayed deliveries, otherwise it waits on a condition until
  the next ``fire_at`` (or until woken). No thread, process or sleep per execution.
* Hot path without re-reading (``engine_state``): the timer rows are mirrored in memory (the
  scheduler never queries to find what is due) and running executions are cached decoded
  with their committed ``version``, so a step is: interpreter step, one write transaction,
  then bookkeeping done under the database lock in commit order. Waiters of
  :meth:`wait_ended` are woken when an execution ends, and test their predicate outside
  every engine lock.
* Durability: on :meth:`start`, tasks that were dispatched but whose result was never
  committed are invoked again (at-least-once, as CloudFlow's Standard mode documents); timers
  are rows and simply fire when due. A result that arrives for a stale version is dropped.
* Virtual time: with ``auto_advance`` the scheduler jumps the :class:`VirtualClock` whenever the
  engine is exactly idle (no job in flight, nothing due) to the next timer, provided a Wait or
  retry timer (or a delayed delivery) is pending; timeouts alone never make time jump, so a
  callback task is not timed out behind the caller's back.
* ``step_latency`` (seconds, default 0) models the platform's per-transition overhead: every
  task result and every timer reaches the interpreter that much later.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.engine_state import (
    FlowCache,
    LiveExecution,
    LiveExecutions,
    TimerIndex,
)
from deployer.emulator.services.fc_tasks import FunctionInvoker
from deployer.emulator.store import steps
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import FlowRecord
from deployer.fdl import TaskMode
from deployer.fdl.ast import Flow
from deployer.fdl.interpreter import (
    Command,
    CompiledFlow,
    CompleteExecution,
    Event,
    Execution,
    InvokeTask,
    TaskFailed,
    TaskSucceeded,
    TimerFired,
    command_from_json,
    start,
    step,
)

__all__ = ["EngineStats", "FlowEngine"]

log = logging.getLogger("deployer.emulator.engine")
EventFactory = Callable[[float], Event]


@dataclass(frozen=True, slots=True)
class EngineStats:
    running_executions: int
    pending_timers: int
    in_flight: int


class FlowEngine:
    """See the module docstring. ``start()``/``stop()`` follow the server's lifecycle.

    Lock order: the database lock, then ``_cond`` (scheduler state: jobs in flight, delayed
    deliveries, the timer mirror), then ``_ended`` (waiters).
    """

    def __init__(self, db: Database, clock: Clock, invoker: FunctionInvoker, *,
                 workers: int = 8, step_latency: float = 0.0, auto_advance: bool = True) -> None:
        self._db = db
        self._clock = clock
        self._invoker = invoker
        self._workers = workers
        self.step_latency = max(0.0, float(step_latency))
        self.auto_advance = auto_advance
        self._cond = threading.Condition()
        self._ended = threading.Condition()
        self._ended_gen = 0
        self._in_flight = 0
        self._timers = TimerIndex()
        self._live = LiveExecutions()
        self._delayed: list[tuple[float, int, int, Event]] = []
        self._seq = itertools.count()
        self._flows = FlowCache()
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.transitions = 0

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Restore the virtual clock, re-dispatch unfinished tasks, start the scheduler."""
        self._stopping = False
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="flow-worker")
        advance_to = getattr(self._clock, "advance_to", None)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT value FROM engine_meta WHERE key='clock'").fetchone()
            tasks = steps.pending_tasks(conn)
        self.resync()
        if row is not None and self._clock.is_virtual and advance_to is not None:
            advance_to(float(row[0]))
        for task in tasks:
            cmd = command_from_json(task.command)
            if isinstance(cmd, InvokeTask) and not task.callback:
                self._submit(self._run_task, task.exec_seq, cmd, task.account_id, task.region)
        self._thread = threading.Thread(target=self._loop, name="flow-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def stats(self) -> EngineStats:
        with self._db.transaction() as conn:
            running = conn.execute(
                "SELECT COUNT(*) FROM executions WHERE status='Running'").fetchone()[0]
            timers = conn.execute("SELECT COUNT(*) FROM timers").fetchone()[0]
        return EngineStats(int(running), int(timers), self._in_flight)

    def resync(self) -> None:
        """Reload the in-memory mirrors from the database; call after rows changed behind
        the engine (reset, DeleteFlow). Wakes the scheduler and waiters."""
        with self._db.lock:
            with self._db.transaction() as conn:
                rows = steps.all_timers(conn)
            self._live.clear()
            with self._cond:
                self._timers.load(rows)
        self.notify()

    # --- entry points for the execution service -------------------------------------------------

    @contextmanager
    def activity(self) -> Iterator[None]:
        """Count the caller as in-flight work (virtual time does not jump meanwhile)."""
        with self._cond:
            self._in_flight += 1
        try:
            yield
        finally:
            self._job_done()

    def begin(self, flow: FlowRecord, *, name: str, input_text: str,
              input_value: Any) -> Execution:
        """Create and start an execution on a snapshot of ``flow``; return it as committed.

        Raises ``sqlite3.IntegrityError`` when the name is taken (the caller re-reads)."""
        parsed = self.program(flow.definition)
        with self.activity():
            with self._db.lock:
                with self._db.transaction() as conn:
                    now = self._clock.now()
                    ex, commands = start(parsed, input=input_value, execution_name=name,
                                         now=now, role_arn=flow.role_arn, flow_name=flow.name,
                                         execution_mode=flow.execution_mode)
                    seq = steps.insert_started(
                        conn, account_id=flow.account_id, region=flow.region,
                        flow_name=flow.name, input_text=input_text, definition=flow.definition,
                        environment=flow.environment, ex=ex, commands=commands,
                        timer_delay=self.step_latency)
                live = LiveExecution(1, ex, parsed, flow.account_id, flow.region)
                self._committed(seq, live, commands)
            self._carry_out(seq, live, commands)
        return ex

    def deliver(self, seq: int, make_event: EventFactory) -> Execution | None:
        """Apply one event now, in the caller's thread; the new execution (None if gone)."""
        with self.activity():
            return self._step(seq, make_event)

    def wait_ended(self, is_ended: Callable[[], bool], timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_ended()``; the predicate is tested
        (outside the engine's locks) at first and whenever an execution ends or
        :meth:`notify` is called. Returns its last value."""
        deadline = time.monotonic() + timeout
        while True:
            with self._ended:
                generation = self._ended_gen
            if is_ended():
                return True
            with self._ended:
                while self._ended_gen == generation:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._ended.wait(remaining)
                timed_out = self._ended_gen == generation
            if timed_out:
                return is_ended()

    def notify(self) -> None:
        """Wake the scheduler and waiters (clock advanced, flow deleted...)."""
        with self._cond:
            self._cond.notify_all()
        self._wake_waiters()

    def clock_moved(self) -> None:
        """The virtual clock was advanced from outside: remember it, fire what is due."""
        self.persist_clock()
        self.notify()

    def flow(self, definition: str) -> Flow:
        """The parsed flow for a (validated) definition, cached."""
        return self.program(definition).flow

    def program(self, definition: str) -> CompiledFlow:
        """The compiled flow for a (validated) definition, cached."""
        return self._flows.get(definition)

    # --- steps ---------------------------------------------------------------------------------

    def _step(self, seq: int, make_event: EventFactory, *,
              fired: str | None = None) -> Execution | None:
        """One interpreter step, committed before its commands run. ``fired`` names the timer
        this step fires: its row is deleted even when the step ignores it."""
        with self._db.lock:
            try:
                with self._db.transaction() as conn:
                    live = self._live.get(seq) or self._load(conn, seq)
                    if live is not None:
                        new, commands = step(live.flow, live.ex, make_event(self._clock.now()))
                    if live is None or (new.next_event_id == live.ex.next_event_id
                                        and not commands):
                        if fired is not None:  # an ignored timer must not fire again
                            steps.delete_timer(conn, seq, fired)
                        result = None if live is None else new
                        live = None
                    else:
                        steps.update_step(conn, seq, live.version, account_id=live.account_id,
                                          region=live.region, ex=new, commands=commands,
                                          timer_delay=self.step_latency)
            except steps.StaleStep:
                self._live.drop(seq)
                log.debug("dropped a stale step of execution %s", seq)
                return None
            except BaseException:
                self._live.drop(seq)
                raise
            if live is None:
                if fired is not None:
                    with self._cond:
                        self._timers.remove(seq, fired)
                return result
            done = LiveExecution(live.version + 1, new, live.flow, live.account_id, live.region)
            self._committed(seq, done, commands)
        self._carry_out(seq, done, commands)
        return new

    def _load(self, conn: Any, seq: int) -> LiveExecution | None:
        row = steps.load_running(conn, seq)
        if row is None:
            return None
        ex = Execution.from_json(json.loads(row["state"]))
        return LiveExecution(int(row["version"]), ex, self.program(row["definition"]),
                             row["account_id"], row["region"])

    def _committed(self, seq: int, live: LiveExecution, commands: list[Command]) -> None:
        """Bookkeeping right after a step's COMMIT (the caller holds the database lock)."""
        self._live.put(seq, live)
        with self._cond:
            if self._timers.apply(seq, live.ex, commands, self.step_latency):
                self._cond.notify_all()

    def _carry_out(self, seq: int, live: LiveExecution, commands: list[Command]) -> None:
        self.transitions += 1
        for cmd in commands:
            if isinstance(cmd, InvokeTask) and (
                    cmd.task_mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK
                    or self._invoker.handles(cmd)):
                self._submit(self._run_task, seq, cmd, live.account_id, live.region)
        if live.ex.status.is_terminal or any(isinstance(c, CompleteExecution)
                                             for c in commands):
            self._wake_waiters()

    def _wake_waiters(self) -> None:
        with self._ended:
            self._ended_gen += 1
            self._ended.notify_all()

    def _run_task(self, seq: int, cmd: InvokeTask, account_id: str, region: str) -> None:
        outcome = self._invoker.run(cmd, account_id, region)
        if outcome is None:  # a callback task whose function accepted the token
            return
        output, code, detail = outcome

        def make(now: float) -> Event:
            if code:
                return TaskFailed(now, cmd.task_id, code, detail)
            return TaskSucceeded(now, cmd.task_id, output)

        self._deliver_later(seq, make)

    def _deliver_later(self, seq: int, make: EventFactory) -> None:
        if self.step_latency <= 0:
            self._step(seq, make)
            return
        at = self._clock.now() + self.step_latency
        with self._cond:
            heapq.heappush(self._delayed, (at, next(self._seq), seq, make(at)))
            self._cond.notify_all()

    def _fire(self, seq: int, timer_id: str) -> None:
        try:
            self._step(seq, lambda now: TimerFired(now, timer_id), fired=timer_id)
        finally:
            with self._cond:
                self._timers.fired((seq, timer_id))

    def _submit(self, fn: Callable[..., object], *args: Any) -> None:
        with self._cond:
            if self._stopping or self._pool is None:
                return
            self._in_flight += 1

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

    def _job_done(self) -> None:
        with self._cond:
            self._in_flight -= 1
            if self._in_flight == 0 or self._timers.firing:
                self._cond.notify_all()

    # --- scheduler -----------------------------------------------------------------------------

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
            due = self._timers.take_due(now, 512)
        for seq, event in ready:
            self._submit(self._step, seq, lambda _now, ev=event: ev)
        for seq, timer_id in due:
            self._submit(self._fire, seq, timer_id)
        return bool(ready or due)

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
                self._cond.wait(timeout=wait)
                return
        self._jump(*jump)

    def _next_instant(self) -> tuple[float, tuple[int, str] | None] | None:
        """The next instant something is due: (fire_at, timer key or None for a delivery)."""
        first = None if self._timers.firing else self._timers.next_timer()
        delayed = self._delayed[0][0] if self._delayed else None
        if delayed is not None and (first is None or delayed <= first[0]):
            return delayed, None
        return first

    def _jump_target(self) -> tuple[float, tuple[int, str] | None] | None:
        """Where virtual time may jump now (caller holds ``_cond``): the engine is exactly
        idle, and a Wait/retry timer or a delayed delivery is pending."""
        if not (self._clock.is_virtual and self.auto_advance and self._in_flight == 0):
            return None
        nxt = self._next_instant()
        if nxt is None or nxt[0] <= self._clock.now():
            return None
        if self._timers.next_skip_at() is None and not self._delayed:
            return None
        return nxt

    def _jump(self, instant: float, key: tuple[int, str] | None) -> None:
        """Advance virtual time to ``instant`` if the engine is still idle and the timer row
        is really there (otherwise the mirror is reloaded)."""
        advance_to = getattr(self._clock, "advance_to", None)
        if advance_to is None:
            return
        with self._db.transaction() as conn:  # check and remember the instant: one commit
            if key is not None and not steps.timer_exists(conn, *key):
                exists = False
            else:
                exists = True
                with self._cond:
                    if self._jump_target() != (instant, key):
                        return
                    advance_to(instant)
                conn.execute("INSERT OR REPLACE INTO engine_meta VALUES ('clock', ?)",
                             (repr(self._clock.now()),))
        if not exists:
            log.debug("timer %s was not in the database: reloading timers", key)
            self.resync()

    def persist_clock(self) -> None:
        """Remember the virtual clock's instant (a restarted daemon never goes back)."""
        if self._clock.is_virtual:
            with self._db.transaction() as conn:
                conn.execute("INSERT OR REPLACE INTO engine_meta VALUES ('clock', ?)",
                             (repr(self._clock.now()),))
