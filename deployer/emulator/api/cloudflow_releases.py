"""CloudFlow versions, aliases, schedules and regions on the wire (RPC, API 2019-03-15).

PublishFlowVersion, ListFlowVersions, DeleteFlowVersion, Create/Describe/Update/Delete
FlowAlias, ListFlowAliases, Create/Describe/Update/Delete Schedule, ListSchedules and
DescribeRegions: parameters by wire name (cloudflow-api.md §4.14), answers in the shapes the
``alibabacloud_fnf20190315`` models read. The domain lives in :mod:`services.flow_versions`,
:mod:`services.schedules` and :mod:`services.regions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.cloudflow_params import integer, listing, required
from deployer.emulator.api.router import RpcCall
from deployer.emulator.services.flow_versions import (
    FlowAlias,
    FlowReleases,
    FlowVersion,
    parse_routing,
)
from deployer.emulator.services.regions import cloudflow_regions
from deployer.emulator.services.schedules import Schedule, ScheduleChanges, ScheduleService
from deployer.fdl.interpreter.history import format_time

__all__ = ["ReleaseActions"]

Handler = Callable[[RpcCall], dict[str, Any]]


def _version(v: FlowVersion) -> dict[str, Any]:
    return {"Version": v.version, "Description": v.description,
            "CreatedTime": format_time(v.created_at)}


def _alias(a: FlowAlias) -> dict[str, Any]:
    return {"Name": a.name, "Description": a.description,
            "RoutingConfigurations": [{"Version": r.version, "Weight": r.weight}
                                      for r in a.routes],
            "CreatedTime": format_time(a.created_at)}


def _schedule(row: Schedule) -> dict[str, Any]:
    return {"ScheduleName": row.name, "ScheduleId": row.schedule_id,
            "CronExpression": row.cron, "Payload": row.payload,
            "Description": row.description, "Enable": row.enable,
            "CreatedTime": format_time(row.created_at),
            "LastModifiedTime": format_time(row.modified_at)}


def _enable(call: RpcCall) -> bool | None:
    raw = call.params.get("Enable")
    if raw is None or raw == "":
        return None
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise e.InvalidArgument(f"Enable must be true or false, got {raw!r}.")
    return value == "true"


class ReleaseActions:
    """The action table entries of :class:`~deployer.emulator.api.cloudflow.CloudFlowApi`
    for versions, aliases, schedules and regions."""

    def __init__(self, releases: FlowReleases | None, schedules: ScheduleService | None
                 ) -> None:
        self._releases = releases
        self._schedules = schedules

    def table(self) -> dict[str, Handler]:
        return {
            "PublishFlowVersion": self.publish_version, "ListFlowVersions": self.list_versions,
            "DeleteFlowVersion": self.delete_version, "CreateFlowAlias": self.create_alias,
            "DescribeFlowAlias": self.describe_alias, "UpdateFlowAlias": self.update_alias,
            "DeleteFlowAlias": self.delete_alias, "ListFlowAliases": self.list_aliases,
            "CreateSchedule": self.create_schedule, "DescribeSchedule": self.describe_schedule,
            "UpdateSchedule": self.update_schedule, "DeleteSchedule": self.delete_schedule,
            "ListSchedules": self.list_schedules, "DescribeRegions": self.describe_regions,
        }

    @property
    def releases(self) -> FlowReleases:
        if self._releases is None:
            raise e.ActionNotSupported("flow versions are not enabled in this emulator")
        return self._releases

    @property
    def schedules(self) -> ScheduleService:
        if self._schedules is None:
            raise e.ActionNotSupported("schedules are not enabled in this emulator")
        return self._schedules

    # --- versions -----------------------------------------------------------------------------

    def publish_version(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        flow = required(call, "FlowName")
        version = self.releases.publish(ctx.account_id, ctx.region, flow,
                                        call.params.get("Description", ""))
        return {"FlowName": flow, **_version(version)}

    def list_versions(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        found, token = self.releases.list_versions(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            limit=integer(call, "Limit", 60, 1, 999),
            next_token=call.params.get("NextToken", ""))
        return listing("FlowVersions", [_version(v) for v in found], token)

    def delete_version(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        self.releases.delete_version(ctx.account_id, ctx.region,
                                     required(call, "FlowName"),
                                     required(call, "FlowVersion"))
        return {}

    # --- aliases ------------------------------------------------------------------------------

    def create_alias(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        flow = required(call, "FlowName")
        alias = self.releases.create_alias(
            ctx.account_id, ctx.region, flow, required(call, "Name"),
            routes=parse_routing(p.get("RoutingConfigurations")),
            description=p.get("Description", ""))
        return {"FlowName": flow, **_alias(alias)}

    def describe_alias(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        alias = self.releases.describe_alias(ctx.account_id, ctx.region,
                                             required(call, "FlowName"),
                                             required(call, "Name"))
        return {"Alias": _alias(alias)}

    def update_alias(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        alias = self.releases.update_alias(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            required(call, "Name"), routes=parse_routing(p.get("RoutingConfigurations")),
            description=p.get("Description"))
        return {"Alias": _alias(alias)}

    def delete_alias(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        self.releases.delete_alias(ctx.account_id, ctx.region,
                                   required(call, "FlowName"),
                                   required(call, "Name"))
        return {}

    def list_aliases(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        found, token = self.releases.list_aliases(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            limit=integer(call, "Limit", 60, 1, 999),
            next_token=call.params.get("NextToken", ""))
        return listing("Aliases", [_alias(a) for a in found], token)

    # --- schedules ----------------------------------------------------------------------------

    def create_schedule(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        row = self.schedules.create(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            required(call, "ScheduleName"),
            cron=required(call, "CronExpression"), payload=p.get("Payload", ""),
            description=p.get("Description", ""), enable=bool(_enable(call)))
        return _schedule(row)

    def describe_schedule(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        return _schedule(self.schedules.describe(ctx.account_id, ctx.region,
                                                 required(call, "FlowName"),
                                                 required(call, "ScheduleName")))

    def update_schedule(self, call: RpcCall) -> dict[str, Any]:
        ctx, p = call.context, call.params
        changes = ScheduleChanges(cron=p.get("CronExpression") or None,
                                  payload=p.get("Payload"), description=p.get("Description"),
                                  enable=_enable(call))
        return _schedule(self.schedules.update(ctx.account_id, ctx.region,
                                               required(call, "FlowName"),
                                               required(call, "ScheduleName"), changes))

    def delete_schedule(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        self.schedules.delete(ctx.account_id, ctx.region, required(call, "FlowName"),
                              required(call, "ScheduleName"))
        return {}

    def list_schedules(self, call: RpcCall) -> dict[str, Any]:
        ctx = call.context
        rows, token = self.schedules.list(
            ctx.account_id, ctx.region, required(call, "FlowName"),
            limit=integer(call, "Limit", 60, 1, 1000),
            next_token=call.params.get("NextToken", ""))
        return listing("Schedules", [_schedule(r) for r in rows], token)

    # --- regions ------------------------------------------------------------------------------

    def describe_regions(self, call: RpcCall) -> dict[str, Any]:
        regions = cloudflow_regions(call.params.get("AcceptLanguage", ""))
        return {"Regions": {"Region": [
            {"RegionId": r.region_id, "RegionEndpoint": r.endpoint, "LocalName": r.local_name}
            for r in regions]}}
