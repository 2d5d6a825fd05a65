"""The emulator's SQLite database: WAL mode, ordered migrations, one shared connection.

``<state_dir>/emulator.db`` holds every resource. Migrations are numbered and applied in order
inside one transaction each; ``schema_version`` records what ran, so a later component (the
CloudFlow engine) adds its tables with :func:`register_migration` and version 2, 3, ...

Thread safety: one connection guarded by an ``RLock``; every statement runs under
:meth:`Database.transaction`, which is re-entrant, commits on success and rolls back on error.

Durability (:mod:`.durability`): a COMMIT returns before the disk has it; each commit is
numbered, the thread that made it remembers the number (:meth:`Database.pending_ack`), and
an acknowledgement waits for :attr:`Database.syncer` to have fsynced the WAL past it (one
fsync for every commit made before it began: group commit, outside the database lock).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deployer.emulator.store.durability import WalSyncer
from deployer.emulator.store.errors import DatabaseDamaged

__all__ = ["MIGRATIONS", "Database", "Migration", "register_migration"]

log = logging.getLogger("deployer.emulator")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    sql: str


MIGRATIONS: dict[int, Migration] = {}


def register_migration(version: int, description: str, sql: str) -> None:
    """Add a schema migration; versions must be unique and are applied in ascending order."""
    if version in MIGRATIONS and MIGRATIONS[version].sql != sql:
        raise ValueError(f"migration {version} is already registered")
    MIGRATIONS[version] = Migration(version, description, sql)


register_migration(
    1,
    "functions, code, invocations, RAM roles and policies",
    """
    CREATE TABLE functions (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        function_id TEXT NOT NULL, config TEXT NOT NULL, tags TEXT NOT NULL,
        code_checksum TEXT NOT NULL, code_size INTEGER NOT NULL,
        created_at REAL NOT NULL, modified_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, name));
    CREATE TABLE invocations (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL, region TEXT NOT NULL, function_name TEXT NOT NULL,
        request_id TEXT NOT NULL, invoked_at REAL NOT NULL, invocation_type TEXT NOT NULL,
        status TEXT NOT NULL, error_type TEXT, duration_ms REAL, log TEXT NOT NULL);
    CREATE INDEX invocations_by_function ON invocations (account_id, region, function_name, seq);
    CREATE TABLE roles (
        account_id TEXT NOT NULL, name_key TEXT NOT NULL, name TEXT NOT NULL,
        role_id TEXT NOT NULL, trust_policy TEXT NOT NULL, description TEXT NOT NULL,
        max_session_duration INTEGER NOT NULL, created_at REAL NOT NULL,
        PRIMARY KEY (account_id, name_key));
    CREATE TABLE policies (
        account_id TEXT NOT NULL, name TEXT NOT NULL, document TEXT NOT NULL,
        description TEXT NOT NULL, created_at REAL NOT NULL,
        PRIMARY KEY (account_id, name));
    CREATE TABLE role_policies (
        account_id TEXT NOT NULL, role_key TEXT NOT NULL, policy_type TEXT NOT NULL,
        policy_name TEXT NOT NULL, attached_at REAL NOT NULL,
        PRIMARY KEY (account_id, role_key, policy_type, policy_name));
    """,
)


class _Reading:
    """``with``: hold the connection's (re-entrant) lock and hand out the connection."""

    __slots__ = ("_conn", "_lock")

    def __init__(self, lock: threading.RLock, conn: sqlite3.Connection) -> None:
        self._lock = lock
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        return self._conn

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """SQLITE_CORRUPT or SQLITE_NOTADB: the file is not a database one can read."""
    name = getattr(exc, "sqlite_errorname", "")
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return not isinstance(exc, sqlite3.OperationalError) and (
        "not a database" in str(exc) or "malformed" in str(exc))


