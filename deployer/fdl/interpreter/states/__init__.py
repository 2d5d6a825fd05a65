"""One evaluator per state kind, one module per kind (``pass_state.py`` for Pass); Parallel
and Map share ``children.py``. :mod:`.base` says what an evaluator answers to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.fdl.interpreter.active import Waiting
from deployer.fdl.interpreter.states.base import Site, StateEvaluator
from deployer.fdl.interpreter.states.children import CHILDREN_PHASE, ChildScopes
from deployer.fdl.interpreter.states.choice import ChoiceEvaluator
from deployer.fdl.interpreter.states.fail import FailEvaluator
from deployer.fdl.interpreter.states.map import MapEvaluator
from deployer.fdl.interpreter.states.parallel import ParallelEvaluator
from deployer.fdl.interpreter.states.pass_state import PassEvaluator
from deployer.fdl.interpreter.states.succeed import SucceedEvaluator
from deployer.fdl.interpreter.states.task import TASK_PHASE, TaskCall, TaskEvaluator
from deployer.fdl.interpreter.states.wait import WAIT_PHASE, WaitEvaluator, WaitTimer
from deployer.fdl.syntax.ast import (
    ChoiceState,
    FailState,
    MapState,
    ParallelState,
    PassState,
    SucceedState,
    TaskState,
    WaitState,
)

__all__ = ["EVALUATORS", "RECORDS", "StateEvaluator"]

#: How each AST state class compiles into its evaluator.
EVALUATORS: dict[type, Callable[[Any, Site], StateEvaluator]] = {
    PassState: PassEvaluator.compile,
    WaitState: WaitEvaluator.compile,
    ChoiceState: ChoiceEvaluator.compile,
    SucceedState: SucceedEvaluator.compile,
    FailState: FailEvaluator.compile,
    TaskState: TaskEvaluator.compile,
    ParallelState: ParallelEvaluator.compile,
    MapState: MapEvaluator.compile,
}

#: How the record of what a state waits for is read back, by stored ``phase`` (the lifecycle's
#: own ``retry`` phase is decoded by the model).
RECORDS: dict[str, Callable[[dict[str, Any]], Waiting]] = {
    TASK_PHASE: TaskCall.from_stored,
    WAIT_PHASE: WaitTimer.from_stored,
    CHILDREN_PHASE: ChildScopes.from_stored,
}
