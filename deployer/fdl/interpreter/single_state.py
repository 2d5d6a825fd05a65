"""One state run alone, like AWS Step Functions' TestState: ``deploy flow test --state``.

The state is entered with the given input as the first state of its scope (a state nested in
a Parallel branch or a Map processor runs in that scope), and the run stops as soon as the
scope moves on: the state's whole lifecycle runs (InputConstructor, its work with the tasks
answered by the caller, Retry back-offs on the virtual clock, OutputConstructor or Catch),
then nothing after it. The result is the state's output and the state that would come next
(a Choice's branch, a Catch's ``Next``; None when the state ends its scope), or the error it
failed with when no Catch took it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from deployer.fdl.interpreter.history import HistoryEvent, HistoryEventType
from deployer.fdl.interpreter.model import Execution, ExecutionStatus
from deployer.fdl.interpreter.simulate import Answerer, simulate
from deployer.fdl.syntax.ast import Flow, Scope, child_scopes

__all__ = ["StateRun", "run_state"]

_ROOT_OPEN = 1  # the ExecutionStarted event: the root scope's StepEntered events point at it


@dataclass(frozen=True, slots=True)
class StateRun:
    """How the state ended: ``status`` ``Succeeded`` (its ``output`` goes to ``next_state``,
    None when it ends its scope), ``Caught`` (a Catch rule sends ``output`` to
    ``next_state``; ``error`` is what it caught) or ``Failed`` (``error``, uncaught)."""

    state: str
    status: str
    output: Any
    next_state: str | None
    error: tuple[str, str] | None
    retries: int
    history: list[HistoryEvent]

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "status": self.status, "output": self.output,
                "next_state": self.next_state,
                "error": None if self.error is None else {"code": self.error[0],
                                                          "detail": self.error[1]},
                "retries": self.retries}


def _scopes(scope: Scope) -> Iterator[Scope]:
    yield scope
    for state in scope.states:
        for child in child_scopes(state):
            yield from _scopes(child)


def _scope_of(flow: Flow, name: str) -> Scope:
    for scope in _scopes(flow.scope):
        if name in scope.by_name:
            return scope
    raise KeyError(name)


def run_state(flow: Flow, name: str, answer: Answerer, *, input: Any,
              execution_name: str = "state-test") -> StateRun:
    """Run state ``name`` of ``flow`` alone with ``input`` (see the module docstring);
    KeyError when the flow has no such state."""
    scope = _scope_of(flow, name)
    alone = dataclasses.replace(flow, start_at=name, states=scope.states)

    entered: list[HistoryEvent] = []  # the root scope's StepEntered events so far

    def moved_on(ex: Execution) -> bool:
        entered.extend(e for e in ex.new_events if _root_entered(e))
        return len(entered) > 1

    sim = simulate(alone, answer, input=input, execution_name=execution_name, until=moved_on)
    history = sim.history
    mine = [e for e in history if e.step_name == name]
    failed = next((e for e in mine if e.type is HistoryEventType.STEP_FAILED), None)
    succeeded = next((e for e in mine if e.type is HistoryEventType.STEP_SUCCEEDED
                      and e.schedule_event_id == entered[0].event_id), None) if entered \
        else None
    attempts = sum(1 for e in mine if e.type is HistoryEventType.TASK_SCHEDULED) or sum(
        1 for e in mine if e.type is HistoryEventType.STEP_STARTED)
    retries = attempts - 1
    error = None
    if failed is not None:
        detail = json.loads(failed.detail)
        error = (str(detail.get("Error", "")), str(detail.get("Cause", "")))
    following = entered[1] if len(entered) > 1 else None
    if following is not None:
        output = json.loads(following.detail).get("Input")
        status = "Caught" if error is not None else "Succeeded"
        return StateRun(name, status, output, following.step_name, error, max(retries, 0),
                        history)
    ex = sim.execution
    if ex.status is ExecutionStatus.SUCCEEDED:
        output = json.loads(succeeded.detail).get("Output") if succeeded else ex.output
        return StateRun(name, "Succeeded", output, None, None, max(retries, 0), history)
    code, detail_text = error or (ex.error_code, ex.error_detail)
    return StateRun(name, "Failed", None, None, (code, detail_text), max(retries, 0), history)


def _root_entered(event: HistoryEvent) -> bool:
    return event.type is HistoryEventType.STEP_ENTERED and event.schedule_event_id == _ROOT_OPEN
