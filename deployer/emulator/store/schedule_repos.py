"""CloudFlow time-based schedules (migration 5).

``schedules``: one row per (flow, schedule name). ``next_fire_at`` (clock seconds, NULL while
disabled) is when the schedule fires next; the engine mirrors it in memory and fires it
when due. ``last_fired_at`` / ``last_execution`` record the latest fire, so a restarted
emulator knows what already ran. The row is the durable truth: firing a schedule moves
``next_fire_at`` in the same transaction that records the fire (:meth:`ScheduleRepo.fired`),
guarded by the instant it fired for, so one instant never fires twice.
"""

from __future__ import annotations

import builtins
import sqlite3
from typing import Any

from deployer.emulator.records import ScheduleKey, ScheduleRow
from deployer.emulator.store.db import Database, register_migration

__all__ = ["ScheduleKey", "ScheduleRepo", "ScheduleRow"]

register_migration(
    5,
    "CloudFlow time-based schedules",
    """
    CREATE TABLE schedules (
        account_id TEXT NOT NULL, region TEXT NOT NULL, flow_name TEXT NOT NULL,
        name TEXT NOT NULL, schedule_id TEXT NOT NULL, cron TEXT NOT NULL,
        payload TEXT NOT NULL, description TEXT NOT NULL, enable INTEGER NOT NULL,
        created_at REAL NOT NULL, modified_at REAL NOT NULL, next_fire_at REAL,
        last_fired_at REAL, last_execution TEXT NOT NULL DEFAULT '',
        fire_count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, region, flow_name, name));
    CREATE INDEX schedules_by_next_fire ON schedules (next_fire_at)
    """,
)







def _row(r: sqlite3.Row) -> ScheduleRow:
    return ScheduleRow(r["account_id"], r["region"], r["flow_name"], r["name"],
                       r["schedule_id"], r["cron"], r["payload"], r["description"],
                       bool(r["enable"]), r["created_at"], r["modified_at"], r["next_fire_at"],
                       r["last_fired_at"], r["last_execution"], int(r["fire_count"]))


def _values(row: ScheduleRow) -> tuple[Any, ...]:
    return (row.account_id, row.region, row.flow_name, row.name, row.schedule_id, row.cron,
            row.payload, row.description, int(row.enable), row.created_at, row.modified_at,
            row.next_fire_at, row.last_fired_at, row.last_execution, row.fire_count)


_WHERE = "account_id=? AND region=? AND flow_name=? AND name=?"


class ScheduleRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: ScheduleKey) -> ScheduleRow | None:
        with self.db.transaction() as conn:
            row = conn.execute(f"SELECT * FROM schedules WHERE {_WHERE}", key).fetchone()
        return _row(row) if row else None

    def insert(self, row: ScheduleRow) -> bool:
        """Insert ``row``; False when the name is taken for the flow."""
        with self.db.transaction() as conn:
            try:
                conn.execute("INSERT INTO schedules VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                             _values(row))
            except sqlite3.IntegrityError:
                return False
        return True

    def update(self, row: ScheduleRow) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE schedules SET cron=?, payload=?, description=?, enable=?, "
                f"modified_at=?, next_fire_at=? WHERE {_WHERE}",
                (row.cron, row.payload, row.description, int(row.enable), row.modified_at,
                 row.next_fire_at, *row.key))

    def delete(self, key: ScheduleKey) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(f"DELETE FROM schedules WHERE {_WHERE}", key)
        return cur.rowcount > 0

    def delete_flow(self, account_id: str, region: str,
                    flow_name: str) -> builtins.list[ScheduleKey]:
        """Delete every schedule of a flow; the keys deleted."""
        with self.db.transaction() as conn:
            keys = [(account_id, region, flow_name, r[0]) for r in conn.execute(
                "SELECT name FROM schedules WHERE account_id=? AND region=? AND flow_name=?",
                (account_id, region, flow_name))]
            conn.execute("DELETE FROM schedules WHERE account_id=? AND region=? "
                         "AND flow_name=?", (account_id, region, flow_name))
        return keys

    def list(self, account_id: str, region: str, flow_name: str, *, start: str,
             limit: int) -> builtins.list[ScheduleRow]:
        """Schedules named ``>= start``, ascending by name, at most ``limit``."""
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT * FROM schedules WHERE account_id=? AND region=? AND flow_name=? "
                "AND name>=? ORDER BY name LIMIT ?",
                (account_id, region, flow_name, start, limit)).fetchall()
        return [_row(r) for r in rows]

    def pending(self) -> builtins.list[ScheduleRow]:
        """Every enabled schedule with a next fire (all accounts and regions)."""
        with self.db.transaction() as conn:
            rows = conn.execute("SELECT * FROM schedules WHERE next_fire_at IS NOT NULL "
                                "ORDER BY next_fire_at").fetchall()
        return [_row(r) for r in rows]

    def move(self, key: ScheduleKey, expected: float | None, next_fire_at: float | None) -> bool:
        """Set the next fire if it still is ``expected``; False when the row changed."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                f"UPDATE schedules SET next_fire_at=? WHERE {_WHERE} AND next_fire_at IS ?",
                (next_fire_at, *key, expected))
        return cur.rowcount > 0

    def fired(self, key: ScheduleKey, fire_at: float, next_fire_at: float | None,
              execution: str, at: float) -> bool:
        """Record that the schedule fired for ``fire_at`` (starting ``execution``) and move it
        to ``next_fire_at``; False (nothing written) when it no longer waits for
        ``fire_at`` (updated, disabled, deleted or fired already)."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE schedules SET next_fire_at=?, last_fired_at=?, last_execution=?, "
                f"fire_count=fire_count+1 WHERE {_WHERE} AND next_fire_at=?",
                (next_fire_at, at, execution, *key, fire_at))
        return cur.rowcount > 0
