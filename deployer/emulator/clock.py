"""Time sources for the emulator.

Everything in the emulator that needs "now" takes a :class:`Clock`. The daemon uses
:class:`SystemClock`; ``mock_cloud()`` and ``--clock virtual`` use :class:`VirtualClock`, whose
time moves only when told to (``advance``/``advance_to``), so Waits, retry back-offs and
timeouts take no wall time and runs are deterministic.

A clock belongs to one emulator instance; virtual time is never shared between instances.

Virtual time has a **horizon**, :data:`HORIZON` (2100-01-01T00:00:00Z): a virtual clock is never
moved past it (``advance``/``advance_to`` raise :class:`ClockHorizonError`), so every instant
the emulator stores or prints stays within what the wire formats hold (FC request ids carry the
second as 8 hex digits, good until 2106; ISO-8601 times until 9999), with room for a year of
Waits after the horizon itself.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol, runtime_checkable

__all__ = ["HORIZON", "HORIZON_TEXT", "Clock", "ClockHorizonError", "SystemClock",
           "VirtualClock"]

HORIZON = 4_102_444_800.0
HORIZON_TEXT = "2100-01-01T00:00:00Z"


class ClockHorizonError(ValueError):
    """A virtual clock was asked to move past :data:`HORIZON`."""


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
        if not self._now <= HORIZON:
            raise ClockHorizonError(f"a virtual clock cannot start past {HORIZON_TEXT}")
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (must be >= 0); return the new time."""
        if seconds < 0:
            raise ValueError("virtual time cannot go backwards")
        with self._lock:
            self._check(self._now + seconds)
            self._now += seconds
            return self._now

    def advance_to(self, instant: float) -> float:
        """Move time forward to ``instant`` if it lies in the future; return the new time."""
        with self._lock:
            if instant > self._now:
                self._check(instant)
                self._now = float(instant)
            return self._now

    def rewind(self, instant: float | None = None) -> float:
        """Set the time back to ``instant`` (default: the wall clock's second). The one move
        backwards, for a reset that forgot every timer; return the new time."""
        with self._lock:
            self._now = float(math.floor(time.time() if instant is None else instant))
            self._check(self._now)
            return self._now

    def _check(self, instant: float) -> None:
        if not instant <= HORIZON:  # NaN too
            left = max(0.0, HORIZON - self._now)
            raise ClockHorizonError(
                f"the virtual clock cannot pass {HORIZON_TEXT} (its horizon): it can move "
                f"{left:.0f} more seconds")
