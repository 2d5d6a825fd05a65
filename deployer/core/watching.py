"""File watching for ``deploy dev``: batches of changed paths from the operating system's file
events, through watchdog (Apache-2.0; inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW
on Windows).

A batch starts with the first relevant event and closes once no further event arrived for
``settle`` seconds (an editor's save is several events: write, truncate, rename, chmod), so one
save is one batch. Caches and editor scratch files (``__pycache__``, ``*.pyc``, ``*.swp``,
``*~``, ``.#*``, ``.deploy/``) are ignored.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from watchdog.events import FileSystemEvent, FileSystemEventHandler

__all__ = ["ChangeSource", "FileWatcher", "WatchRoot", "is_ignored"]

SETTLE_SECONDS = 0.05
STOP_SECONDS = 5.0
_IGNORED_PARTS = {"__pycache__", ".deploy", ".git", ".pytest_cache", ".mypy_cache"}
_IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".swx", ".tmp", "~")
_EVENT_TYPES = {"created", "modified", "deleted", "moved", "closed"}


@dataclass(frozen=True, slots=True)
class WatchRoot:
    """A directory to watch, with or without its subdirectories."""

    path: Path
    recursive: bool


class ChangeSource(Protocol):
    """Where ``deploy dev`` learns that files changed (file events, or a test's script)."""

    def watch(self, roots: Sequence[WatchRoot]) -> None:
        """Watch exactly ``roots`` from now on (replacing what was watched before)."""

    def next_batch(self) -> frozenset[Path] | None:
        """Block until files change and return their paths; None once the source is closed."""

    def close(self) -> None:
        """Stop watching; a blocked :meth:`next_batch` returns None."""


def is_ignored(path: Path) -> bool:
    """True for caches, build output and editor scratch files."""
    name = path.name
    return (bool(_IGNORED_PARTS.intersection(path.parts)) or name.endswith(_IGNORED_SUFFIXES)
            or name.startswith(".#") or name == "4913")  # vim's write test


class FileWatcher:
    """A :class:`ChangeSource` over real file events (watchdog's native observer)."""

    def __init__(self, settle: float = SETTLE_SECONDS, *,
                 observer: Callable[[], Any] | None = None,
                 stop_timeout: float = STOP_SECONDS) -> None:
        self.settle = settle
        self.stop_timeout = stop_timeout
        self._new_observer = observer or _native_observer
        self._events: queue.Queue[Path | None] = queue.Queue()
        self._observer: Any = None
        self._lock = threading.Lock()

    def watch(self, roots: Sequence[WatchRoot]) -> None:
        observer = self._new_observer()
        handler = _Handler(self._events)
        for root in dict.fromkeys(roots):
            if root.path.is_dir():
                observer.schedule(handler, str(root.path), recursive=root.recursive)
        observer.start()
        with self._lock:
            previous, self._observer = self._observer, observer
        if previous is not None:
            _stop(previous, self.stop_timeout)

    def next_batch(self) -> frozenset[Path] | None:
        first = self._events.get()
        if first is None:
            return None
        batch = {first}
        deadline = time.monotonic() + self.settle
        while True:
            try:
                item = self._events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return frozenset(batch)
            if item is None:
                self._events.put(None)  # deliver this batch; the next call sees the close
                return frozenset(batch)
            batch.add(item)
            deadline = time.monotonic() + self.settle

    def close(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
        self._events.put(None)
        if observer is not None:
            _stop(observer, self.stop_timeout)


def _native_observer() -> Any:
    from watchdog.observers import Observer

    return Observer()


def _stop(observer: Any, timeout: float) -> None:
    """Stop ``observer``, waiting ``timeout`` seconds at most: watchdog's ``stop`` joins its
    threads without a bound, and Ctrl-C must end ``deploy dev`` even if one of them is stuck
    (its threads are daemon threads: the process exits without them)."""
    stopper = threading.Thread(target=observer.stop, name="watch-stop", daemon=True)
    stopper.start()
    stopper.join(timeout)
    if not stopper.is_alive():
        observer.join(timeout)


class _Handler(FileSystemEventHandler):
    """Queues the relevant paths of watchdog's events."""

    def __init__(self, events: queue.Queue[Path | None]) -> None:
        super().__init__()
        self.events = events

    def dispatch(self, event: FileSystemEvent) -> None:
        if event.event_type not in _EVENT_TYPES:
            return
        if event.is_directory and event.event_type not in ("moved", "deleted"):
            return  # a renamed or removed directory counts; its files' own events do otherwise
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                path = Path(raw if isinstance(raw, str) else raw.decode())
                if not is_ignored(path):
                    self.events.put(path)
