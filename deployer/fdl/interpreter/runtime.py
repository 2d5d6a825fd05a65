"""Shared machinery of one ``step``: the step context, history emission, ids, evaluation.

Nothing here decides control flow; :mod:`.lifecycle` does. States modules use these helpers.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from deployer.fdl.ast import (
    Expr,
    Flow,
    MapState,
    ParallelState,
    Scope,
    State,
    TaskMode,
    Template,
    TemplateList,
)
from deployer.fdl.builtins import SeededEntropy
from deployer.fdl.constructors import Template as CompiledTemplate
from deployer.fdl.constructors import compile_template
from deployer.fdl.evaluator import UNAVAILABLE, NullMode, compile_expression, too_deep
from deployer.fdl.evaluator import Scope as ExprScope
from deployer.fdl.expression_errors import EvaluationError, ExpressionSyntaxError
from deployer.fdl.expressions import parse_expression
from deployer.fdl.interpreter.commands import Command, InvokeTask, StartTimer, TimerPurpose
from deployer.fdl.interpreter.history import EVENT_FIELD_NAMES, HistoryEvent, HistoryEventType
from deployer.fdl.interpreter.model import ActiveState, Execution, ScopeRun

__all__ = [
    "DATA_LIMIT_CODE",
    "RUNTIME_ERROR_CODE",
    "TIMEOUT_CODE",
    "Ctx",
    "Done",
    "StateFailure",
]

RUNTIME_ERROR_CODE = "FnF.RuntimeError"
DATA_LIMIT_CODE = "FnF.DataLimitExceeded"
TIMEOUT_CODE = "FnF.Timeout"
EVENT_LIMIT_CODE = "FnF.EventLimitExceeded"
EXECUTION_TIMEOUT_CODE = "FnF.ExecutionTimeout"
INTERNAL_ERROR_CODE = "FnF.InternalError"
DATA_LIMIT_BYTES = 64 * 1024
EMPTY_DETAIL = "{}"
MISSING: Any = object()


_new_object = object.__new__


class _EventSlots:
    """The slot layout of :class:`HistoryEvent` without its frozen ``__setattr__``: an event is
    filled here with plain attribute stores, then becomes a ``HistoryEvent`` by ``__class__``
    assignment (same object, same slots; a frozen dataclass ``__init__`` or the slot
    descriptors' ``__set__`` cost two to four times as much)."""

    __slots__ = EVENT_FIELD_NAMES
    event_id: int
    schedule_event_id: int
    type: HistoryEventType
    step_name: str
    time: str
    detail: str


_STEP_SUCCEEDED = HistoryEventType.STEP_SUCCEEDED
_STEP_EXITED = HistoryEventType.STEP_EXITED


def _setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    assert tuple(f.name for f in fields(cls)) == names
    return tuple(getattr(cls, name).__set__ for name in names)


_SET_TASK = _setters(InvokeTask, ("task_id", "state_path", "action", "parameters", "task_mode",
                                  "task_token", "timeout_seconds"))
_SET_TIMER = _setters(StartTimer, ("timer_id", "fire_at", "purpose"))


def invoke_task(
    task_id: str, state_path: tuple[str, ...], action: str, parameters: Any,
    task_mode: TaskMode, task_token: str, timeout_seconds: int,
) -> InvokeTask:
    """``InvokeTask(...)`` filled through its slots (its frozen ``__init__`` costs twice as
    much; the command is the same)."""
    command = _new_object(InvokeTask)
    set_id, set_path, set_action, set_parameters, set_mode, set_token, set_timeout = _SET_TASK
    set_id(command, task_id)
    set_path(command, state_path)
    set_action(command, action)
    set_parameters(command, parameters)
    set_mode(command, task_mode)
    set_token(command, task_token)
    set_timeout(command, timeout_seconds)
    return command


def start_timer(timer_id: str, fire_at: float, purpose: TimerPurpose) -> StartTimer:
    """``StartTimer(timer_id, fire_at, purpose)`` filled through its slots."""
    command = _new_object(StartTimer)
    set_id, set_fire_at, set_purpose = _SET_TIMER
    set_id(command, timer_id)
    set_fire_at(command, fire_at)
    set_purpose(command, purpose)
    return command


class StateFailure(Exception):
    """A state failed with ``code``/``detail``; Retry then Catch apply."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class EventLimitReached(Exception):
    """The execution emitted ``max_events`` history events."""


@dataclass(slots=True)
class Done:
    """A state finished its own work: ``output`` is its default output (``$Output``) and
    ``next`` the state to go to, or None to end the scope."""

    output: Any
    next: str | None


@dataclass(slots=True)
class Ctx:
    """Everything one ``step`` works on."""

    flow: Flow
    ex: Execution
    now: float
    time: str
    commands: list[Command] = field(default_factory=list)
    queue: deque[tuple[int, str, Any, Raw | None]] = field(default_factory=deque)
    execution_context: dict[str, Any] | None = None  # $Context.Execution, built once a step
    texts: dict[int, tuple[Any, Raw]] = field(default_factory=dict)  # id -> (value, JSON text)
    owned: set[int] = field(default_factory=set)  # runs copied or created by this step

    @classmethod
    def begin(cls, flow: Flow, ex: Execution, now: float, time: str) -> Ctx:
        """``Ctx(flow, ex, now, time)``, built through its slots (once per step)."""
        ctx = _new_object(cls)
        ctx.flow = flow
        ctx.ex = ex
        ctx.now = now
        ctx.time = time
        ctx.commands = []
        ctx.queue = deque()
        ctx.execution_context = None
        ctx.texts = {}
        ctx.owned = set()
        return ctx

    def run(self, run_id: int) -> ScopeRun:
        """The scope run ``run_id``, ready to be changed: ``ex`` is a shallow copy of the
        execution given to ``step``, so a run is copied the first time the step uses it
        (KeyError when there is no such run)."""
        run = self.ex.runs[run_id]
        if run_id not in self.owned:
            run = self.ex.runs[run_id] = run.clone()
            self.owned.add(run_id)
        return run

    def find_run(self, run_id: int) -> ScopeRun | None:
        """:meth:`run`, or None when there is no such run."""
        return self.run(run_id) if run_id in self.ex.runs else None

    def add_run(self, run: ScopeRun) -> None:
        """Store a run created by this step."""
        self.ex.runs[run.run_id] = run
        self.owned.add(run.run_id)

    def emit(
        self, kind: HistoryEventType, step_name: str, schedule: int,
        detail: dict[str, Any] | str, *, terminal: bool = False,
    ) -> int:
        """Append a history event; return its EventId. ``detail`` is the ``EventDetail``
        object, or its compact JSON text already built (see :func:`detail_text`)."""
        ex = self.ex
        event_id = ex.next_event_id
        if event_id > ex.max_events and not terminal:
            raise EventLimitReached
        ex.next_event_id = event_id + 1
        event: Any = _new_object(_EventSlots)
        event.event_id = event_id
        event.schedule_event_id = schedule
        event.type = kind
        event.step_name = step_name
        event.time = self.time
        event.detail = detail if isinstance(detail, str) else _detail(detail)
        event.__class__ = HistoryEvent
        ex.new_events.append(event)
        return event_id

    def emit_exit(self, step_name: str, schedule: int, output_text: str) -> None:
        """``StepSucceeded`` with ``{"Output": <output_text>}``, then ``StepExited``."""
        ex = self.ex
        event_id = ex.next_event_id
        if event_id + 1 > ex.max_events:
            # the limit falls on one of the two: emit them one by one
            self.emit(HistoryEventType.STEP_SUCCEEDED, step_name, schedule,
                      '{"Output":' + output_text + "}")
            self.emit(HistoryEventType.STEP_EXITED, step_name, schedule, EMPTY_DETAIL)
            return
        ex.next_event_id = event_id + 2
        time = self.time
        succeeded: Any = _new_object(_EventSlots)
        succeeded.event_id = event_id
        succeeded.schedule_event_id = schedule
        succeeded.type = _STEP_SUCCEEDED
        succeeded.step_name = step_name
        succeeded.time = time
        succeeded.detail = '{"Output":' + output_text + "}"
        succeeded.__class__ = HistoryEvent
        exited: Any = _new_object(_EventSlots)
        exited.event_id = event_id + 1
        exited.schedule_event_id = schedule
        exited.type = _STEP_EXITED
        exited.step_name = step_name
        exited.time = time
        exited.detail = EMPTY_DETAIL
        exited.__class__ = HistoryEvent
        ex.new_events += (succeeded, exited)

    def command(self, command: Command) -> None:
        self.commands.append(command)

    def text(self, value: Any) -> Raw:
        """The compact JSON text of ``value``, encoded once per step: JSON values are never
        changed in place, and the memo keeps each value alive so its id stays its own."""
        hit = self.texts.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = Raw(dump(value))
        self.texts[id(value)] = (value, text)
        return text

    def sized(self, value: Any, what: str, state_name: str) -> Raw:
        """:func:`check_size` through the step's memo of JSON texts."""
        return size_checked(self.text(value), what, state_name)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# The C encoder ``_ENCODER.encode`` builds on every call, built once: same text, less overhead.
# No circular-reference markers (a shared markers dict could keep stale ids after an error);
# JSON values here are trees, and a too deeply nested one still raises RecursionError.
_C_ENCODE = (
    None if c_make_encoder is None
    else c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", False,
                        False, True)
)


