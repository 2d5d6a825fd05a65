"""The deterministic FDL interpreter.

Pipeline: ``start(flow, ...)`` builds an :class:`Execution` and processes ``Started``; every
later happening (a task result, a due timer, a stop request) is an event given to
``step(flow, execution, event)``, which returns the next execution and the :mod:`commands` to
carry out (invoke a task, start/cancel a timer, complete the execution). The history events of a
step are in ``execution.new_events``. ``simulate`` runs a flow to its end on a virtual clock
with a callback answering tasks (``deploy flow test``, tests, benchmarks).

Decisions where the CloudFlow reference is unsure are recorded in docs/fdl-semantics.md
("Execution").
"""

from deployer.fdl.interpreter.commands import (
    CancelTask,
    CancelTimer,
    Command,
    CompleteExecution,
    InvokeTask,
    StartTimer,
    TimerPurpose,
    command_from_json,
)
from deployer.fdl.interpreter.events import (
    Event,
    Started,
    StopRequested,
    TaskFailed,
    TaskSucceeded,
    TimerFired,
    event_from_json,
)
from deployer.fdl.interpreter.history import HistoryEvent, HistoryEventType
from deployer.fdl.interpreter.machine import new_execution, start, step
from deployer.fdl.interpreter.model import Execution, ExecutionStatus

__all__ = [
    "CancelTask",
    "CancelTimer",
    "Command",
    "CompleteExecution",
    "Event",
    "Execution",
    "ExecutionStatus",
    "HistoryEvent",
    "HistoryEventType",
    "InvokeTask",
    "StartTimer",
    "Started",
    "StopRequested",
    "TaskFailed",
    "TaskSucceeded",
    "TimerFired",
    "TimerPurpose",
    "command_from_json",
    "event_from_json",
    "new_execution",
    "start",
    "step",
]
