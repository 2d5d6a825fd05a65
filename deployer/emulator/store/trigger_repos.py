"""Function Compute triggers (migration 10).

``fc_triggers``: one row per (function, trigger name). ``config`` is the trigger's
``triggerConfig`` as JSON text. For an enabled timer trigger, ``next_fire_at`` (clock
seconds) is when it fires next: the flow engine's scheduler mirrors it in memory, as it does
CloudFlow's schedules, and firing moves it in the same statement that records the fire,
guarded by the instant (:meth:`TriggerRepo.fired`), so one instant never fires twice.
``url_prefix`` names an HTTP trigger's local URL (``/fcapp/<url_prefix>/...``).
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from typing import Any

from deployer.emulator.records import TriggerKey, TriggerRow
from deployer.emulator.store.db import Database, register_migration

__all__ = ["TriggerKey", "TriggerRepo", "TriggerRow"]

register_migration(
    10,
    "Function Compute triggers",
    """
    CREATE TABLE fc_triggers (
        account_id TEXT NOT NULL, region TEXT NOT NULL, function_name TEXT NOT NULL,
        name TEXT NOT NULL, trigger_id TEXT NOT NULL, trigger_type TEXT NOT NULL,
        qualifier TEXT NOT NULL, description TEXT NOT NULL, source_arn TEXT NOT NULL,
        invocation_role TEXT NOT NULL, config TEXT NOT NULL, url_prefix TEXT NOT NULL,
        created_at REAL NOT NULL, modified_at REAL NOT NULL, next_fire_at REAL,
        last_fired_at REAL, fire_count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, region, function_name, name));
    CREATE INDEX fc_triggers_by_next_fire ON fc_triggers (next_fire_at);
    CREATE INDEX fc_triggers_by_url ON fc_triggers (url_prefix)
    """,
)




_COLUMNS = ("account_id, region, function_name, name, trigger_id, trigger_type, qualifier, "
            "description, source_arn, invocation_role, config, url_prefix, created_at, "
            "modified_at, next_fire_at, last_fired_at, fire_count")
_WHERE = "account_id=? AND region=? AND function_name=? AND name=?"


def _row(r: sqlite3.Row) -> TriggerRow:
    return TriggerRow(r["account_id"], r["region"], r["function_name"], r["name"],
                      r["trigger_id"], r["trigger_type"], r["qualifier"], r["description"],
                      r["source_arn"], r["invocation_role"], json.loads(r["config"]),
                      r["url_prefix"], r["created_at"], r["modified_at"], r["next_fire_at"],
                      r["last_fired_at"], int(r["fire_count"]))


def _values(row: TriggerRow) -> tuple[Any, ...]:
    return (row.account_id, row.region, row.function_name, row.name, row.trigger_id,
            row.trigger_type, row.qualifier, row.description, row.source_arn,
            row.invocation_role, json.dumps(row.config, sort_keys=True), row.url_prefix,
            row.created_at, row.modified_at, row.next_fire_at, row.last_fired_at,
            row.fire_count)


class TriggerRepo:
    """Rows of ``fc_triggers``; every statement in its own transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: TriggerKey) -> TriggerRow | None:
        with self.db.read() as conn:
            row = conn.execute(f"SELECT * FROM fc_triggers WHERE {_WHERE}", key).fetchone()
        return _row(row) if row else None

    def by_url(self, url_prefix: str) -> TriggerRow | None:
        """The HTTP trigger served under ``/fcapp/<url_prefix>/``."""
        with self.db.read() as conn:
            row = conn.execute("SELECT * FROM fc_triggers WHERE url_prefix=?",
                               (url_prefix,)).fetchone()
        return _row(row) if row else None

    def insert(self, row: TriggerRow) -> bool:
        """Insert ``row``; False when the function has a trigger of that name."""
        with self.db.transaction() as conn:
            try:
                conn.execute(f"INSERT INTO fc_triggers ({_COLUMNS}) VALUES "
                             f"({','.join('?' * 17)})", _values(row))
            except sqlite3.IntegrityError:
                return False
        return True

    def update(self, row: TriggerRow) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE fc_triggers SET qualifier=?, description=?, invocation_role=?, "
                f"config=?, modified_at=?, next_fire_at=? WHERE {_WHERE}",
                (row.qualifier, row.description, row.invocation_role,
                 json.dumps(row.config, sort_keys=True), row.modified_at, row.next_fire_at,
                 *row.key))

    def delete(self, key: TriggerKey) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(f"DELETE FROM fc_triggers WHERE {_WHERE}", key)
        return cur.rowcount > 0

    def delete_function(self, account_id: str, region: str,
                        function_name: str) -> builtins.list[TriggerKey]:
        """Delete every trigger of a function; the keys deleted."""
        where = "account_id=? AND region=? AND function_name=?"
        args = (account_id, region, function_name)
        with self.db.transaction() as conn:
            keys = [(*args, r[0]) for r in conn.execute(
                f"SELECT name FROM fc_triggers WHERE {where}", args)]
            conn.execute(f"DELETE FROM fc_triggers WHERE {where}", args)
        return keys

    def list(self, account_id: str, region: str, function_name: str, *, prefix: str,
             start: str, limit: int) -> builtins.list[TriggerRow]:
        """Triggers named ``>= start`` starting with ``prefix``, ascending, at most ``limit``."""
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM fc_triggers WHERE account_id=? AND region=? AND "
                "function_name=? AND name>=? AND substr(name, 1, ?)=? ORDER BY name LIMIT ?",
                (account_id, region, function_name, start, len(prefix), prefix,
                 limit)).fetchall()
        return [_row(r) for r in rows]

    def pending(self) -> builtins.list[TriggerRow]:
        """Every timer trigger with a next fire (all accounts and regions)."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT * FROM fc_triggers WHERE next_fire_at IS NOT NULL "
                                "ORDER BY next_fire_at").fetchall()
        return [_row(r) for r in rows]

    def fired(self, key: TriggerKey, fire_at: float, next_fire_at: float | None,
              at: float) -> bool:
        """Record that the timer fired for ``fire_at`` and move it to ``next_fire_at``; False
        (nothing written) when it no longer waits for ``fire_at``."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE fc_triggers SET next_fire_at=?, last_fired_at=?, "
                f"fire_count=fire_count+1 WHERE {_WHERE} AND next_fire_at=?",
                (next_fire_at, at, *key, fire_at))
        return cur.rowcount > 0
