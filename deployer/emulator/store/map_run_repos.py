"""Map runs as DescribeMapRun and UpdateMapRun see them (migration 14, ``map_runs``).

One row per map run of a distributed Map, keyed by its parent execution and its name:
the Task that runs it, the settings UpdateMapRun may change (``concurrency``, the tolerated
failures), how many items it has, its status (``Running``, ``Succeeded``, ``Failed``,
``Aborted``) and its start and stop times. The children's own progress stays with them
(``execution_links.map_run``); :func:`child_counts` counts it. The row is deleted with its
parent execution (flow deletion, retention).
"""

from __future__ import annotations

import sqlite3

from deployer.emulator.records import MapRunRow
from deployer.emulator.store.db import Database, register_migration
from deployer.emulator.store.link_repos import LINKS_TABLE

__all__ = ["MAP_RUNS_TABLE", "MapRunRepo", "MapRunRow"]

#: The table; its rows are deleted with their parent execution (``parent_seq``).
MAP_RUNS_TABLE = "map_runs"

register_migration(
    14,
    "map_runs: the map runs of distributed Maps, their settings, status and times",
    """
    CREATE TABLE map_runs (
        parent_seq INTEGER NOT NULL, name TEXT NOT NULL, task_id TEXT NOT NULL,
        concurrency INTEGER NOT NULL, tolerated_count INTEGER, tolerated_percentage REAL,
        total INTEGER NOT NULL, status TEXT NOT NULL, started_at REAL NOT NULL,
        stopped_at REAL, PRIMARY KEY (parent_seq, name))
    """,
)

_COLUMNS = ("parent_seq, name, task_id, concurrency, tolerated_count, tolerated_percentage, "
            "total, status, started_at, stopped_at")


def _row(row: sqlite3.Row | tuple[object, ...]) -> MapRunRow:
    count, percentage, stopped = row[4], row[5], row[9]
    return MapRunRow(int(str(row[0])), str(row[1]), str(row[2]), int(str(row[3])),
                     None if count is None else int(str(count)),
                     None if percentage is None else float(str(percentage)),
                     int(str(row[6])), str(row[7]), float(str(row[8])),
                     None if stopped is None else float(str(stopped)))


class MapRunRepo:
    """Reads and writes of ``map_runs`` for :mod:`services.map_runs`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def open(self, row: MapRunRow) -> MapRunRow:
        """Record a new map run; an existing one (the task sent again after a restart) is
        kept as stored and answered."""
        with self.db.transaction() as conn:
            conn.execute(f"INSERT OR IGNORE INTO map_runs ({_COLUMNS}) VALUES "
                         "(?,?,?,?,?,?,?,?,?,?)",
                         (row.parent_seq, row.name, row.task_id, row.concurrency,
                          row.tolerated_count, row.tolerated_percentage, row.total,
                          row.status, row.started_at, row.stopped_at))
            found = conn.execute(f"SELECT {_COLUMNS} FROM map_runs WHERE parent_seq=? AND "
                                 "name=?", (row.parent_seq, row.name)).fetchone()
        return _row(found)

    def get(self, parent_seq: int, name: str) -> MapRunRow | None:
        with self.db.read() as conn:
            found = conn.execute(f"SELECT {_COLUMNS} FROM map_runs WHERE parent_seq=? AND "
                                 "name=?", (parent_seq, name)).fetchone()
        return None if found is None else _row(found)

    def of_execution(self, parent_seq: int) -> list[str]:
        """The names of the map runs execution ``parent_seq`` started, oldest first."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT name FROM map_runs WHERE parent_seq=? "
                                "ORDER BY started_at, name", (parent_seq,)).fetchall()
        return [str(r[0]) for r in rows]

    def exists(self, name: str) -> bool:
        """Whether a map run of that name is stored (under any parent)."""
        with self.db.read() as conn:
            return conn.execute("SELECT 1 FROM map_runs WHERE name=? LIMIT 1",
                                (name,)).fetchone() is not None

    def change(self, parent_seq: int, name: str, *, concurrency: int,
               tolerated_count: int | None, tolerated_percentage: float | None) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE map_runs SET concurrency=?, tolerated_count=?, "
                         "tolerated_percentage=? WHERE parent_seq=? AND name=?",
                         (concurrency, tolerated_count, tolerated_percentage, parent_seq,
                          name))

    def end(self, parent_seq: int, name: str, status: str, stopped_at: float) -> None:
        """The run ended with ``status`` (once: a later end leaves the first)."""
        with self.db.transaction() as conn:
            conn.execute("UPDATE map_runs SET status=?, stopped_at=? WHERE parent_seq=? AND "
                         "name=? AND status='Running'", (status, stopped_at, parent_seq, name))

    def child_counts(self, parent_seq: int, name: str) -> dict[str, int]:
        """The map run's child executions by status."""
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT e.status, COUNT(*) FROM {LINKS_TABLE} l JOIN executions e "
                "ON e.seq=l.exec_seq WHERE l.parent_seq=? AND l.map_run=? GROUP BY e.status",
                (parent_seq, name)).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}