class Database:
    """An open emulator database; create with ``Database.open(path)`` (a file SQLite cannot
    read raises :class:`~deployer.emulator.store.errors.DatabaseDamaged`)."""

    def __init__(self, conn: sqlite3.Connection, syncer: WalSyncer) -> None:
        self._conn = conn
        self._lock = threading.RLock()
        self._reading = _Reading(self._lock, conn)
        self._depth = 0
        self.generation = 0  # bumped by wipe(): in-memory caches over the rows compare it
        self.syncer = syncer
        self._acks = threading.local()  # per thread: the last commit its answer depends on

    @classmethod
    def open(cls, path: Path, *, durable: bool = True) -> Database:
        """Open (creating if needed) and migrate the database at ``path``. ``durable=False``:
        commits never wait for the disk (a throwaway state directory)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        try:
            conn.row_factory = sqlite3.Row
            _incremental_vacuum(conn)  # first: a new file takes it before anything is written
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL: SQLite syncs around checkpoints only; commits are made durable by the
            # WalSyncer before they are acknowledged (FULL would fsync under the lock, per
            # commit)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            db = cls(conn, WalSyncer(path, durable=durable))
            db.migrate()
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _damaged(exc):
                raise DatabaseDamaged(str(exc)) from exc
            raise
        return db

    @property
    def commits(self) -> int:
        """The number of the last commit."""
        return self.syncer.commits

    def acknowledges(self, commit: int) -> None:
        """The calling thread's next answer acknowledges commit ``commit`` (made by another
        thread for it, e.g. a group-commit leader): :meth:`pending_ack` includes it."""
        if commit > getattr(self._acks, "last", 0):
            self._acks.last = commit

    def pending_ack(self) -> int:
        """The last commit the calling thread made (or :meth:`acknowledges`) that is not
        durable yet, else 0; forgets it (the caller waits for it before answering)."""
        last = getattr(self._acks, "last", 0)
        if not last:
            return 0
        self._acks.last = 0
        return 0 if self.syncer.is_durable(last) else last

    @property
    def lock(self) -> threading.RLock:
        """The connection's re-entrant lock: hold it around a transaction to run code right
        after its COMMIT, before any other transaction starts (commit-ordered bookkeeping)."""
        return self._lock

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run statements atomically (nested calls join the outer transaction)."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self._conn
            except BaseException:
                self._depth -= 1
                if outer:
                    self._rollback()
                raise
            self._depth -= 1
            if outer:
                try:
                    self._conn.execute("COMMIT")
                except BaseException:  # e.g. disk full at commit: leave no open transaction
                    self._rollback()
                    raise
                self._acks.last = self.syncer.committed()

    def read(self) -> _Reading:
        """Run read-only statements under the connection's lock, without ``BEGIN
        IMMEDIATE``: the one connection is the only writer of the file (one daemon per state
        directory) and every write holds this lock, so the statements see the last COMMIT and
        no write can interleave. Inside :meth:`transaction` it joins the transaction.
        (``with db.read() as conn``: a plain context manager, cheaper than a generator's.)"""
        return self._reading

    def _rollback(self) -> None:
        """Roll back if a transaction is still open (SQLite itself ends it on some errors,
        such as a full disk; the original error must not be masked)."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def schema_version(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            return int(row[0] or 0)

    def migrate(self) -> list[int]:
        """Apply pending migrations in order; return the versions applied."""
        with self._lock:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, description TEXT NOT NULL)"
            )
            current = self.schema_version()
            applied = []
            for version in sorted(v for v in MIGRATIONS if v > current):
                migration = MIGRATIONS[version]
                with self.transaction() as conn:
                    for statement in migration.sql.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute("INSERT INTO schema_version VALUES (?, ?)",
                                 (version, migration.description))
                applied.append(version)
            return applied

    def give_back_free_pages(self) -> None:
        """Return the file's free pages to the file system (``auto_vacuum = INCREMENTAL``).
        Run as a script: the pragma frees one page per step of its statement."""
        with self._lock:
            self._conn.executescript("PRAGMA incremental_vacuum")

    def wipe(self) -> None:
        """Delete every row of every table (the schema stays)."""
        with self.transaction() as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' "
                "AND name NOT IN ('schema_version', 'sqlite_sequence')")]
            for table in tables:
                conn.execute(f'DELETE FROM "{table}"')
            self.generation += 1

    def close(self) -> None:
        self.syncer.close()
        with self._lock:
            self._conn.close()


def _incremental_vacuum(conn: sqlite3.Connection) -> None:
    """Let the database give free pages back (``PRAGMA incremental_vacuum``, retention's
    sweep): a new, empty database just takes the setting; an older one is rebuilt once
    (``VACUUM``; without room on the disk for the copy it stays as it is, and free pages are
    reused instead of given back)."""
    (mode,) = conn.execute("PRAGMA auto_vacuum").fetchone()
    if mode == 2:  # INCREMENTAL
        return
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    (mode,) = conn.execute("PRAGMA auto_vacuum").fetchone()
    if mode == 2:  # a new file: taken as is
        return
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError as exc:
        log.warning("the database could not be rebuilt to give freed space back (%s); it is "
                    "reused instead", exc)
