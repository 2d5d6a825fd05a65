"""Published versions and aliases of FC functions and CloudFlow flows (migration 4).

* ``function_versions``: an immutable snapshot of a function (its config JSON and code
  checksum) per ``version_id`` (1, 2, ...).
* ``function_aliases``: a name pointing at a version, plus canary weights (JSON
  ``{"<version>": <0..1>}``).
* ``flow_versions``: an immutable snapshot of a flow (definition, role, environment).
* ``flow_aliases``: a name with its routing (JSON ``[{"version": "1", "weight": 90}, ...]``).
* ``release_counters``: the last version number handed out per function or flow, so numbers
  keep increasing and are never reused after a version is deleted; dropped with the
  resource (a re-created function or flow starts again at 1).

No foreign keys: ``flows`` rows are replaced on update. The services delete a resource's
versions and aliases when they delete the resource (:meth:`ReleaseRepo.drop_all`).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from deployer.emulator.store.db import Database, register_migration

__all__ = ["AliasRow", "ReleaseRepo", "VersionRow"]

register_migration(
    4,
    "published versions and aliases of functions and flows",
    """
    CREATE TABLE function_versions (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        version INTEGER NOT NULL, description TEXT NOT NULL, snapshot TEXT NOT NULL,
        created_at REAL NOT NULL, PRIMARY KEY (account_id, region, name, version));
    CREATE TABLE flow_versions (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        version INTEGER NOT NULL, description TEXT NOT NULL, snapshot TEXT NOT NULL,
        created_at REAL NOT NULL, PRIMARY KEY (account_id, region, name, version));
    CREATE TABLE function_aliases (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        alias TEXT NOT NULL, version TEXT NOT NULL, description TEXT NOT NULL,
        routing TEXT NOT NULL, created_at REAL NOT NULL, modified_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, name, alias));
    CREATE TABLE flow_aliases (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        alias TEXT NOT NULL, version TEXT NOT NULL, description TEXT NOT NULL,
        routing TEXT NOT NULL, created_at REAL NOT NULL, modified_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, name, alias));
    CREATE TABLE release_counters (
        kind TEXT NOT NULL, account_id TEXT NOT NULL, region TEXT NOT NULL,
        name TEXT NOT NULL, last INTEGER NOT NULL,
        PRIMARY KEY (kind, account_id, region, name))
    """,
)

KINDS = ("function", "flow")


@dataclass(frozen=True, slots=True)
class VersionRow:
    """One published version; ``snapshot`` is the resource as it was (service-owned JSON)."""

    name: str
    version: int
    description: str
    snapshot: dict[str, Any]
    created_at: float


@dataclass(frozen=True, slots=True)
class AliasRow:
    """One alias; ``version`` is its main version, ``routing`` the service-owned weights."""

    name: str
    alias: str
    version: str
    description: str
    routing: Any
    created_at: float
    modified_at: float


def _version(row: sqlite3.Row) -> VersionRow:
    return VersionRow(row["name"], int(row["version"]), row["description"],
                      json.loads(row["snapshot"]), row["created_at"])


def _alias(row: sqlite3.Row) -> AliasRow:
    return AliasRow(row["name"], row["alias"], row["version"], row["description"],
                    json.loads(row["routing"]), row["created_at"], row["modified_at"])


class ReleaseRepo:
    """Versions and aliases of one ``kind`` of resource (``function`` or ``flow``)."""

    def __init__(self, db: Database, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown release kind {kind!r}")
        self._db = db
        self._kind = kind
        self._versions = f"{kind}_versions"
        self._aliases = f"{kind}_aliases"

    # --- versions -----------------------------------------------------------------------------

    def publish(self, account_id: str, region: str, name: str, description: str,
                snapshot: dict[str, Any], at: float) -> VersionRow:
        """Store a new version numbered one above every number handed out so far."""
        key = (self._kind, account_id, region, name)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT last FROM release_counters WHERE kind=? AND account_id=? "
                               "AND region=? AND name=?", key).fetchone()
            number = (int(row[0]) if row else 0) + 1
            conn.execute("INSERT OR REPLACE INTO release_counters VALUES (?,?,?,?,?)",
                         (*key, number))
            conn.execute(f"INSERT INTO {self._versions} VALUES (?,?,?,?,?,?,?)",
                         (account_id, region, name, number, description,
                          json.dumps(snapshot), at))
        return VersionRow(name, number, description, snapshot, at)

    def version(self, account_id: str, region: str, name: str,
                number: int) -> VersionRow | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT * FROM {self._versions} WHERE account_id=? AND region=? AND name=? "
                "AND version=?", (account_id, region, name, number)).fetchone()
        return _version(row) if row else None

    def latest_version(self, account_id: str, region: str, name: str) -> VersionRow | None:
        """The highest-numbered version that still exists."""
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT * FROM {self._versions} WHERE account_id=? AND region=? AND name=? "
                "ORDER BY version DESC LIMIT 1", (account_id, region, name)).fetchone()
        return _version(row) if row else None

    def versions(self, account_id: str, region: str, name: str, *, start: int | None,
                 limit: int, descending: bool) -> list[VersionRow]:
        """Up to ``limit`` versions from ``start`` (inclusive), by number."""
        if descending:
            sql, bound = "version<=?", start if start is not None else 2 ** 62
        else:
            sql, bound = "version>=?", start if start is not None else 0
        order = "DESC" if descending else "ASC"
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"SELECT * FROM {self._versions} WHERE account_id=? AND region=? AND name=? "
                f"AND {sql} ORDER BY version {order} LIMIT ?",
                (account_id, region, name, bound, limit)).fetchall()
        return [_version(r) for r in rows]

    def delete_version(self, account_id: str, region: str, name: str, number: int) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                f"DELETE FROM {self._versions} WHERE account_id=? AND region=? AND name=? "
                "AND version=?", (account_id, region, name, number))
        return cur.rowcount > 0

    # --- aliases ------------------------------------------------------------------------------

    def alias(self, account_id: str, region: str, name: str, alias: str) -> AliasRow | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT * FROM {self._aliases} WHERE account_id=? AND region=? AND name=? "
                "AND alias=?", (account_id, region, name, alias)).fetchone()
        return _alias(row) if row else None

    def insert_alias(self, account_id: str, region: str, row: AliasRow) -> bool:
        """Insert ``row``; False when the alias name is taken."""
        with self._db.transaction() as conn:
            try:
                conn.execute(f"INSERT INTO {self._aliases} VALUES (?,?,?,?,?,?,?,?,?)",
                             _alias_values(account_id, region, row))
            except sqlite3.IntegrityError:
                return False
        return True

    def update_alias(self, account_id: str, region: str, row: AliasRow) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE {self._aliases} SET version=?, description=?, routing=?, "
                "modified_at=? WHERE account_id=? AND region=? AND name=? AND alias=?",
                (row.version, row.description, json.dumps(row.routing), row.modified_at,
                 account_id, region, row.name, row.alias))

    def delete_alias(self, account_id: str, region: str, name: str, alias: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                f"DELETE FROM {self._aliases} WHERE account_id=? AND region=? AND name=? "
                "AND alias=?", (account_id, region, name, alias))
        return cur.rowcount > 0

    def aliases(self, account_id: str, region: str, name: str, *, start: str = "",
                prefix: str = "", limit: int) -> list[AliasRow]:
        """Up to ``limit`` aliases named ``>= start`` with ``prefix``, ascending by name."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"SELECT * FROM {self._aliases} WHERE account_id=? AND region=? AND name=? "
                "AND alias>=? AND substr(alias, 1, ?)=? ORDER BY alias LIMIT ?",
                (account_id, region, name, start, len(prefix), prefix, limit)).fetchall()
        return [_alias(r) for r in rows]

    def all_aliases(self, account_id: str, region: str, name: str) -> list[AliasRow]:
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"SELECT * FROM {self._aliases} WHERE account_id=? AND region=? AND name=? "
                "ORDER BY alias", (account_id, region, name)).fetchall()
        return [_alias(r) for r in rows]

    def drop_all(self, account_id: str, region: str, name: str) -> None:
        """Forget every version, alias and the version counter of one resource."""
        args = (account_id, region, name)
        with self._db.transaction() as conn:
            for table in (self._versions, self._aliases):
                conn.execute(f"DELETE FROM {table} WHERE account_id=? AND region=? AND name=?",
                             args)
            conn.execute("DELETE FROM release_counters WHERE kind=? AND account_id=? "
                         "AND region=? AND name=?", (self._kind, *args))


def _alias_values(account_id: str, region: str, row: AliasRow) -> tuple[Any, ...]:
    return (account_id, region, row.name, row.alias, row.version, row.description,
            json.dumps(row.routing), row.created_at, row.modified_at)
