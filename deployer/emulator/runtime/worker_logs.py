"""A worker's log, parent side: bounded per request (:class:`BoundedLog`), or read continuously
for a custom runtime whose requests overlap (:class:`LogTap`)."""

from __future__ import annotations

import os
import select
import threading

__all__ = ["LOG_TAIL_KEPT", "MAX_STORED_LOG", "BoundedLog", "LogTap"]

MAX_STORED_LOG = 1024 * 1024  # log bytes kept per request: the first 1 MiB - 64 KiB ...
LOG_TAIL_KEPT = 64 * 1024  # ... and the last 64 KiB (the Tail log needs the last 4 KiB)


class BoundedLog:
    """The log of one request, capped: the head, a truncation marker, the last bytes."""

    def __init__(self, initial: bytes = b"") -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.omitted = 0
        self += initial

    def __iadd__(self, chunk: bytes) -> BoundedLog:
        room = MAX_STORED_LOG - LOG_TAIL_KEPT - len(self.head)
        if room > 0 and not self.tail:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - LOG_TAIL_KEPT
            if excess > 0:
                self.omitted += excess
                del self.tail[:excess]
        return self

    def __bytes__(self) -> bytes:
        if not self.omitted:
            return bytes(self.head + self.tail)
        marker = f"\n... [log truncated: {self.omitted} bytes omitted] ...\n".encode()
        return bytes(self.head) + marker + bytes(self.tail)


class LogTap:
    """Reads a relayed worker's log pipe on its own thread (requests of one custom runtime
    instance may overlap, so no single exchange drains it); keeps the last ``MAX_STORED_LOG``
    bytes, addressed by their position since the start. :meth:`since` drains the pipe itself
    first, so whatever the server wrote before it answered is there."""

    def __init__(self, fd: int, initial: bytes) -> None:
        self._fd = fd
        self._buffer = bytearray(initial)
        self._start = 0  # position of self._buffer[0]
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True, name="fc-log-tap")
        self._thread.start()

    def _read(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        while not self._done.is_set():
            if poller.poll(200) and not self._drain():
                self._done.set()

    def _drain(self) -> bool:
        """Append what the pipe holds; False at EOF."""
        with self._lock:
            while True:
                try:
                    chunk = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    return True
                except OSError:
                    return False
                if not chunk:
                    return False
                self._buffer += chunk
                excess = len(self._buffer) - MAX_STORED_LOG
                if excess > 0:
                    del self._buffer[:excess]
                    self._start += excess

    def mark(self) -> int:
        self._drain()
        with self._lock:
            return self._start + len(self._buffer)

    def since(self, mark: int) -> tuple[bytes, int]:
        """What arrived after ``mark``, and the new mark."""
        self._drain()
        with self._lock:
            begin = max(mark, self._start) - self._start
            return bytes(self._buffer[begin:]), self._start + len(self._buffer)

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=1.0)
