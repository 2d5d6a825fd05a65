"""The deterministic FDL interpreter.

Pipeline: ``compile_flow(flow)`` builds a :class:`CompiledFlow` once per flow definition;
``start(program, ...)`` builds an :class:`Execution` and processes ``Started``; every later
happening (a task result, a due timer, a stop request) is an event given to ``step(program,
execution, event)``, which returns the next execution and the :mod:`commands` to carry out (invoke a
task, start/cancel a timer, complete the execution). The history events of a step are in
``execution.new_events``. ``simulate`` runs a flow to its end on a virtual clock with a callback
answering tasks (``deploy flow test``, tests, benchmarks). ``start``, ``step`` and ``simulate`` also
take a plain :class:`~deployer.fdl.syntax.ast.Flow` and compile it on the call.

How the interpreter is organised:

* ``program.py``: ``compile_flow`` builds one evaluator object per state (``states/``): its
  expressions parsed and compiled, its templates compiled, ``Next``/``End``, Retry and Catch
  resolved. A compiled flow holds no execution state; one serves every execution.
* ``states/<kind>.py``: one module per state kind: ``task.py``, ``pass_state.py``,
  ``wait.py``, ``choice.py``, ``succeed.py``, ``fail.py``, ``parallel.py`` and ``map.py``
  (the last two share ``children.py``: child scopes). Each holds the kind's evaluator and the
  small immutable record of what the state waits for (``TaskCall``, ``WaitTimer``,
  ``ChildScopes``). ``begin`` runs one attempt once the input is ready and answers ``Done``
  (output, next state) or that record; ``resume`` gets what woke the waiting state up (a timer,
  a task result, a child scope that ended) with its record and answers the same way;
  ``cancel`` drops what a record waits for. ``states/base.py`` defines that contract.
* ``steps/``: the legacy dialect's steps (``version``/``type: flow``/``steps``), compiled by
  ``compile_legacy`` into the same kind of program: each step reuses its v1 counterpart's
  evaluator and carries a ``data`` object (``steps/data.py``) the lifecycle asks for the
  step's input and output and for merging its output into its list's frame (``$local``).
* ``lifecycle.py``: what every state shares, written once: ``StepEntered``, input selection,
  ``StepStarted``, ``begin``/``resume``, output and ``$Global`` selection, ``StepSucceeded`` /
  ``StepExited``, the next state; Retry (a back-off timer, then ``begin`` again), Catch, and a
  scope's end waking up the Parallel/Map that owns it.
* ``machine.py``: ``start``/``step``: a step works on a copy of the execution, routes its event
  (to the waiting state's lifecycle, or the execution's timeout and stop) and enters the states
  queued on the way.
* ``active.py`` and ``model.py``: the data: scope runs, each active state's lifecycle record
  and the record of what it waits for, the execution; ``stored.py`` is their stored JSON
  layout. ``runtime.py`` is the step context (history emission, JSON text, 64 KiB checks, ids)
  and ``compiled.py`` the compiled expressions and the variables they read.

Nothing here reads a clock, sleeps, performs I/O or keeps state between calls: records are
immutable and a step never changes the execution it is given. Decisions where the CloudFlow
reference is unsure are recorded in docs/fdl-semantics.md ("Execution").
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
from deployer.fdl.interpreter.program import CompiledFlow, compile_flow

__all__ = [
    "CancelTask",
    "CancelTimer",
    "Command",
    "CompiledFlow",
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
    "compile_flow",
    "event_from_json",
    "new_execution",
    "start",
    "step",
]
