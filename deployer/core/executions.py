"""Start executions and follow them to their end through DescribeExecution + GetExecutionHistory.

Watching never changes the execution: interrupting a watch leaves the execution running, and
``watch`` can re-attach to it at any time (it reads the history from the first event).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deployer.cloud.cloudflow import CloudFlowClient, ExecutionEvent, ExecutionInfo
from deployer.cloud.errors import CloudConnectionError, CloudNotFoundError
from deployer.core.documents import read_json_document

if TYPE_CHECKING:
    from deployer.cloud.logs import LogSource
    from deployer.fdl import AnyFlow
from deployer.errors import DeployerError, ExitCode, InvalidInputError, NotFoundError
from deployer.fdl.interpreter.stored import event_record

__all__ = [
    "STATUSES",
    "ExecutionEvent",
    "ExecutionList",
    "ExecutionResult",
    "ExecutionSummary",
    "History",
    "history",
    "latest_execution",
    "list_executions",
    "parse_input",
    "watch",
]

#: CloudFlow's execution statuses (cloudflow-api.md §3.1).
STATUSES = ("Starting", "Running", "Succeeded", "Failed", "TimedOut", "Stopped")
#: How many executions ``list_executions`` reads at most to find the newest (100 pages).
SCAN_LIMIT = 9_900

TERMINAL_EVENTS = frozenset(
    {"ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut", "ExecutionStopped"}
)


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    """Where an execution stands (or how it ended)."""

    flow: str
    name: str
    status: str
    input: Any
    output: Any
    error_code: str | None
    error_detail: str | None
    started_time: str
    stopped_time: str
    duration_seconds: float | None
    states: tuple[str, ...]
    events: tuple[ExecutionEvent, ...] = field(repr=False)
    console_url: str = ""
    path: str = ""  # the states in text with their status and visits (deploy status)

    @property
    def finished(self) -> bool:
        return self.status in ("Succeeded", "Failed", "TimedOut", "Stopped")

    @property
    def exit_code(self) -> int:
        if not self.finished or self.status == "Succeeded":
            return int(ExitCode.OK)
        return int(ExitCode.EXECUTION_FAILED)

    def to_json(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "name": self.name,
            "status": self.status,
            "input": self.input,
            "output": self.output,
            "error": (
                {"code": self.error_code, "detail": self.error_detail}
                if self.error_code is not None
                else None
            ),
            "started_time": self.started_time,
            "stopped_time": self.stopped_time or None,
            "duration_seconds": self.duration_seconds,
            "states": list(self.states),
            "console_url": self.console_url or None,
            "path": self.path or None,
        }


def parse_input(text: str | None, *, delay: int | None = None, base: Path | None = None) -> str:
    """The execution input as JSON text: ``text`` (a JSON object, inline or ``@FILE`` relative
    to ``base``) or ``{}``, with ``delay`` set in it when given.

    Raises InvalidInputError (exit 3) for anything but a JSON object (see
    :func:`deployer.core.documents.read_json_document`) and for a negative ``delay``.
    """
    if delay is not None and delay < 0:
        raise InvalidInputError(f"--delay must be 0 or more seconds (got {delay})")
    if text is None:
        return json.dumps({"delay": delay} if delay is not None else {})
    document = read_json_document(text, option="--input", base=base or Path.cwd())
    value = document.value
    if not isinstance(value, dict):
        raise InvalidInputError(
            f"{document.source}: the execution input must be a JSON object, not "
            f"{_json_type(value)}", hint='e.g. --input \'{"delay": 20}\'')
    if delay is not None:
        value["delay"] = delay
    return json.dumps(value)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def json_or_text(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_timestamp(text: str) -> datetime | None:
    """A service timestamp (``2024-05-01T08:00:00.123Z``) as an aware datetime; None if not one."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _seconds(start: str, stop: str) -> float | None:
    a, b = parse_timestamp(start), parse_timestamp(stop)
    if a is None or b is None:
        return None
    return round((b - a).total_seconds(), 3)


def _error(events: list[ExecutionEvent]) -> tuple[str | None, str | None]:
    for event in reversed(events):
        if event.type in ("ExecutionFailed", "ExecutionTimedOut", "ExecutionStopped"):
            detail = event.detail if isinstance(event.detail, dict) else {}
            lowered = {str(k).lower(): v for k, v in detail.items()}
            code = lowered.get("error", lowered.get("code"))
            cause = lowered.get("cause", lowered.get("detail"))
            return (str(code) if code is not None else ""), (str(cause) if cause else "")
    return None, None


