"""Time sources for the emulator.

Everything in the emulator that needs "now" takes a :class:`Clock`. The daemon uses
:class:`SystemClock`; ``mock_cloud()`` and ``--clock virtual`` use :class:`VirtualClock`, whose
time moves only when told to (``advance``/``advance_to``), so Waits, retry back-offs and
timeouts take no wall time and runs are deterministic.

A clock belongs to one emulator instance; virtual time is never shared between instances.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """A source of the current time as Unix epoch seconds (float)."""

    @property
    def is_virtual(self) -> bool: ...

    def now(self) -> float: ...


class SystemClock:
    """The machine's wall clock."""

    is_virtual = False

    def now(self) -> float:
        return time.time()


class VirtualClock:
    """A discrete-event clock: time stands still until advanced.

    It starts on a whole second (``start`` is floored), so integer-second arithmetic in
    handlers, like the seed's ``int(time.time())``, is exact. Time never goes backwards:
    ``advance_to`` a past instant is a no-op. Thread-safe.
    """

    is_virtual = True

    def __init__(self, start: float | None = None) -> None:
        self._now = float(math.floor(time.time() if start is None else start))
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (must be >= 0); return the new time."""
        if seconds < 0:
            raise ValueError("virtual time cannot go backwards")
        with self._lock:
            self._now += seconds
            return self._now

    def advance_to(self, instant: float) -> float:
        """Move time forward to ``instant`` if it lies in the future; return the new time."""
        with self._lock:
            if instant > self._now:
                self._now = float(instant)
            return self._now
