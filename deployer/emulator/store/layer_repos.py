"""Function Compute layer versions (migration 11).

``fc_layers``: one row per layer name with the last version number it gave out (versions
are never reused, also after a deletion) and its ACL (public or not). ``fc_layer_versions``:
one row per published version; the content is a zip in the code store, by checksum.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from typing import Any

from deployer.emulator.records import LayerVersionRow
from deployer.emulator.store.db import Database, register_migration

__all__ = ["LayerRepo", "LayerVersionRow"]

register_migration(
    11,
    "Function Compute layers",
    """
    CREATE TABLE fc_layers (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        last_version INTEGER NOT NULL, public INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, region, name));
    CREATE TABLE fc_layer_versions (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        version INTEGER NOT NULL, description TEXT NOT NULL, license TEXT NOT NULL,
        compatible_runtimes TEXT NOT NULL, code_checksum TEXT NOT NULL,
        code_size INTEGER NOT NULL, created_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, name, version))
    """,
)


def _row(r: sqlite3.Row) -> LayerVersionRow:
    return LayerVersionRow(r["account_id"], r["region"], r["name"], int(r["version"]),
                           r["description"], r["license"],
                           tuple(json.loads(r["compatible_runtimes"])), r["code_checksum"],
                           int(r["code_size"]), r["created_at"], bool(r["public"]))


_SELECT = ("SELECT v.*, l.public FROM fc_layer_versions v JOIN fc_layers l USING "
           "(account_id, region, name)")


class LayerRepo:
    """Rows of the layer tables; every statement in its own transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def publish(self, account_id: str, region: str, name: str, fields: dict[str, Any],
                now: float) -> LayerVersionRow:
        """Insert the next version of ``name`` (1 for a new layer)."""
        key = (account_id, region, name)
        with self.db.transaction() as conn:
            row = conn.execute("SELECT last_version FROM fc_layers WHERE account_id=? AND "
                               "region=? AND name=?", key).fetchone()
            version = (int(row[0]) if row else 0) + 1
            if row:
                conn.execute("UPDATE fc_layers SET last_version=? WHERE account_id=? AND "
                             "region=? AND name=?", (version, *key))
            else:
                conn.execute("INSERT INTO fc_layers VALUES (?,?,?,?,0)", (*key, version))
            conn.execute("INSERT INTO fc_layer_versions VALUES (?,?,?,?,?,?,?,?,?,?)",
                         (*key, version, fields["description"], fields["license"],
                          json.dumps(list(fields["compatible_runtimes"])),
                          fields["code_checksum"], fields["code_size"], now))
        found = self.get(account_id, region, name, version)
        assert found is not None
        return found

    def get(self, account_id: str, region: str, name: str,
            version: int) -> LayerVersionRow | None:
        with self.db.read() as conn:
            row = conn.execute(f"{_SELECT} WHERE account_id=? AND region=? AND name=? AND "
                               "version=?", (account_id, region, name, version)).fetchone()
        return _row(row) if row else None

    def versions(self, account_id: str, region: str, name: str, *, start: int,
                 limit: int) -> builtins.list[LayerVersionRow]:
        """Versions ``>= start`` of ``name``, ascending, at most ``limit``."""
        with self.db.read() as conn:
            rows = conn.execute(f"{_SELECT} WHERE account_id=? AND region=? AND name=? AND "
                                "version>=? ORDER BY version LIMIT ?",
                                (account_id, region, name, start, limit)).fetchall()
        return [_row(r) for r in rows]

    def latest(self, account_id: str, region: str, *, prefix: str, start: str,
               limit: int, public_only: bool = False) -> builtins.list[LayerVersionRow]:
        """The newest version of each layer named ``>= start`` with ``prefix``, by name."""
        with self.db.read() as conn:
            rows = conn.execute(
                f"{_SELECT} WHERE account_id=? AND region=? AND name>=? AND "
                "substr(name, 1, ?)=? AND (? = 0 OR l.public = 1) AND version = ("
                "SELECT MAX(version) FROM fc_layer_versions w WHERE w.account_id=v.account_id "
                "AND w.region=v.region AND w.name=v.name) ORDER BY name LIMIT ?",
                (account_id, region, start, len(prefix), prefix, int(public_only),
                 limit)).fetchall()
        return [_row(r) for r in rows]

    def delete(self, account_id: str, region: str, name: str, version: int) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute("DELETE FROM fc_layer_versions WHERE account_id=? AND region=? "
                               "AND name=? AND version=?", (account_id, region, name, version))
        return cur.rowcount > 0

    def set_public(self, account_id: str, region: str, name: str, public: bool) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute("UPDATE fc_layers SET public=? WHERE account_id=? AND region=? "
                               "AND name=?", (int(public), account_id, region, name))
        return cur.rowcount > 0
