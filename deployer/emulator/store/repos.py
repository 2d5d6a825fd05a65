"""Repositories over the emulator database, plus the content-addressed code store.

Regional resources (functions, invocations) are keyed by (account_id, region); RAM resources
are global and keyed by account_id only. Records are plain frozen dataclasses; ``config`` of a
function is a JSON-ready dict owned by ``services/functions.py``.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.checksums import crc64_decimal
from deployer.emulator.records import InvocationRecord
from deployer.emulator.store.db import Database, register_migration

__all__ = [
    "CodeStore",
    "FunctionRecord",
    "FunctionRepo",
    "InvocationRecord",
    "InvocationRepo",
    "PolicyRecord",
    "RamRepo",
    "RoleRecord",
]


@dataclass(frozen=True, slots=True)
class FunctionRecord:
    account_id: str
    region: str
    name: str
    function_id: str
    config: dict[str, Any]
    tags: tuple[tuple[str, str], ...]
    code_checksum: str
    code_size: int
    created_at: float
    modified_at: float


def _function(row: sqlite3.Row) -> FunctionRecord:
    return FunctionRecord(
        row["account_id"], row["region"], row["name"], row["function_id"],
        json.loads(row["config"]), tuple((k, v) for k, v in json.loads(row["tags"])),
        row["code_checksum"], row["code_size"], row["created_at"], row["modified_at"],
    )


class FunctionRepo:
    """Functions; ``get`` is served from memory after the first read. The cache is filled and
    invalidated inside the database transactions (under its lock) and dropped whole when the
    database is wiped, so it never outlives a change made through this repository."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._cache: dict[tuple[str, str, str], FunctionRecord] = {}
        self._generation = db.generation

    def get(self, account_id: str, region: str, name: str) -> FunctionRecord | None:
        key = (account_id, region, name)
        with self._db.lock:
            if self._generation != self._db.generation:
                self._cache.clear()
                self._generation = self._db.generation
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        with self._db.transaction() as conn:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
            row = conn.execute(
                "SELECT * FROM functions WHERE account_id=? AND region=? AND name=?",
                key).fetchone()
            rec = _function(row) if row else None
            if rec is not None:
                self._cache[key] = rec
        return rec

    def insert(self, rec: FunctionRecord) -> bool:
        """Insert ``rec``; False when the name is taken."""
        with self._db.transaction() as conn:
            try:
                conn.execute(
                    "INSERT INTO functions VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (rec.account_id, rec.region, rec.name, rec.function_id,
                     json.dumps(rec.config), json.dumps([list(t) for t in rec.tags]),
                     rec.code_checksum, rec.code_size, rec.created_at, rec.modified_at))
            except sqlite3.IntegrityError:
                return False
            self._cache.pop((rec.account_id, rec.region, rec.name), None)
        return True

    def update(self, rec: FunctionRecord) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE functions SET config=?, code_checksum=?, code_size=?, modified_at=? "
                "WHERE account_id=? AND region=? AND name=?",
                (json.dumps(rec.config), rec.code_checksum, rec.code_size, rec.modified_at,
                 rec.account_id, rec.region, rec.name))
            self._cache.pop((rec.account_id, rec.region, rec.name), None)

    def delete(self, account_id: str, region: str, name: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM functions WHERE account_id=? AND region=? AND name=?",
                (account_id, region, name))
            self._cache.pop((account_id, region, name), None)
        return cur.rowcount > 0

    def list(self, account_id: str, region: str, *, prefix: str = "", start: str = "",
             limit: int = 20) -> list[FunctionRecord]:
        """Up to ``limit`` functions named ``>= start`` with ``prefix``, ascending by name."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT * FROM functions WHERE account_id=? AND region=? AND name>=? "
                "AND substr(name, 1, ?)=? ORDER BY name LIMIT ?",
                (account_id, region, start, len(prefix), prefix, limit)).fetchall()
        return [_function(r) for r in rows]

    def all_keys(self) -> builtins.list[tuple[str, str, str]]:
        """(account_id, region, name) of every function of every account and region."""
        with self._db.transaction() as conn:
            return [(r[0], r[1], r[2]) for r in
                    conn.execute("SELECT account_id, region, name FROM functions")]

    def checksums_in_use(self) -> set[str]:
        with self._db.transaction() as conn:
            return {r[0] for r in conn.execute("SELECT DISTINCT code_checksum FROM functions")}


register_migration(
    3,
    "invocations: the instance that served each, and a request-id index (task logs)",
    """
    ALTER TABLE invocations ADD COLUMN instance_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE invocations ADD COLUMN cold_start INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX invocations_by_request ON invocations (request_id)
    """,
)





def _invocation(r: sqlite3.Row) -> InvocationRecord:
    return InvocationRecord(r["account_id"], r["region"], r["function_name"], r["request_id"],
                            r["invoked_at"], r["invocation_type"], r["status"], r["error_type"],
                            r["duration_ms"], r["log"], r["instance_id"], bool(r["cold_start"]),
                            int(r["seq"]))


class InvocationRepo:
    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, rec: InvocationRecord) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO invocations (account_id, region, function_name, request_id, "
                "invoked_at, invocation_type, status, error_type, duration_ms, log, instance_id, "
                "cold_start) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (rec.account_id, rec.region, rec.function_name, rec.request_id, rec.invoked_at,
                 rec.invocation_type, rec.status, rec.error_type, rec.duration_ms, rec.log,
                 rec.instance_id, int(rec.cold_start)))

    def recent_invocations(self, account_id: str, region: str, function_name: str,
                           limit: int = 20) -> list[InvocationRecord]:
        """The ``limit`` most recent invocations of a function, newest first."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT * FROM invocations WHERE account_id=? AND region=? AND function_name=? "
                "ORDER BY seq DESC LIMIT ?", (account_id, region, function_name, limit)).fetchall()
        return [_invocation(r) for r in rows]

    def invocations_after(self, account_id: str, region: str, function_name: str,
                          after_seq: int, limit: int = 100) -> list[InvocationRecord]:
        """Up to ``limit`` invocations of a function recorded after ``after_seq``, oldest
        first."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT * FROM invocations WHERE account_id=? AND region=? AND function_name=? "
                "AND seq > ? ORDER BY seq LIMIT ?",
                (account_id, region, function_name, after_seq, limit)).fetchall()
        return [_invocation(r) for r in rows]

    def by_request_id(self, account_id: str, region: str,
                      request_id: str) -> InvocationRecord | None:
        """The latest invocation with ``request_id`` (a re-dispatched task has several)."""
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT * FROM invocations WHERE request_id=? AND account_id=? AND region=? "
                "ORDER BY seq DESC LIMIT 1", (request_id, account_id, region)).fetchone()
        return _invocation(row) if row else None

    def instance_first_seen(self, instance_id: str) -> float | None:
        """When instance ``instance_id`` served its first recorded invocation (its start)."""
        if not instance_id:
            return None
        with self._db.transaction() as conn:
            row = conn.execute("SELECT MIN(invoked_at) FROM invocations WHERE instance_id=?",
                               (instance_id,)).fetchone()
        return None if row is None or row[0] is None else float(row[0])


@dataclass(frozen=True, slots=True)
class RoleRecord:
    account_id: str
    name: str
    role_id: str
    trust_policy: str
    description: str
    max_session_duration: int
    created_at: float


@dataclass(frozen=True, slots=True)
class PolicyRecord:
    account_id: str
    name: str
    document: str
    description: str
    created_at: float


class RamRepo:
    """Roles, custom policies and role-policy attachments (role names are case-insensitive)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_role(self, account_id: str, name: str) -> RoleRecord | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT account_id, name, role_id, trust_policy, description, "
                "max_session_duration, created_at FROM roles WHERE account_id=? AND name_key=?",
                (account_id, name.lower())).fetchone()
        return RoleRecord(*row) if row else None

    def insert_role(self, rec: RoleRecord) -> bool:
        with self._db.transaction() as conn:
            try:
                conn.execute("INSERT INTO roles VALUES (?,?,?,?,?,?,?,?)",
                             (rec.account_id, rec.name.lower(), rec.name, rec.role_id,
                              rec.trust_policy, rec.description, rec.max_session_duration,
                              rec.created_at))
            except sqlite3.IntegrityError:
                return False
        return True

    def update_trust_policy(self, account_id: str, name: str, trust_policy: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("UPDATE roles SET trust_policy=? WHERE account_id=? AND name_key=?",
                               (trust_policy, account_id, name.lower()))
        return cur.rowcount > 0

    def delete_role(self, account_id: str, name: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM roles WHERE account_id=? AND name_key=?",
                               (account_id, name.lower()))
        return cur.rowcount > 0

    def get_policy(self, account_id: str, name: str) -> PolicyRecord | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT account_id, name, document, description, created_at FROM policies "
                "WHERE account_id=? AND name=?", (account_id, name)).fetchone()
        return PolicyRecord(*row) if row else None

    def insert_policy(self, rec: PolicyRecord) -> bool:
        with self._db.transaction() as conn:
            try:
                conn.execute("INSERT INTO policies VALUES (?,?,?,?,?)",
                             (rec.account_id, rec.name, rec.document, rec.description,
                              rec.created_at))
            except sqlite3.IntegrityError:
                return False
        return True

    def delete_policy(self, account_id: str, name: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM policies WHERE account_id=? AND name=?",
                               (account_id, name))
        return cur.rowcount > 0

    def attach(self, account_id: str, role: str, policy_type: str, policy: str,
               at: float) -> bool:
        with self._db.transaction() as conn:
            try:
                conn.execute("INSERT INTO role_policies VALUES (?,?,?,?,?)",
                             (account_id, role.lower(), policy_type, policy, at))
            except sqlite3.IntegrityError:
                return False
        return True

    def detach(self, account_id: str, role: str, policy_type: str, policy: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM role_policies WHERE account_id=? AND role_key=? AND policy_type=? "
                "AND policy_name=?", (account_id, role.lower(), policy_type, policy))
        return cur.rowcount > 0

    def attachments_of_role(self, account_id: str, role: str) -> list[tuple[str, str, float]]:
        """(policy_type, policy_name, attached_at) attached to ``role``, by name."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT policy_type, policy_name, attached_at FROM role_policies "
                "WHERE account_id=? AND role_key=? ORDER BY policy_name",
                (account_id, role.lower())).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def roles_with_policy(self, account_id: str, policy_type: str, policy: str) -> int:
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM role_policies WHERE account_id=? AND policy_type=? "
                "AND policy_name=?", (account_id, policy_type, policy)).fetchone()
        return int(row[0])


class CodeStore:
    """Zip packages stored once under ``<root>/<crc64>.zip``.

    A package is written to a ``.part`` file and renamed into place; a write the disk refuses
    leaves nothing behind, and ``.part`` files a killed emulator left are removed at start (one
    emulator per state directory). ``durable``: the file and its directory entry are fsynced
    before :meth:`put` returns, so a function whose row is acknowledged has its code after a
    power cut too."""

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = root
        self.durable = durable
        for orphan in root.glob("*.part") if root.is_dir() else ():
            orphan.unlink(missing_ok=True)

    def put(self, data: bytes) -> str:
        """Store ``data`` (atomically, idempotently) and return its CRC-64 decimal checksum.
        Raises :class:`OSError` (the disk is full...) with no file left behind."""
        checksum = crc64_decimal(data)
        path = self.path(checksum)
        if not path.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".part")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    if self.durable:
                        os.fsync(fh.fileno())
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            if self.durable:
                _sync_directory(self.root)
        return checksum

    def path(self, checksum: str) -> Path:
        return self.root / f"{checksum}.zip"

    def read(self, checksum: str) -> bytes:
        return self.path(checksum).read_bytes()


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
