"""What a step needs without re-reading the database: decoded running executions and parsed
flows (caches beside the database, never instead of it).

* :class:`LiveExecutions` caches the decoded :class:`Execution` of running executions with the
  ``version`` it was committed at, so a step neither re-reads nor re-decodes the row. It is a
  bounded LRU (parked executions fall out and are read again when they wake); a terminal,
  stale or vanished execution is dropped. The database row stays the truth: every step is
  still written with ``WHERE version = ?``. Not thread-safe on its own: it is touched only
  under the database lock.
* :class:`FlowCache` keeps flow definitions parsed and compiled (thread-safe, LRU of 256).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from deployer.fdl import read_flow
from deployer.fdl.interpreter import CompiledFlow, Execution, compile_flow

__all__ = ["FlowCache", "LiveExecution", "LiveExecutions"]


@dataclass(slots=True)
class LiveExecution:
    """A running execution as last committed (``version``) with what a step needs;
    ``linked``: it may have links (``execution_links``), so its end goes to the end
    listeners (False only when it was begun without any)."""

    version: int
    ex: Execution
    flow: CompiledFlow
    account_id: str
    region: str
    linked: bool = True


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
        parsed = read_flow(definition).flow
        if parsed is None:
            raise ValueError("stored definition no longer parses")
        program = compile_flow(parsed)
        with self._lock:
            self._items[definition] = program
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        return program
