"""One evaluator per state family; each exposes ``begin(ctx, run, state, st)`` returning a
:class:`~deployer.fdl.interpreter.runtime.Done` when the state finished at once, or None when it
now waits (a task, a timer, child scopes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.fdl.ast import StateType
from deployer.fdl.interpreter.states import parallel, simple, task

__all__ = ["BEGIN"]

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