def summarize_execution(info: ExecutionInfo, events: list[ExecutionEvent]) -> ExecutionResult:
    """Combine DescribeExecution's answer and the history into an :class:`ExecutionResult`."""
    states = tuple(e.step_name for e in events if e.type == "StepEntered")
    code, detail = _error(events) if info.status != "Succeeded" else (None, None)
    return ExecutionResult(
        flow=info.flow_name,
        name=info.name,
        status=info.status,
        input=json_or_text(info.input),
        output=json_or_text(info.output),
        error_code=code,
        error_detail=detail,
        started_time=info.started_time,
        stopped_time=info.stopped_time,
        duration_seconds=_seconds(info.started_time, info.stopped_time)
        if info.stopped_time
        else None,
        states=states,
        events=tuple(events),
    )


@dataclass(frozen=True, slots=True)
class ExecutionSummary:
    """One row of ``deploy executions``."""

    name: str
    status: str
    started_time: str
    stopped_time: str
    duration_seconds: float | None


@dataclass(frozen=True, slots=True)
class ExecutionList:
    """``deploy executions``: the newest executions of a flow first."""

    flow: str
    status: str | None
    executions: tuple[ExecutionSummary, ...]

    def to_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "status": self.status, "executions": [
            {"name": e.name, "status": e.status, "started_time": e.started_time,
             "stopped_time": e.stopped_time or None, "duration_seconds": e.duration_seconds}
            for e in self.executions]}


def list_executions(flows: CloudFlowClient, flow: str, *, status: str | None = None,
                    limit: int = 20) -> ExecutionList:
    """The ``limit`` most recently started executions of ``flow`` (only those with
    ``status``), newest first.

    ListExecutions does not promise an order, so every page is read (metadata only, at most
    :data:`SCAN_LIMIT` executions) and sorted by start time. NotFoundError (exit 4) when the
    flow does not exist; InvalidInputError for an unknown status.
    """
    if status is not None and status not in STATUSES:
        raise InvalidInputError(f"unknown execution status {status!r}",
                                hint="use one of: " + ", ".join(STATUSES))
    with named(flow):
        infos = flows.list_executions(flow, limit=SCAN_LIMIT, status=status or None,
                                      metadata_only=True)
    newest = sorted(infos, key=lambda e: (e.started_time, e.name), reverse=True)[:limit]
    rows = tuple(ExecutionSummary(e.name, e.status, e.started_time, e.stopped_time,
                                  _seconds(e.started_time, e.stopped_time)
                                  if e.stopped_time else None) for e in newest)
    return ExecutionList(flow, status, rows)


def latest_execution(flows: CloudFlowClient, flow: str) -> str:
    """The name of the most recently started execution of ``flow``."""
    found = list_executions(flows, flow, limit=1).executions
    if not found:
        raise NotFoundError(
            f"flow {flow} has no executions", hint="start one with `deploy execute`"
        )
    return found[0].name


def watch(
    flows: CloudFlowClient,
    flow: str,
    name: str,
    *,
    on_event: Callable[[ExecutionEvent], None] = lambda event: None,
    follow: bool = True,
    poll_seconds: int = 1,
    on_tick: Callable[[], None] = lambda: None,
) -> ExecutionResult:
    """Report every history event of the execution to ``on_event`` as it happens.

    With ``follow`` the call returns when the execution has ended; without it, at once. Each
    round holds a DescribeExecution long poll for at most ``poll_seconds`` (the service answers
    as soon as the execution ends), then reads the new history events; ``on_tick`` is called
    after each round (heartbeats of the live view).
    """
    events: list[ExecutionEvent] = []
    with named(flow, name):
        info = flows.describe_execution(flow, name)
    settle_reads = 3  # reads allowed after the status is final but before the terminal event
    while True:
        new = flows.history(flow, name, after_event_id=events[-1].event_id if events else 0)
        for event in new:
            events.append(event)
            on_event(event)
        on_tick()
        if info.finished and any(e.type in TERMINAL_EVENTS for e in events):
            break
        if not follow or (info.finished and settle_reads == 0):
            break
        if info.finished:
            settle_reads -= 1
            # the terminal event may land just after the status changes: read once more
            info = flows.describe_execution(flow, name)
            continue
        info = flows.describe_execution(flow, name, wait_seconds=poll_seconds)
    return summarize_execution(info, events)


