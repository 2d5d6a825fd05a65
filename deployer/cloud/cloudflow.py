"""Typed client over the CloudFlow SDK (``alibabacloud_fnf20190315``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError

TERMINAL_STATUSES = frozenset({"Succeeded", "Failed", "TimedOut", "Stopped"})


@dataclass(frozen=True, slots=True)
class RemoteFlow:
    name: str
    definition: str
    description: str
    role_arn: str
    execution_mode: str
    last_modified: str


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    flow_name: str
    name: str
    status: str
    input: str
    output: str
    started_time: str
    stopped_time: str

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class ExecutionEvent:
    event_id: int
    schedule_event_id: int
    step_name: str
    type: str
    time: str
    detail: Any  # the parsed EventDetail JSON (or its raw text if it is not JSON)


def _flow(body: Any) -> RemoteFlow:
    # Create/Update/DescribeFlow response models differ (UpdateFlow's has no ExecutionMode).
    def get(attr: str) -> str:
        return str(getattr(body, attr, None) or "")

    return RemoteFlow(
        name=get("name"),
        definition=get("definition"),
        description=get("description"),
        role_arn=get("role_arn"),
        execution_mode=get("execution_mode") or "Standard",
        last_modified=get("last_modified_time"),
    )


def _execution(body: Any, flow_name: str = "") -> ExecutionInfo:
    return ExecutionInfo(
        flow_name=body.flow_name or flow_name,
        name=body.name or "",
        status=body.status or "",
        input=body.input or "",
        output=body.output or "",
        started_time=body.started_time or "",
        stopped_time=body.stopped_time or "",
    )


def _detail(text: str | None) -> Any:
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


class CloudFlowClient(ServiceClient):
    """Flows and executions."""

    SERVICE = "CloudFlow"

    def describe_flow(self, name: str) -> RemoteFlow | None:
        from alibabacloud_fnf20190315 import models

        try:
            body = self._call(
                "DescribeFlow",
                lambda: self._conn.fnf.describe_flow(models.DescribeFlowRequest(name=name)),
            ).body
        except CloudNotFoundError:
            return None
        return _flow(body)

    def create_flow(
        self, name: str, definition: str, *, description: str, role_arn: str, execution_mode: str
    ) -> RemoteFlow:
        from alibabacloud_fnf20190315 import models

        request = models.CreateFlowRequest(
            name=name,
            definition=definition,
            description=description,
            type="FDL",
            role_arn=role_arn or None,
            execution_mode=execution_mode,
        )
        return _flow(self._call("CreateFlow", lambda: self._conn.fnf.create_flow(request)).body)

    def update_flow(
        self, name: str, definition: str, *, description: str, role_arn: str
    ) -> RemoteFlow:
        from alibabacloud_fnf20190315 import models

        request = models.UpdateFlowRequest(
            name=name,
            definition=definition,
            description=description,
            type="FDL",
            role_arn=role_arn or None,
        )
        return _flow(self._call("UpdateFlow", lambda: self._conn.fnf.update_flow(request)).body)

    def delete_flow(self, name: str) -> bool:
        from alibabacloud_fnf20190315 import models

        try:
            self._call(
                "DeleteFlow",
                lambda: self._conn.fnf.delete_flow(models.DeleteFlowRequest(name=name)),
            )
        except CloudNotFoundError:
            return False
        return True

    def start_execution(self, flow: str, input_json: str, name: str | None = None) -> ExecutionInfo:
        from alibabacloud_fnf20190315 import models

        request = models.StartExecutionRequest(
            flow_name=flow, execution_name=name or None, input=input_json
        )
        body = self._call("StartExecution", lambda: self._conn.fnf.start_execution(request)).body
        return _execution(body, flow)

    def describe_execution(self, flow: str, name: str, wait_seconds: int = 0) -> ExecutionInfo:
        """The execution's state; with ``wait_seconds`` > 0 the service holds the request until
        the execution ends or the time passes (long polling, at most 60 s)."""
        from alibabacloud_fnf20190315 import models

        request = models.DescribeExecutionRequest(
            flow_name=flow, execution_name=name, wait_time_seconds=wait_seconds or None
        )
        body = self._call(
            "DescribeExecution", lambda: self._conn.fnf.describe_execution(request)
        ).body
        return _execution(body, flow)

    def list_executions(self, flow: str, *, limit: int = 60, status: str | None = None,
                        metadata_only: bool = False) -> list[ExecutionInfo]:
        """Up to ``limit`` executions of ``flow`` (only those with ``status``), as the service
        orders them; ``metadata_only`` leaves out input and output."""
        from alibabacloud_fnf20190315 import models

        out: list[ExecutionInfo] = []
        token: str | None = None
        while len(out) < limit:
            request = models.ListExecutionsRequest(
                flow_name=flow, limit=min(99, limit - len(out)), next_token=token,
                status=status, metadata_only=metadata_only or None,
            )
            body = self._call(
                "ListExecutions", lambda r=request: self._conn.fnf.list_executions(r)
            ).body
            out.extend(_execution(e, flow) for e in body.executions or [])
            token = body.next_token
            if not token:
                break
        return out

    def history(self, flow: str, name: str, *, after_event_id: int = 0) -> list[ExecutionEvent]:
        """Every history event (all pages) with an id greater than ``after_event_id``."""
        from alibabacloud_fnf20190315 import models

        out: list[ExecutionEvent] = []
        token: str | None = None
        while True:
            request = models.GetExecutionHistoryRequest(
                flow_name=flow, execution_name=name, limit=999, next_token=token
            )
            body = self._call(
                "GetExecutionHistory", lambda r=request: self._conn.fnf.get_execution_history(r)
            ).body
            for e in body.events or []:
                event = ExecutionEvent(
                    event_id=int(e.event_id or 0),
                    schedule_event_id=int(e.schedule_event_id or 0),
                    step_name=e.step_name or "",
                    type=e.type or "",
                    time=e.time or "",
                    detail=_detail(e.event_detail),
                )
                if event.event_id > after_event_id:
                    out.append(event)
            token = body.next_token
            if not token:
                return out

    def stop_execution(
        self, flow: str, name: str, error: str = "", cause: str = ""
    ) -> ExecutionInfo:
        from alibabacloud_fnf20190315 import models

        request = models.StopExecutionRequest(
            flow_name=flow, execution_name=name, error=error or None, cause=cause or None
        )
        body = self._call("StopExecution", lambda: self._conn.fnf.stop_execution(request)).body
        return _execution(body, flow)
