"""CloudFlow's wire contract (fnf, API 2019-03-15, RPC: parameters by wire name, JSON answers).

In this module: the action table (:data:`CLOUDFLOW_ACTIONS`, on the handlers), CloudFlow's
wording of parameter errors (:data:`CLOUDFLOW_PARAMS`), the readers of the JSON parameters, the
shapes the ``alibabacloud_fnf20190315`` models read (cloudflow-api.md §4; ``deployer.testing``
and the console use them too) and the error table (:data:`CLOUDFLOW_ERRORS`, §6.3).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.cloudflow_map_runs import (
    map_run_to_wire,
    map_run_update_to_wire,
    read_map_run_changes,
    relations_to_wire,
)
from deployer.emulator.api.contract import (
    Body,
    ErrorTable,
    ParamErrors,
    Routes,
    RpcCall,
    cases,
    page,
)
from deployer.emulator.api.errors import Style
from deployer.emulator.api.router import AuthScheme, LongPoll
from deployer.emulator.records import FlowRecord, HistoryRow, ScheduleRow
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import Quota, Resource
from deployer.emulator.services.execution_relations import ExecutionRelations
from deployer.emulator.services.execution_watch import ExecutionWatch
from deployer.emulator.services.executions import ExecutionFilter, ExecutionService, ExecutionView
from deployer.emulator.services.flow_versions import FlowAlias, FlowReleases, FlowVersion, Route
from deployer.emulator.services.flows import FlowChanges, FlowService
from deployer.emulator.services.map_runs import MapRuns
from deployer.emulator.services.numbers import parse_number
from deployer.emulator.services.regions import cloudflow_regions
from deployer.emulator.services.schedules import ScheduleChanges, ScheduleService
from deployer.fdl.interpreter.history import format_time
from deployer.fdl.interpreter.stored import event_record

__all__ = ["CLOUDFLOW_ACTIONS", "CLOUDFLOW_ERRORS", "FNF_AUTH", "CloudFlowApi", "execution_to_wire",
           "flow_to_wire", "history_event_to_wire"]

FNF_AUTH = AuthScheme.words(
    Style.RPC, missing=e.MissingRequiredParams, malformed=e.InvalidArgument,
    unknown_key=e.InvalidAccessKeyID, mismatch=e.SignatureNotMatch,
    time_missing=e.MissingRequiredParams, time_format=e.InvalidArgument,
    expired=e.RequestTimeTooSkewed, nonce_used=e.SignatureNonceUsed)
CLOUDFLOW_PARAMS = ParamErrors(  # the wording of CloudFlow's error table (API reference)
    lambda name: e.MissingRequiredParams(f"The HTTP query '{name}' must be specified."),
    e.InvalidArgument,
    lambda action: e.ActionNotSupported(
        f"The action {action!r} is not supported by the emulator."),
    lambda version: e.APIVersionNotSupported(  # cloudflow-api.md §6.3 (CONFIRMED)
        f"The API version {version!r} is not supported; CloudFlow's is 2019-03-15."))

CLOUDFLOW_ACTIONS: Routes[Callable[[Any, RpcCall], Body | LongPoll | None]] = Routes()
"""CloudFlow's actions; a handler answers a body, None (``{}``) or a long poll."""

CLOUDFLOW_ERRORS = ErrorTable({
    **e.TOKEN_ERRORS,
    **cases(svc.ResourceNotFound, {Resource.EXECUTION: e.ExecutionNotExists,
                           Resource.VERSION: e.FlowVersionNotExists,
                           Resource.ALIAS: e.FlowAliasNotExists,
                           Resource.SCHEDULE: e.ScheduleNotExists}),
    svc.ResourceNotFound: e.FlowNotExists,
    **cases(svc.AlreadyExists, {Resource.EXECUTION: e.ExecutionAlreadyExists,
                                Resource.ALIAS: e.FlowAliasAlreadyExists,
                                Resource.SCHEDULE: e.ScheduleAlreadyExists}),
    svc.AlreadyExists: e.FlowAlreadyExists,
    svc.TaskCompleted: e.TaskAlreadyCompleted,
    svc.PayloadTooLarge: e.EntityTooLarge,
    svc.Unsupported: e.ActionNotSupported,
    svc.NotAuthorized: e.access_denied(e.AccessDenied),
    (svc.QuotaExceeded, Quota.API_RATE): e.throttled(e.Throttling),
}, e.InvalidArgument)
"""CloudFlow's wire error for each domain error; any other is ``InvalidArgument``."""


