"""CloudFlow (fnf, API 2019-03-15, RPC style): request parameters in, SDK wire shapes out.

Every action reads its parameters by wire name, calls :mod:`services.flows` or
:mod:`services.executions`, and answers the JSON the ``alibabacloud_fnf20190315`` models read
(cloudflow-api.md §4). Domain errors become CloudFlow codes here (§6.3).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.cloudflow_params import boolean, integer, listing, required
from deployer.emulator.api.cloudflow_releases import ReleaseActions
from deployer.emulator.api.errors import Style
from deployer.emulator.api.router import AuthScheme, LongPoll, RpcCall
from deployer.emulator.api.signing import SignatureFailure
from deployer.emulator.services import errors as svc
from deployer.emulator.services.execution_watch import ExecutionWatch
from deployer.emulator.services.executions import (
    ExecutionFilter,
    ExecutionService,
    ExecutionView,
    HistoryEvent,
    TaskCompleted,
)
from deployer.emulator.services.flow_versions import FlowReleases
from deployer.emulator.services.flows import (
    FlowChanges,
    FlowRecord,
    FlowService,
    parse_environment,
)
from deployer.emulator.services.schedules import ScheduleService
from deployer.fdl.interpreter.history import format_time

__all__ = ["FNF_AUTH", "CloudFlowApi"]

FNF_AUTH = AuthScheme(Style.RPC, {
    SignatureFailure.MISSING: e.MissingRequiredParams,
    SignatureFailure.MALFORMED: e.InvalidArgument,
    SignatureFailure.UNSUPPORTED: e.InvalidArgument,
    SignatureFailure.UNKNOWN_KEY: e.InvalidAccessKeyID,
    SignatureFailure.PAYLOAD_HASH: e.SignatureNotMatch,
    SignatureFailure.MISMATCH: e.SignatureNotMatch,
    SignatureFailure.TIME_MISSING: e.MissingRequiredParams,
    SignatureFailure.TIME_FORMAT: e.InvalidArgument,
    SignatureFailure.EXPIRED: e.RequestTimeTooSkewed,
    SignatureFailure.NONCE_USED: e.SignatureNonceUsed,
})

Handler = Callable[[RpcCall], Any]

# resource kind -> the CloudFlow code for "does not exist" / "exists already"
_NOT_EXISTS: dict[str, type[e.ApiError]] = {
    "execution": e.ExecutionNotExists, "version": e.FlowVersionNotExists,
    "alias": e.FlowAliasNotExists, "schedule": e.ScheduleNotExists}
_EXISTS: dict[str, type[e.ApiError]] = {
    "execution": e.ExecutionAlreadyExists, "alias": e.FlowAliasAlreadyExists,
    "schedule": e.ScheduleAlreadyExists}


def _wire_errors(fn: Handler) -> Handler:
    """Turn domain errors into CloudFlow's wire codes."""

    @functools.wraps(fn)
    def wrapper(call: RpcCall) -> Any:
        try:
            return fn(call)
        except svc.NotFound as exc:
            raise _NOT_EXISTS.get(exc.kind, e.FlowNotExists)(exc.message) from None
        except svc.AlreadyExists as exc:
            raise _EXISTS.get(exc.kind, e.FlowAlreadyExists)(exc.message) from None
        except TaskCompleted as exc:
            raise e.TaskAlreadyCompleted(exc.message) from None
        except svc.PayloadTooLarge as exc:
            raise e.EntityTooLarge(exc.message) from None
        except svc.ServiceError as exc:
            if exc.kind == "unsupported":
                raise e.ActionNotSupported(exc.message) from None
            raise e.InvalidArgument(exc.message) from None
    return wrapper


def _flow(rec: FlowRecord) -> dict[str, Any]:
    body: dict[str, Any] = {
        "Id": rec.flow_id, "Name": rec.name, "Definition": rec.definition,
        "Description": rec.description, "Type": rec.type, "RoleArn": rec.role_arn,
        "ExecutionMode": rec.execution_mode, "CreatedTime": format_time(rec.created_at),
        "LastModifiedTime": format_time(rec.modified_at),
        "ResourceGroupId": rec.resource_group_id,
        "ExternalStorageLocation": rec.external_storage,
    }
    if rec.environment is not None:
        body["Environment"] = rec.environment
    return body


