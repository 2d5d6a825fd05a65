"""Asynchronous invocation tasks (migration 13): one row per task of a function, with its
status and outcome (what GetAsyncTask and ListAsyncTasks answer)."""

from __future__ import annotations

import builtins
import sqlite3
from dataclasses import fields
from typing import Any

from deployer.emulator.records import AsyncTaskRow
from deployer.emulator.store.db import Database, register_migration

__all__ = ["AsyncTaskRepo", "AsyncTaskRow"]

register_migration(
    13,
    "Function Compute asynchronous tasks",
    """
    CREATE TABLE fc_async_tasks (
        account_id TEXT NOT NULL, region TEXT NOT NULL, function_name TEXT NOT NULL,
        task_id TEXT NOT NULL, qualifier TEXT NOT NULL, request_id TEXT NOT NULL,
        status TEXT NOT NULL, payload BLOB NOT NULL, return_payload BLOB,
        error_message TEXT NOT NULL DEFAULT '', retries INTEGER NOT NULL DEFAULT 0,
        destination_status TEXT NOT NULL DEFAULT '', instance_id TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL, started_at REAL, ended_at REAL, duration_ms REAL,
        PRIMARY KEY (account_id, region, function_name, task_id));
    CREATE INDEX fc_async_tasks_by_time ON fc_async_tasks
        (account_id, region, function_name, created_at)
    """,
)


_NAMES = [f.name for f in fields(AsyncTaskRow)]
_WHERE = "account_id=? AND region=? AND function_name=? AND task_id=?"


def _row(r: sqlite3.Row) -> AsyncTaskRow:
    values: dict[str, Any] = {name: r[name] for name in _NAMES}
    values["payload"] = bytes(values["payload"])
    if values["return_payload"] is not None:
        values["return_payload"] = bytes(values["return_payload"])
    return AsyncTaskRow(**values)


class AsyncTaskRepo:
    """Rows of ``fc_async_tasks``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def insert(self, row: AsyncTaskRow) -> bool:
        """False when the function has a task with that id already."""
        with self.db.transaction() as conn:
            try:
                conn.execute(f"INSERT INTO fc_async_tasks ({', '.join(_NAMES)}) VALUES "
                             f"({','.join('?' * len(_NAMES))})",
                             tuple(getattr(row, n) for n in _NAMES))
            except sqlite3.IntegrityError:
                return False
        return True

    def get(self, key: tuple[str, str, str, str]) -> AsyncTaskRow | None:
        with self.db.read() as conn:
            row = conn.execute(f"SELECT * FROM fc_async_tasks WHERE {_WHERE}", key).fetchone()
        return _row(row) if row else None

    def update(self, key: tuple[str, str, str, str], *, unless: tuple[str, ...] = (),
               **changes: Any) -> bool:
        """Set ``changes``; not when the status is one of ``unless`` (False then)."""
        sets = ", ".join(f"{k}=?" for k in changes)
        guard = f" AND status NOT IN ({','.join('?' * len(unless))})" if unless else ""
        with self.db.transaction() as conn:
            cur = conn.execute(f"UPDATE fc_async_tasks SET {sets} WHERE {_WHERE}{guard}",
                               (*changes.values(), *key, *unless))
        return cur.rowcount > 0

    def list(self, account_id: str, region: str, function_name: str, *, prefix: str,
             status: str, newest_first: bool, limit: int,
             offset: int) -> builtins.list[AsyncTaskRow]:
        order = "DESC" if newest_first else "ASC"
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT * FROM fc_async_tasks WHERE account_id=? AND region=? AND "
                "function_name=? AND substr(task_id, 1, ?)=? AND (?='' OR status=?) "
                f"ORDER BY created_at {order}, task_id LIMIT ? OFFSET ?",
                (account_id, region, function_name, len(prefix), prefix, status, status,
                 limit, offset)).fetchall()
        return [_row(r) for r in rows]

    def delete_function(self, account_id: str, region: str, function_name: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM fc_async_tasks WHERE account_id=? AND region=? AND "
                         "function_name=?", (account_id, region, function_name))