def dump(value: Any) -> str:
    """Compact JSON text of a JSON value (exactly ``_ENCODER.encode(value)``)."""
    if isinstance(value, str):
        return encode_basestring(value)
    if _C_ENCODE is None:  # pragma: no cover - CPython always has the C accelerator
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


class Raw(str):
    """JSON text already serialised (embedded as is by :meth:`Ctx.emit`)."""


def check_size(value: Any, what: str, state_name: str) -> Raw:
    """The JSON text of ``value``; fails the state when it is larger than 64 KiB."""
    return size_checked(Raw(dump(value)), what, state_name)


def size_checked(text: Raw, what: str, state_name: str) -> Raw:
    """``text``, the JSON text of the ``what`` of a state; fails the state when it is larger
    than 64 KiB."""
    if len(text) > DATA_LIMIT_BYTES // 4 and len(text.encode()) > DATA_LIMIT_BYTES:
        raise StateFailure(
            DATA_LIMIT_CODE,
            f"the {what} of state {state_name!r} is {len(text.encode())} bytes, "
            f"over the {DATA_LIMIT_BYTES}-byte limit",
        )
    return text


def detail_text(key: str, text: str) -> str:
    """``{"<key>":<text>}``: the EventDetail of one member whose JSON text is ``text``."""
    return '{"' + key + '":' + text + "}"



