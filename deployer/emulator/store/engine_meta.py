"""The CloudFlow engine's own rows: the virtual clock's last instant, and counts for health.

Helpers take the caller's ``sqlite3.Connection`` and run inside its transaction.
"""

from __future__ import annotations

import sqlite3

__all__ = ["counts", "save_clock", "saved_clock"]


def saved_clock(conn: sqlite3.Connection) -> float | None:
    """The virtual clock's last remembered instant (None before the first one)."""
    row = conn.execute("SELECT value FROM engine_meta WHERE key='clock'").fetchone()
    return None if row is None else float(row[0])


def save_clock(conn: sqlite3.Connection, instant: float) -> None:
    """Remember ``instant`` as the virtual clock's time (a restart never goes back)."""
    conn.execute("INSERT OR REPLACE INTO engine_meta VALUES ('clock', ?)", (repr(instant),))


def counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """(running executions, pending timers) over every account and region."""
    running = conn.execute("SELECT COUNT(*) FROM executions WHERE status='Running'").fetchone()
    timers = conn.execute("SELECT COUNT(*) FROM timers").fetchone()
    return int(running[0]), int(timers[0])
