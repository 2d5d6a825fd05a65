"""The schedule mirror: each enabled schedule's next fire instant, in memory.

The ``schedules`` rows are the durable truth (``store/schedule_repos.py``); this index holds
``key -> next_fire_at`` so the scheduler finds what is due and when the next schedule fires
without a query, exactly as :mod:`.timers` does for Wait/retry/timeout timers. It is loaded
from the :class:`~deployer.emulator.ports.ScheduleSource` at start and after rows
changed behind the engine, and updated by the services (create, update, delete) and after
every fire. Not thread-safe on its own: the scheduler guards it with its condition.

A schedule instant is a real timer of the scheduler: on the real clock it fires when due; on
a virtual clock it fires when time passes it (``LocalCloud.advance``), and virtual time may
*jump* to it only while somebody waits for a schedule (``LocalCloud.wait_for_schedule``) —
a schedule never ends, so jumping to it whenever the engine is idle would spin the clock
forever.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from deployer.emulator.ports import ScheduleKey

__all__ = ["ScheduleIndex"]


class ScheduleIndex:
    """Pending schedule fires by key, with a lazy-deletion heap."""

    def __init__(self) -> None:
        self._next: dict[ScheduleKey, float] = {}
        self._heap: list[tuple[float, ScheduleKey]] = []
        self._firing: set[ScheduleKey] = set()
        # schedules somebody waits to see fire (each wait allows time to jump to that
        # schedule's next instant once: the entry goes when the schedule fires)
        self._wanted: dict[ScheduleKey, set[object]] = {}

    def load(self, entries: Iterable[tuple[ScheduleKey, float]]) -> None:
        self._next.clear()
        self._heap.clear()
        for key, at in entries:
            self.set(key, at)

    def __len__(self) -> int:
        return len(self._next)

    def set(self, key: ScheduleKey, at: float | None) -> None:
        """The schedule's next fire is ``at`` (None: it does not fire)."""
        if at is None:
            self._next.pop(key, None)
            return
        self._next[key] = at
        heapq.heappush(self._heap, (at, key))

    def take_due(self, now: float) -> list[tuple[ScheduleKey, float]]:
        """Schedules due at ``now`` (earliest first), marked as firing until :meth:`fired`."""
        due: list[tuple[ScheduleKey, float]] = []
        while self._heap and self._heap[0][0] <= now:
            at, key = heapq.heappop(self._heap)
            if self._next.get(key) == at and key not in self._firing:
                self._firing.add(key)
                del self._next[key]
                due.append((key, at))
        return due

    def want(self, key: ScheduleKey, token: object) -> None:
        """``token`` (one per waiting caller) waits for ``key``'s next fire."""
        self._wanted.setdefault(key, set()).add(token)

    def unwant(self, key: ScheduleKey, token: object) -> None:
        tokens = self._wanted.get(key)
        if tokens is not None:
            tokens.discard(token)
            if not tokens:
                del self._wanted[key]

    def next_wanted_at(self) -> float | None:
        """The earliest next instant of a schedule somebody waits for (not firing now)."""
        found = [self._next[k] for k in self._wanted if k in self._next]
        return min(found) if found and not self._firing else None

    def fired(self, key: ScheduleKey, next_at: float | None) -> None:
        """The fire of ``key`` ended; it fires next at ``next_at``. A newer instant set while
        it was firing (an update) wins."""
        self._firing.discard(key)
        self._wanted.pop(key, None)  # those waits are served: no further jump for them
        if key not in self._next:
            self.set(key, next_at)

    def next_at(self) -> float | None:
        """The earliest pending fire instant."""
        while self._heap:
            at, key = self._heap[0]
            if self._next.get(key) == at:
                return at
            heapq.heappop(self._heap)
        return None

    @property
    def firing(self) -> bool:
        return bool(self._firing)
