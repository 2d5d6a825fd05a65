"""Writing one interpreter step: new execution state, its history events, timers and tasks.

Everything here runs inside the caller's transaction, so a step is committed whole or not at
all, before any of its commands is carried out. ``update_step`` guards on the version the step
was computed from: a stale or duplicated step raises :class:`StaleStep` and rolls back.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Sequence
from enum import Enum
from typing import Any

from deployer.emulator.store.errors import ExecutionNameTaken, StaleStep
from deployer.emulator.store.flow_repos import TaskRow, TimerRow, task_row
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import (
    CancelTimer,
    Command,
    Execution,
    InvokeTask,
    StartTimer,
)

__all__ = [
    "ExecutionNameTaken",
    "StaleStep",
    "all_timers",
    "command_text",
    "delete_timer",
    "insert_execution",
    "load_running",
    "output_text",
    "pending_tasks",
    "timer_exists",
    "unstarted",
    "update_step",
]


_FIELDS: dict[type, tuple[str, ...]] = {}


def command_text(cmd: Command) -> str:
    """``json.dumps(cmd.to_json())`` without ``to_json``'s deep copy (``asdict``): the same
    JSON, fields in declaration order, enums as values, tuples as lists."""
    names = _FIELDS.get(type(cmd))
    if names is None:
        names = _FIELDS[type(cmd)] = tuple(f.name for f in dataclasses.fields(cmd))
    data: dict[str, Any] = {"type": cmd.kind}
    for name in names:
        value = getattr(cmd, name)
        data[name] = value.value if isinstance(value, Enum) else value
    return json.dumps(data)


def state_text(ex: Execution) -> str:
    """The ``state`` column: the execution as JSON without the last step's events (they are
    rows of ``history``; serialising them only to drop them cost more than the rest)."""
    return json.dumps(ex.clone().to_json())


def output_text(ex: Execution) -> str | None:
    """The ``output`` column: the output JSON of a Succeeded execution, else None."""
    if ex.status.value != "Succeeded":
        return None
    return json.dumps(ex.output, ensure_ascii=False, separators=(",", ":"))


def insert_execution(conn: sqlite3.Connection, *, account_id: str, region: str,
                     flow_name: str, input_text: str, definition: str,
                     environment: dict[str, Any] | None, ex: Execution,
                     flow_version: str = "", qualifier: str = "") -> int:
    """Insert a new, not yet started execution (version 1, no history, no timers, no tasks:
    StartExecution's one small commit); return its ``seq``. Its first step (``Started``) is
    committed later by :func:`update_step` from version 1; until then :func:`unstarted`
    finds it, so a daemon killed in between starts it when it comes back.

    Raises :class:`ExecutionNameTaken` when the flow has an execution of that name."""
    try:
        cur = conn.execute(
            "INSERT INTO executions (account_id, region, flow_name, name, status, input, "
            "output, started_at, stopped_at, definition, environment, role_arn, mode, state, "
            "version, flow_version, qualifier) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?)",
            (account_id, region, flow_name, ex.name, ex.status.value, input_text,
             output_text(ex), ex.started_at, ex.stopped_at, definition,
             json.dumps(environment) if environment is not None else None, ex.role_arn,
             ex.execution_mode, state_text(ex), flow_version, qualifier))
    except sqlite3.IntegrityError:
        raise ExecutionNameTaken(f"execution {ex.name!r} of flow {flow_name!r} exists") from None
    return int(cur.lastrowid or 0)


def unstarted(conn: sqlite3.Connection) -> list[int]:
    """The ``seq`` of every Running execution whose first step is not committed yet
    (version 1), in start order."""
    return [int(r[0]) for r in conn.execute(
        "SELECT seq FROM executions WHERE status='Running' AND version=1 ORDER BY seq")]


def update_step(conn: sqlite3.Connection, seq: int, version: int, *, account_id: str,
                region: str, ex: Execution, commands: Sequence[Command],
                timer_delay: float, had_waits: bool = True) -> None:
    """Commit a step computed from ``version``; :class:`StaleStep` if that is not current.

    ``had_waits=False`` says the execution at ``version`` had no timers and no tasks: then
    it has no such rows (only steps write them, and each step drops the rows its execution
    no longer waits for), so unless this step writes some there is nothing to drop."""
    cur = conn.execute(
        "UPDATE executions SET status=?, output=?, stopped_at=?, state=?, version=version+1 "
        "WHERE seq=? AND version=?",
        (ex.status.value, output_text(ex), ex.stopped_at,
         state_text(ex), seq, version))
    if cur.rowcount != 1:
        raise StaleStep(f"execution {seq} is not at version {version}")
    wrote = _write_effects(conn, seq, account_id, region, ex, commands, timer_delay,
                           had_waits)
    if wrote or had_waits:
        _reconcile(conn, seq, ex)


def _write_effects(conn: sqlite3.Connection, seq: int, account_id: str, region: str,
                   ex: Execution, commands: Sequence[Command], timer_delay: float,
                   had_waits: bool) -> bool:
    """Write the step's history, timers and tasks; whether a timer or task row was written.
    A timer cancelled with no row to delete (``had_waits`` False: the execution had none
    before this step, and this step wrote none) costs no statement: a short flow's execution
    timeout is started and cancelled within one step."""
    _insert_history(conn, seq, ex)
    ended = ex.status.is_terminal
    wrote = False
    for cmd in commands:
        if isinstance(cmd, StartTimer):
            # a timer started and gone within this step (a short flow's execution timeout)
            # gets no row: _reconcile would delete it at once
            if ended or cmd.timer_id not in ex.timers:
                continue
            conn.execute("INSERT OR REPLACE INTO timers VALUES (?,?,?,?)",
                         (seq, cmd.timer_id, cmd.fire_at + timer_delay, cmd.purpose.value))
            wrote = True
        elif isinstance(cmd, CancelTimer):
            if had_waits or wrote:
                conn.execute("DELETE FROM timers WHERE exec_seq=? AND timer_id=?",
                             (seq, cmd.timer_id))
        elif isinstance(cmd, InvokeTask):
            callback = cmd.task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK
            conn.execute("INSERT OR REPLACE INTO tasks VALUES (?,?,?,?,?,?,?,0)",
                         (seq, cmd.task_id, command_text(cmd), cmd.task_token,
                          account_id, region, int(callback)))
            wrote = True
    return wrote


_HISTORY_ROWS = (32, 16, 8, 4, 2, 1)
_INSERT_HISTORY = {n: "INSERT INTO history VALUES " + ",".join(["(?,?,?,?,?,?,?)"] * n)
                   for n in _HISTORY_ROWS}


def _insert_history(conn: sqlite3.Connection, seq: int, ex: Execution) -> None:
    """The step's history events as rows: a few multi-row INSERTs (32, 16, ... 1 rows: six
    statement texts, each prepared once) instead of one statement run per event."""
    events = ex.new_events
    i, total = 0, len(events)
    while i < total:
        left = total - i
        size = next(n for n in _HISTORY_ROWS if n <= left)
        values: list[Any] = []
        for h in events[i:i + size]:
            values += (seq, h.event_id, h.schedule_event_id, h.type.value, h.step_name,
                       h.time, h.detail)
        conn.execute(_INSERT_HISTORY[size], values)
        i += size


def _reconcile(conn: sqlite3.Connection, seq: int, ex: Execution) -> None:
    """Drop timers and tasks the execution no longer waits for (fired, done, cancelled)."""
    live_timers = set(ex.timers) if not ex.status.is_terminal else set()
    for (timer_id,) in conn.execute("SELECT timer_id FROM timers WHERE exec_seq=?",
                                    (seq,)).fetchall():
        if timer_id not in live_timers:
            conn.execute("DELETE FROM timers WHERE exec_seq=? AND timer_id=?", (seq, timer_id))
    live_tasks = set(ex.tasks) if not ex.status.is_terminal else set()
    for task_id, callback in conn.execute(
            "SELECT task_id, callback FROM tasks WHERE exec_seq=? AND completed=0",
            (seq,)).fetchall():
        if task_id in live_tasks:
            continue
        if callback:  # keep the token: a late report answers TaskAlreadyCompleted
            conn.execute("UPDATE tasks SET completed=1 WHERE exec_seq=? AND task_id=?",
                         (seq, task_id))
        else:
            conn.execute("DELETE FROM tasks WHERE exec_seq=? AND task_id=?", (seq, task_id))


def all_timers(conn: sqlite3.Connection) -> list[TimerRow]:
    """Every pending timer (the engine mirrors them in memory)."""
    rows = conn.execute("SELECT exec_seq, timer_id, fire_at, purpose FROM timers").fetchall()
    return [TimerRow(r[0], r[1], r[2], r[3]) for r in rows]


def timer_exists(conn: sqlite3.Connection, seq: int, timer_id: str) -> bool:
    return conn.execute("SELECT 1 FROM timers WHERE exec_seq=? AND timer_id=?",
                        (seq, timer_id)).fetchone() is not None


def delete_timer(conn: sqlite3.Connection, seq: int, timer_id: str) -> None:
    conn.execute("DELETE FROM timers WHERE exec_seq=? AND timer_id=?", (seq, timer_id))


def load_running(conn: sqlite3.Connection, seq: int) -> sqlite3.Row | None:
    """What a step needs of a Running execution (None when gone or finished)."""
    row = conn.execute("SELECT status, state, version, definition, account_id, region "
                       "FROM executions WHERE seq=?", (seq,)).fetchone()
    return row if row is not None and row["status"] == "Running" else None


def pending_tasks(conn: sqlite3.Connection) -> list[TaskRow]:
    """Tasks of running executions that were dispatched but whose result is not committed."""
    rows = conn.execute(
        "SELECT t.*, e.role_arn AS role_arn FROM tasks t JOIN executions e ON e.seq=t.exec_seq "
        "WHERE t.completed=0 ORDER BY t.exec_seq").fetchall()
    return [task_row(r, r["role_arn"]) for r in rows]
