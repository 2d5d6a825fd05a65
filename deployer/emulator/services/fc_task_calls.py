"""Flow tasks waiting for a function: one queue per function, no thread per waiting call.

FC 3.0 runs a built-in runtime's instance one request at a time and scales a function out to
more instances; the local runtime gives a function at most a few instances (ten by default,
``runtime.process.DEFAULT_MAX_INSTANCES``) and makes further calls wait for one to become free.
:class:`FunctionCalls` keeps that wait off every thread: at most ``per_function`` calls of one
function run at once, each on a thread of its own that then serves the function's next waiting
call; the others wait in the function's FIFO queue as plain entries. So a thousand tasks
waiting on one slow function hold ``per_function`` threads, and another function's calls run
at once (docs/emulator.md, "Tasks waiting on functions").
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable

__all__ = ["FunctionCalls"]

log = logging.getLogger("deployer.emulator")

Call = Callable[[], None]


class FunctionCalls:
    """Per-function queues of calls (see the module docstring). Thread-safe."""

    def __init__(self, per_function: int) -> None:
        if per_function < 1:
            raise ValueError("per_function must be at least 1")
        self.per_function = per_function
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, deque[Call]] = {}
        self._running: dict[Hashable, int] = {}
        self._closed = False

    def submit(self, key: Hashable, call: Call) -> None:
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
        threading.Thread(target=self._serve, args=(key, call), daemon=True,
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

    def _serve(self, key: Hashable, call: Call | None) -> None:
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
