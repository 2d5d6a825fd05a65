"""The CloudFlow engine: drives the deterministic interpreter durably.

* Every happening (start, task result, due timer, stop, callback report) becomes one interpreter
  ``step``. The step's new execution state, its history events, its timers and its tasks are
  committed in ONE transaction (guarded by the execution's ``version``) before any command is
  carried out; then tasks are handed to the worker pool and the scheduler is woken.
* One scheduler thread and a bounded pool (``workers`` threads) serve every execution: the
  scheduler fires due timer rows and delayed deliveries, otherwise it waits on a condition
  until the next ``fire_at`` (or until woken). No thread, process or sleep per execution.
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
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.services.fc_tasks import FunctionInvoker
from deployer.emulator.store import steps
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import FlowRecord
from deployer.fdl import TaskMode, parse_flow
from deployer.fdl.ast import Flow
from deployer.fdl.interpreter import (
    Command,
    CompleteExecution,
    Event,
    Execution,
    InvokeTask,
    StartTimer,
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
    """See the module docstring. ``start()``/``stop()`` follow the server's lifecycle."""

    def __init__(self, db: Database, clock: Clock, invoker: FunctionInvoker, *,
                 workers: int = 8, step_latency: float = 0.0, auto_advance: bool = True) -> None:
        self._db = db
        self._clock = clock
        self._invoker = invoker
        self._workers = workers
        self.step_latency = max(0.0, float(step_latency))
        self.auto_advance = auto_advance
        self._cond = threading.Condition()
        self._in_flight = 0
        self._firing: set[tuple[int, str]] = set()
        self._delayed: list[tuple[float, int, int, Event]] = []
        self._seq = itertools.count()
        self._flows: OrderedDict[str, Flow] = OrderedDict()
        self._flows_lock = threading.Lock()  # never nested with _cond or the database
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
        if row is not None and self._clock.is_virtual and advance_to is not None:
            advance_to(float(row[0]))
        for task in tasks:
            cmd = command_from_json(task.command)
            if isinstance(cmd, InvokeTask) and not task.callback:
                self._submit(self._run_task, task.exec_seq, cmd)
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

    # --- entry points for the execution service -------------------------------------------------

    @contextmanager
    def activity(self) -> Iterator[None]:
        """Count the caller as in-flight work (virtual time does not jump meanwhile)."""
        with self._cond:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def begin(self, flow: FlowRecord, *, name: str, input_text: str, input_value: Any) -> int:
        """Create and start an execution on a snapshot of ``flow``; return its ``seq``.

        Raises ``sqlite3.IntegrityError`` when the name is taken (the caller re-reads)."""
        parsed = self.flow(flow.definition)
        with self.activity():
            with self._db.transaction() as conn:
                now = self._clock.now()
                ex, commands = start(parsed, input=input_value, execution_name=name, now=now,
                                     role_arn=flow.role_arn, flow_name=flow.name,
                                     execution_mode=flow.execution_mode)
                seq = steps.insert_started(
                    conn, account_id=flow.account_id, region=flow.region, flow_name=flow.name,
                    input_text=input_text, definition=flow.definition,
                    environment=flow.environment, ex=ex, commands=commands,
                    timer_delay=self.step_latency)
            self._carry_out(seq, ex, commands)
        return seq

    def deliver(self, seq: int, make_event: EventFactory) -> Execution | None:
        """Apply one event now, in the caller's thread; the new execution (None if gone)."""
        with self.activity():
            return self._step(seq, make_event)

    def wait_ended(self, is_ended: Callable[[], bool], timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_ended()`` (checked on each step)."""
        with self._cond:
            return self._cond.wait_for(is_ended, timeout=timeout)

    def notify(self) -> None:
        """Wake the scheduler and waiters (clock advanced, flow deleted...)."""
        with self._cond:
            self._cond.notify_all()

    def clock_moved(self) -> None:
        """The virtual clock was advanced from outside: remember it, fire what is due."""
        self.persist_clock()
        self.notify()

    def flow(self, definition: str) -> Flow:
        """The parsed flow for a (validated) definition, cached."""
        with self._flows_lock:
            cached = self._flows.get(definition)
            if cached is not None:
                self._flows.move_to_end(definition)
                return cached
        parsed = parse_flow(definition).flow
        if parsed is None:
            raise ValueError("stored definition no longer parses")
        with self._flows_lock:
            self._flows[definition] = parsed
            while len(self._flows) > 256:
                self._flows.popitem(last=False)
        return parsed

    # --- steps ---------------------------------------------------------------------------------

    def _step(self, seq: int, make_event: EventFactory) -> Execution | None:
        try:
            with self._db.transaction() as conn:
                row = conn.execute("SELECT * FROM executions WHERE seq=?", (seq,)).fetchone()
                if row is None or row["status"] != "Running":
                    return None
                ex = Execution.from_json(json.loads(row["state"]))
                new, commands = step(self.flow(row["definition"]), ex,
                                     make_event(self._clock.now()))
                if new.next_event_id == ex.next_event_id and not commands:
                    return new  # nothing happened (unknown task/timer id)
                steps.update_step(conn, seq, row["version"], account_id=row["account_id"],
                                  region=row["region"], ex=new, commands=commands,
                                  timer_delay=self.step_latency)
        except steps.StaleStep:
            log.debug("dropped a stale step of execution %s", seq)
            return None
        self._carry_out(seq, new, commands)
        return new

    def _carry_out(self, seq: int, ex: Execution, commands: list[Command]) -> None:
        self.transitions += 1
        for cmd in commands:
            if isinstance(cmd, InvokeTask) and (
                    cmd.task_mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK
                    or self._invoker.handles(cmd)):
                self._submit(self._run_task, seq, cmd)
        if ex.status.is_terminal or any(isinstance(c, (StartTimer, CompleteExecution))
                                        for c in commands):
            self.notify()

    def _run_task(self, seq: int, cmd: InvokeTask) -> None:
        with self._db.transaction() as conn:
            row = conn.execute("SELECT account_id, region FROM executions WHERE seq=?",
                               (seq,)).fetchone()
        if row is None:
            return
        outcome = self._invoker.run(cmd, row["account_id"], row["region"])
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
            self._step(seq, lambda now: TimerFired(now, timer_id))
            with self._db.transaction() as conn:  # an ignored timer must not fire again
                conn.execute("DELETE FROM timers WHERE exec_seq=? AND timer_id=?",
                             (seq, timer_id))
        finally:
            with self._cond:
                self._firing.discard((seq, timer_id))

    def _submit(self, fn: Callable[..., None], *args: Any) -> None:
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
                with self._cond:
                    self._in_flight -= 1
                    self._cond.notify_all()

        try:
            self._pool.submit(job)
        except RuntimeError:  # pool shut down
            with self._cond:
                self._in_flight -= 1

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
        for seq, event in ready:
            self._submit(self._step, seq, lambda _now, ev=event: ev)
        with self._db.transaction() as conn:
            due = steps.due_timers(conn, now, 512)
        fired = 0
        for timer in due:
            key = (timer.exec_seq, timer.timer_id)
            with self._cond:
                if key in self._firing:
                    continue
                self._firing.add(key)
            self._submit(self._fire, timer.exec_seq, timer.timer_id)
            fired += 1
        return bool(ready) or fired > 0

    def _idle_wait(self) -> None:
        with self._cond:
            if self._stopping:
                return
            with self._db.transaction() as conn:
                first, skip_to = steps.next_timers(conn)
            if self._firing:
                first = None  # those rows are being handled; wait for the jobs
            delayed = self._delayed[0][0] if self._delayed else None
            nxt = min((t for t in (first, delayed) if t is not None), default=None)
            now = self._clock.now()
            if nxt is not None and nxt <= now:
                return
            if self._clock.is_virtual:
                target = min((t for t in (skip_to, delayed) if t is not None), default=None)
                if (self.auto_advance and self._in_flight == 0 and target is not None
                        and nxt is not None):
                    self._advance_to(nxt)
                    return
                self._cond.wait(timeout=0.5)
            else:
                wait = 0.5 if nxt is None else min(max(nxt - now, 0.0), 0.5)
                self._cond.wait(timeout=wait)

    def _advance_to(self, instant: float) -> None:
        advance_to = getattr(self._clock, "advance_to", None)
        if advance_to is None:
            return
        advance_to(instant)
        self.persist_clock()

    def persist_clock(self) -> None:
        """Remember the virtual clock's instant (a restarted daemon never goes back)."""
        if self._clock.is_virtual:
            with self._db.transaction() as conn:
                conn.execute("INSERT OR REPLACE INTO engine_meta VALUES ('clock', ?)",
                             (repr(self._clock.now()),))
