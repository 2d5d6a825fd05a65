"""Waiters: callers blocked until an execution ends (DescribeExecution's long poll,
StartSyncExecution, ``LocalCloud.wait_for_execution``).

One generation counter under a condition: every committed step reports here
(:meth:`Waiters.stepped`); when it ended an execution, or when :meth:`Waiters.wake` is called
(clock moved, flow deleted, reset), the generation moves on and every waiter tests its own
predicate again, outside every engine lock. No thread or poll per waiter. Per-execution
"changed" notifications for live views are :mod:`.changes`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["Waiters"]


class Waiters:
    """Blocks callers until their predicate holds; woken in commit order by the stepper."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._generation = 0
        self._parked = 0  # callers blocked in wait() right now

    def wait(self, is_done: Callable[[], bool], timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_done()``; the predicate is tested at
        first and after every wake-up. Returns its last value."""
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                generation = self._generation
            if is_done():
                return True
            with self._cond:
                self._parked += 1
                self._cond.notify_all()  # for wait_parked()
                try:
                    while self._generation == generation:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            break
                        self._cond.wait(remaining)
                finally:
                    self._parked -= 1
                timed_out = self._generation == generation
            if timed_out:
                return is_done()

    def wait_parked(self, count: int, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until at least ``count`` callers are blocked
        in :meth:`wait` (explicit synchronisation for tests); True when they are."""
        with self._cond:
            return self._cond.wait_for(lambda: self._parked >= count, timeout)

    def stepped(self, seq: int, *, ended: bool) -> None:
        """A step of execution ``seq`` was committed (and ``ended`` it, or not)."""
        if ended:
            self.wake()

    def wake(self) -> None:
        """Make every waiter test its predicate again."""
        with self._cond:
            self._generation += 1
            self._cond.notify_all()
