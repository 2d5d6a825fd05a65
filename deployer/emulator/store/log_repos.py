"""Reading invocation records by time, for the emulated Log Service (``services/logs.py``).

Invocations are written by the Function Compute service (``repos.InvocationRepo``); this
repository only reads them, a page at a time in time order, so a query over many invocations
never holds the database for long.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deployer.emulator.records import InvocationRecord
from deployer.emulator.store.db import Database, register_migration

__all__ = ["InvocationLogRepo", "InvocationRow", "LogStoreRepo"]

register_migration(
    15,
    "log_stores: Log Service projects and logstores created through the API",
    # IF NOT EXISTS: state directories of earlier versions created the table on first use
    """
    CREATE TABLE IF NOT EXISTS log_stores (
        account_id TEXT NOT NULL, region TEXT NOT NULL, project TEXT NOT NULL,
        logstore TEXT NOT NULL, created_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, project, logstore)
    );
    """,
)


@dataclass(frozen=True, slots=True)
class InvocationRow:
    """An invocation record with its position in time order (``invoked_at``, ``seq``)."""

    seq: int
    record: InvocationRecord


class InvocationLogRepo:
    def __init__(self, db: Database) -> None:
        self._db = db

    def page(self, account_id: str, region: str, functions: Sequence[str], *, start: float,
             end: float, descending: bool, after: tuple[float, int] | None = None,
             limit: int = 200) -> list[InvocationRow]:
        """Invocations of ``functions`` with ``start <= invoked_at < end`` in time order
        (newest first when ``descending``), continuing after the ``(invoked_at, seq)`` key."""
        if not functions:
            return []
        marks = ",".join("?" * len(functions))
        sql = (f"SELECT * FROM invocations WHERE account_id=? AND region=? "
               f"AND function_name IN ({marks}) AND invoked_at>=? AND invoked_at<?")
        params: list[object] = [account_id, region, *functions, start, end]
        if after is not None:
            op = "<" if descending else ">"
            sql += f" AND (invoked_at {op} ? OR (invoked_at = ? AND seq {op} ?))"
            params += [after[0], after[0], after[1]]
        order = "DESC" if descending else "ASC"
        sql += f" ORDER BY invoked_at {order}, seq {order} LIMIT ?"
        params.append(limit)
        with self._db.transaction() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [InvocationRow(r["seq"], InvocationRecord(
            r["account_id"], r["region"], r["function_name"], r["request_id"], r["invoked_at"],
            r["invocation_type"], r["status"], r["error_type"], r["duration_ms"], r["log"]))
            for r in rows]


class LogStoreRepo:
    """Log Service projects and logstores created through the API (CreateProject,
    CreateLogStore); migration 15."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def exists(self, account_id: str, region: str, project: str, logstore: str = "") -> bool:
        """Whether the project (``logstore`` "": the project row) was created."""
        with self._db.transaction() as conn:
            row = conn.execute("SELECT 1 FROM log_stores WHERE account_id=? AND region=? AND "
                               "project=? AND logstore=?",
                               (account_id, region, project, logstore)).fetchone()
        return row is not None

    def add(self, account_id: str, region: str, project: str, logstore: str,
            now: float) -> bool:
        """Record a creation; False when it exists already."""
        with self._db.transaction() as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO log_stores VALUES (?, ?, ?, ?, ?)",
                                  (account_id, region, project, logstore, now))
        return cursor.rowcount == 1