def history_event(event: HistoryEvent) -> dict[str, Any]:
    """A history event in GetExecutionHistory's wire shape."""
    return {"EventId": event.event_id, "ScheduleEventId": event.schedule_event_id,
            "Type": event.type, "StepName": event.step_name, "Time": event.time,
            "EventDetail": event.detail}


def _execution(view: ExecutionView, *, metadata_only: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"Name": view.name, "FlowName": view.flow_name,
                            "Status": view.status, "StartedTime": format_time(view.started_at)}
    if view.stopped_at is not None:
        body["StoppedTime"] = format_time(view.stopped_at)
    if not metadata_only:
        body["FlowDefinition"] = view.definition
        body["Input"] = view.input
        if view.output is not None:
            body["Output"] = view.output
    if view.environment is not None:
        body["Environment"] = view.environment
    return body


class CloudFlowApi:
    version = "2019-03-15"
    host = "fnf.aliyuncs.com"
    auth = FNF_AUTH
    # answered by a few quick database calls and at most one interpreter step (the server may
    # run them on its event loop); not StartSyncExecution, which waits for the execution
    quick_actions = frozenset({
        "StartExecution", "DescribeExecution", "ListExecutions", "GetExecutionHistory",
        "StopExecution", "DescribeFlow", "ListFlows", "ReportTaskSucceeded",
        "ReportTaskFailed"})

    def __init__(self, flows: FlowService, executions: ExecutionService,
                 watch: ExecutionWatch | None = None, *,
                 releases: FlowReleases | None = None,
                 schedules: ScheduleService | None = None) -> None:
        self._flows = flows
        self._executions = executions
        self._watch = watch
        self._releases = releases
        table: dict[str, Handler] = {
            "CreateFlow": self.create_flow, "UpdateFlow": self.update_flow,
            "DescribeFlow": self.describe_flow, "ListFlows": self.list_flows,
            "DeleteFlow": self.delete_flow, "StartExecution": self.start_execution,
            "StartSyncExecution": self.start_sync_execution,
            "DescribeExecution": self.describe_execution,
            "ListExecutions": self.list_executions,
            "GetExecutionHistory": self.get_execution_history,
            "StopExecution": self.stop_execution,
            "ReportTaskSucceeded": self.report_task_succeeded,
            "ReportTaskFailed": self.report_task_failed,
            **ReleaseActions(releases, schedules).table(),
        }
        self.actions: Mapping[str, Handler] = {k: _wire_errors(v) for k, v in table.items()}

    @staticmethod
    def unknown_action(action: str) -> e.ApiError:
        return e.ActionNotSupported(f"The action {action!r} is not supported by the emulator.")

    # --- flows --------------------------------------------------------------------------------

    def create_flow(self, call: RpcCall) -> dict[str, Any]:
        p, ctx = call.params, call.context
        rec = self._flows.create(
            ctx.account_id, ctx.region, required(call, "Name"),
            definition=required(call, "Definition"), description=p.get("Description", ""),
            type=p.get("Type", "FDL"), role_arn=p.get("RoleArn", ""),
            execution_mode=p.get("ExecutionMode", ""),
            environment=parse_environment(p.get("Environment")),
            resource_group_id=p.get("ResourceGroupId", ""),
            external_storage=p.get("ExternalStorageLocation", ""))
        return _flow(rec)

    def update_flow(self, call: RpcCall) -> dict[str, Any]:
        p, ctx = call.params, call.context
        changes = FlowChanges(definition=p.get("Definition"), description=p.get("Description"),
                              type=p.get("Type"), role_arn=p.get("RoleArn"),
                              environment=parse_environment(p.get("Environment")))
        rec = self._flows.update(ctx.account_id, ctx.region, required(call, "Name"), changes)
        return _flow(rec)

    def describe_flow(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        name, version = required(call, "Name"), call.params.get("FlowVersion", "")
        if version and self._releases is not None:
            return _flow(self._releases.describe_version(ctx.account_id, ctx.region, name,
                                                         version))
        return _flow(self._flows.get(ctx.account_id, ctx.region, name))

    def list_flows(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        flows, token = self._flows.list(
            ctx.account_id, ctx.region, limit=integer(call, "Limit", 60, 1, 999),
            next_token=call.params.get("NextToken", ""),
            resource_group_id=call.params.get("ResourceGroupId", ""))
        return listing("Flows", [_flow(f) for f in flows], token)

    def delete_flow(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        name = required(call, "Name")
        self._flows.delete(ctx.account_id, ctx.region, name)
        self._executions.forget_flow(ctx.account_id, ctx.region, name)
        return {}

    # --- executions ---------------------------------------------------------------------------

    def start_execution(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        view = self._executions.start(ctx.account_id, ctx.region, required(call, "FlowName"),
                                      name=p.get("ExecutionName", ""),
                                      input_text=p.get("Input", ""),
                                      qualifier=p.get("Qualifier", ""))
        return _execution(view)

    def start_sync_execution(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        result = self._executions.start_sync(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            name=p.get("ExecutionName", ""), input_text=p.get("Input", ""),
            qualifier=p.get("Qualifier", ""))
        body = _execution(result.view)
        for key in ("FlowDefinition", "Input"):
            body.pop(key, None)
        if result.error_code or result.view.status != "Succeeded":
            body["ErrorCode"] = result.error_code
            body["ErrorMessage"] = result.error_message
        return body

    def describe_execution(self, call: RpcCall) -> dict[str, Any] | LongPoll:
        """With ``WaitTimeSeconds`` and a running execution: a long poll answered when the
        execution ends or the time is up (through the watch, no thread waits)."""
        ctx = call.context
        flow, name = required(call, "FlowName"), required(call, "ExecutionName")
        wait = integer(call, "WaitTimeSeconds", 0, 0, 60)
        watch = self._watch
        if watch is None:
            return _execution(self._executions.describe(ctx.account_id, ctx.region, flow, name,
                                                        wait_seconds=wait))
        view = self._executions.describe(ctx.account_id, ctx.region, flow, name)
        if not wait or view.status != "Running":
            return _execution(view)
        key = (ctx.account_id, ctx.region, flow, name)
        then = _wire_errors(lambda _call: _execution(
            self._executions.describe(ctx.account_id, ctx.region, flow, name)))
        return LongPoll(lambda wake: watch.subscribe(key, wake), float(wait),
                        lambda: then(call))

    def list_executions(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        metadata_only = boolean(call, "MetadataOnly")
        filt = ExecutionFilter(
            status=p.get("Status", ""), name_prefix=p.get("ExecutionNamePrefix", ""),
            started_from=p.get("StartedTimeBegin", ""), started_to=p.get("StartedTimeEnd", ""),
            qualifier=p.get("Qualifier", ""), map_run_name=p.get("MapRunName", ""))
        views, token = self._executions.list(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            limit=integer(call, "Limit", 60, 1, 99), next_token=p.get("NextToken", ""),
            filt=filt)
        return listing("Executions",
                       [_execution(v, metadata_only=metadata_only) for v in views], token)

    def get_execution_history(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        events, token = self._executions.history(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            required(call, "ExecutionName"), limit=integer(call, "Limit", 60, 1, 999),
            next_token=call.params.get("NextToken", ""))
        return listing("Events", [history_event(ev) for ev in events], token)

    def stop_execution(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        view = self._executions.stop(ctx.account_id, ctx.region, required(call, "FlowName"),
                                     required(call, "ExecutionName"),
                                     error=p.get("Error", ""), cause=p.get("Cause", ""))
        body = _execution(view)
        if view.role_arn:
            body["RoleArn"] = view.role_arn
        return body

    def report_task_succeeded(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        event_id = self._executions.report(ctx.account_id, ctx.region,
                                           required(call, "TaskToken"),
                                           output=required(call, "Output"))
        return {"EventId": event_id}

    def report_task_failed(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        event_id = self._executions.report(ctx.account_id, ctx.region,
                                           required(call, "TaskToken"),
                                           error=required(call, "Error"),
                                           cause=call.params.get("Cause", ""))
        return {"EventId": event_id}
