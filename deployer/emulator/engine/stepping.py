"""Stepping: every happening (start, task result, due timer, stop, callback report) becomes one
interpreter ``step``, committed before any of its commands is carried out.

StartExecution commits only the new execution's row (:meth:`Stepper.begin`: one small
transaction, status ``Running``, no state run yet) and queues its first step, ``Started``,
which runs after the caller has its answer. Steps go through the :mod:`.group_commit` queue:
the steps ready at the same moment are computed one after the other and written in ONE
transaction by :mod:`deployer.emulator.store.steps` (each step's new state, history events,
timers and tasks together, guarded by the execution's ``version``: a result that arrives for a
stale version is dropped). Right after the COMMIT, still under the database lock (so in commit
order), the live cache and the scheduler's timer mirror are updated and the waiters told; then
the steps' tasks are handed to the :class:`~deployer.emulator.ports.TaskRunner`, which answers
later from its own threads: a task's outcome is one more step, and no engine thread ever waits
on a function. An execution whose first step was not committed when the daemon died is started
when the engine starts again (:meth:`Stepper.resume_unstarted`).

``step_latency`` (seconds, default 0) models CloudFlow's per-transition overhead: every task
result and every timer reaches the interpreter that much later (the latency model,
:mod:`deployer.emulator.latency`: 0.1 s by default on the daemon's real clock).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.engine import recovery
from deployer.emulator.engine.changes import ExecutionChanges
from deployer.emulator.engine.group_commit import EventFactory, PendingStep, StepQueue
from deployer.emulator.engine.live import FlowCache, LiveExecution, LiveExecutions
from deployer.emulator.engine.scheduler import Scheduler, storage_retry_delay
from deployer.emulator.engine.waiters import Waiters
from deployer.emulator.ports import TaskOutcome, TaskRequest, TaskRunner
from deployer.emulator.records import ExecutionLinks, FlowRecord
from deployer.emulator.store import link_repos, steps
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import TaskRow
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import (
    CancelTask,
    Command,
    CompiledFlow,
    CompleteExecution,
    Event,
    Execution,
    InvokeTask,
    Started,
    TaskFailed,
    TaskSucceeded,
    command_from_json,
    new_execution,
    step,
)
from deployer.fdl.interpreter.runtime import INTERNAL_ERROR_CODE

__all__ = ["Stepper"]

log = logging.getLogger("deployer.emulator.engine")


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
        self.flows = FlowCache()
        self.queue = StepQueue(self._run_batch, self._scheduler.submit)
        # a lone acknowledgement's fsync waits for the steps under way (the instant states
        # after a start) and covers them too
        if db.syncer.durable:
            db.syncer.settle_on(lambda: self.queue.busy)
            self.queue.on_idle = db.syncer.settled
        self._tasks_lock = threading.Lock()
        self.tasks_out = 0  # tasks handed to the runner whose outcome has not come back
        self.end_listeners: list[Callable[[int], None]] = []  # called as executions end

    def program(self, definition: str) -> CompiledFlow:
        """The compiled flow for a (validated) definition, cached."""
        return self.flows.get(definition)

    def begin(self, flow: FlowRecord, *, name: str, input_text: str,
              input_value: object, flow_version: str = "", qualifier: str = "",
              links: ExecutionLinks | None = None) -> Execution:
        """Create an execution of a snapshot of ``flow`` and commit it, not yet started
        (``Running``, no event); its first step is queued and runs after this returns.
        ``flow_version``/``qualifier``: the published version and alias it was started with;
        ``links`` (mock case, parent task...) are written in the same transaction.

        Raises :class:`~deployer.emulator.store.errors.ExecutionNameTaken` when the name is
        taken."""
        parsed = self.program(flow.definition)
        with self._scheduler.activity():
            with self._db.lock:
                with self._db.transaction() as conn:
                    ex = new_execution(parsed, input=input_value, execution_name=name,
                                       now=self._clock.now(), role_arn=flow.role_arn,
                                       flow_name=flow.name, execution_mode=flow.execution_mode)
                    seq = steps.insert_execution(
                        conn, account_id=flow.account_id, region=flow.region,
                        flow_name=flow.name, input_text=input_text, definition=flow.definition,
                        environment=flow.environment, ex=ex, flow_version=flow_version,
                        qualifier=qualifier)
                    if links is not None:
                        link_repos.insert_links(conn, seq, links)
                linked = links is not None and not links.empty
                self.live.put(seq, LiveExecution(1, ex, parsed, flow.account_id, flow.region,
                                                 linked))
                self._changes.committed(seq, 1)
            self.queue.post(seq, Started)
        return ex

    def resume_unstarted(self, seqs: Sequence[int]) -> None:
        """Queue the first step of executions committed but never started (the daemon
        stopped between StartExecution's answer and that step)."""
        for seq in seqs:
            self.queue.post(seq, Started)

    def step(self, seq: int, make_event: EventFactory, *,
             fired: str | None = None) -> Execution | None:
        """One interpreter step of execution ``seq``, committed (possibly with other ready
        steps, in one transaction) before its commands run; the new execution (None when it
        is gone, finished or the step was stale). ``fired`` names the timer this step fires:
        its row is deleted even when the step ignores it. Blocks until committed; the calling
        thread's next answer then acknowledges that commit (:meth:`Database.acknowledges`)."""
        item = self.queue.call(seq, make_event, fired=fired)
        self._db.acknowledges(item.commit)
        return item.result

    def post(self, seq: int, make_event: EventFactory) -> None:
        """Queue one step of execution ``seq`` without waiting for it."""
        self.queue.post(seq, make_event)

    def _run_batch(self, batch: Sequence[PendingStep]) -> None:
        """Compute every step of ``batch`` (outside the database lock: one leader at a time
        computes steps, so only its own writes move a version), write them all in one
        transaction, COMMIT, then do the bookkeeping (in commit order) and carry out their
        commands. If the transaction fails, each step is tried alone, so only the failing one
        reports an error; a step that cannot be written for a reason other than the database's
        ends its execution Failed, as one that cannot be computed does."""
        overlay: dict[int, LiveExecution | None] = {}
        planned = [(item, self._plan(item, overlay)) for item in batch]
        with self._db.lock:
            try:
                with self._db.transaction() as conn:
                    for item, outcome in planned:
                        self._write(conn, item, outcome)
            except Exception as exc:
                for item in batch:
                    self.live.drop(item.seq)
                if len(batch) > 1:
                    for item in batch:
                        self._run_batch((item,))
                    return
                if not isinstance(exc, sqlite3.Error):  # it would fail again: end the execution
                    self._end_broken(batch[0], exc)
                elif batch[0]._done is None:  # nobody waits: try again once the disk has room
                    self._retry(batch[0], exc)
                else:  # the database refused (full, read-only): the caller hears of it
                    batch[0].error = exc
                batch[0].finish()
                return
            commit = self._db.commits
            for item, outcome in planned:
                item.commit = commit
                if outcome.broken is not None:
                    self._end_broken(item, outcome.broken)
                elif outcome.stale:
                    self.live.drop(item.seq)
                elif outcome.live is not None:
                    self._committed(item.seq, outcome.live, outcome.commands)
                elif item.fired is not None:
                    self._scheduler.forget_timer(item.seq, item.fired)
        for item, outcome in planned:
            if outcome.live is not None and not outcome.stale:
                self._carry_out(item.seq, outcome.live, outcome.commands)
            item.result = None if outcome.stale else outcome.result
            item.finish()

    def _retry(self, item: PendingStep, exc: sqlite3.Error) -> None:
        """Post step ``item`` again after a back-off: the database refused it (a full disk),
        and nobody waits for it (a first step, a task result), so it is never dropped."""
        if item.attempts == 0:
            log.error("a step of execution %s could not be saved; trying again until it is: "
                      "%s", item.seq, exc)
        delay = storage_retry_delay(item.attempts)
        attempts = item.attempts + 1
        self._scheduler.after(delay, lambda: self.queue.post(item.seq, item.make_event,
                                                             attempts=attempts))

    def _plan(self, item: PendingStep, overlay: dict[int, LiveExecution | None]) -> _Outcome:
        """Compute one step; ``overlay`` holds what earlier steps of the batch made of their
        executions (not committed yet)."""
        seq = item.seq
        live = overlay.get(seq)
        try:
            if seq not in overlay:
                with self._db.read() as conn:
                    live = self.live.get(seq) or self._load(conn, seq)
            if live is None or live.ex.status.is_terminal:  # gone, or ended earlier
                return _Outcome(None, None, [])
            new, commands = step(live.flow, live.ex, item.make_event(self._clock.now()))
        except Exception as exc:  # the step cannot run: its execution is ended (recovery.py)
            overlay[seq] = None
            return _Outcome(None, None, [], broken=exc)
        if new.next_event_id == live.ex.next_event_id and not commands:
            return _Outcome(new, None, [])
        done = LiveExecution(live.version + 1, new, live.flow, live.account_id, live.region,
                             live.linked)
        overlay[seq] = done
        return _Outcome(new, done, commands, base=live.version,
                        had_waits=bool(live.ex.timers or live.ex.tasks))

    def _end_broken(self, item: PendingStep, exc: Exception) -> None:
        """End the execution whose step raised ``exc`` (:func:`recovery.fail_broken_step`;
        the caller holds the database lock, after the batch's COMMIT)."""
        self.live.drop(item.seq)
        if item.fired is not None:
            self._scheduler.forget_timer(item.seq, item.fired)
        try:
            self._broken(item.seq, recovery.fail_broken_step(self._db, self._clock, item.seq,
                                                             exc))
        except Exception as error:  # a database error: the step's caller hears of it
            item.error = error

    def _write(self, conn: sqlite3.Connection, item: PendingStep, outcome: _Outcome) -> None:
        """Write one computed step inside the batch's transaction (an ignored timer's row is
        deleted: it must not fire again); a step whose version moved meanwhile (its rows were
        deleted behind the engine) is marked stale: its UPDATE wrote nothing."""
        live = outcome.live
        if live is None:
            if item.fired is not None:
                steps.delete_timer(conn, item.seq, item.fired)
            return
        try:
            steps.update_step(conn, item.seq, outcome.base, account_id=live.account_id,
                              region=live.region, ex=live.ex, commands=outcome.commands,
                              timer_delay=self.step_latency, had_waits=outcome.had_waits)
        except steps.StaleStep:
            log.debug("dropped a stale step of execution %s", item.seq)
            outcome.stale = True

    def redispatch(self, tasks: Sequence[TaskRow]) -> None:
        """Invoke again the tasks that were dispatched but whose result was never committed
        (at start: at-least-once, as CloudFlow's Standard mode documents; the caller leaves
        out callback tasks whose invocation completed, :mod:`.recovery`)."""
        for task in tasks:
            cmd = command_from_json(task.command)
            if isinstance(cmd, InvokeTask) and (not task.callback or self._runner.handles(cmd)):
                self._dispatch(task.exec_seq, TaskRequest(cmd, task.account_id, task.region,
                                                          task.role_arn, task.exec_seq))

    def _broken(self, seq: int, ended: tuple[int, list[str]] | None) -> None:
        """Bookkeeping after :func:`recovery.fail_broken_step` ended execution ``seq``."""
        if ended is not None:
            version, timers = ended
            for timer_id in timers:
                self._scheduler.forget_timer(seq, timer_id)
            self._changes.committed(seq, version)
            for listener in self.end_listeners:
                self._scheduler.submit(listener, seq)
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
                self._dispatch(seq, TaskRequest(cmd, live.account_id, live.region,
                                                live.ex.role_arn, seq))
            elif isinstance(cmd, CancelTask):
                try:
                    self._runner.cancel(seq, cmd.task_id)
                except Exception:  # a defect of the runner: the step stands
                    log.exception("task %s of execution %s could not be cancelled",
                                  cmd.task_id, seq)
        ended = live.ex.status.is_terminal or any(isinstance(c, CompleteExecution)
                                                  for c in commands)
        self._waiters.stepped(seq, ended=ended)
        if ended and live.linked:
            for listener in self.end_listeners:
                self._scheduler.submit(listener, seq)

    def _dispatch(self, seq: int, request: TaskRequest) -> None:
        """Hand one task to the runner and return: its outcome comes back later as a step
        (:meth:`_task_done`), so no engine thread waits on the function. The task counts as
        in flight until then (virtual time does not jump past a running task)."""
        release = self._scheduler.hold()
        with self._tasks_lock:
            self.tasks_out += 1
        once = threading.Lock()

        def done(outcome: TaskOutcome | None) -> None:
            if not once.acquire(blocking=False):
                return
            try:
                self._task_done(seq, request.command, outcome)
            finally:
                with self._tasks_lock:
                    self.tasks_out -= 1
                release()

        try:
            self._runner.start(request, done)
        except Exception as exc:  # a defect of the runner: the task fails, never hangs
            log.exception("task %s of execution %s could not start", request.command.task_id,
                          seq)
            done(TaskOutcome.failed(INTERNAL_ERROR_CODE, f"the emulator could not start the "
                                    f"task ({type(exc).__name__}: {str(exc)[:500]})"))

    def _task_done(self, seq: int, cmd: InvokeTask, outcome: TaskOutcome | None) -> None:
        """The runner's answer: a step of the execution (after ``step_latency``), or, for a
        callback task whose function accepted the token, a note that it was invoked."""
        if outcome is None:
            self._mark_invoked(seq, cmd.task_id)
            return

        def make(now: float) -> Event:
            if outcome.error:
                return TaskFailed(now, cmd.task_id, outcome.error, outcome.cause)
            return TaskSucceeded(now, cmd.task_id, outcome.output)

        if self.step_latency <= 0:
            self.post(seq, make)
            return
        at = self._clock.now() + self.step_latency
        self._scheduler.deliver_at(at, seq, make(at))

    def _mark_invoked(self, seq: int, task_id: str, attempt: int = 0) -> None:
        """Remember that a callback task's function returned (tried again while the disk
        refuses it, or a restart would invoke the function once more)."""
        try:
            recovery.remember_invoked(self._db, seq, task_id)
        except sqlite3.Error:
            self._scheduler.after(storage_retry_delay(attempt),
                                  lambda: self._mark_invoked(seq, task_id, attempt + 1))


@dataclass(slots=True)
class _Outcome:
    """What one step of a batch came to: ``result`` for its caller, ``live`` when it is to be
    written (its commands to carry out after the COMMIT), ``stale`` when it was dropped."""

    result: Execution | None
    live: LiveExecution | None
    commands: list[Command]
    base: int = 0  # the version the step was computed from
    had_waits: bool = True  # the execution at ``base`` had timers or tasks (rows to drop)
    stale: bool = False
    broken: Exception | None = None  # what the step raised (its execution is ended)
