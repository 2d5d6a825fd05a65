"""Flow tasks waiting for a function: one queue per function, no thread per waiting call.

FC 3.0 runs a built-in runtime's instance one request at a time and scales a function out to
more instances; the local runtime gives a function at most a few instances (ten by default,
``runtime.process.DEFAULT_MAX_INSTANCES``) and makes further calls wait for one to become free.
:class:`FunctionCalls` keeps that wait off every thread: at most ``per_function`` calls of one
function run at once, each on a thread of its own that then serves the function's next waiting
call; the others wait in the function's FIFO queue as plain entries. So a thousand tasks
waiting on one slow function hold ``per_function`` threads, and another function's calls run
at once (docs/emulator.md, "Tasks waiting on functions"). A thread whose function has no more
calls waits a minute to be handed another function's before it ends, so a steady load reuses
a few threads instead of starting one per call.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Hashable

__all__ = ["FunctionCalls"]

log = logging.getLogger("deployer.emulator")

_Call = Callable[[], None]
IDLE = 60.0  # real seconds an idle thread waits for more calls before it ends


class FunctionCalls:
    """Per-function queues of calls (see the module docstring). Thread-safe."""

    def __init__(self, per_function: int) -> None:
        if per_function < 1:
            raise ValueError("per_function must be at least 1")
        self.per_function = per_function
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, deque[_Call]] = {}
        self._running: dict[Hashable, int] = {}
        self._closed = False
        self._idle = 0  # threads waiting to be handed a function's calls
        self._handoff: queue.SimpleQueue[tuple[Hashable, _Call]] = queue.SimpleQueue()

    def submit(self, key: Hashable, call: _Call) -> None:
        """Run ``call`` once fewer than ``per_function`` calls of function ``key`` run (at
        once, or after the calls queued before it). Calls submitted after :meth:`close` are
        dropped (the engine invokes unfinished tasks again when it starts)."""
        with self._lock:
            if self._closed:
                return
            running = self._running.get(key, 0)
            if running >= self.per_function:
                self._waiting.setdefault(key, deque()).append(call)
                return
            self._running[key] = running + 1
            if self._idle:  # a thread done with its last function waits for work: reuse it
                self._idle -= 1
                self._handoff.put((key, call))
                return
        threading.Thread(target=self._work, args=(key, call), daemon=True,
                         name="fc-task-call").start()

    def waiting(self, key: Hashable) -> int:
        """Calls of function ``key`` queued, not running yet."""
        with self._lock:
            return len(self._waiting.get(key, ()))

    def close(self) -> None:
        """Drop the queued calls; running ones finish on their own."""
        with self._lock:
            self._closed = True
            self._waiting.clear()

    def _work(self, key: Hashable, call: _Call) -> None:
        """A thread's life: serve a function's queue, then wait up to :data:`IDLE` seconds to
        be handed another (threads are reused, not made per call)."""
        while True:
            self._serve(key, call)
            with self._lock:
                self._idle += 1
            try:
                key, call = self._handoff.get(timeout=IDLE)
            except queue.Empty:
                with self._lock:
                    try:  # handed work just as the wait ended
                        key, call = self._handoff.get_nowait()
                    except queue.Empty:
                        self._idle -= 1
                        return

    def _serve(self, key: Hashable, call: _Call | None) -> None:
        """Run ``call``, then the function's next queued calls, until its queue is empty."""
        while call is not None:
            try:
                call()
            except Exception:  # the caller reports its own outcome; this is a defect
                log.exception("a task's function call failed")
            with self._lock:
                queue = self._waiting.get(key)
                if queue:
                    call = queue.popleft()
                    if not queue:
                        del self._waiting[key]
                else:
                    call = None
                    self._running[key] -= 1
                    if not self._running[key]:
                        del self._running[key]
