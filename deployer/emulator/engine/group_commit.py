"""Group commit: the steps that are ready at the same moment commit in ONE transaction.

Every happening that becomes a step (an execution's first step after StartExecution, a task
result, a due timer, a stop, a callback report) is queued here. One thread at a time, the
*leader*, takes what is queued (up to ``max_batch``, oldest first) and hands it to the
stepper as one batch: the stepper computes each step in turn and writes it, and the batch
commits once. The durability contract is the one-step one: each step's state, history events,
timers and tasks are written whole inside that transaction, and nothing of any step (no task,
no answer, no notification) is carried out before the COMMIT.

* :meth:`StepQueue.post` queues and returns (task results, first steps, delayed deliveries):
  a pool job drains the queue unless a leader is already at work.
* :meth:`StepQueue.call` queues and waits for the step to commit, returning its result (stops,
  reports, timers: their callers answer or do bookkeeping after the commit). The caller leads
  if nobody does, until its own step is done, then hands what is left to a pool job; so a
  follower only ever waits for a leader that is running, never for a queued job.
* :meth:`StepQueue.lead_until` leads in the same way until the steps queued before a moment
  are done (``mock_cloud()``'s callers keeping pace with the engine, without a hand-off).

Steps of the same execution keep their order (a FIFO queue, one leader at a time).

:attr:`StepQueue.busy` says whether steps are queued or being committed, and ``on_idle`` is
called when the last leader stops: the WAL syncer waits on them before a lone
acknowledgement's fsync, so that one fsync covers a start and the instant steps after it
(:mod:`deployer.emulator.store.durability`).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deployer.fdl.interpreter import Event, Execution

__all__ = ["EventFactory", "PendingStep", "StepQueue"]

log = logging.getLogger("deployer.emulator.engine")

EventFactory = Callable[[float], Event]
"""Makes a step's event at the instant the step runs."""
MAX_BATCH = 32  # steps per transaction: bounds how long one commit holds the database lock


@dataclass(slots=True, eq=False)
class PendingStep:
    """One queued step: what happened to execution ``seq``; ``fired`` names the timer it
    fires. The stepper fills ``result``/``error`` and calls :meth:`finish`."""

    seq: int
    make_event: EventFactory
    fired: str | None = None
    result: Execution | None = None
    error: BaseException | None = None
    commit: int = 0  # the number of the commit that wrote it (the database's count)
    attempts: int = 0  # earlier tries the database refused (a posted step is tried again)
    _done: threading.Event | None = field(default=None, repr=False)
    finished: bool = False

    def finish(self) -> None:
        self.finished = True
        if self._done is not None:
            self._done.set()


class StepQueue:
    """See the module docstring. ``run_batch`` commits a batch (and finishes each step);
    ``submit`` runs a job on the engine's pool, counted in flight (False: the engine is
    stopping and takes no more jobs)."""

    def __init__(self, run_batch: Callable[[Sequence[PendingStep]], None],
                 submit: Callable[[Callable[[], None]], bool], *,
                 max_batch: int = MAX_BATCH) -> None:
        self._run_batch = run_batch
        self._submit = submit
        self.max_batch = max_batch  # steps per transaction (1: no group commit)
        self._lock = threading.Lock()
        self._queue: deque[PendingStep] = deque()
        self._leading = False
        self._job_queued = False
        self._closed = False
        self.batches = 0  # transactions committed by the queue (statistics)
        self.steps = 0
        self.queued = 0  # steps ever queued: those before a moment are done once steps >= it
        self.on_idle: Callable[[], None] = _nothing  # called when the queue falls idle

    @property
    def busy(self) -> bool:
        """Steps are queued or being committed (read without the lock: a hint)."""
        return self._leading or self._job_queued or bool(self._queue)

    def post(self, seq: int, make_event: EventFactory, *, attempts: int = 0) -> None:
        """Queue a step; it commits soon, in a pool job or with another leader's batch
        (``attempts``: tries the database refused before, for its back-off)."""
        with self._lock:
            if self._closed:
                return
            self._queue.append(PendingStep(seq, make_event, attempts=attempts))
            self.queued += 1
            if self._leading or self._job_queued:
                return
            self._job_queued = True
        if not self._submit(self._job):  # stopping: the next caller of call() leads
            with self._lock:
                self._job_queued = False

    def call(self, seq: int, make_event: EventFactory, *,
             fired: str | None = None) -> PendingStep:
        """Queue a step and wait until it is committed; the step, with its new execution
        (``result``: None when it was gone, stale or ignored) and its ``commit``. Errors of
        the step are raised here."""
        item = PendingStep(seq, make_event, fired, _done=threading.Event())
        with self._lock:
            if self._closed:
                raise RuntimeError(_STOPPED)
            self._queue.append(item)
            self.queued += 1
            lead = not self._leading
            self._leading = self._leading or lead
        if lead:
            self._lead(until=item)
        else:
            assert item._done is not None
            item._done.wait()
        if item.error is not None:
            raise item.error
        return item

    def close(self) -> None:
        """The engine has stopped (its pool runs no more jobs, a drain job already queued
        included): every step still queued fails, so no caller of :meth:`call` waits for
        it forever, and later steps are refused. A batch being committed goes on."""
        with self._lock:
            self._closed = True
            dropped = list(self._queue)
            self._queue.clear()
        for item in dropped:
            item.error = item.error or RuntimeError(_STOPPED)
            item.finish()

    def _job(self) -> None:
        with self._lock:
            self._job_queued = False
            if self._leading:
                return  # the running leader drains what this job was posted for
            self._leading = True
        self._lead(until=None)

    def lead_until(self, target: int) -> None:
        """Commit batches in the calling thread until ``target`` steps are done (``steps``),
        then hand the rest to a pool job; return at once when another thread leads (it is
        committing them) or they are done."""
        with self._lock:
            if self._leading or self.steps >= target or not self._queue:
                return
            self._leading = True
        self._lead(until=None, target=target)

    def _lead(self, until: PendingStep | None, target: int | None = None) -> None:
        """Commit batches until the queue is empty (``until``: until that step is done;
        ``target``: until that many steps are done; then hand the rest to a pool job)."""
        hand_off = False
        while True:
            with self._lock:
                if (not self._queue or (until is not None and until.finished)
                        or (target is not None and self.steps >= target)):
                    self._leading = False
                    if self._queue and not self._job_queued:
                        self._job_queued = hand_off = True
                    break
                take = min(len(self._queue), self.max_batch)
                batch = [self._queue.popleft() for _ in range(take)]
            try:
                self._run_batch(batch)
            except Exception as exc:  # a bug: never leave the queue without a leader
                log.exception("a batch of flow steps failed")
                for item in batch:
                    item.error = item.error or exc
            for item in batch:
                if not item.finished:
                    item.error = item.error or RuntimeError("the step was not committed")
                    item.finish()
            self.batches += 1
            self.steps += len(batch)
        if hand_off and not self._submit(self._job):
            # the engine is stopping and runs no more jobs: go on here, so that no caller of
            # call() waits forever for a step nobody commits (at worst the batches fail
            # with the closing database and their callers get the error)
            with self._lock:
                self._job_queued = False
                if self._leading:
                    return
                self._leading = True
            self._lead(until=None)
        elif not hand_off and not self.busy:
            self.on_idle()


_STOPPED = "the flow engine stopped before the step was committed"


def _nothing() -> None:
    return None
