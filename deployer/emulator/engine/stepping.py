"""Stepping: every happening (start, task result, due timer, stop, callback report) becomes one
interpreter ``step``, committed before any of its commands is carried out.

A step's new execution state, its history events, its timers and its tasks are written in ONE
transaction by :mod:`deployer.emulator.store.steps`, guarded by the execution's ``version``
(a result that arrives for a stale version is dropped). Right after the COMMIT, still under the
database lock (so in commit order), the live cache and the scheduler's timer mirror are
updated and the waiters told; then the step's tasks go to the worker pool.

``step_latency`` (seconds, default 0) models CloudFlow's per-transition overhead: every task
result and every timer reaches the interpreter that much later (the latency model,
:mod:`deployer.emulator.latency`: 0.1 s by default on the daemon's real clock).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Sequence

from deployer.emulator.clock import Clock
from deployer.emulator.engine import recovery
from deployer.emulator.engine.changes import ExecutionChanges
from deployer.emulator.engine.live import FlowCache, LiveExecution, LiveExecutions
from deployer.emulator.engine.ports import TaskRunner
from deployer.emulator.engine.scheduler import Scheduler
from deployer.emulator.engine.waiters import Waiters
from deployer.emulator.store import steps
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import FlowRecord, TaskRow
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
    command_from_json,
    start,
    step,
)

__all__ = ["EventFactory", "Stepper"]

log = logging.getLogger("deployer.emulator.engine")
EventFactory = Callable[[float], Event]


class Stepper:
    """Runs and commits steps; hands their tasks to the scheduler's pool."""

    def __init__(self, db: Database, clock: Clock, runner: TaskRunner, scheduler: Scheduler,
                 waiters: Waiters, changes: ExecutionChanges, *,
                 step_latency: float = 0.0) -> None:
        self._db = db
        self._clock = clock
        self._runner = runner
        self._scheduler = scheduler
        self._waiters = waiters
        self._changes = changes
        self.step_latency = max(0.0, float(step_latency))
        self.live = LiveExecutions()
        self._flows = FlowCache()

    def flow(self, definition: str) -> Flow:
        """The parsed flow for a (validated) definition, cached."""
        return self.program(definition).flow

    def program(self, definition: str) -> CompiledFlow:
        """The compiled flow for a (validated) definition, cached."""
        return self._flows.get(definition)

    def begin(self, flow: FlowRecord, *, name: str, input_text: str,
              input_value: object) -> Execution:
        """Create and start an execution on a snapshot of ``flow``; return it as committed.

        Raises :class:`~deployer.emulator.store.errors.ExecutionNameTaken` when the name is
        taken."""
        parsed = self.program(flow.definition)
        with self._scheduler.activity():
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

    def step(self, seq: int, make_event: EventFactory, *,
             fired: str | None = None) -> Execution | None:
        """One interpreter step of execution ``seq``, committed before its commands run; the
        new execution (None when it is gone, finished or the step was stale). ``fired`` names
        the timer this step fires: its row is deleted even when the step ignores it."""
        with self._db.lock:
            try:
                with self._db.transaction() as conn:
                    live = self.live.get(seq) or self._load(conn, seq)
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
                self.live.drop(seq)
                log.debug("dropped a stale step of execution %s", seq)
                return None
            except Exception as exc:  # the step cannot run: end its execution (recovery.py)
                self.live.drop(seq)
                self._broken(seq, recovery.fail_broken_step(self._db, self._clock, seq, exc))
                return None
            except BaseException:
                self.live.drop(seq)
                raise
            if live is None:
                if fired is not None:
                    self._scheduler.forget_timer(seq, fired)
                return result
            done = LiveExecution(live.version + 1, new, live.flow, live.account_id, live.region)
            self._committed(seq, done, commands)
        self._carry_out(seq, done, commands)
        return new

    def redispatch(self, tasks: Sequence[TaskRow]) -> None:
        """Invoke again the tasks that were dispatched but whose result was never committed
        (at start: at-least-once, as CloudFlow's Standard mode documents; the caller leaves
        out callback tasks whose invocation completed, :mod:`.recovery`)."""
        for task in tasks:
            cmd = command_from_json(task.command)
            if isinstance(cmd, InvokeTask) and (not task.callback or self._runner.handles(cmd)):
                self._scheduler.submit(self._run_task, task.exec_seq, cmd, task.account_id,
                                       task.region, task.role_arn)

    def _broken(self, seq: int, ended: tuple[int, list[str]] | None) -> None:
        """Bookkeeping after :func:`recovery.fail_broken_step` ended execution ``seq``."""
        if ended is not None:
            version, timers = ended
            for timer_id in timers:
                self._scheduler.forget_timer(seq, timer_id)
            self._changes.committed(seq, version)
        self._waiters.stepped(seq, ended=True)

    def _load(self, conn: sqlite3.Connection, seq: int) -> LiveExecution | None:
        row = steps.load_running(conn, seq)
        if row is None:
            return None
        ex = Execution.from_json(json.loads(row["state"]))
        return LiveExecution(int(row["version"]), ex, self.program(row["definition"]),
                             row["account_id"], row["region"])

    def _committed(self, seq: int, live: LiveExecution, commands: list[Command]) -> None:
        """Bookkeeping right after a step's COMMIT (the caller holds the database lock)."""
        self.live.put(seq, live)
        self._changes.committed(seq, live.version)
        self._scheduler.mirror(seq, live.ex, commands, self.step_latency)

    def _carry_out(self, seq: int, live: LiveExecution, commands: list[Command]) -> None:
        for cmd in commands:
            if isinstance(cmd, InvokeTask) and (
                    cmd.task_mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK
                    or self._runner.handles(cmd)):
                self._scheduler.submit(self._run_task, seq, cmd, live.account_id, live.region,
                                       live.ex.role_arn)
        ended = live.ex.status.is_terminal or any(isinstance(c, CompleteExecution)
                                                  for c in commands)
        self._waiters.stepped(seq, ended=ended)

    def _run_task(self, seq: int, cmd: InvokeTask, account_id: str, region: str,
                  role_arn: str) -> None:
        outcome = self._runner.run(cmd, account_id, region, role_arn)
        if outcome is None:  # a callback task whose function accepted the token
            recovery.mark_invoked(self._db, seq, cmd.task_id)
            return
        output, code, detail = outcome

        def make(now: float) -> Event:
            if code:
                return TaskFailed(now, cmd.task_id, code, detail)
            return TaskSucceeded(now, cmd.task_id, output)

        if self.step_latency <= 0:
            self.step(seq, make)
            return
        at = self._clock.now() + self.step_latency
        self._scheduler.deliver_at(at, seq, make(at))
