"""The clock's time-jump policy: when virtual time may jump, and remembering where it is.

With ``auto_advance`` (the default) the scheduler may jump a :class:`VirtualClock` to the next
due instant when, and only when:

* the clock is virtual and the engine is exactly idle (no job in flight: no step, no task
  running, no caller inside :meth:`Scheduler.activity`);
* the next instant lies in the future; and
* a Wait or retry timer, or a delayed delivery (``step_latency``), is pending. Timeouts alone
  never make time jump, so a callback task is not timed out behind the caller's back.

Time never goes backwards, and every jump is remembered in the database (in the same
transaction that checked the timer row), so a restarted daemon resumes from the last instant.
On the real clock nothing here does anything.
"""

from __future__ import annotations

import sqlite3

from deployer.emulator.clock import HORIZON, Clock
from deployer.emulator.store import engine_meta
from deployer.emulator.store.db import Database

__all__ = ["Instant", "TimeJumpPolicy"]

Instant = tuple[float, tuple[int, str] | None]
"""(fire_at, timer key) of the next due thing; the key is None for a delayed delivery."""


class TimeJumpPolicy:
    """Decides where virtual time may jump and moves (and remembers) the clock."""

    def __init__(self, db: Database, clock: Clock, *, auto_advance: bool = True) -> None:
        self._db = db
        self._clock = clock
        self.auto_advance = auto_advance

    def may_jump(self, in_flight: int) -> bool:
        """The engine is idle enough for a jump (checked before looking at timers)."""
        return self._clock.is_virtual and self.auto_advance and in_flight == 0

    def target(self, next_due: Instant | None, *, skip_pending: bool) -> Instant | None:
        """Where to jump, given the next due instant and whether a Wait/retry timer or a
        delayed delivery is pending; None when time must stand still."""
        if next_due is None or next_due[0] <= self._clock.now() or not skip_pending:
            return None
        if next_due[0] > HORIZON:
            return None  # the clock never passes its horizon (clock.py)
        return next_due

    @property
    def can_advance(self) -> bool:
        return getattr(self._clock, "advance_to", None) is not None

    def advance(self, instant: float) -> None:
        """Move the virtual clock to ``instant`` (never backwards)."""
        advance_to = getattr(self._clock, "advance_to", None)
        if advance_to is not None:
            advance_to(instant)

    def remember(self, conn: sqlite3.Connection) -> None:
        """Save the clock's instant inside the caller's transaction."""
        engine_meta.save_clock(conn, self._clock.now())

    def persist(self) -> None:
        """Remember the virtual clock's instant (a restarted daemon never goes back)."""
        if self._clock.is_virtual:
            with self._db.transaction() as conn:
                self.remember(conn)

    def restore(self, saved: float | None) -> None:
        """At start: move a virtual clock forward to the instant remembered last time (at most
        to its horizon: a state an older version saved beyond it is brought back there)."""
        if saved is not None and self._clock.is_virtual:
            self.advance(min(saved, HORIZON) if saved == saved else self._clock.now())
