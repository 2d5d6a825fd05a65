"""What one ``step`` works with: the step context (:class:`Ctx`), history emission, compact
JSON text and the size checks (64 KiB state data, ``$Global`` keys and values), error codes
and deterministic ids.

Nothing here decides control flow (:mod:`.lifecycle` and the state evaluators do).
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from deployer.fdl.expressions.budget import DATA_LIMIT_CODE, Meter
from deployer.fdl.expressions.errors import RUNTIME_ERROR_CODE
from deployer.fdl.interpreter.active import BACKOFF, ScopeRun
from deployer.fdl.interpreter.commands import CancelTimer, Command
from deployer.fdl.interpreter.history import HistoryEvent, HistoryEventType
from deployer.fdl.limits import (
    DATA_LIMIT_BYTES,
    GLOBAL_KEY_BYTES,
    GLOBAL_VALUE_BYTES,
    STEP_EVALUATION_STEPS,
)

if TYPE_CHECKING:
    from deployer.fdl.interpreter.model import Execution
    from deployer.fdl.interpreter.program import CompiledFlow

__all__ = [
    "DATA_LIMIT_CODE",
    "EMPTY_DETAIL",
    "EVENT_LIMIT_CODE",
    "EXECUTION_TIMEOUT_CODE",
    "INTERNAL_ERROR_CODE",
    "RUNTIME_ERROR_CODE",
    "TIMEOUT_CODE",
    "Ctx",
    "EventLimitReached",
    "Raw",
    "StateFailure",
    "check_globals",
    "check_size",
    "dump",
    "size_checked",
    "task_token",
]

TIMEOUT_CODE = "FnF.Timeout"
EVENT_LIMIT_CODE = "FnF.EventLimitExceeded"
EXECUTION_TIMEOUT_CODE = "FnF.ExecutionTimeout"
INTERNAL_ERROR_CODE = "FnF.InternalError"
EMPTY_DETAIL = "{}"
_SUCCEEDED, _EXITED = HistoryEventType.STEP_SUCCEEDED, HistoryEventType.STEP_EXITED
_event = HistoryEvent._make


class StateFailure(Exception):
    """A state failed with ``code``/``detail``; Retry then Catch apply. ``left`` is the
    record the failed attempt leaves behind when the state's active record does not describe
    it yet (a Task whose Parameters failed: its token is what a Catch sees)."""

    def __init__(self, code: str, detail: str, left: Any = None) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.left = left


class EventLimitReached(Exception):
    """The execution emitted ``max_events`` history events."""


#: One state to enter: (run id, state name, raw input, its JSON text when already known).
StateEntry = tuple[int, str, Any, "Raw | None"]


class Ctx:
    """Everything one ``step`` works on: the compiled flow, the execution being built (a copy
    of the one given to ``step``), the time, the commands so far, the states waiting to be
    entered, two memos that live as long as the step, and the meter of its evaluations (one
    budget for the step, reset before each evaluation)."""

    __slots__ = ("commands", "ex", "execution_context", "meter", "now", "program", "queue",
                 "texts", "time")

    def __init__(self, program: CompiledFlow, ex: Execution, now: float, time: str) -> None:
        self.program = program
        self.ex = ex
        self.now = now
        self.time = time
        self.commands: list[Command] = []
        self.queue: deque[StateEntry] = deque()
        #: ``$Context.Execution``, built on first use
        self.execution_context: dict[str, Any] | None = None
        #: id(value) -> (value, its JSON text); holding the value keeps its id its own
        self.texts: dict[int, tuple[Any, Raw]] = {}
        self.meter: Meter | None = None  # made by the step's first evaluation

    def emit(self, kind: HistoryEventType, step_name: str, schedule: int, detail: str, *,
             terminal: bool = False) -> int:
        """Append a history event whose detail is the JSON text ``detail``; return its id.
        Raises :class:`EventLimitReached` past ``max_events`` (a ``terminal`` event is always
        written)."""
        ex = self.ex
        event_id = ex.next_event_id
        if event_id > ex.max_events and not terminal:
            raise EventLimitReached
        ex.next_event_id = event_id + 1
        # _make: the named tuple's constructor from a tuple, without the keyword handling of
        # its __new__ (a step builds several events)
        ex.new_events.append(_event((event_id, schedule, kind, step_name, self.time, detail)))
        return event_id

    def emit_exit(self, step_name: str, schedule: int, output_text: str) -> None:
        """``StepSucceeded`` with the output's JSON text, then ``StepExited``."""
        ex = self.ex
        event_id = ex.next_event_id
        if event_id + 1 > ex.max_events:  # the limit falls on one of the two
            self.emit(_SUCCEEDED, step_name, schedule, '{"Output":' + output_text + "}")
            self.emit(_EXITED, step_name, schedule, EMPTY_DETAIL)
            return
        ex.next_event_id = event_id + 2
        time = self.time
        ex.new_events += (
            _event((event_id, schedule, _SUCCEEDED, step_name, time,
                    '{"Output":' + output_text + "}")),
            _event((event_id + 1, schedule, _EXITED, step_name, time, EMPTY_DETAIL)),
        )

    def text(self, value: Any) -> Raw:
        """The compact JSON text of ``value``, encoded once per step (JSON values are never
        changed in place)."""
        hit = self.texts.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = Raw(dump(value))
        self.texts[id(value)] = (value, text)
        return text

    def sized(self, value: Any, what: str, state_name: str) -> Raw:
        """:func:`size_checked` through the step's memo of JSON texts."""
        return size_checked(self.text(value), what, state_name)

    def step_meter(self) -> Meter:
        """The meter of this step's evaluations: one budget of
        :data:`~deployer.fdl.limits.STEP_EVALUATION_STEPS` for all of them."""
        meter = self.meter
        if meter is None:
            meter = self.meter = Meter(step=STEP_EVALUATION_STEPS)
        return meter

    def add_run(self, run: ScopeRun) -> None:
        """Store a scope run opened by this step."""
        self.ex.runs[run.run_id] = run

    def cancel_run(self, run_id: int) -> None:
        """Drop a scope and everything under it, cancelling its pending task and timers."""
        ex = self.ex
        run = ex.runs.pop(run_id, None)
        st = ex.active.pop(run_id, None)
        record = ex.waiting.pop(run_id, None)
        if run is None or st is None or record is None:
            return
        if record is BACKOFF:
            if ex.timers.pop(st.retry_timer, None) is not None:
                self.commands.append(CancelTimer(st.retry_timer))
            return
        self.program.evaluator(run, st.name).cancel(self, record)


