"""A function's configuration documents (migration 12): reserved concurrency, provisioned
instances, scaling and asynchronous invocation settings, each one JSON document per function
(and qualifier, for those FC keys by qualifier), written by its Put* action."""

from __future__ import annotations

import builtins
import json
from typing import Any

from deployer.emulator.store.db import Database, register_migration

__all__ = ["FunctionConfigRepo"]

register_migration(
    12,
    "Function Compute configuration documents (concurrency, provision, scaling, async)",
    """
    CREATE TABLE fc_function_configs (
        account_id TEXT NOT NULL, region TEXT NOT NULL, function_name TEXT NOT NULL,
        kind TEXT NOT NULL, qualifier TEXT NOT NULL, document TEXT NOT NULL,
        modified_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, function_name, kind, qualifier))
    """,
)

_WHERE = "account_id=? AND region=? AND function_name=? AND kind=? AND qualifier=?"


class FunctionConfigRepo:
    """Rows of ``fc_function_configs``, by (account, region, function, kind, qualifier)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def put(self, key: tuple[str, str, str, str, str], document: dict[str, Any],
            at: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(f"DELETE FROM fc_function_configs WHERE {_WHERE}", key)
            conn.execute("INSERT INTO fc_function_configs VALUES (?,?,?,?,?,?,?)",
                         (*key, json.dumps(document, sort_keys=True), at))

    def get(self, key: tuple[str, str, str, str, str]) -> tuple[dict[str, Any], float] | None:
        with self.db.read() as conn:
            row = conn.execute(f"SELECT document, modified_at FROM fc_function_configs WHERE "
                               f"{_WHERE}", key).fetchone()
        return (json.loads(row[0]), float(row[1])) if row else None

    def delete(self, key: tuple[str, str, str, str, str]) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(f"DELETE FROM fc_function_configs WHERE {_WHERE}", key)
        return cur.rowcount > 0

    def delete_function(self, account_id: str, region: str, function_name: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM fc_function_configs WHERE account_id=? AND region=? AND "
                         "function_name=?", (account_id, region, function_name))

    def find(self, kind: str, function_name: str,
             qualifier: str) -> tuple[str, str, dict[str, Any], float] | None:
        """(account, region, document, modified_at) of the first document of ``kind`` with
        this function name and qualifier, in any account and region."""
        with self.db.read() as conn:
            row = conn.execute("SELECT account_id, region, document, modified_at FROM "
                               "fc_function_configs WHERE kind=? AND function_name=? AND "
                               "qualifier=? ORDER BY account_id, region LIMIT 1",
                               (kind, function_name, qualifier)).fetchone()
        return (row[0], row[1], json.loads(row[2]), float(row[3])) if row else None

    def scopes(self) -> builtins.list[tuple[str, str]]:
        """Every (account, region) holding a document."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT DISTINCT account_id, region FROM "
                                "fc_function_configs").fetchall()
        return [(r[0], r[1]) for r in rows]

    def list(self, account_id: str, region: str, kind: str, *, function_name: str = "",
             start: str, limit: int) -> builtins.list[tuple[str, str, dict[str, Any], float]]:
        """(function, qualifier, document, modified_at) of ``kind``, by function name."""
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT function_name, qualifier, document, modified_at FROM "
                "fc_function_configs WHERE account_id=? AND region=? AND kind=? AND "
                "function_name>=? AND (?='' OR function_name=?) ORDER BY function_name, "
                "qualifier LIMIT ?", (account_id, region, kind, start, function_name,
                                      function_name, limit)).fetchall()
        return [(r[0], r[1], json.loads(r[2]), float(r[3])) for r in rows]
