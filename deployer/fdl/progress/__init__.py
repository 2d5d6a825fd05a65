"""Where an execution stands, state by state: the history -> progress fold.

``fold.py`` folds ``GetExecutionHistory`` events (the emulator's or Alibaba Cloud's) into
per-scope, per-state and per-visit progress (:class:`ProgressFold` one event at a time for the
live views, :func:`fold` for a whole history); ``model.py`` is the plain data it produces and the
:class:`HistoryRecord` shape it reads. The console and the terminal live view both use it; pure,
no I/O, no clock.
"""

from __future__ import annotations

from deployer.fdl.progress.fold import ProgressFold, fold
from deployer.fdl.progress.model import (
    TERMINAL_EXECUTION_EVENTS,
    Attempt,
    ExecutionProgress,
    HistoryRecord,
    ScopeProgress,
    StateProgress,
    Status,
    Visit,
    parse_time,
    task_id,
    task_request_id,
)

__all__ = [
    "TERMINAL_EXECUTION_EVENTS",
    "Attempt",
    "ExecutionProgress",
    "HistoryRecord",
    "ProgressFold",
    "ScopeProgress",
    "StateProgress",
    "Status",
    "Visit",
    "fold",
    "parse_time",
    "task_id",
    "task_request_id",
]
