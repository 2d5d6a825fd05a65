"""Starting an execution: name rules, and reusing a name reported as what happens."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from deployer.cloud.cloudflow import CloudFlowClient, ExecutionInfo
from deployer.cloud.errors import CloudClientError, CloudNotFoundError
from deployer.core.executions import json_or_text, named
from deployer.errors import InvalidInputError

__all__ = ["StartedExecution", "check_execution_name", "new_execution_name", "start_execution"]

EXECUTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$")


def new_execution_name(now: datetime | None = None) -> str:
    """A readable, valid, practically unique execution name: ``exec-20260101T120000-1a2b3c``."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S")
    return f"exec-{stamp}-{secrets.token_hex(3)}"


def check_execution_name(name: str) -> str:
    """``name`` if CloudFlow accepts it as an execution name; InvalidInputError otherwise."""
    if not EXECUTION_NAME.match(name):
        raise InvalidInputError(
            f"{name!r} is not a valid execution name",
            hint="use 1-128 letters, digits, _ and -, starting with a letter or _ "
            "(e.g. --name run-42)")
    return name


@dataclass(frozen=True, slots=True)
class StartedExecution:
    """An execution that ``deploy execute`` started, or found already running under the
    requested name (``attached``: nothing new was started, and ``input`` is the input that
    execution really has)."""

    flow: str
    name: str
    status: str
    started_time: str
    input: Any = None
    attached: bool = False
    console_url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "name": self.name, "status": self.status,
                "started_time": self.started_time, "input": self.input,
                "attached": self.attached, "console_url": self.console_url or None}


def _same_input(a: str, b: str) -> bool:
    return bool(json_or_text(a) == json_or_text(b))


def start_execution(flows: CloudFlowClient, flow: str, input_json: str,
                    name: str | None = None, *, mock_case: str = "") -> StartedExecution:
    """Start an execution of ``flow`` named ``name`` (default: :func:`new_execution_name`).
    With ``mock_case`` (the emulator only) its tasks are answered from that loaded mock test
    case: the name is sent as ``<name>#<case>``, the emulator's (and LocalStack's) way of
    choosing a case through the official SDKs.

    A name that is still running is not started again: the result says ``attached`` and
    carries that execution's own input (CloudFlow answers StartExecution with the running
    execution). A name that already finished raises OperationError (exit 1: the cloud's
    ExecutionAlreadyExists) with a hint.
    """
    name = check_execution_name(name) if name else new_execution_name()
    with named(flow):
        existing = _describe_or_none(flows, flow, name)
        if existing is not None and not existing.finished:
            return _started(existing, attached=True)
        try:
            info = flows.start_execution(flow, input_json,
                                         f"{name}#{mock_case}" if mock_case else name)
        except CloudClientError as exc:
            if exc.code == "ExecutionAlreadyExists" or existing is not None:
                exc.hint = (f"execution names are unique per flow and {name} has already "
                            f"run; see it with `deploy status {name}`, or choose another "
                            "--name (or none)")
            raise
    attached = existing is None and info.input != "" and not _same_input(info.input,
                                                                          input_json)
    return _started(info, attached=attached)


def _describe_or_none(flows: CloudFlowClient, flow: str, name: str) -> ExecutionInfo | None:
    try:
        return flows.describe_execution(flow, name)
    except CloudNotFoundError as exc:
        if exc.code == "FlowNotExists":
            raise
        return None


def _started(info: ExecutionInfo, *, attached: bool) -> StartedExecution:
    return StartedExecution(info.flow_name, info.name, info.status, info.started_time,
                   json_or_text(info.input), attached)
