"""The engine's restart paths: which unfinished tasks to invoke again, and what becomes of an
execution whose step cannot run.

* At start, every task that was dispatched but whose result was never committed is invoked
  again (at-least-once, as CloudFlow's Standard mode documents), except a
  ``WaitForCustomCallback`` task whose invocation had completed (``tasks.invoked``,
  :mod:`deployer.emulator.store.recovery`): its function has the token and the task keeps
  waiting for ReportTaskSucceeded/Failed. A callback task cut off before its function
  returned is invoked again.
* A step that raises instead of running (the interpreter itself never raises: this is a stored
  state or definition that cannot be loaded, or a value the database refuses) ends its
  execution ``Failed`` with ``FnF.InternalError`` and a cause naming the problem, so a timer
  is not fired again and again and the daemon always comes up. Database errors are not the
  execution's fault: they propagate and the step is tried again later.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from deployer.emulator.clock import Clock
from deployer.emulator.store import recovery
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import TaskRow
from deployer.fdl.interpreter.history import format_time
from deployer.fdl.interpreter.runtime import INTERNAL_ERROR_CODE

__all__ = ["fail_broken_step", "remember_invoked", "tasks_to_invoke"]

log = logging.getLogger("deployer.emulator.engine")


def tasks_to_invoke(tasks: Sequence[TaskRow],
                    invoked: set[tuple[int, str]]) -> list[TaskRow]:
    """The pending ``tasks`` to invoke again: all but callback tasks already invoked."""
    return [t for t in tasks if not (t.callback and (t.exec_seq, t.task_id) in invoked)]


def remember_invoked(db: Database, seq: int, task_id: str) -> None:
    """Remember that callback task ``task_id``'s function returned (it has the token)."""
    with db.transaction() as conn:
        recovery.mark_invoked(conn, seq, task_id)


def fail_broken_step(db: Database, clock: Clock, seq: int,
                     exc: Exception) -> tuple[int, list[str]] | None:
    """End execution ``seq`` ``Failed`` because a step raised ``exc``; its new version and
    the timers it had (None when it was not running). Re-raises database errors."""
    if isinstance(exc, sqlite3.Error):
        raise exc
    log.error("execution %s failed: its step could not run", seq, exc_info=exc)
    cause = (f"the emulator could not run the execution's next step ({type(exc).__name__}: "
             f"{str(exc)[:500]}); the execution was ended instead of retried")
    now = clock.now()
    with db.transaction() as conn:
        return recovery.fail_execution(conn, seq, code=INTERNAL_ERROR_CODE, cause=cause,
                                       now=now, time_text=format_time(now))
