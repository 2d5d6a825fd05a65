"""CloudFlow persistence: flows, executions, history events, timers and pending tasks.

Schema (migration 2), all regional rows keyed by (account_id, region):

* ``flows``: one row per flow; ``environment`` is JSON or NULL.
* ``executions``: one row per execution, ``seq`` is the internal key. ``state`` is the
  interpreter's :class:`Execution` as JSON and ``version`` counts the steps committed; every
  step is written with ``WHERE version = <the version it was computed from>`` so a stale or
  repeated step never commits twice.
  Migration 7 adds ``flow_version`` (the published version it runs, '' for LATEST) and
  ``qualifier`` (the alias it was started through, '' for none).
* ``history``: the interpreter's history events as served (``GetExecutionHistory``).
* ``timers``: every pending Wait, retry back-off and timeout, ``fire_at`` in clock seconds.
* ``tasks``: every task the execution waits for (``command`` = the InvokeTask JSON);
  ``token`` is the callback token, ``completed`` marks a reported callback token.
* ``engine_meta``: small key/values (the virtual clock's last instant).

Helpers taking a ``sqlite3.Connection`` run inside the caller's transaction.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from deployer.emulator.records import FlowRecord, HistoryRow
from deployer.emulator.store.db import Database, register_migration
from deployer.emulator.store.link_repos import LINKS_TABLE
from deployer.emulator.store.map_run_repos import MAP_RUNS_TABLE

__all__ = ["ExecutionRow", "FlowRecord", "FlowRepo", "HistoryRow", "TaskRow", "TimerRow"]

register_migration(
    2,
    "CloudFlow flows, executions, history, timers, tasks",
    """
    CREATE TABLE flows (
        account_id TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL,
        flow_id TEXT NOT NULL, definition TEXT NOT NULL, description TEXT NOT NULL,
        type TEXT NOT NULL, role_arn TEXT NOT NULL, execution_mode TEXT NOT NULL,
        environment TEXT, resource_group_id TEXT NOT NULL, external_storage TEXT NOT NULL,
        created_at REAL NOT NULL, modified_at REAL NOT NULL,
        PRIMARY KEY (account_id, region, name));
    CREATE TABLE executions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL, region TEXT NOT NULL, flow_name TEXT NOT NULL,
        name TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL, output TEXT,
        started_at REAL NOT NULL, stopped_at REAL, definition TEXT NOT NULL,
        environment TEXT, role_arn TEXT NOT NULL, mode TEXT NOT NULL,
        state TEXT NOT NULL, version INTEGER NOT NULL,
        UNIQUE (account_id, region, flow_name, name));
    CREATE INDEX executions_by_status ON executions (status);
    CREATE TABLE history (
        exec_seq INTEGER NOT NULL, event_id INTEGER NOT NULL, schedule_event_id INTEGER NOT NULL,
        type TEXT NOT NULL, step_name TEXT NOT NULL, time TEXT NOT NULL, detail TEXT NOT NULL,
        PRIMARY KEY (exec_seq, event_id)) WITHOUT ROWID;
    CREATE TABLE timers (
        exec_seq INTEGER NOT NULL, timer_id TEXT NOT NULL, fire_at REAL NOT NULL,
        purpose TEXT NOT NULL, PRIMARY KEY (exec_seq, timer_id));
    CREATE INDEX timers_by_time ON timers (fire_at);
    CREATE TABLE tasks (
        exec_seq INTEGER NOT NULL, task_id TEXT NOT NULL, command TEXT NOT NULL,
        token TEXT NOT NULL, account_id TEXT NOT NULL, region TEXT NOT NULL,
        callback INTEGER NOT NULL, completed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (exec_seq, task_id));
    CREATE INDEX tasks_by_token ON tasks (account_id, region, token);
    CREATE TABLE engine_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """,
)

register_migration(
    7,
    "executions record the flow version and the alias they were started with",
    """
    ALTER TABLE executions ADD COLUMN flow_version TEXT NOT NULL DEFAULT '';
    ALTER TABLE executions ADD COLUMN qualifier TEXT NOT NULL DEFAULT ''
    """,
)


ExecutionKey = tuple[str, str, str, str]
"""(account_id, region, flow_name, name) of an execution."""





@dataclass(frozen=True, slots=True)
class ExecutionRow:
    """An execution as stored (the interpreter's state JSON stays in the database: only its
    error fields are read, by SQLite)."""

    seq: int
    account_id: str
    region: str
    flow_name: str
    name: str
    status: str
    input: str
    output: str | None
    started_at: float
    stopped_at: float | None
    definition: str
    environment: dict[str, Any] | None
    role_arn: str
    mode: str
    error_code: str
    error_detail: str
    version: int





@dataclass(frozen=True, slots=True)
class TimerRow:
    exec_seq: int
    timer_id: str
    fire_at: float
    purpose: str


@dataclass(frozen=True, slots=True)
class TaskRow:
    exec_seq: int
    task_id: str
    command: dict[str, Any]
    token: str
    callback: bool
    completed: bool
    account_id: str = ""
    region: str = ""
    role_arn: str = ""  # the execution's role (filled by steps.pending_tasks)


def _flow(row: sqlite3.Row) -> FlowRecord:
    env = row["environment"]
    return FlowRecord(
        row["account_id"], row["region"], row["name"], row["flow_id"], row["definition"],
        row["description"], row["type"], row["role_arn"], row["execution_mode"],
        json.loads(env) if env else None, row["resource_group_id"], row["external_storage"],
        row["created_at"], row["modified_at"])


EXECUTION_COLUMNS = (
    "seq, account_id, region, flow_name, name, status, input, output, started_at, stopped_at, "
    "definition, environment, role_arn, mode, "
    "coalesce(json_extract(state, '$.error_code'), '') AS error_code, "
    "coalesce(json_extract(state, '$.error_detail'), '') AS error_detail, version")
"""What :func:`execution_row` reads: every column but the state JSON, of which SQLite
extracts the error fields (no decoding of the whole state in Python)."""


def execution_row(row: sqlite3.Row) -> ExecutionRow:
    env = row["environment"]
    return ExecutionRow(
        row["seq"], row["account_id"], row["region"], row["flow_name"], row["name"],
        row["status"], row["input"], row["output"], row["started_at"], row["stopped_at"],
        row["definition"], json.loads(env) if env else None, row["role_arn"], row["mode"],
        str(row["error_code"]), str(row["error_detail"]), row["version"])


_UNCACHED = object()
_RELATED = (
    "(EXISTS(SELECT 1 FROM execution_links l WHERE l.exec_seq=executions.seq AND "
    "(l.parent_seq<>0 OR l.map_run<>'')) OR EXISTS(SELECT 1 FROM execution_links l WHERE "
    "l.parent_seq=executions.seq AND l.map_run='') OR EXISTS(SELECT 1 FROM map_runs m WHERE "
    "m.parent_seq=executions.seq))")
"""Whether an execution has relations (``execution_links``, ``map_runs``: what
:mod:`services.execution_relations` reads), as a column of its row."""


class FlowRepo:
    """Flows and the read side of executions; the engine writes steps with :mod:`.steps`."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # flows by (account, region, name), filled and emptied under the database lock (so in
        # step with the rows), dropped when the database is wiped (its generation moves on)
        self._flows: dict[tuple[str, str, str], FlowRecord | None] = {}
        self._generation = db.generation

    # --- flows --------------------------------------------------------------------------------

    def get_flow(self, account_id: str, region: str, name: str) -> FlowRecord | None:
        key = (account_id, region, name)
        # A cached flow is read without the lock: a writer drops its entry, and a wipe moves
        # the generation on, inside their transaction (before it commits), so a hit is the
        # flow as committed when the read began.
        if self._generation == self.db.generation:
            cached = self._flows.get(key, _UNCACHED)
            if cached is not _UNCACHED:
                return cached  # type: ignore[return-value]
        with self.db.read() as conn:
            if self._generation != self.db.generation:
                self._flows.clear()
                self._generation = self.db.generation
            if key in self._flows:
                return self._flows[key]
            row = conn.execute("SELECT * FROM flows WHERE account_id=? AND region=? AND name=?",
                               (account_id, region, name)).fetchone()
            rec = _flow(row) if row else None
            if len(self._flows) >= 1024:
                self._flows.clear()
            self._flows[key] = rec
        return rec

    def _forget(self, account_id: str, region: str, name: str) -> None:
        """Called inside a transaction that writes the flow (its lock held)."""
        self._flows.pop((account_id, region, name), None)

    def insert_flow(self, rec: FlowRecord) -> bool:
        """Insert ``rec``; False when the name is taken."""
        with self.db.transaction() as conn:
            self._forget(rec.account_id, rec.region, rec.name)
            try:
                conn.execute("INSERT INTO flows VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                             _flow_values(rec))
            except sqlite3.IntegrityError:
                return False
        return True

    def update_flow(self, rec: FlowRecord) -> None:
        with self.db.transaction() as conn:
            self._forget(rec.account_id, rec.region, rec.name)
            conn.execute("DELETE FROM flows WHERE account_id=? AND region=? AND name=?",
                         (rec.account_id, rec.region, rec.name))
            conn.execute("INSERT INTO flows VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         _flow_values(rec))

    def delete_flow(self, account_id: str, region: str, name: str) -> bool:
        """Delete the flow with all its executions, history, timers and tasks."""
        with self.db.transaction() as conn:
            self._forget(account_id, region, name)
            cur = conn.execute("DELETE FROM flows WHERE account_id=? AND region=? AND name=?",
                               (account_id, region, name))
            seqs = [r[0] for r in conn.execute(
                "SELECT seq FROM executions WHERE account_id=? AND region=? AND flow_name=?",
                (account_id, region, name))]
            for table in ("history", "timers", "tasks", LINKS_TABLE):
                conn.executemany(f"DELETE FROM {table} WHERE exec_seq=?", [(s,) for s in seqs])
            conn.executemany(f"DELETE FROM {MAP_RUNS_TABLE} WHERE parent_seq=?",
                             [(s,) for s in seqs])
            conn.executemany("DELETE FROM executions WHERE seq=?", [(s,) for s in seqs])
        return cur.rowcount > 0

    def list_flows(self, account_id: str, region: str, *, start: str, limit: int,
                   resource_group_id: str = "") -> list[FlowRecord]:
        """Flows in ascending name order from ``start`` (inclusive), at most ``limit``."""
        sql = "SELECT * FROM flows WHERE account_id=? AND region=? AND name>=?"
        args: list[Any] = [account_id, region, start]
        if resource_group_id:
            sql += " AND resource_group_id=?"
            args.append(resource_group_id)
        with self.db.read() as conn:
            rows = conn.execute(sql + " ORDER BY name LIMIT ?", (*args, limit)).fetchall()
        return [_flow(r) for r in rows]

    # --- executions (read side) ---------------------------------------------------------------

    def get_execution(self, account_id: str, region: str, flow: str,
                      name: str) -> ExecutionRow | None:
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE account_id=? AND region=? "
                "AND flow_name=? AND name=?", (account_id, region, flow, name)).fetchone()
        return execution_row(row) if row else None

    def execution_and_relations(self, account_id: str, region: str, flow: str,
                                name: str) -> tuple[ExecutionRow, bool] | None:
        """The named execution, and whether it has a parent, a sub-flow child or a map run
        (DescribeExecution asks both on every call: one statement)."""
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT {EXECUTION_COLUMNS}, {_RELATED} AS related FROM executions WHERE "
                "account_id=? AND region=? AND flow_name=? AND name=?",
                (account_id, region, flow, name)).fetchone()
        return (execution_row(row), bool(row["related"])) if row else None

    def execution_status(self, account_id: str, region: str, flow: str,
                         name: str) -> str | None:
        """The status of the named execution (None when it does not exist)."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT status FROM executions WHERE account_id=? AND region=? AND flow_name=? "
                "AND name=?", (account_id, region, flow, name)).fetchone()
        return None if row is None else str(row[0])

    def running_among(self, keys: list[ExecutionKey]) -> set[ExecutionKey]:
        """Which of the (account, region, flow, name) ``keys`` name a Running execution (one
        query per 200 keys)."""
        running: set[ExecutionKey] = set()
        with self.db.read() as conn:
            for i in range(0, len(keys), 200):
                chunk = keys[i:i + 200]
                rows = conn.execute(
                    "SELECT account_id, region, flow_name, name FROM executions WHERE "
                    "status='Running' AND (account_id, region, flow_name, name) IN (VALUES "
                    + ",".join("(?,?,?,?)" for _ in chunk) + ")",
                    [v for key in chunk for v in key]).fetchall()
                running.update((r[0], r[1], r[2], r[3]) for r in rows)
        return running

    def execution_by_seq(self, seq: int) -> ExecutionRow | None:
        with self.db.read() as conn:
            row = conn.execute(f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE seq=?",
                               (seq,)).fetchone()
        return execution_row(row) if row else None

    def list_executions(self, account_id: str, region: str, flow: str, *, after_seq: int,
                        limit: int, status: str = "", prefix: str = "",
                        started_from: float | None = None,
                        started_to: float | None = None,
                        newest_first: bool = False, flow_version: str | None = None,
                        alias: str | None = None, map_run: str = "") -> list[ExecutionRow]:
        """Executions in start order (``seq`` ascending) with ``seq >= after_seq``; with
        ``newest_first``, descending with ``seq <= after_seq`` (0: from the newest).
        ``flow_version`` ('' for LATEST) and ``alias`` keep those started with them;
        ``map_run`` keeps that map run's children ('' leaves every map run's out)."""
        sql = (f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE account_id=? AND region=? "
               "AND flow_name=? "
               + ("AND (seq<=? OR ?=0)" if newest_first else "AND seq>=?"))
        args: list[Any] = [account_id, region, flow, after_seq]
        if newest_first:
            args.append(after_seq)
        if status:
            sql += " AND status=?"
            args.append(status)
        if prefix:
            sql += " AND substr(name, 1, ?)=?"
            args.extend([len(prefix), prefix])
        if started_from is not None:
            sql += " AND started_at>=?"
            args.append(started_from)
        if started_to is not None:
            sql += " AND started_at<=?"
            args.append(started_to)
        for column, wanted in (("flow_version", flow_version), ("qualifier", alias)):
            if wanted is not None:
                sql += f" AND {column}=?"
                args.append(wanted)
        if map_run:
            sql += f" AND seq IN (SELECT exec_seq FROM {LINKS_TABLE} WHERE map_run=?)"
            args.append(map_run)
        else:
            sql += f" AND seq NOT IN (SELECT exec_seq FROM {LINKS_TABLE} WHERE map_run>'')"
        with self.db.read() as conn:
            order = " ORDER BY seq DESC" if newest_first else " ORDER BY seq"
            rows = conn.execute(sql + order + " LIMIT ?", (*args, limit)).fetchall()
        return [execution_row(r) for r in rows]

    def execution_counts(self, account_id: str, region: str, flow: str) -> dict[str, int]:
        """How many executions of ``flow`` have each status (statuses with none are absent)."""
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT status, COUNT(*) FROM executions WHERE account_id=? AND region=? "
                "AND flow_name=? GROUP BY status", (account_id, region, flow)).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def map_run_counts(self, map_run: str) -> dict[str, int]:
        """How many child executions of map run ``map_run`` have each status."""
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT e.status, COUNT(*) FROM {LINKS_TABLE} l JOIN executions e "
                "ON e.seq=l.exec_seq WHERE l.map_run=? GROUP BY e.status",
                (map_run,)).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def history(self, seq: int, *, from_event: int, limit: int) -> list[HistoryRow]:
        """History events with ``event_id >= from_event`` in ascending order."""
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT event_id, schedule_event_id, type, step_name, time, detail FROM history "
                "WHERE exec_seq=? AND event_id>=? ORDER BY event_id LIMIT ?",
                (seq, from_event, limit)).fetchall()
        return [HistoryRow(*r) for r in rows]

    def task_by_token(self, account_id: str, region: str, token: str) -> list[TaskRow]:
        with self.db.read() as conn:
            rows = conn.execute("SELECT * FROM tasks WHERE account_id=? AND region=? AND token=?",
                                (account_id, region, token)).fetchall()
        return [task_row(r) for r in rows]


def task_row(row: sqlite3.Row, role_arn: str = "") -> TaskRow:
    return TaskRow(row["exec_seq"], row["task_id"], json.loads(row["command"]), row["token"],
                   bool(row["callback"]), bool(row["completed"]), row["account_id"],
                   row["region"], role_arn or "")


def _flow_values(rec: FlowRecord) -> tuple[Any, ...]:
    return (rec.account_id, rec.region, rec.name, rec.flow_id, rec.definition, rec.description,
            rec.type, rec.role_arn, rec.execution_mode,
            json.dumps(rec.environment) if rec.environment is not None else None,
            rec.resource_group_id, rec.external_storage, rec.created_at, rec.modified_at)
