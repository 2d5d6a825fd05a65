"""Wake-ups for readers following a function's invocations (``deploy logs --follow`` over the
emulator's log stream): no thread and no polling per reader.

:class:`FunctionService` calls :meth:`InvocationWatch.changed` after it records an invocation
of a function and after it deletes the function. A reader reads :meth:`generation` for the
function, reads what it needs, then :meth:`watch` es with that generation: ``wake()`` is called
once the generation moves past it (at once if it already has), from the thread that made the
change, outside this module's lock, so it must be quick (``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["FunctionKey", "InvocationWatch"]

FunctionKey = tuple[str, str, str]  # (account id, region, function name)


class InvocationWatch:
    """Generations and one-shot subscriptions per function (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generations: dict[FunctionKey, int] = {}
        self._watchers: dict[FunctionKey, dict[object, Callable[[], None]]] = {}

    def generation(self, key: FunctionKey) -> int:
        """Moves on whenever ``key`` is invoked or deleted."""
        with self._lock:
            return self._generations.get(key, 0)

    def changed(self, key: FunctionKey) -> None:
        """``key`` was invoked (its record stored) or deleted: wake its readers."""
        with self._lock:
            self._generations[key] = self._generations.get(key, 0) + 1
            woken = list(self._watchers.pop(key, {}).values())
        for wake in woken:
            wake()

    def watch(self, key: FunctionKey, after: int,
              wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once ``key``'s generation is above ``after``; returns the
        unsubscribe function."""
        token = object()
        with self._lock:
            if self._generations.get(key, 0) <= after:
                self._watchers.setdefault(key, {})[token] = wake
                return lambda: self._drop(key, token)
        wake()
        return lambda: None

    def watching(self) -> int:
        """How many readers wait right now."""
        with self._lock:
            return sum(map(len, self._watchers.values()))

    def _drop(self, key: FunctionKey, token: object) -> None:
        with self._lock:
            readers = self._watchers.get(key)
            if readers is not None:
                readers.pop(token, None)
                if not readers:
                    del self._watchers[key]