def _detail(detail: dict[str, Any]) -> str:
    if not detail:
        return "{}"
    if len(detail) == 1:
        key, value = next(iter(detail.items()))
        if isinstance(value, Raw):
            return f'{{"{key}":{value}}}'
    return dump(detail)


# ------------------------------------------------------------------------------------------
# Scopes and ids


def scope_of(flow: Flow, run: ScopeRun) -> Scope:
    """The ``States`` list a run executes."""
    scope = flow.scope
    for name, index in run.path:
        state = scope.by_name[name]
        if isinstance(state, ParallelState):
            scope = state.branches[index]
        elif isinstance(state, MapState) and state.processor is not None:
            scope = state.processor
        else:  # pragma: no cover - paths are built from the flow itself
            raise KeyError(name)
    return scope


def state_of(flow: Flow, run: ScopeRun) -> State:
    """The AST state active in ``run``."""
    assert run.state is not None
    return scope_of(flow, run).by_name[run.state.name]


def state_path(run: ScopeRun, name: str) -> tuple[str, ...]:
    return (*(str(p[0]) for p in run.path), name)


def task_token(flow_name: str, execution_name: str, event_id: int) -> str:
    """Deterministic task token: the same flow, execution and event id give the same token
    (executions of different flows may share a name, their tokens never collide)."""
    digest = hashlib.sha256(f"{flow_name}\0{execution_name}\0{event_id}".encode()).hexdigest()
    return f"tt-{digest[:32]}"


def next_of(state: State) -> str | None:
    """Where a state goes on success: its ``Next``, or None (end of scope)."""
    return None if state.end else state.next


# ------------------------------------------------------------------------------------------
# Evaluation


def expression_scope(
    ctx: Ctx, st: ActiveState, *, input_value: Any, output: Any = MISSING,
    error: tuple[str, str] | None = None,
) -> ExprScope:
    """Variables for an expression of the active state ``st`` (reference §3.3)."""
    ex = ctx.ex
    retry_count = st.retry_count
    current: dict[str, Any] = {
        "Name": st.name,
        "Input": input_value,
        "RetryCount": retry_count,
        "TaskToken": st.task_token,
    }
    if output is not MISSING:
        current["Output"] = output
    if error is not None:
        current["Error"] = {"Code": error[0], "Detail": error[1]}
    execution = ctx.execution_context
    if execution is None:
        execution = ctx.execution_context = {
            "Name": ex.name, "Input": ex.input, "RoleArn": ex.role_arn,
        }
    entropy: Any = _new_object(LazyEntropy)
    entropy._name, entropy._event_id, entropy._retry_count, entropy._source = (
        ex.name, ex.next_event_id, retry_count, None
    )
    # ExprScope(input=..., output=..., context=..., global_vars=..., entropy=...), filled
    # through _ScopeSlots as history events are (see _EventSlots)
    scope: Any = _new_object(_ScopeSlots)
    scope.input = input_value
    scope.output = UNAVAILABLE if output is MISSING else output
    scope.context = {"Execution": execution, "Current": current}
    scope.global_vars = ex.global_vars
    scope.item = UNAVAILABLE
    scope.null_mode = _STRICT
    scope.entropy = entropy
    scope.__class__ = ExprScope
    return scope  # type: ignore[no-any-return]


