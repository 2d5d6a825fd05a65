"""Deleting what retention no longer keeps, and giving the space back to the file system.

* :meth:`RetentionRepo.expire_executions` deletes ended executions (``stopped_at`` before a
  cutoff) with everything that belongs to them: history, callback tokens (``tasks``),
  ``task_invocations`` (timers and pending tasks of an ended execution are gone already);
* :meth:`RetentionRepo.expire_invocations` deletes invocation records (the functions' logs);
* both work in bounded batches, one short transaction each, so a sweep never holds the
  database for long;
* :meth:`RetentionRepo.reclaim` returns free pages to the file system (``auto_vacuum =
  INCREMENTAL``, which :meth:`Database.open` sets: on new databases at once, on older ones
  by a one-time ``VACUUM``), so the file shrinks instead of only being reused; done when at
  least a quarter of the file is free.

Migration 8 adds the indexes the cutoffs need (executions by ``stopped_at``, invocations by
``invoked_at``).
"""

from __future__ import annotations

from deployer.emulator.store.db import Database, register_migration
from deployer.emulator.store.link_repos import LINKS_TABLE
from deployer.emulator.store.map_run_repos import MAP_RUNS_TABLE

__all__ = ["RetentionRepo"]
SWEEP_BATCH = 200  # executions (or 20x as many invocation records) per transaction

register_migration(
    8,
    "retention: ended executions by their end, invocations by their time",
    """
    CREATE INDEX executions_by_end ON executions (stopped_at) WHERE stopped_at IS NOT NULL;
    CREATE INDEX invocations_by_time ON invocations (invoked_at)
    """,
)


class RetentionRepo:
    """The deletions retention makes (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def expire_executions(self, before: float, limit: int = SWEEP_BATCH) -> list[int]:
        """Delete up to ``limit`` executions that ended before ``before`` (oldest end first)
        with their history and callback tokens; their ``seq``."""
        with self._db.transaction() as conn:
            seqs = [int(r[0]) for r in conn.execute(
                "SELECT seq FROM executions WHERE stopped_at IS NOT NULL AND stopped_at < ? "
                "AND status != 'Running' ORDER BY stopped_at LIMIT ?", (before, limit))]
            if seqs:
                marks = ",".join("?" * len(seqs))
                for table in ("history", "tasks", "timers", "task_invocations",
                              LINKS_TABLE):
                    conn.execute(f"DELETE FROM {table} WHERE exec_seq IN ({marks})", seqs)
                conn.execute(f"DELETE FROM {MAP_RUNS_TABLE} WHERE parent_seq IN ({marks})", seqs)
                conn.execute(f"DELETE FROM executions WHERE seq IN ({marks})", seqs)
        return seqs

    def expire_invocations(self, before: float, limit: int = SWEEP_BATCH * 20) -> int:
        """Delete up to ``limit`` invocation records older than ``before``; how many."""
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM invocations WHERE seq IN (SELECT seq FROM invocations "
                "WHERE invoked_at < ? ORDER BY invoked_at LIMIT ?)", (before, limit))
            return int(cur.rowcount)

    def reclaim(self, *, at_least: float = 0.25) -> int:
        """Give free pages back to the file system when at least ``at_least`` of the file is
        free; the number of pages given back."""
        pages, free = self.pages()
        if not free or free < pages * at_least:
            return 0
        self._db.give_back_free_pages()
        return free

    def pages(self) -> tuple[int, int]:
        """(pages in the file, free pages)."""
        with self._db.read() as conn:
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
            (free,) = conn.execute("PRAGMA freelist_count").fetchone()
        return int(pages), int(free)
