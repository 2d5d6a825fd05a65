"""History → progress: where an execution stands, state by state, folded from its history.

The input is the execution history as ``GetExecutionHistory`` returns it (on the emulator and
on Alibaba Cloud alike), in ``EventId`` order: any objects with the attributes of
:class:`HistoryRecord` (``event_id``, ``schedule_event_id``, ``type``, ``step_name``, ``time``,
``detail``; ``detail`` parsed JSON or its text). The output is plain data:

* per scope (the flow, each Parallel branch, each Map iteration): its states (in definition
  order when the flow is given, with those never reached; else as first entered), the edges
  taken between consecutive visits with their counts, and the path (every visit in order);
* per state: its visits and the status of the latest one (:class:`Status`);
* per visit: raw input (``StepEntered``), input (``StepStarted``), the task attempts (resource,
  mode, parameters, output — FC's ``{"Body": ...}`` — or error), output, error and cause,
  entered/exited times, its event ids, and for Parallel/Map the nested scopes.

Status rules: ``StepEntered`` opens a visit (``running``; ``waiting`` for a Wait state when the
flow is given); a task failure inside an open visit means a retry back-off (``retrying``) until
the next ``TaskStarted`` or the ``StepFailed`` that follows it in the same step; ``StepSucceeded``
→ ``succeeded``; ``StepFailed`` → ``failed``, which becomes ``caught`` when a later state of the
same scope is entered (a Catch took it); a visit still open when the execution ends becomes
``stopped``, ``timed-out`` or ``failed`` (children of a Parallel/Map visit that ended without
them, cancelled, become ``stopped``); a state of the flow never entered is ``not-reached``.

Pure: no I/O, no clock. :class:`ProgressFold` folds one event at a time (the live views);
:func:`fold` folds a whole history. The data it produces lives in
:mod:`deployer.fdl.progress.model`; the package (:mod:`deployer.fdl.progress`) exports both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from deployer.fdl.legacy.ast import AnyFlow
from deployer.fdl.legacy.outline import flow_outline
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
)
from deployer.fdl.syntax.outline import Outline, OutlineNode

__all__ = ["ProgressFold", "fold"]

_OPEN_VISIT_END = {"Stopped": "stopped", "TimedOut": "timed-out", "Failed": "failed"}


def _detail(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw else {}
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


class ProgressFold:
    """Folds history events one at a time; :attr:`progress` is the result so far.

    ``flow`` (optional, either dialect) gives state types (Wait visits are ``waiting``, with
    ``fires_at`` for a literal ``Seconds``/``duration``) and the states never reached. Events
    must come in EventId order; an event already folded (same or lower id) is ignored, so
    re-reading a page is harmless.
    """

    def __init__(self, flow: AnyFlow | None = None) -> None:
        self.progress = ExecutionProgress()
        self._scopes: dict[int, ScopeProgress] = {1: self.progress.root}
        self._visits: dict[int, Visit] = {}  # StepEntered id -> visit
        self._attempts: dict[int, tuple[Visit, Attempt]] = {}  # TaskScheduled id -> attempt
        self._scope_of: dict[int, ScopeProgress] = {}  # StepEntered id -> its scope
        self._definitions: dict[int, Outline] = {}  # scope opener id -> its definition
        if flow is not None:
            outline = flow_outline(flow)
            self._definitions[1] = outline
            _declare(self.progress.root, outline)

    def add_all(self, events: Iterable[HistoryRecord]) -> ExecutionProgress:
        for event in events:
            self.add(event)
        return self.progress

    def add(self, event: HistoryRecord) -> Visit | None:
        """Fold one event; return the visit it concerns (None for execution/scope events)."""
        p = self.progress
        if event.event_id <= p.last_event_id:
            return None
        p.last_event_id = event.event_id
        kind, detail = event.type, _detail(event.detail)
        if kind == "ExecutionStarted":
            p.input, p.started_at = detail.get("Input"), event.time
            return None
        if kind in TERMINAL_EXECUTION_EVENTS:
            self._end(event, detail)
            return None
        if kind == "StepEntered":
            return self._entered(event, detail)
        if kind in ("BranchEntered", "IterationEntered", "BranchExited", "IterationExited"):
            self._child_scope(event, detail)
            return None
        if kind.startswith("Task"):
            return self._task(event, detail)
        visit = self._visits.get(event.schedule_event_id)
        if visit is None:
            return None
        visit.last_event_id = event.event_id
        if kind == "StepStarted":
            visit.input = detail.get("Input")
        elif kind == "StepSucceeded":
            visit.status, visit.fires_at = Status.SUCCEEDED, None
            visit.output = detail.get("Output")
            _close_children(visit)
        elif kind == "StepFailed":
            visit.status, visit.fires_at = Status.FAILED, None
            visit.error, visit.cause = _text(detail.get("Error")), _text(detail.get("Cause"))
            _close_children(visit)
        elif kind == "StepExited":
            visit.exited_at = event.time
        return visit

    # --- event kinds --------------------------------------------------------------------------

    def _entered(self, event: HistoryRecord, detail: dict[str, Any]) -> Visit:
        p = self.progress
        p.transitions += 1
        scope = self._scopes.get(event.schedule_event_id, p.root)
        name = event.step_name
        state = scope.states.get(name)
        if state is None:
            state = scope.states[name] = StateProgress(name)
        definition = self._definition_of(scope, name)
        if definition is not None:
            state.type = definition.type
        visit = Visit(name, len(state.visits) + 1, event.event_id, event.time, Status.RUNNING,
                      raw_input=detail.get("Input"), last_event_id=event.event_id)
        if definition is not None and definition.waits:
            visit.status = Status.WAITING
            entered = parse_time(event.time)
            if definition.wait_seconds is not None and entered is not None:
                visit.fires_at = entered + definition.wait_seconds
        if scope.path:
            previous = scope.path[-1]
            if previous.status is Status.FAILED:
                previous.status = Status.CAUGHT
            edge = (previous.state, name)
            scope.edges[edge] = scope.edges.get(edge, 0) + 1
        state.visits.append(visit)
        scope.path.append(visit)
        self._visits[event.event_id] = visit
        self._scope_of[event.event_id] = scope
        return visit

    def _task(self, event: HistoryRecord, detail: dict[str, Any]) -> Visit | None:
        kind = event.type
        if kind == "TaskScheduled":
            visit = self._visits.get(event.schedule_event_id)
            if visit is None:
                return None
            attempt = Attempt(len(visit.attempts) + 1, event.event_id, event.time,
                              str(detail.get("Resource", "")), str(detail.get("TaskMode", "")),
                              detail.get("Parameters"))
            visit.attempts.append(attempt)
            if attempt.number > 1:
                visit.status = Status.RETRYING
            self._attempts[event.event_id] = (visit, attempt)
        else:
            found = self._attempts.get(event.schedule_event_id)
            if found is None:
                return None
            visit, attempt = found
            if kind == "TaskStarted":
                attempt.started_at, attempt.outcome = event.time, "started"
                if visit.status is Status.RETRYING:
                    visit.status = Status.RUNNING
            elif kind == "TaskSucceeded":
                attempt.ended_at, attempt.outcome = event.time, "succeeded"
                attempt.output = detail.get("Output")
            elif kind in ("TaskFailed", "TaskTimedOut", "TaskSubmitFailed"):
                attempt.ended_at = event.time
                attempt.outcome = "timed-out" if kind == "TaskTimedOut" else "failed"
                attempt.error = _text(detail.get("Error"))
                attempt.cause = _text(detail.get("Cause"))
                if visit.status.active:
                    visit.status = Status.RETRYING  # a back-off, unless StepFailed follows
        visit.last_event_id = event.event_id
        return visit

    def _child_scope(self, event: HistoryRecord, detail: dict[str, Any]) -> None:
        if event.type.endswith("Entered"):
            visit = self._visits.get(event.schedule_event_id)
            if visit is None:
                return
            kind = "branch" if event.type == "BranchEntered" else "iteration"
            index = detail.get("Index", len(visit.scopes))
            scope = ScopeProgress(kind, int(index) if isinstance(index, int) else 0,
                                  event.event_id)
            parent = self._scope_of.get(visit.entered_event_id)
            definition = self._child_definition(parent, visit.state, kind, scope.index)
            if definition is not None:
                self._definitions[event.event_id] = definition
                _declare(scope, definition)
            visit.scopes.append(scope)
            visit.last_event_id = event.event_id
            self._scopes[event.event_id] = scope
            return
        exited = self._scopes.get(event.schedule_event_id)
        if exited is not None:
            exited.output = detail.get("Output")
            exited.error = _text(detail.get("Error"))

    def _end(self, event: HistoryRecord, detail: dict[str, Any]) -> None:
        p = self.progress
        p.status, p.stopped_at = TERMINAL_EXECUTION_EVENTS[event.type], event.time
        p.output = detail.get("Output")
        p.error, p.cause = _text(detail.get("Error")), _text(detail.get("Cause"))
        _close(self._visits.values(), Status(_OPEN_VISIT_END.get(p.status, "stopped")))

    # --- the definition, when known -----------------------------------------------------------

    def _definition_of(self, scope: ScopeProgress, name: str) -> OutlineNode | None:
        definition = self._definitions.get(scope.opened_event_id)
        return None if definition is None else definition.by_name.get(name)

    def _child_definition(self, parent: ScopeProgress | None, state_name: str, kind: str,
                          index: int) -> Outline | None:
        if parent is None:
            return None
        state = self._definition_of(parent, state_name)
        return None if state is None else state.child(kind, index)


def _close(visits: Iterable[Visit], status: Status) -> None:
    for visit in visits:
        if visit.status.active:
            visit.status, visit.fires_at = status, None


def _close_children(visit: Visit) -> None:
    """A Parallel/Map visit ended: children still open were cancelled (they log no event)."""
    for scope in visit.scopes:
        _close(scope.path, Status.STOPPED)
        for child in scope.path:
            _close_children(child)


def _declare(scope: ScopeProgress, definition: Outline) -> None:
    """Give ``scope`` every state of ``definition`` (not reached until entered), in order."""
    for node in definition.nodes:
        scope.states.setdefault(node.name, StateProgress(node.name, node.type))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def fold(events: Iterable[HistoryRecord], flow: AnyFlow | None = None) -> ExecutionProgress:
    """The progress of an execution from its history (see the module docstring)."""
    return ProgressFold(flow).add_all(events)

