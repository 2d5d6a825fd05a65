"""One evaluator per state kind, one module per kind (``pass_state.py`` for Pass); Parallel
and Map share ``children.py``. :mod:`.base` says what an evaluator answers to."""

from __future__ import annotations

from typing import Any

from deployer.fdl.ast import (
    ChoiceState,
    FailState,
    MapState,
    ParallelState,
    PassState,
    SucceedState,
    TaskState,
    WaitState,
)
from deployer.fdl.interpreter.states.base import StateEvaluator
from deployer.fdl.interpreter.states.children import CHILDREN_PHASE, ChildScopes
from deployer.fdl.interpreter.states.choice import ChoiceEvaluator
from deployer.fdl.interpreter.states.fail import FailEvaluator
from deployer.fdl.interpreter.states.map import MapEvaluator
from deployer.fdl.interpreter.states.parallel import ParallelEvaluator
from deployer.fdl.interpreter.states.pass_state import PassEvaluator
from deployer.fdl.interpreter.states.succeed import SucceedEvaluator
from deployer.fdl.interpreter.states.task import TASK_PHASE, TaskCall, TaskEvaluator
from deployer.fdl.interpreter.states.wait import WAIT_PHASE, WaitEvaluator, WaitTimer

__all__ = ["EVALUATORS", "RECORDS", "StateEvaluator"]

#: The evaluator class of each AST state class (each has ``compile(state, scopes)``).
EVALUATORS: dict[type, Any] = {
    PassState: PassEvaluator,
    WaitState: WaitEvaluator,
    ChoiceState: ChoiceEvaluator,
    SucceedState: SucceedEvaluator,
    FailState: FailEvaluator,
    TaskState: TaskEvaluator,
    ParallelState: ParallelEvaluator,
    MapState: MapEvaluator,
}

#: The record classes of what a state waits for, by stored ``phase`` (each has
#: ``from_stored(data)``; the lifecycle's own ``retry`` phase is decoded by the model).
RECORDS: dict[str, Any] = {
    TASK_PHASE: TaskCall, WAIT_PHASE: WaitTimer, CHILDREN_PHASE: ChildScopes,
}
