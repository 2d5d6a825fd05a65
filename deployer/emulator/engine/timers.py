"""The timer mirror: the ``timers`` table in memory, so the scheduler never queries for what
is due.

:class:`TimerIndex` is loaded from the table at start, updated right after each committed step
(under the database lock, so in commit order) and reloaded whenever rows change behind the
engine's back (reset, DeleteFlow). It finds due timers, the next ``fire_at`` and the next
Wait/retry instant (the only kinds that may make virtual time jump) without a query. It is not
thread-safe on its own: the scheduler guards it with its condition.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from deployer.emulator.store.flow_repos import TimerRow
from deployer.fdl.interpreter import CancelTimer, Command, Execution, StartTimer

__all__ = ["SKIP_PURPOSES", "TimerIndex", "TimerKey"]

SKIP_PURPOSES = frozenset({"wait", "retry"})  # timers that may make virtual time jump
TimerKey = tuple[int, str]


class TimerIndex:
    """Pending timers by (execution seq, timer id), with lazy-deletion heaps."""

    def __init__(self) -> None:
        self._by_seq: dict[int, dict[str, tuple[float, bool]]] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._skip_heap: list[tuple[float, int, str]] = []
        self._firing: set[TimerKey] = set()
        self._pending = 0  # timers in _by_seq (the heaps also hold stale entries)

    def load(self, rows: Iterable[TimerRow]) -> None:
        """Replace everything with ``rows`` (timers being fired stay marked as firing)."""
        self._by_seq.clear()
        self._heap.clear()
        self._skip_heap.clear()
        self._pending = 0
        for row in rows:
            self._add(row.exec_seq, row.timer_id, row.fire_at, row.purpose in SKIP_PURPOSES)

    def __len__(self) -> int:
        return self._pending

    def apply(self, seq: int, ex: Execution, commands: Sequence[Command],
              delay: float) -> bool:
        """Mirror one committed step (as ``steps._write_effects`` wrote it: a timer started
        and gone within the step, such as a short flow's execution timeout, gets no entry);
        True when a timer was started."""
        started = False
        live = ex.timers if not ex.status.is_terminal else {}
        for cmd in commands:
            if isinstance(cmd, StartTimer):
                if cmd.timer_id not in live:
                    continue
                self._add(seq, cmd.timer_id, cmd.fire_at + delay,
                          cmd.purpose.value in SKIP_PURPOSES)
                started = True
            elif isinstance(cmd, CancelTimer):
                self.remove(seq, cmd.timer_id)
        timers = self._by_seq.get(seq)
        if timers:
            for timer_id in [t for t in timers if t not in live]:
                self.remove(seq, timer_id)
        return started

    def remove(self, seq: int, timer_id: str) -> None:
        timers = self._by_seq.get(seq)
        if timers is not None:
            if timers.pop(timer_id, None) is not None:
                self._pending -= 1
            if not timers:
                del self._by_seq[seq]
            self._compact()

    def _compact(self) -> None:
        """Rebuild the heaps when stale entries (timers cancelled or gone long before they
        were due: an execution's timeout, a Wait of a stopped execution) outnumber the
        pending ones, so memory follows the timers pending, not those ever started."""
        if len(self._heap) + len(self._skip_heap) <= 4 * self._pending + 1024:
            return
        self._heap = [(at, seq, tid) for seq, timers in self._by_seq.items()
                      for tid, (at, _skip) in timers.items()]
        self._skip_heap = [(at, seq, tid) for seq, timers in self._by_seq.items()
                           for tid, (at, skip) in timers.items() if skip]
        heapq.heapify(self._heap)
        heapq.heapify(self._skip_heap)

    def take_due(self, now: float, limit: int) -> list[TimerKey]:
        """Up to ``limit`` timers due at ``now``, earliest first, marked as firing."""
        due: list[TimerKey] = []
        heap = self._heap
        while heap and heap[0][0] <= now and len(due) < limit:
            fire_at, seq, timer_id = heapq.heappop(heap)
            key = (seq, timer_id)
            if self._fire_at(key) == fire_at and key not in self._firing:
                self._firing.add(key)
                due.append(key)
        # the Wait/retry heap is read only when virtual time may jump: drop the entries of
        # timers already gone here too, or on the real clock it would only ever grow
        self._peek(self._skip_heap, check_firing=False, skip_only=True)
        return due

    def fired(self, key: TimerKey) -> None:
        """The job firing ``key`` ended; a timer still pending (the step failed) is kept."""
        self._firing.discard(key)
        fire_at = self._fire_at(key)
        if fire_at is not None:
            heapq.heappush(self._heap, (fire_at, *key))

    @property
    def firing(self) -> bool:
        return bool(self._firing)

    def next_timer(self) -> tuple[float, TimerKey] | None:
        """(fire_at, key) of the earliest timer not being fired."""
        return self._peek(self._heap, check_firing=True)

    def next_skip_at(self) -> float | None:
        """Earliest ``fire_at`` of a pending Wait or retry timer."""
        found = self._peek(self._skip_heap, check_firing=False, skip_only=True)
        return None if found is None else found[0]

    def _add(self, seq: int, timer_id: str, fire_at: float, skip: bool) -> None:
        timers = self._by_seq.setdefault(seq, {})
        if timer_id not in timers:
            self._pending += 1
        timers[timer_id] = (fire_at, skip)
        heapq.heappush(self._heap, (fire_at, seq, timer_id))
        if skip:
            heapq.heappush(self._skip_heap, (fire_at, seq, timer_id))

    def _fire_at(self, key: TimerKey) -> float | None:
        entry = self._by_seq.get(key[0], {}).get(key[1])
        return None if entry is None else entry[0]

    def _peek(self, heap: list[tuple[float, int, str]], *, check_firing: bool,
              skip_only: bool = False) -> tuple[float, TimerKey] | None:
        """The top entry still describing a pending timer (stale entries are popped)."""
        while heap:
            fire_at, seq, timer_id = heap[0]
            key = (seq, timer_id)
            entry = self._by_seq.get(seq, {}).get(timer_id)
            if (entry is not None and entry[0] == fire_at and (entry[1] or not skip_only)
                    and not (check_firing and key in self._firing)):
                return fire_at, key
            heapq.heappop(heap)
        return None
