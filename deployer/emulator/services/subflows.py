"""Sub-flows: ``FNF:StartExecution`` tasks, and executions reporting to a parent's task.

Parameters (CloudFlow's "Integrate CloudFlow" page, help.aliyun.com document 2400188):
``resourceArn`` (``acs:fnf:<region>:<account>:flow/<name>``, empty segments meaning the
parent's; other regions are refused, as the page says sub-flows do not cross regions),
``executionName`` (unique in the child flow; generated when absent) and ``input`` (an
object). The child must be a Standard flow (StartExecution's rule).

* ``RequestComplete``: the task ends once the child is started, with StartExecution's answer
  ``{"FlowName", "ExecutionName", "RequestID"}``.
* ``WaitForSystemCallback``: the child is started with the parent task's token as its
  ``CallbackFnFTaskToken``; when it ends, its output completes the task, or its error (code
  and cause) fails it, so the parent's Retry and Catch see the child's error. A child that
  was stopped or timed out without an error code fails the task with
  ``FnF.ExecutionStopped`` / ``FnF.ExecutionTimeout``. A child that cannot be started fails the
  task with ``FnF.<code>``, the code StartExecution answers for it (``FnF.FlowNotExists``...).
* ``WaitForCustomCallback``: the child is started and the task waits for someone to report
  with the token (passed in the child's input by the flow).

A generated child name is derived from the parent's task, so the task sent again after a
restart finds its child instead of starting a second one; a child that ended meanwhile
completes the task at once. When CloudFlow abandons a waiting ``WaitForSystemCallback`` task
(the parent stopped, timed out, or a sibling branch failed), its running child is stopped
(docs/fdl-semantics.md, "Sub-flows").
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from deployer.emulator.ports import (
    ExecutionEngine,
    ExecutionLinks,
    TaskDone,
    TaskOutcome,
    TaskRequest,
)
from deployer.emulator.services.errors import ServiceError
from deployer.emulator.services.executions import ExecutionService, ExecutionView
from deployer.emulator.store.link_repos import LinkRepo
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import Event, StopRequested

__all__ = ["FLOW_ACTION", "SubflowTasks", "parse_flow_arn"]

log = logging.getLogger("deployer.emulator")
FLOW_ACTION = "FNF:StartExecution"
FLOW_PARAMETERS = ("resourceArn", "executionName", "input")
_ARN = re.compile(r"^acs:fnf:([a-z0-9-]*):(\d*):flow/([^/]+)$")
_NAMES = uuid.UUID("5e2f3c1c-7b8e-4f7e-9d55-2c1c6a0b1f42")


def parse_flow_arn(arn: str, region: str, account_id: str) -> tuple[str, str, str] | None:
    """(region, account, flow name) of a flow ARN, empty segments filled in; None if it is
    not one."""
    m = _ARN.match(arn)
    if m is None:
        return None
    return m.group(1) or region, m.group(2) or account_id, m.group(3)


class _Refused(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class _Start:
    flow: str
    name: str
    input_text: str
    links: ExecutionLinks
    generated: bool  # the name was made up (a UUID, as the cloud's)


class SubflowTasks:
    """Starts child executions for ``FNF:StartExecution`` tasks and reports ended children
    to their parent's task (:meth:`execution_ended`, wired to the engine's end listener)."""

    def __init__(self, links: LinkRepo, fnf_code: Callable[[ServiceError], str]) -> None:
        self._links = links
        self._fnf_code = fnf_code  # CloudFlow's error table, wired in by emulator/app.py
        self._executions: ExecutionService | None = None
        self._engine: ExecutionEngine | None = None

    def attach(self, executions: ExecutionService, engine: ExecutionEngine) -> None:
        """Wire the execution service and the engine (built after the task runner)."""
        self._executions, self._engine = executions, engine

    @property
    def executions(self) -> ExecutionService:
        if self._executions is None:
            raise RuntimeError("SubflowTasks.attach was not called")
        return self._executions

    def start(self, request: TaskRequest, done: TaskDone) -> None:
        """Start (or find again) the child; blocks for the start's commit: call it from a
        thread that may wait for the database."""
        cmd = request.command
        try:
            start = self._request(request)
            view = self._child(request, start)
        except _Refused as exc:
            done(TaskOutcome.failed(exc.code, str(exc)))
            return
        if cmd.task_mode is TaskMode.REQUEST_COMPLETE:
            done(TaskOutcome(json.dumps({"FlowName": view.flow_name,
                                         "ExecutionName": view.name,
                                         "RequestID": str(uuid.uuid4())})))
        elif cmd.task_mode is TaskMode.WAIT_FOR_SYSTEM_CALLBACK and view.status != "Running":
            done(_ended(view))  # it ended while the parent was not listening (a restart)
        else:
            done(None)

    def _request(self, request: TaskRequest) -> _Start:
        cmd = request.command
        params = cmd.parameters if isinstance(cmd.parameters, dict) else {}
        unknown = sorted(set(params) - set(FLOW_PARAMETERS))
        if unknown:
            raise _Refused("FnF.InvalidArgument", f"unknown parameter {unknown[0]!r} "
                           f"(FNF:StartExecution takes {', '.join(FLOW_PARAMETERS)})")
        parsed = parse_flow_arn(str(params.get("resourceArn", "")), request.region,
                                request.account_id)
        if parsed is None:
            raise _Refused("FnF.InvalidArgument", f"resourceArn {params.get('resourceArn')!r}"
                           " is not a flow ARN (acs:fnf:<region>:<account>:flow/<name>)")
        region, account, flow = parsed
        if (region, account) != (request.region, request.account_id):
            raise _Refused("FnF.InvalidArgument", "a sub-flow runs in the parent's region "
                           f"and account ({request.region}, {request.account_id}), not "
                           f"({region}, {account})")
        child_input = params.get("input", {})
        if not isinstance(child_input, dict):
            raise _Refused("FnF.InvalidArgument", "input must be an object")
        given = params.get("executionName")
        name = given or str(uuid.uuid5(
            _NAMES, f"{request.account_id}/{request.region}/{request.execution_seq}/"
                    f"{cmd.task_id}"))
        token = cmd.task_token if cmd.task_mode is TaskMode.WAIT_FOR_SYSTEM_CALLBACK else ""
        parent = self._links.links(request.execution_seq)
        links = ExecutionLinks(mock_case=parent.mock_case, parent_seq=request.execution_seq,
                               parent_task_id=cmd.task_id, callback_token=token)
        return _Start(flow, str(name), json.dumps(child_input, ensure_ascii=False), links,
                      generated=not given)

    def _child(self, request: TaskRequest, start: _Start) -> ExecutionView:
        """The task's child: found again (the task was sent again), or started now."""
        for seq in self._links.children(request.execution_seq, request.command.task_id):
            view = self.executions.view(seq)
            if view is not None:
                return view
        try:
            return self.executions.start(request.account_id, request.region, start.flow,
                                          name=start.name, input_text=start.input_text,
                                          links=start.links, generated=start.generated)
        except ServiceError as exc:  # what StartExecution answers, as ``FnF.<code>``
            raise _Refused(f"FnF.{self._fnf_code(exc)}", exc.message) from None

    def cancel(self, execution_seq: int, task_id: str) -> None:
        """The parent no longer waits for task ``task_id``: stop its running child when the
        task waited for it (WaitForSystemCallback). Returns at once."""
        for seq in self._links.children(execution_seq, task_id):
            links = self._links.links(seq)
            if not links.callback_token:
                continue
            cause = (f"the parent execution stopped waiting for this sub-flow (task "
                     f"{task_id})")
            if self._engine is not None:
                self._engine.post(seq, _stop(cause))

    def execution_ended(self, seq: int, links: ExecutionLinks | None = None) -> None:
        """Execution ``seq`` ended: report its outcome to the task whose token it holds
        (``links``: its links when the caller has read them)."""
        links = links if links is not None else self._links.links(seq)
        if not links.callback_token:
            return
        view = self.executions.view(seq)
        if view is None:
            return
        outcome = _ended(view)
        row = self.executions.row_keys(seq)
        if row is None:
            return
        account_id, region = row
        if outcome.succeeded:
            self.executions.report_later(account_id, region, links.callback_token,
                                          output=outcome.output)
        else:
            self.executions.report_later(account_id, region, links.callback_token,
                                          error=outcome.error, cause=outcome.cause)


def _stop(cause: str) -> Callable[[float], Event]:
    def make(now: float) -> Event:
        return StopRequested(now, "", cause)

    return make


def _ended(view: ExecutionView) -> TaskOutcome:
    """What a finished child gives its parent's task."""
    if view.status == "Succeeded":
        return TaskOutcome(view.output or "{}")
    default = {"Stopped": "FnF.ExecutionStopped", "TimedOut": "FnF.ExecutionTimeout"}.get(
        view.status, "FnF.ExecutionFailed")
    return TaskOutcome.failed(view.error_code or default, view.error_detail or (
        f"sub-flow execution {view.name} of flow {view.flow_name} ended {view.status}"))

