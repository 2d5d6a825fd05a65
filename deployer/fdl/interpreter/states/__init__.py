"""One evaluator per state family; each exposes ``begin(ctx, run, state, st)`` returning a
:class:`~deployer.fdl.interpreter.runtime.Done` when the state finished at once, or None when it
now waits (a task, a timer, child scopes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.fdl.ast import (
    ChoiceState,
    FailState,
    MapState,
    ParallelState,
    PassState,
    StateType,
    SucceedState,
    TaskState,
    WaitState,
)
from deployer.fdl.interpreter.states import parallel, simple, task

__all__ = ["BEGIN", "BEGIN_BY_CLASS"]

BEGIN: dict[StateType, Callable[..., Any]] = {
    StateType.PASS: simple.begin_pass,
    StateType.WAIT: simple.begin_wait,
    StateType.CHOICE: simple.begin_choice,
    StateType.SUCCEED: simple.begin_succeed,
    StateType.FAIL: simple.begin_fail,
    StateType.TASK: task.begin_task,
    StateType.PARALLEL: parallel.begin_parallel,
    StateType.MAP: parallel.begin_map,
}

#: The same evaluators keyed by AST class (one dict lookup instead of the ``type`` property).
BEGIN_BY_CLASS: dict[type, Callable[..., Any]] = {
    PassState: simple.begin_pass,
    WaitState: simple.begin_wait,
    ChoiceState: simple.begin_choice,
    SucceedState: simple.begin_succeed,
    FailState: simple.begin_fail,
    TaskState: task.begin_task,
    ParallelState: parallel.begin_parallel,
    MapState: parallel.begin_map,
}
