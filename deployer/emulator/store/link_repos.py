"""What links an execution to others and to its mocks (migration 9, ``execution_links``).

One row per execution that has any of:

* ``mock_case`` — the mock test case its tasks are answered from ('' for none);
* ``parent_seq`` / ``parent_task_id`` — the parent execution and its Task that started it
  (``FNF:StartExecution``), so the parent finds its child again after a restart and stopping
  the parent stops it;
* ``callback_token`` — StartExecution's ``CallbackFnFTaskToken``: when the execution ends, it
  reports its output or error to the task holding that token;
* ``map_run`` — the Distributed Map run it is an iteration of ('' for none).

The row is written in the same transaction as the execution's own first row.
"""

from __future__ import annotations

import sqlite3

from deployer.emulator.records import ExecutionLinks
from deployer.emulator.store.db import Database, register_migration

__all__ = ["LINKS_TABLE", "ExecutionLinks", "LinkRepo", "children_of", "insert_links", "links_of",
           "scheduled_before"]

#: The table; deleted with its execution (flow deletion, retention).
LINKS_TABLE = "execution_links"

register_migration(
    9,
    "execution_links: mock case, parent task, callback token and map run of an execution",
    """
    CREATE TABLE execution_links (
        exec_seq INTEGER PRIMARY KEY, mock_case TEXT NOT NULL DEFAULT '',
        parent_seq INTEGER NOT NULL DEFAULT 0, parent_task_id TEXT NOT NULL DEFAULT '',
        callback_token TEXT NOT NULL DEFAULT '', map_run TEXT NOT NULL DEFAULT '');
    CREATE INDEX execution_links_by_parent ON execution_links (parent_seq, parent_task_id);
    CREATE INDEX execution_links_by_map_run ON execution_links (map_run)
    """,
)


_NONE = ExecutionLinks()


def insert_links(conn: sqlite3.Connection, seq: int, links: ExecutionLinks) -> None:
    """Record the links of the new execution ``seq`` (nothing for empty links)."""
    if links.empty:
        return
    conn.execute("INSERT OR REPLACE INTO execution_links VALUES (?,?,?,?,?,?)",
                 (seq, links.mock_case, links.parent_seq, links.parent_task_id,
                  links.callback_token, links.map_run))


def links_of(conn: sqlite3.Connection, seq: int) -> ExecutionLinks:
    """The links of execution ``seq`` (empty when it has none)."""
    row = conn.execute("SELECT mock_case, parent_seq, parent_task_id, callback_token, map_run "
                       "FROM execution_links WHERE exec_seq=?", (seq,)).fetchone()
    if row is None:
        return _NONE
    return ExecutionLinks(str(row[0]), int(row[1]), str(row[2]), str(row[3]), str(row[4]))


def children_of(conn: sqlite3.Connection, parent_seq: int,
                task_id: str | None = None) -> list[int]:
    """The executions started by execution ``parent_seq`` (by its task ``task_id`` when
    given), oldest first."""
    if task_id is None:
        rows = conn.execute("SELECT exec_seq FROM execution_links WHERE parent_seq=? "
                            "ORDER BY exec_seq", (parent_seq,))
    else:
        rows = conn.execute("SELECT exec_seq FROM execution_links WHERE parent_seq=? AND "
                            "parent_task_id=? ORDER BY exec_seq", (parent_seq, task_id))
    return [int(r[0]) for r in rows]


def scheduled_before(conn: sqlite3.Connection, seq: int, state: str, event_id: int) -> int:
    """How many tasks of state ``state`` execution ``seq`` scheduled before event
    ``event_id`` (a mocked task's invocation index)."""
    row = conn.execute("SELECT COUNT(*) FROM history WHERE exec_seq=? AND type='TaskScheduled' "
                       "AND step_name=? AND event_id<?", (seq, state, event_id)).fetchone()
    return int(row[0])


class LinkRepo:
    """Reads of ``execution_links`` (and the history count mocks need) for the services."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def links(self, seq: int) -> ExecutionLinks:
        with self.db.read() as conn:
            return links_of(conn, seq)

    def children(self, parent_seq: int, task_id: str | None = None) -> list[int]:
        with self.db.read() as conn:
            return children_of(conn, parent_seq, task_id)

    def subflow_children(self, parent_seq: int, limit: int) -> list[int]:
        """Up to ``limit`` executions started by execution ``parent_seq``'s sub-flow tasks
        (map runs' children left out), oldest first."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT exec_seq FROM execution_links WHERE parent_seq=? AND "
                                "map_run='' ORDER BY exec_seq LIMIT ?", (parent_seq, limit))
            return [int(r[0]) for r in rows]

    def scheduled_before(self, seq: int, state: str, event_id: int) -> int:
        with self.db.read() as conn:
            return scheduled_before(conn, seq, state, event_id)

    def map_run_exists(self, name: str) -> bool:
        """Whether a map run of that name is stored or started a child execution."""
        with self.db.read() as conn:
            return conn.execute("SELECT 1 FROM execution_links WHERE map_run=? UNION ALL "
                                "SELECT 1 FROM map_runs WHERE name=? LIMIT 1",
                                (name, name)).fetchone() is not None