# --- shapes ------------------------------------------------------------------------------------

def flow_to_wire(rec: FlowRecord) -> Body:
    """A flow as Create/Update/DescribeFlow and ListFlows answer it."""
    body: Body = {
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


def execution_to_wire(view: ExecutionView, *, metadata_only: bool = False) -> Body:
    """An execution as StartExecution, DescribeExecution and ListExecutions answer it
    (``metadata_only``: without definition, input and output)."""
    body: Body = {"Name": view.name, "FlowName": view.flow_name, "Status": view.status,
                  "StartedTime": format_time(view.started_at)}
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


def history_event_to_wire(event: HistoryRow) -> Body:
    """A history event as GetExecutionHistory answers it (the layout an execution's events
    are stored in, :func:`deployer.fdl.interpreter.stored.event_record`)."""
    return event_record(event.event_id, event.schedule_event_id, event.type, event.step_name,
                        event.time, event.detail)


def _version(v: FlowVersion) -> Body:
    return {"Version": v.version, "Description": v.description,
            "CreatedTime": format_time(v.created_at)}


def _alias(a: FlowAlias) -> Body:
    return {"Name": a.name, "Description": a.description,
            "RoutingConfigurations": [{"Version": r.version, "Weight": r.weight}
                                      for r in a.routes],
            "CreatedTime": format_time(a.created_at)}


def _schedule(row: ScheduleRow) -> Body:
    return {"ScheduleName": row.name, "ScheduleId": row.schedule_id,
            "CronExpression": row.cron, "Payload": row.payload,
            "Description": row.description, "Enable": row.enable,
            "CreatedTime": format_time(row.created_at),
            "LastModifiedTime": format_time(row.modified_at)}


# --- readers of the JSON parameters ------------------------------------------------------------

def _json(call: RpcCall, name: str) -> Any:
    try:
        return json.loads(call.params[name])
    except json.JSONDecodeError as exc:
        raise e.InvalidArgument(f"{name} is not valid JSON: {exc.msg}") from None


def _environment(call: RpcCall) -> dict[str, Any] | None:
    """``Environment``: ``{"Variables":[{"Name","Value","Description"?}]}`` (None if absent)."""
    if not call.params.get("Environment"):
        return None
    data = _json(call, "Environment")
    variables = data.get("Variables", []) if isinstance(data, dict) else None
    if not isinstance(variables, list) or not all(
            isinstance(v, dict) and isinstance(v.get("Name"), str) for v in variables):
        raise e.InvalidArgument('Environment must be {"Variables": [{"Name": ..., "Value": ...}]}')
    return {"Variables": [{"Name": v["Name"], "Value": str(v.get("Value", "")), **(
        {"Description": str(v["Description"])} if "Description" in v else {})}
        for v in variables]}


def _routing(call: RpcCall) -> tuple[Route, ...] | None:
    """``RoutingConfigurations``: ``[{"Version": "1", "Weight": 100}]`` (None if absent)."""
    if not call.params.get("RoutingConfigurations"):
        return None
    data = _json(call, "RoutingConfigurations")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise e.InvalidArgument('RoutingConfigurations must be [{"Version": "1", "Weight": 100}]')
    routes = []
    for item in data:
        version, weight = item.get("Version"), item.get("Weight")
        if isinstance(version, int) and not isinstance(version, bool):
            version = str(version)
        if isinstance(weight, str) and parse_number(weight) is not None:
            weight = parse_number(weight)
        if not isinstance(version, str) or isinstance(weight, bool) \
                or not isinstance(weight, int):
            raise e.InvalidArgument("each RoutingConfigurations item needs a Version (string) "
                                    "and a Weight (integer)")
        routes.append(Route(version, weight))
    return tuple(routes)


class CloudFlowApi:
    """The CloudFlow product registered with the router: :data:`CLOUDFLOW_ACTIONS` over its
    services."""

    version = "2019-03-15"
    auth = FNF_AUTH
    params = CLOUDFLOW_PARAMS
    errors = CLOUDFLOW_ERRORS
    def __init__(self, flows: FlowService, executions: ExecutionService, watch: ExecutionWatch,
                 releases: FlowReleases, schedules: ScheduleService, map_runs: MapRuns,
                 relations: ExecutionRelations) -> None:
        self._flows = flows
        self._map_runs = map_runs
        self._relations = relations
        self._executions = executions
        self._watch = watch
        self._releases = releases
        self._schedules = schedules
        self.actions = CLOUDFLOW_ACTIONS.actions()
        self.quick_actions = CLOUDFLOW_ACTIONS.quick()

    # --- flows --------------------------------------------------------------------------------

    @CLOUDFLOW_ACTIONS.action("CreateFlow")
    def create_flow(self, c: RpcCall) -> Body:
        return flow_to_wire(self._flows.create(
            *c.key("Name"), definition=c.required("Definition"),
            description=c.text("Description"), type=c.text("Type", "FDL"),
            role_arn=c.text("RoleArn"), execution_mode=c.text("ExecutionMode"),
            environment=_environment(c), resource_group_id=c.text("ResourceGroupId"),
            external_storage=c.text("ExternalStorageLocation")))

    @CLOUDFLOW_ACTIONS.action("UpdateFlow")
    def update_flow(self, c: RpcCall) -> Body:
        p = c.params
        changes = FlowChanges(definition=p.get("Definition"), description=p.get("Description"),
                              type=p.get("Type"), role_arn=p.get("RoleArn"),
                              environment=_environment(c))
        return flow_to_wire(self._flows.update(*c.key("Name"), changes))

    @CLOUDFLOW_ACTIONS.action("DescribeFlow", quick=True)
    def describe_flow(self, c: RpcCall) -> Body:
        if c.text("FlowVersion"):
            return flow_to_wire(self._releases.describe_version(*c.key("Name", "FlowVersion")))
        return flow_to_wire(self._flows.get(*c.key("Name")))

    @CLOUDFLOW_ACTIONS.action("ListFlows", quick=True)
    def list_flows(self, c: RpcCall) -> Body:
        flows, token = self._flows.list(*c.key(), **c.paging(999),
                                        resource_group_id=c.text("ResourceGroupId"))
        return page("Flows", [flow_to_wire(f) for f in flows], token)

    @CLOUDFLOW_ACTIONS.action("DeleteFlow")
    def delete_flow(self, c: RpcCall) -> None:
        key = c.key("Name")
        self._flows.delete(*key)
        self._executions.forget_flow(*key)

    # --- executions ---------------------------------------------------------------------------

    @CLOUDFLOW_ACTIONS.action("StartExecution", quick=True)
    def start_execution(self, c: RpcCall) -> Body:
        p = c.params  # the hot path: read directly
        return execution_to_wire(self._executions.start(
            *c.key("FlowName"), name=p.get("ExecutionName", ""), input_text=p.get("Input", ""),
            qualifier=p.get("Qualifier", ""), callback_token=p.get("CallbackFnFTaskToken", "")))

    @CLOUDFLOW_ACTIONS.action("StartSyncExecution")
    def start_sync_execution(self, c: RpcCall) -> Body:
        result = self._executions.start_sync(
            *c.key("FlowName"), name=c.text("ExecutionName"), input_text=c.text("Input"),
            qualifier=c.text("Qualifier"))
        body = execution_to_wire(result.view, metadata_only=True)
        if result.view.output is not None:
            body["Output"] = result.view.output
        if result.error_code or result.view.status != "Succeeded":
            body["ErrorCode"] = result.error_code
            body["ErrorMessage"] = result.error_message
        return body

    @CLOUDFLOW_ACTIONS.action("DescribeExecution", quick=True)
    def describe_execution(self, c: RpcCall) -> Body | LongPoll:
        """With ``WaitTimeSeconds`` and a running execution: a long poll answered when the
        execution ends or the time is up (through the watch, no thread waits)."""
        key = c.key("FlowName", "ExecutionName")
        wait = c.integer("WaitTimeSeconds", 0, 0, 60)
        view, seq, related = self._executions.described(*key)
        if not wait or view.status != "Running":
            return self._described(view, seq, related)
        return LongPoll(lambda wake: self._watch.subscribe(key, wake), float(wait),
                        lambda: self._described(*self._executions.described(*key)))

    def _described(self, view: ExecutionView, seq: int, related: bool) -> Body:
        """DescribeExecution's answer: the execution with its parent and children."""
        body = execution_to_wire(view)
        if related:
            body.update(relations_to_wire(self._relations.of(seq)))
        return body

    @CLOUDFLOW_ACTIONS.action("DescribeMapRun", quick=True)
    def describe_map_run(self, c: RpcCall) -> Body:
        account, region, flow, execution = c.key("FlowName", "ExecutionName")
        name = c.required("MapRunName")
        seq = self._executions.seq(account, region, flow, execution)
        return map_run_to_wire(self._map_runs.describe(seq, execution, name))

    @CLOUDFLOW_ACTIONS.action("UpdateMapRun")
    def update_map_run(self, c: RpcCall) -> Body:
        account, region, flow, execution = c.key("FlowName", "ExecutionName")
        name, changes = c.required("MapRunName"), read_map_run_changes(c)
        seq = self._executions.seq(account, region, flow, execution)
        return map_run_update_to_wire(flow, execution,
                                      self._map_runs.update(seq, name, changes))

    @CLOUDFLOW_ACTIONS.action("ListExecutions", quick=True)
    def list_executions(self, c: RpcCall) -> Body:
        metadata_only = bool(c.boolean("MetadataOnly"))
        filt = ExecutionFilter(
            status=c.text("Status"), name_prefix=c.text("ExecutionNamePrefix"),
            started_from=c.text("StartedTimeBegin"), started_to=c.text("StartedTimeEnd"),
            qualifier=c.text("Qualifier"), map_run_name=c.text("MapRunName"))
        views, token = self._executions.list(*c.key("FlowName"), **c.paging(99), filt=filt)
        return page("Executions",
                    [execution_to_wire(v, metadata_only=metadata_only) for v in views], token)

    @CLOUDFLOW_ACTIONS.action("GetExecutionHistory", quick=True)
    def get_execution_history(self, c: RpcCall) -> Body:
        events, token = self._executions.history(
            *c.key("FlowName", "ExecutionName"), **c.paging(999))
        return page("Events", [history_event_to_wire(ev) for ev in events], token)

    @CLOUDFLOW_ACTIONS.action("StopExecution", quick=True)
    def stop_execution(self, c: RpcCall) -> Body:
        view = self._executions.stop(*c.key("FlowName", "ExecutionName"),
                                     error=c.text("Error"), cause=c.text("Cause"))
        body = execution_to_wire(view)
        if view.role_arn:
            body["RoleArn"] = view.role_arn
        return body

    @CLOUDFLOW_ACTIONS.action("ReportTaskSucceeded", quick=True)
    def report_task_succeeded(self, c: RpcCall) -> Body:
        return {"EventId": self._executions.report(*c.key("TaskToken"),
                                                   output=c.required("Output"))}

    @CLOUDFLOW_ACTIONS.action("ReportTaskFailed", quick=True)
    def report_task_failed(self, c: RpcCall) -> Body:
        return {"EventId": self._executions.report(*c.key("TaskToken"),
                                                   error=c.required("Error"),
                                                   cause=c.text("Cause"))}

    # --- versions and aliases -----------------------------------------------------------------

    @CLOUDFLOW_ACTIONS.action("PublishFlowVersion")
    def publish_flow_version(self, c: RpcCall) -> Body:
        key = c.key("FlowName")
        return {"FlowName": key[2], **_version(self._releases.publish(
            *key, c.text("Description")))}

    @CLOUDFLOW_ACTIONS.action("ListFlowVersions")
    def list_flow_versions(self, c: RpcCall) -> Body:
        found, token = self._releases.list_versions(*c.key("FlowName"), **c.paging(999))
        return page("FlowVersions", [_version(v) for v in found], token)

    @CLOUDFLOW_ACTIONS.action("DeleteFlowVersion")
    def delete_flow_version(self, c: RpcCall) -> None:
        self._releases.delete_version(*c.key("FlowName", "FlowVersion"))

    @CLOUDFLOW_ACTIONS.action("CreateFlowAlias")
    def create_flow_alias(self, c: RpcCall) -> Body:
        key = c.key("FlowName", "Name")
        return {"FlowName": key[2], **_alias(self._releases.create_alias(
            *key, routes=_routing(c), description=c.text("Description")))}

    @CLOUDFLOW_ACTIONS.action("DescribeFlowAlias")
    def describe_flow_alias(self, c: RpcCall) -> Body:
        return {"Alias": _alias(self._releases.describe_alias(*c.key("FlowName", "Name")))}

    @CLOUDFLOW_ACTIONS.action("UpdateFlowAlias")
    def update_flow_alias(self, c: RpcCall) -> Body:
        return {"Alias": _alias(self._releases.update_alias(
            *c.key("FlowName", "Name"), routes=_routing(c),
            description=c.params.get("Description")))}

    @CLOUDFLOW_ACTIONS.action("DeleteFlowAlias")
    def delete_flow_alias(self, c: RpcCall) -> None:
        self._releases.delete_alias(*c.key("FlowName", "Name"))

    @CLOUDFLOW_ACTIONS.action("ListFlowAliases")
    def list_flow_aliases(self, c: RpcCall) -> Body:
        found, token = self._releases.list_aliases(*c.key("FlowName"), **c.paging(999))
        return page("Aliases", [_alias(a) for a in found], token)

    # --- schedules and regions ----------------------------------------------------------------

    @CLOUDFLOW_ACTIONS.action("CreateSchedule")
    def create_schedule(self, c: RpcCall) -> Body:
        return _schedule(self._schedules.create(
            *c.key("FlowName", "ScheduleName"), cron=c.required("CronExpression"),
            payload=c.text("Payload"), description=c.text("Description"),
            enable=bool(c.boolean("Enable"))))

    @CLOUDFLOW_ACTIONS.action("DescribeSchedule")
    def describe_schedule(self, c: RpcCall) -> Body:
        return _schedule(self._schedules.describe(*c.key("FlowName", "ScheduleName")))

    @CLOUDFLOW_ACTIONS.action("UpdateSchedule")
    def update_schedule(self, c: RpcCall) -> Body:
        p = c.params
        changes = ScheduleChanges(cron=p.get("CronExpression") or None, payload=p.get("Payload"),
                                  description=p.get("Description"),
                                  enable=c.boolean("Enable", None))
        return _schedule(self._schedules.update(*c.key("FlowName", "ScheduleName"), changes))

    @CLOUDFLOW_ACTIONS.action("DeleteSchedule")
    def delete_schedule(self, c: RpcCall) -> None:
        self._schedules.delete(*c.key("FlowName", "ScheduleName"))

    @CLOUDFLOW_ACTIONS.action("ListSchedules")
    def list_schedules(self, c: RpcCall) -> Body:
        rows, token = self._schedules.list(*c.key("FlowName"), **c.paging(1000))
        return page("Schedules", [_schedule(r) for r in rows], token)

    @CLOUDFLOW_ACTIONS.action("DescribeRegions")
    def describe_regions(self, c: RpcCall) -> Body:
        return {"Regions": {"Region": [
            {"RegionId": r.region_id, "RegionEndpoint": r.endpoint, "LocalName": r.local_name}
            for r in cloudflow_regions(c.text("AcceptLanguage"))]}}