# ------------------------------------------------------------------------------------------
# JSON text


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# The C encoder that ``_ENCODER.encode`` builds on every call, built once (same text). No
# circular-reference markers: JSON values here are trees, and a too deeply nested one still
# raises RecursionError.
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
    """JSON text already serialised (embedded as is in an event's detail)."""


def check_size(value: Any, what: str, state_name: str) -> Raw:
    """The JSON text of ``value``; fails the state when it is larger than 64 KiB."""
    return size_checked(Raw(dump(value)), what, state_name)


def size_checked(text: Raw, what: str, state_name: str,
                 limit: int = DATA_LIMIT_BYTES) -> Raw:
    """``text``, the JSON text of the ``what`` of a state; fails the state when it is larger
    than ``limit`` bytes (UTF-8; 64 KiB by default)."""
    if len(text) > limit // 4 and len(text.encode()) > limit:
        raise StateFailure(
            DATA_LIMIT_CODE,
            f"the {what} of state {state_name!r} is {len(text.encode())} bytes, "
            f"over the {limit}-byte limit",
        )
    return text


def check_globals(ctx: Ctx, updates: dict[str, Any], state_name: str) -> None:
    """A GlobalConstructor's keys are at most 128 bytes and its values at most 256 KiB
    (reference §9.5, global variables); fails the state otherwise."""
    for key, value in updates.items():
        if len(key) > GLOBAL_KEY_BYTES // 4 and len(key.encode()) > GLOBAL_KEY_BYTES:
            raise StateFailure(
                DATA_LIMIT_CODE,
                f"the $Global key {key[:40]!r}... of state {state_name!r} is "
                f"{len(key.encode())} bytes, over the {GLOBAL_KEY_BYTES}-byte limit",
            )
        size_checked(ctx.text(value), f"$Global value {key!r}", state_name, GLOBAL_VALUE_BYTES)


# ------------------------------------------------------------------------------------------
# Ids


def task_token(flow_name: str, execution_name: str, event_id: int) -> str:
    """Deterministic task token: the same flow, execution and event id give the same token
    (executions of different flows may share a name, their tokens never collide)."""
    digest = hashlib.sha256(f"{flow_name}\0{execution_name}\0{event_id}".encode()).hexdigest()
    return f"tt-{digest[:32]}"
