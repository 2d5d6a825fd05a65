"""What the engine's restart paths keep and write: callback invocations that completed, and
executions that fail because their step cannot run.

* ``task_invocations`` (migration 6) holds a row once the function of a
  ``WaitForCustomCallback`` task returned (it has its token; the task now waits for
  ReportTaskSucceeded/Failed). When the engine starts again, a pending callback task without
  one was cut off before its invocation completed and is invoked again; one with it keeps
  waiting for its token. Callback tasks pending before the migration count as invoked (earlier
  versions invoked a callback task once, never again). Rows of tasks no longer pending are
  deleted when the engine starts (:func:`invoked_tasks`).
* :func:`fail_execution` ends a ``Running`` execution ``Failed`` in one transaction: its
  ``ExecutionFailed`` event, the row's status and state, and no timer or pending task left.
  The engine calls it for a step that raises instead of running (a stored state or definition
  this version cannot load, a value the database refuses), so the step is not tried forever.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from deployer.emulator.store.db import register_migration

__all__ = ["fail_execution", "invoked_tasks", "mark_invoked"]

register_migration(
    6,
    "task_invocations: callback tasks whose invocation completed",
    """
    CREATE TABLE task_invocations (
        exec_seq INTEGER NOT NULL, task_id TEXT NOT NULL, PRIMARY KEY (exec_seq, task_id));
    INSERT INTO task_invocations SELECT exec_seq, task_id FROM tasks
        WHERE callback=1 AND completed=0
    """,
)


def mark_invoked(conn: sqlite3.Connection, seq: int, task_id: str) -> None:
    """The function of callback task ``task_id`` returned: it waits for its token now."""
    conn.execute("INSERT OR IGNORE INTO task_invocations VALUES (?,?)", (seq, task_id))


def invoked_tasks(conn: sqlite3.Connection) -> set[tuple[int, str]]:
    """(execution seq, task id) of every pending callback task whose invocation completed;
    forgets the invocations of tasks no longer pending."""
    conn.execute(
        "DELETE FROM task_invocations WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE "
        "t.exec_seq=task_invocations.exec_seq AND t.task_id=task_invocations.task_id "
        "AND t.completed=0)")
    rows = conn.execute("SELECT exec_seq, task_id FROM task_invocations")
    return {(int(seq), str(task_id)) for seq, task_id in rows}


def fail_execution(conn: sqlite3.Connection, seq: int, *, code: str, cause: str, now: float,
                   time_text: str) -> tuple[int, list[str]] | None:
    """End Running execution ``seq`` ``Failed`` with ``code``/``cause`` (history
    ``ExecutionFailed``); return its new version and the ids of the timers it had, or None
    when it is not running (gone, or ended meanwhile). Callback tokens stay known (a late
    report answers TaskAlreadyCompleted); other pending tasks are dropped."""
    row = conn.execute("SELECT status, state, version FROM executions WHERE seq=?",
                       (seq,)).fetchone()
    if row is None or row["status"] != "Running":
        return None
    (last,) = conn.execute("SELECT COALESCE(MAX(event_id), 0) FROM history WHERE exec_seq=?",
                           (seq,)).fetchone()
    detail = json.dumps({"Error": code, "Cause": cause}, ensure_ascii=False,
                        separators=(",", ":"))
    conn.execute("INSERT INTO history VALUES (?,?,?,?,?,?,?)",
                 (seq, last + 1, 1 if last else 0, "ExecutionFailed", "", time_text, detail))
    state = _failed_state(row["state"], code, cause, now, last + 2)
    conn.execute("UPDATE executions SET status='Failed', output=NULL, stopped_at=?, state=?, "
                 "version=version+1 WHERE seq=?", (now, state, seq))
    timers = [str(r[0]) for r in conn.execute("SELECT timer_id FROM timers WHERE exec_seq=?",
                                              (seq,))]
    conn.execute("DELETE FROM timers WHERE exec_seq=?", (seq,))
    conn.execute("UPDATE tasks SET completed=1 WHERE exec_seq=? AND callback=1", (seq,))
    conn.execute("DELETE FROM tasks WHERE exec_seq=? AND callback=0", (seq,))
    conn.execute("DELETE FROM task_invocations WHERE exec_seq=?", (seq,))
    return int(row["version"]) + 1, timers


def _failed_state(text: str, code: str, cause: str, now: float, next_event_id: int) -> str:
    """The stored state, ended (the readers need a JSON object; a state that does not parse
    is replaced by the fields they read)."""
    try:
        state: Any = json.loads(text)
    except ValueError:
        state = None
    if not isinstance(state, dict):
        state = {}
    state.update(status="Failed", error_code=code, error_detail=cause, stopped_at=now,
                 output=None, runs=[], tasks={}, timers={}, next_event_id=next_event_id,
                 new_events=[])
    return json.dumps(state)
