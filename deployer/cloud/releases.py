"""Typed clients for versions, aliases and schedules (FC 3.0 and CloudFlow SDKs).

:class:`FunctionReleaseClient` publishes and lists FC function versions and manages aliases;
:class:`FlowReleaseClient` does the same for CloudFlow flows and manages their time-based
schedules. Both share the :class:`CloudConnection` of the typed function and flow clients.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError
from deployer.cloud.fc import RemoteFunction, _remote

__all__ = ["FlowReleaseClient", "FunctionReleaseClient", "RemoteAlias", "RemoteSchedule",
           "RemoteVersion"]


@dataclass(frozen=True, slots=True)
class RemoteVersion:
    version: str
    description: str


@dataclass(frozen=True, slots=True)
class RemoteAlias:
    """An alias of either service: its main version and the other versions' weights
    (FC: fractions 0..1 of the canary; CloudFlow: the routing weights as given)."""

    name: str
    version: str
    description: str
    weights: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RemoteSchedule:
    name: str
    cron: str
    payload: str
    description: str
    enable: bool


class FunctionReleaseClient(ServiceClient):
    """FC 3.0 ``PublishFunctionVersion``, ``ListFunctionVersions``, ``GetFunction`` with a
    qualifier and the alias actions."""

    SERVICE = "Function Compute"


    def latest_version(self, function: str) -> RemoteVersion | None:
        """The newest published version (ListFunctionVersions is newest first)."""
        from alibabacloud_fc20230330 import models

        request = models.ListFunctionVersionsRequest(limit=1, direction="BACKWARD")
        body = self._call("ListFunctionVersions",
                          lambda: self._conn.fc.list_function_versions(function, request)).body
        versions = body.versions or []
        if not versions:
            return None
        return RemoteVersion(str(versions[0].version_id), versions[0].description or "")

    def versions(self, function: str) -> list[str]:
        from alibabacloud_fc20230330 import models

        out: list[str] = []
        token: str | None = None
        while True:
            request = models.ListFunctionVersionsRequest(limit=100, next_token=token)
            body = self._call("ListFunctionVersions", lambda r=request: (
                self._conn.fc.list_function_versions(function, r))).body
            out.extend(str(v.version_id) for v in body.versions or [])
            token = body.next_token
            if not token:
                return out

    def get_version(self, function: str, version: str) -> RemoteFunction | None:
        from alibabacloud_fc20230330 import models

        try:
            body = self._call("GetFunction", lambda: self._conn.fc.get_function(
                function, models.GetFunctionRequest(qualifier=version))).body
        except CloudNotFoundError:
            return None
        return _remote(body)

    def publish(self, function: str, description: str) -> str:
        from alibabacloud_fc20230330 import models

        request = models.PublishFunctionVersionRequest(
            body=models.PublishVersionInput(description=description))
        body = self._call("PublishFunctionVersion",
                          lambda: self._conn.fc.publish_function_version(function, request)).body
        return str(body.version_id)

    def delete_version(self, function: str, version: str) -> bool:
        try:
            self._call("DeleteFunctionVersion",
                       lambda: self._conn.fc.delete_function_version(function, version))
        except CloudNotFoundError:
            return False
        return True

    def get_alias(self, function: str, alias: str) -> RemoteAlias | None:
        try:
            body = self._call("GetAlias",
                              lambda: self._conn.fc.get_alias(function, alias)).body
        except CloudNotFoundError:
            return None
        return RemoteAlias(body.alias_name or alias, str(body.version_id or ""),
                           body.description or "",
                           {str(k): float(v) for k, v in
                            (body.additional_version_weight or {}).items()})

    def aliases(self, function: str) -> list[str]:
        from alibabacloud_fc20230330 import models

        out: list[str] = []
        token: str | None = None
        while True:
            request = models.ListAliasesRequest(limit=100, next_token=token)
            body = self._call("ListAliases", lambda r=request: (
                self._conn.fc.list_aliases(function, r))).body
            out.extend(a.alias_name for a in body.aliases or [])
            token = body.next_token
            if not token:
                return out

    def put_alias(self, function: str, alias: RemoteAlias, *, exists: bool) -> None:
        """Create the alias, or update it when ``exists``."""
        from alibabacloud_fc20230330 import models

        weights = dict(alias.weights)
        if exists:
            update = models.UpdateAliasRequest(body=models.UpdateAliasInput(
                version_id=alias.version, description=alias.description,
                additional_version_weight=weights))
            self._call("UpdateAlias", lambda: self._conn.fc.update_alias(
                function, alias.name, update))
            return
        create = models.CreateAliasRequest(body=models.CreateAliasInput(
            alias_name=alias.name, version_id=alias.version, description=alias.description,
            additional_version_weight=weights))
        self._call("CreateAlias", lambda: self._conn.fc.create_alias(function, create))

    def delete_alias(self, function: str, alias: str) -> bool:
        try:
            self._call("DeleteAlias", lambda: self._conn.fc.delete_alias(function, alias))
        except CloudNotFoundError:
            return False
        return True


class FlowReleaseClient(ServiceClient):
    """CloudFlow flow versions, aliases and schedules."""

    SERVICE = "CloudFlow"


    # --- versions -----------------------------------------------------------------------------

    def latest_version(self, flow: str) -> RemoteVersion | None:
        from alibabacloud_fnf20190315 import models

        request = models.ListFlowVersionsRequest(flow_name=flow, limit="1")
        body = self._call("ListFlowVersions",
                          lambda: self._conn.fnf.list_flow_versions(request)).body
        versions = body.flow_versions or []
        if not versions:
            return None
        return RemoteVersion(str(versions[0].version), versions[0].description or "")

    def version_definition(self, flow: str, version: str) -> tuple[str, str] | None:
        """(definition, role ARN) frozen by ``version``; None when it does not exist."""
        from alibabacloud_fnf20190315 import models

        request = models.DescribeFlowRequest(name=flow, flow_version=version)
        try:
            body = self._call("DescribeFlow", lambda: self._conn.fnf.describe_flow(request)).body
        except CloudNotFoundError:
            return None
        return body.definition or "", body.role_arn or ""

    def publish(self, flow: str, description: str) -> str:
        from alibabacloud_fnf20190315 import models

        request = models.PublishFlowVersionRequest(flow_name=flow, description=description)
        body = self._call("PublishFlowVersion",
                          lambda: self._conn.fnf.publish_flow_version(request)).body
        return str(body.version)

    # --- aliases ------------------------------------------------------------------------------

    def get_alias(self, flow: str, alias: str) -> RemoteAlias | None:
        from alibabacloud_fnf20190315 import models

        request = models.DescribeFlowAliasRequest(flow_name=flow, name=alias)
        try:
            body = self._call("DescribeFlowAlias",
                              lambda: self._conn.fnf.describe_flow_alias(request)).body
        except CloudNotFoundError:
            return None
        found = body.alias
        routes = [(str(r.version), float(r.weight or 0))
                  for r in (found.routing_configurations if found else None) or []]
        main = routes[0][0] if routes else ""
        return RemoteAlias(alias, main, (found.description if found else "") or "",
                           dict(routes))

    def put_alias(self, flow: str, alias: RemoteAlias, *, exists: bool) -> None:
        """Create or update ``alias``; its ``weights`` are the routing (version -> weight)."""
        from alibabacloud_fnf20190315 import models

        if exists:
            routes = [models.UpdateFlowAliasRequestRoutingConfigurations(
                version=v, weight=int(w)) for v, w in alias.weights.items()]
            update = models.UpdateFlowAliasRequest(flow_name=flow, name=alias.name,
                                                   description=alias.description,
                                                   routing_configurations=routes)
            self._call("UpdateFlowAlias", lambda: self._conn.fnf.update_flow_alias(update))
            return
        created = [models.CreateFlowAliasRequestRoutingConfigurations(version=v, weight=int(w))
                   for v, w in alias.weights.items()]
        create = models.CreateFlowAliasRequest(flow_name=flow, name=alias.name,
                                               description=alias.description,
                                               routing_configurations=created)
        self._call("CreateFlowAlias", lambda: self._conn.fnf.create_flow_alias(create))

    # --- schedules ----------------------------------------------------------------------------

    def schedules(self, flow: str) -> list[RemoteSchedule]:
        """Every schedule of ``flow`` (every page)."""
        from alibabacloud_fnf20190315 import models

        out: list[RemoteSchedule] = []
        token: str | None = None
        while True:
            request = models.ListSchedulesRequest(flow_name=flow, limit=1000, next_token=token)
            try:
                body = self._call("ListSchedules",
                                  lambda r=request: self._conn.fnf.list_schedules(r)).body
            except CloudNotFoundError:
                return out
            out.extend(RemoteSchedule(s.schedule_name or "", s.cron_expression or "",
                                      s.payload or "", s.description or "",
                                      bool(s.enable)) for s in body.schedules or [])
            token = body.next_token
            if not token:
                return out

    def put_schedule(self, flow: str, schedule: RemoteSchedule, *, exists: bool) -> None:
        from alibabacloud_fnf20190315 import models

        fields = {"flow_name": flow, "schedule_name": schedule.name,
                  "cron_expression": schedule.cron, "payload": schedule.payload,
                  "description": schedule.description, "enable": schedule.enable}
        if exists:
            update = models.UpdateScheduleRequest(**fields)
            self._call("UpdateSchedule", lambda: self._conn.fnf.update_schedule(update))
        else:
            create = models.CreateScheduleRequest(**fields)
            self._call("CreateSchedule", lambda: self._conn.fnf.create_schedule(create))

    def delete_schedule(self, flow: str, name: str) -> bool:
        from alibabacloud_fnf20190315 import models

        request = models.DeleteScheduleRequest(flow_name=flow, schedule_name=name)
        try:
            self._call("DeleteSchedule", lambda: self._conn.fnf.delete_schedule(request))
        except CloudNotFoundError:
            return False
        return True


def payload_text(payload: Any) -> str:
    """A schedule payload as the API takes it: JSON text (a map is serialised compactly)."""
    if payload is None or payload == "":
        return ""
    if isinstance(payload, str):
        return payload
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
