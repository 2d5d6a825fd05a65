"""In-memory mirrors the CloudFlow engine keeps beside the database (never instead of it).

* :class:`TimerIndex` mirrors the ``timers`` table: the scheduler finds due timers, the next
  ``fire_at`` and the next Wait/retry instant without a query. It is loaded from the table at
  start, updated right after each committed step (under the database lock, so in commit
  order) and reloaded whenever rows change behind the engine's back (reset, DeleteFlow).
* :class:`LiveExecutions` caches the decoded :class:`Execution` of running executions with the
  ``version`` it was committed at, so a step neither re-reads nor re-decodes the row. It is a
  bounded LRU (parked executions fall out and are read again when they wake); a terminal,
  stale or vanished execution is dropped. The database row stays the truth: every step is
  still written with ``WHERE version = ?``.

* :class:`FlowCache` keeps flow definitions parsed and compiled (thread-safe, LRU of 256).

The first two are not thread-safe on their own: the engine guards each with a lock.
"""

from __future__ import annotations

import heapq
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from deployer.emulator.store.flow_repos import TimerRow
from deployer.fdl import parse_flow
from deployer.fdl.interpreter import (
    CancelTimer,
    Command,
    CompiledFlow,
    Execution,
    StartTimer,
    compile_flow,
)

__all__ = ["FlowCache", "LiveExecution", "LiveExecutions", "TimerIndex"]

SKIP_PURPOSES = frozenset({"wait", "retry"})  # timers that may make virtual time jump
TimerKey = tuple[int, str]


class TimerIndex:
    """Pending timers by (execution seq, timer id), with lazy-deletion heaps."""

    def __init__(self) -> None:
        self._by_seq: dict[int, dict[str, tuple[float, bool]]] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._skip_heap: list[tuple[float, int, str]] = []
        self._firing: set[TimerKey] = set()

    def load(self, rows: Iterable[TimerRow]) -> None:
        """Replace everything with ``rows`` (timers being fired stay marked as firing)."""
        self._by_seq.clear()
        self._heap.clear()
        self._skip_heap.clear()
        for row in rows:
            self._add(row.exec_seq, row.timer_id, row.fire_at, row.purpose in SKIP_PURPOSES)

    def __len__(self) -> int:
        return sum(len(timers) for timers in self._by_seq.values())

    def apply(self, seq: int, ex: Execution, commands: Sequence[Command],
              delay: float) -> bool:
        """Mirror one committed step (as ``steps._write_effects`` wrote it); True when a
        timer was started."""
        started = False
        for cmd in commands:
            if isinstance(cmd, StartTimer):
                self._add(seq, cmd.timer_id, cmd.fire_at + delay,
                          cmd.purpose.value in SKIP_PURPOSES)
                started = True
            elif isinstance(cmd, CancelTimer):
                self.remove(seq, cmd.timer_id)
        timers = self._by_seq.get(seq)
        if timers:
            live = ex.timers if not ex.status.is_terminal else {}
            for timer_id in [t for t in timers if t not in live]:
                self.remove(seq, timer_id)
        return started

    def remove(self, seq: int, timer_id: str) -> None:
        timers = self._by_seq.get(seq)
        if timers is not None:
            timers.pop(timer_id, None)
            if not timers:
                del self._by_seq[seq]

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
        self._by_seq.setdefault(seq, {})[timer_id] = (fire_at, skip)
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


@dataclass(slots=True)
class LiveExecution:
    """A running execution as last committed (``version``) with what a step needs."""

    version: int
    ex: Execution
    flow: CompiledFlow
    account_id: str
    region: str


class LiveExecutions:
    """Bounded LRU of :class:`LiveExecution` by ``seq``."""

    def __init__(self, capacity: int = 2048) -> None:
        self._capacity = capacity
        self._items: OrderedDict[int, LiveExecution] = OrderedDict()

    def get(self, seq: int) -> LiveExecution | None:
        live = self._items.get(seq)
        if live is not None:
            self._items.move_to_end(seq)
        return live

    def put(self, seq: int, live: LiveExecution) -> None:
        """Remember ``live`` unless a newer version is already known; terminal ones are
        dropped."""
        current = self._items.get(seq)
        if current is not None and current.version >= live.version:
            return
        if live.ex.status.is_terminal:
            self._items.pop(seq, None)
            return
        self._items[seq] = live
        self._items.move_to_end(seq)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)

    def drop(self, seq: int) -> None:
        self._items.pop(seq, None)

    def clear(self) -> None:
        self._items.clear()


class FlowCache:
    """Compiled flows by definition text; thread-safe (its lock is never held while
    compiling)."""

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, CompiledFlow] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, definition: str) -> CompiledFlow:
        """The compiled flow of a (validated) definition; ValueError if it no longer
        parses."""
        with self._lock:
            cached = self._items.get(definition)
            if cached is not None:
                self._items.move_to_end(definition)
                return cached
        parsed = parse_flow(definition).flow
        if parsed is None:
            raise ValueError("stored definition no longer parses")
        program = compile_flow(parsed)
        with self._lock:
            self._items[definition] = program
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        return program