_SCOPE_FIELDS = ("input", "output", "context", "global_vars", "item", "null_mode", "entropy")
assert tuple(f.name for f in fields(ExprScope)) == _SCOPE_FIELDS
assert ExprScope().item is UNAVAILABLE and ExprScope().null_mode is NullMode.STRICT
_STRICT = NullMode.STRICT


class _ScopeSlots:
    """The slot layout of the evaluator's ``Scope``, filled by :func:`expression_scope`."""

    __slots__ = _SCOPE_FIELDS
    input: Any
    output: Any
    context: Any
    global_vars: Any
    item: Any
    null_mode: NullMode
    entropy: Any


class LazyEntropy:
    """Deterministic ``uuid()``/``randomInt()`` source seeded from the execution name, the
    current event id and the retry count; the generator (and its seed text) is only built when
    a built-in draws from it."""

    __slots__ = ("_event_id", "_name", "_retry_count", "_source")

    def __init__(self, name: str, event_id: int, retry_count: int) -> None:
        self._name = name
        self._event_id = event_id
        self._retry_count = retry_count
        self._source: SeededEntropy | None = None

    def _get(self) -> SeededEntropy:
        if self._source is None:
            self._source = SeededEntropy(f"{self._name}\0{self._event_id}\0{self._retry_count}")
        return self._source

    def random_int(self, low: int, high: int) -> int:
        return self._get().random_int(low, high)

    def uuid4(self) -> str:
        return self._get().uuid4()


def evaluate_expr(expr: Expr, scope: ExprScope, where: str) -> Any:
    """Evaluate an expression field; failures become :class:`StateFailure`."""
    hit = _RUNNERS.get(id(expr))
    if hit is None or hit[0] is not expr:
        try:
            parsed = parse_expression(expr.text)
        except ExpressionSyntaxError as exc:
            raise StateFailure(RUNTIME_ERROR_CODE, f"{where}: {exc}") from None
        hit = (expr, compile_expression(parsed))
        if len(_RUNNERS) > 4096:
            _RUNNERS.clear()
        _RUNNERS[id(expr)] = hit
    try:
        return hit[1](scope)  # evaluate(parse_expression(expr.text), scope)
    except EvaluationError as exc:
        error = exc.in_expression(expr.text)
    except RecursionError:
        error = too_deep().in_expression(expr.text)
    raise StateFailure(error.code, f"{where}: {error.detail}") from None


#: Compiled expression fields, per AST object (kept alive here so an id is never reused).
_RUNNERS: dict[int, tuple[Expr, Callable[[ExprScope], Any]]] = {}


def construct(template: Template, scope: ExprScope, where: str) -> Any:
    """Build a constructor/parameters value; failures become :class:`StateFailure`."""
    try:
        return compiled_template(template).build(scope)
    except EvaluationError as exc:
        raise StateFailure(exc.code, f"{where}: {exc.detail}") from None
    except RecursionError:
        raise StateFailure(RUNTIME_ERROR_CODE, f"{where}: value nested too deeply") from None


_COMPILED: dict[int, tuple[Template, CompiledTemplate]] = {}


def compiled_template(template: Template) -> CompiledTemplate:
    """The template compiled for ``build`` (cached per template object: a flow's AST lives as
    long as the flow, and the cache keeps the template alive so its id is never reused)."""
    hit = _COMPILED.get(id(template))
    if hit is not None and hit[0] is template:
        return hit[1]
    compiled = compile_template(_plain(template))
    if len(_COMPILED) > 4096:
        _COMPILED.clear()
    _COMPILED[id(template)] = (template, compiled)
    return compiled


def _plain(value: Any) -> Any:
    if isinstance(value, Template):
        return {f.key: _plain(f.value) for f in value.fields}
    if isinstance(value, TemplateList):
        return [_plain(item) for item in value.items]
    if isinstance(value, Expr):
        return value.text
    return value


def _check_layouts() -> None:
    """Fail at import, not later, if a slot builder no longer matches its class."""
    event: Any = _new_object(_EventSlots)
    event.__class__ = HistoryEvent
    scope: Any = _new_object(_ScopeSlots)
    scope.__class__ = ExprScope


_check_layouts()
