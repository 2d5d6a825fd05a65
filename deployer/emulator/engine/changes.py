"""Change notifications for live readers (the console's event streams): per execution, and for
the engine as a whole.

The engine calls :meth:`ExecutionChanges.committed` right after each step's COMMIT with the
execution's new ``version`` (it goes up by one per committed step), and :meth:`touched` when
what the engine reports about itself changed without a step (the clock moved, the last job in
flight finished). Every such call moves a ``generation`` counter on.

Readers subscribe a ``wake`` callback, once: :meth:`watch` wakes it when execution ``seq``
commits a version above the one the reader has (at once when that is already known), and
:meth:`watch_engine` when the generation moves past the reader's. ``wake`` is called from the
engine's thread, outside this module's lock, and must be quick (``loop.call_soon_threadsafe``);
a subscription is dropped once it fired, or by the function ``watch`` returns. Subscribing is
no engine activity and holds no thread, so open subscriptions never stop the virtual clock
from jumping. Nothing here reads the database: a reader reads the stored version itself, then
subscribes with it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["ExecutionChanges", "Wake"]

Wake = Callable[[], None]
_REMEMBERED = 10_000  # executions whose last version is kept (a reader re-reads the rest)


class ExecutionChanges:
    """Versions committed per execution (by ``seq``), a generation over the engine, and the
    readers waiting for either."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: OrderedDict[int, int] = OrderedDict()
        self._generation = 0
        self._watchers: dict[int, dict[object, tuple[int, Wake]]] = {}
        self._engine_watchers: dict[object, Wake] = {}

    @property
    def generation(self) -> int:
        """Goes up by one per committed step of any execution and per :meth:`touched` or
        :meth:`wake_all`."""
        with self._lock:
            return self._generation

    def watching(self) -> int:
        """How many subscriptions are open (executions and engine)."""
        with self._lock:
            return sum(map(len, self._watchers.values())) + len(self._engine_watchers)

    def committed(self, seq: int, version: int) -> None:
        """Execution ``seq`` committed ``version``: wake its readers and the engine's."""
        with self._lock:
            self._versions[seq] = version
            self._versions.move_to_end(seq)
            if len(self._versions) > _REMEMBERED:
                self._versions.popitem(last=False)
            self._generation += 1
            woken = self._take_engine()
            readers = self._watchers.get(seq)
            if readers:
                for token, (after, wake) in list(readers.items()):
                    if version > after:
                        del readers[token]
                        woken.append(wake)
                if not readers:
                    del self._watchers[seq]
        _call(woken)

    def touched(self) -> None:
        """Engine facts changed without a step (clock moved, engine idle)."""
        with self._lock:
            self._generation += 1
            woken = self._take_engine()
        _call(woken)

    def wake_all(self) -> None:
        """Wake every reader (rows changed behind the engine: reset, DeleteFlow)."""
        with self._lock:
            self._generation += 1
            self._versions.clear()
            woken = self._take_engine()
            for readers in self._watchers.values():
                woken.extend(wake for _, wake in readers.values())
            self._watchers.clear()
        _call(woken)

    def watch(self, seq: int, after_version: int, wake: Wake) -> Callable[[], None]:
        """Call ``wake()`` once execution ``seq`` commits a version above ``after_version``
        (now, if one is known already); returns the unsubscribe function."""
        token = object()
        with self._lock:
            if self._versions.get(seq, 0) <= after_version:
                self._watchers.setdefault(seq, {})[token] = (after_version, wake)
                return lambda: self._drop(seq, token)
        wake()
        return _nothing

    def watch_engine(self, after_generation: int, wake: Wake) -> Callable[[], None]:
        """Call ``wake()`` once the generation is above ``after_generation`` (now, if it is
        already); returns the unsubscribe function."""
        token = object()
        with self._lock:
            if self._generation <= after_generation:
                self._engine_watchers[token] = wake
                return lambda: self._drop_engine(token)
        wake()
        return _nothing

    def _take_engine(self) -> list[Wake]:
        woken = list(self._engine_watchers.values())
        self._engine_watchers.clear()
        return woken

    def _drop(self, seq: int, token: object) -> None:
        with self._lock:
            readers = self._watchers.get(seq)
            if readers is not None:
                readers.pop(token, None)
                if not readers:
                    del self._watchers[seq]

    def _drop_engine(self, token: object) -> None:
        with self._lock:
            self._engine_watchers.pop(token, None)


def _call(woken: list[Wake]) -> None:
    for wake in woken:
        wake()


def _nothing() -> None:
    return None
