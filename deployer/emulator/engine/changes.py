"""Per-execution "changed" notifications: wake whoever waits for an execution's next step.

The engine calls :meth:`ExecutionChanges.committed` right after each step's COMMIT with the
execution's new ``version`` (it goes up by one per committed step). A reader that saw version
``v`` calls :meth:`wait` and returns as soon as a later version is committed, or at its
timeout. Waiting holds no engine lock and is not engine activity, so an open wait never stops
the virtual clock from jumping. Nothing here reads the database: a waiter checks the stored
version itself before waiting (the caller passes it) and is woken, never polls.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

__all__ = ["ExecutionChanges"]

_REMEMBERED = 10_000  # executions whose last version is kept (a waiter re-reads the rest)


class ExecutionChanges:
    """Versions committed per execution (by ``seq``) and a generation over all of them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._versions: OrderedDict[int, int] = OrderedDict()
        self._generation = 0

    @property
    def generation(self) -> int:
        """Goes up by one per committed step of any execution (and on :meth:`wake_all`)."""
        with self._cond:
            return self._generation

    def committed(self, seq: int, version: int) -> None:
        """Execution ``seq`` committed ``version``: wake its waiters."""
        with self._cond:
            self._versions[seq] = version
            self._versions.move_to_end(seq)
            if len(self._versions) > _REMEMBERED:
                self._versions.popitem(last=False)
            self._generation += 1
            self._cond.notify_all()

    def wake_all(self) -> None:
        """Wake every waiter (rows changed behind the engine: reset, DeleteFlow)."""
        with self._cond:
            self._generation += 1
            self._versions.clear()
            self._cond.notify_all()

    def wait(self, seq: int, after_version: int, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until execution ``seq`` commits a version above
        ``after_version`` (or :meth:`wake_all`); True when woken by a change."""
        deadline = time.monotonic() + timeout
        with self._cond:
            generation = self._generation
            while self._versions.get(seq, 0) <= after_version:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
                if self._generation != generation and seq not in self._versions:
                    return True  # wake_all
            return True

    def wait_any(self, after_generation: int, timeout: float) -> int:
        """Block up to ``timeout`` real seconds until any execution commits a step after
        ``after_generation``; return the current generation."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._generation <= after_generation:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            return self._generation
