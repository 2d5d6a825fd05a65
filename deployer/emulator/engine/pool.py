"""The engine's worker pool: up to N threads running jobs from one queue.

What ``concurrent.futures.ThreadPoolExecutor`` does for the engine, without what the engine
never uses: a job is a plain callable whose result nobody awaits (the scheduler counts its
jobs in flight itself), so a hand-off is one queue put, with no future, work item or
semaphore to build and settle for each job. It grows as the executor does: a job submitted
while no worker is idle starts a new thread, up to the limit; otherwise it waits in the
queue for the next worker that is free. :meth:`shutdown` drops the jobs not yet started and
lets each worker finish the one it runs; at interpreter exit the workers are told to stop
and joined, as the executor's are.
"""

from __future__ import annotations

import logging
import queue
import threading
import weakref
from collections.abc import Callable

__all__ = ["WorkerPool"]

log = logging.getLogger(__name__)

Job = Callable[[], object]


class WorkerPool:
    """Up to ``workers`` threads named ``<name>_<n>`` running submitted jobs in order."""

    def __init__(self, workers: int, name: str) -> None:
        if workers < 1:
            raise ValueError("a worker pool needs at least one worker")
        self._max = workers
        self._name = name
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # jobs finished whose worker has not been counted on again
        self._shut = False
        _POOLS.add(self)

    def submit(self, job: Job) -> None:
        """Run ``job()`` on a worker; RuntimeError once shut down."""
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot submit a job to a pool that was shut down")
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._max:
                worker = threading.Thread(target=self._work,
                                          name=f"{self._name}_{len(self._threads)}")
                self._threads.append(worker)
                worker.start()
        self._queue.put(job)

    def shutdown(self) -> None:
        """Refuse new jobs, drop those not started, and let every worker end after the job
        it runs (without waiting for it)."""
        with self._lock:
            self._shut = True
            workers = len(self._threads)
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        for _ in range(workers):
            self._queue.put(None)

    def join(self) -> None:
        """Wait for every worker to end (after :meth:`shutdown`)."""
        for worker in list(self._threads):
            worker.join()

    def _work(self) -> None:
        get, lock = self._queue.get, self._lock
        while True:
            job = get()
            if job is None:
                return
            try:
                job()
            except Exception:  # the scheduler's jobs catch their own; never lose a worker
                log.exception("a job of the %s pool failed", self._name)
            del job
            with lock:
                self._idle += 1


_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


def _at_exit() -> None:
    """Interpreter exit: stop every pool's workers after their current jobs, and wait for
    them (what the executor does for its own workers)."""
    pools = list(_POOLS)
    for pool in pools:
        pool.shutdown()
    for pool in pools:
        pool.join()


_register = getattr(threading, "_register_atexit", None)  # runs before non-daemon threads
if _register is not None:  # are joined, so idle workers are told to stop first
    _register(_at_exit)
