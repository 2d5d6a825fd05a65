"""Execution-end notifications for callers that must not hold a thread each (long polls).

``subscribe(key, wake)`` asks for ``wake()`` to be called once the execution named by ``key``
(account, region, flow, name) is no longer Running: it ended, was stopped, or was deleted
(DeleteFlow, reset). One thread serves every subscriber: while there are subscribers it blocks
in the engine's ``wait_ended`` (woken whenever an execution ends and whenever the engine is
notified), then asks the store in one query which watched executions still run, and wakes the
others; while there are none it sleeps on its own event, so execution ends cost it nothing. A
subscription made after the execution already ended is woken at once. ``wake`` is called from
that thread (or the subscriber's), never under a lock of this module, and must be quick
(e.g. ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from deployer.emulator.store.flow_repos import ExecutionKey, FlowRepo

__all__ = ["ExecutionKey", "ExecutionWatch"]

log = logging.getLogger("deployer.emulator.engine")

WaitEnded = Callable[[Callable[[], bool], float], bool]


class ExecutionWatch:
    """See the module docstring; ``start()``/``stop()`` follow the server's lifecycle."""

    def __init__(self, repo: FlowRepo, wait_ended: WaitEnded,
                 notify: Callable[[], None]) -> None:
        self._repo = repo
        self._wait_ended = wait_ended
        self._notify = notify
        self._lock = threading.Lock()
        self._watchers: dict[object, tuple[ExecutionKey, Callable[[], None]]] = {}
        self._stopping = threading.Event()
        self._subscribed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="execution-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._subscribed.set()
        self._notify()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            pending = list(self._watchers.values())
            self._watchers.clear()
        for _, wake in pending:  # whoever waits answers now
            wake()

    def watching(self) -> int:
        """How many subscriptions are open."""
        with self._lock:
            return len(self._watchers)

    def subscribe(self, key: ExecutionKey, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once the execution ``key`` is not Running; returns unsubscribe."""
        token = object()
        with self._lock:
            self._watchers[token] = (key, wake)
        self._subscribed.set()
        if key not in self._repo.running_among([key]):
            self._fire(token)
        return lambda: self._drop(token)

    def _drop(self, token: object) -> None:
        with self._lock:
            self._watchers.pop(token, None)

    def _fire(self, token: object) -> None:
        with self._lock:
            entry = self._watchers.pop(token, None)
        if entry is not None:
            entry[1]()

    def _check(self) -> bool:
        if self._stopping.is_set():
            return True
        with self._lock:
            snapshot = [(token, key) for token, (key, _) in self._watchers.items()]
            if not snapshot:
                self._subscribed.clear()
                return True  # back to sleeping on our own event
        running = self._repo.running_among(sorted({key for _, key in snapshot}))
        for token, key in snapshot:
            if key not in running:
                self._fire(token)
        return False

    def _run(self) -> None:
        while not self._stopping.is_set():
            if not self._subscribed.wait(1.0):
                continue
            try:
                self._wait_ended(self._check, 1.0)
            except Exception:  # the database may fail (disk full) or close at shutdown
                if not self._stopping.is_set():
                    log.exception("execution watch failed; retrying")
                    self._stopping.wait(0.5)