def execution_flow(flows: CloudFlowClient, flow: str) -> AnyFlow | None:
    """The flow's parsed definition in its dialect (NotFoundError if the flow does not exist;
    None when it cannot be parsed), for the live view's states and Wait times."""
    from deployer.fdl import read_flow

    remote = flows.describe_flow(flow)
    if remote is None:
        raise NotFoundError(f"flow {flow} does not exist", hint="deploy it with `deploy up`")
    return read_flow(remote.definition).flow


def subflow_of(resource: str, parameters: Any, output: Any) -> tuple[str, str] | None:
    """The sub-flow execution (flow, name) a ``FNF:StartExecution`` task started, as far as
    its history says: the ``executionName`` it was given, or the ``ExecutionName`` of its
    RequestComplete answer (None when neither is known)."""
    if resource != "FNF:StartExecution" or not isinstance(parameters, dict):
        return None
    arn = str(parameters.get("resourceArn", ""))
    flow = arn.rpartition(":flow/")[2] if ":flow/" in arn else ""
    name = parameters.get("executionName")
    if not name and isinstance(output, dict):
        name = output.get("ExecutionName")
    return (flow, str(name)) if flow and name else None


def child_status(flows: CloudFlowClient, flow: str, name: str) -> str | None:
    """A sub-flow execution's status (None when it cannot be read)."""
    try:
        return flows.describe_execution(flow, name).status
    except DeployerError:
        return None


def task_instance(logs: LogSource, function: str, execution: str,
                  scheduled_event_id: int) -> str | None:
    """Which function instance served the task a ``TaskScheduled`` event opened: "warm
    instance <id>, age <s> s" or "cold start of instance <id>"; None when the target keeps no
    such record (Alibaba Cloud: Log Service) or it is not found."""
    from deployer.fdl.progress import task_id, task_request_id

    request_id = task_request_id(task_id(execution, scheduled_event_id))
    try:
        recent = logs.recent(function, 100)
    except DeployerError:
        return None
    match = next((r for r in recent if r.request_id == request_id), None)
    if match is None or not match.instance_id:
        return None
    if match.cold_start:
        return f"cold start of instance {match.instance_id}"
    first = min(r.invoked_at for r in recent if r.instance_id == match.instance_id)
    age = (match.invoked_at - first).total_seconds()
    return f"warm instance {match.instance_id}, age {age:g} s"


@dataclass(frozen=True, slots=True)
class History:
    """``deploy history``: every event of one execution, oldest first."""

    flow: str
    name: str
    events: tuple[ExecutionEvent, ...]
    console_url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "name": self.name, "console_url": self.console_url or None,
                "events": [event_record(e.event_id, e.schedule_event_id, e.type, e.step_name,
                                        e.time, e.detail) for e in self.events]}


def follow(flows: CloudFlowClient, flow: str, name: str,
           on_event: Callable[[ExecutionEvent], None],
           on_tick: Callable[[], None] = lambda: None) -> ExecutionResult:
    """:func:`watch` to the end; a lost connection says how to re-attach (CloudConnectionError
    with a hint; the execution keeps running where it is)."""
    try:
        return watch(flows, flow, name, on_event=on_event, on_tick=on_tick)
    except CloudConnectionError as exc:
        exc.hint = (f"the execution keeps running where it is; re-attach with "
                    f"`deploy status {name} --wait`")
        raise


def history(flows: CloudFlowClient, flow: str, name: str | None = None) -> History:
    """Every history event of the execution ``name`` (default: the latest) of ``flow``, oldest
    first; NotFoundError (exit 4, with a hint) when the flow or the execution does not
    exist."""
    name = name or latest_execution(flows, flow)
    with named(flow, name):
        return History(flow, name, tuple(flows.history(flow, name)))


@contextlib.contextmanager
def named(flow: str, name: str | None = None) -> Iterator[None]:
    """Turn the service's not-found answer about ``flow`` / execution ``name`` into a
    NotFoundError that says what to do."""
    try:
        yield
    except CloudNotFoundError as exc:
        if name is not None and exc.code != "FlowNotExists":
            raise NotFoundError(
                f"execution {name} of flow {flow} does not exist",
                hint=f"`deploy status` shows the latest execution of {flow}; start one with "
                "`deploy execute`") from exc
        raise NotFoundError(
            f"flow {flow} does not exist",
            hint="deploy it with `deploy up`, or name another flow with --flow") from exc
