"""Commands: what ``step`` asks the outside world to do. The interpreter performs no side
effects itself; an engine (``emulator/engine.py``) or the simulator carries these out and feeds
the results back as events. All commands are frozen and round-trip through JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, ClassVar, Union

from deployer.fdl.syntax.ast import TaskMode

__all__ = [
    "CancelTask",
    "CancelTimer",
    "Command",
    "CompleteExecution",
    "InvokeTask",
    "StartTimer",
    "TimerPurpose",
    "command_from_json",
]


class TimerPurpose(str, Enum):
    """Why a timer exists."""

    WAIT = "wait"
    RETRY = "retry"
    TASK_TIMEOUT = "task-timeout"
    EXECUTION_TIMEOUT = "execution-timeout"


@dataclass(frozen=True, slots=True)
class _CommandBase:
    kind: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, Enum):
                data[key] = value.value
            elif isinstance(value, tuple):
                data[key] = list(value)
        return {"type": self.kind, **data}


@dataclass(frozen=True, slots=True)
class InvokeTask(_CommandBase):
    """Call ``action`` with the evaluated ``parameters``; answer with ``TaskSucceeded`` /
    ``TaskFailed`` carrying ``task_id``. ``state_path`` is the names of the enclosing states
    then the Task's own name. ``task_token`` is what ``$Context.Current.TaskToken`` held (the
    token callbacks report with). ``timeout_seconds`` is informational: the interpreter runs its
    own task-timeout timer (0 = none)."""

    task_id: str
    state_path: tuple[str, ...]
    action: str
    parameters: Any
    task_mode: TaskMode
    task_token: str
    timeout_seconds: int
    kind: ClassVar[str] = "InvokeTask"


@dataclass(frozen=True, slots=True)
class CancelTask(_CommandBase):
    """The task is no longer awaited (sibling branch failed, stop, timeout); a later result for
    it is ignored."""

    task_id: str
    kind: ClassVar[str] = "CancelTask"


@dataclass(frozen=True, slots=True)
class StartTimer(_CommandBase):
    """Feed ``TimerFired(timer_id)`` at ``fire_at`` (epoch seconds)."""

    timer_id: str
    fire_at: float
    purpose: TimerPurpose
    kind: ClassVar[str] = "StartTimer"


@dataclass(frozen=True, slots=True)
class CancelTimer(_CommandBase):
    """Forget a started timer."""

    timer_id: str
    kind: ClassVar[str] = "CancelTimer"


@dataclass(frozen=True, slots=True)
class CompleteExecution(_CommandBase):
    """The execution reached a terminal status (``Succeeded`` with ``output``; otherwise
    ``error_code``/``error_detail``)."""

    status: str
    output: Any = None
    error_code: str = ""
    error_detail: str = ""
    kind: ClassVar[str] = "CompleteExecution"


Command = Union[InvokeTask, CancelTask, StartTimer, CancelTimer, CompleteExecution]  # noqa: UP007


def command_from_json(data: dict[str, Any]) -> Command:
    """Rebuild a command from its ``to_json()`` form; ``ValueError`` on an unknown type."""
    fields = dict(data)
    kind = fields.pop("type", None)
    if kind == "InvokeTask":
        fields["state_path"] = tuple(fields["state_path"])
        fields["task_mode"] = TaskMode(fields["task_mode"])
        return InvokeTask(**fields)
    if kind == "StartTimer":
        fields["purpose"] = TimerPurpose(fields["purpose"])
        return StartTimer(**fields)
    if kind == "CancelTask":
        return CancelTask(**fields)
    if kind == "CancelTimer":
        return CancelTimer(**fields)
    if kind == "CompleteExecution":
        return CompleteExecution(**fields)
    raise ValueError(f"unknown command type {kind!r}")
