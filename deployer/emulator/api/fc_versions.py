"""FC 3.0 versions and aliases on the wire (``/2023-03-30/functions/{name}/versions|aliases``).

PublishFunctionVersion, ListFunctionVersions, DeleteFunctionVersion, CreateAlias, GetAlias,
UpdateAlias, DeleteAlias and ListAliases: JSON in, the SDK's ``Version`` / ``Alias`` /
``ListVersionsOutput`` / ``ListAliasesOutput`` shapes out (fc3-api.md §2; docs
"api-fc-2023-03-30-struct-alias"). The domain is :mod:`services.function_versions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from werkzeug.routing import Rule

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.http import HttpResponse, json_response, wire_time
from deployer.emulator.api.router import RequestContext
from deployer.emulator.services.function_versions import (
    AliasChanges,
    FunctionAlias,
    FunctionReleases,
    FunctionVersion,
)

__all__ = ["VersionRoutes"]


def version_to_wire(v: FunctionVersion) -> dict[str, Any]:
    return {"versionId": v.version_id, "description": v.description,
            "createdTime": wire_time(v.created_at), "lastModifiedTime": wire_time(v.created_at)}


def alias_to_wire(a: FunctionAlias) -> dict[str, Any]:
    return {"aliasName": a.alias_name, "versionId": a.version_id,
            "description": a.description,
            "additionalVersionWeight": dict(a.additional_version_weight),
            "createdTime": wire_time(a.created_at),
            "lastModifiedTime": wire_time(a.modified_at)}


def _string(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise e.InvalidArgument(f"{key} must be a string")
    return value


def _weights(body: Mapping[str, Any]) -> dict[str, float] | None:
    value = body.get("additionalVersionWeight")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise e.InvalidArgument('additionalVersionWeight must be an object such as {"2": 0.05}')
    return {str(k): v for k, v in value.items()}


def _int(ctx: RequestContext, key: str, default: int) -> int:
    raw = ctx.request.query_params().get(key)
    if raw is None or raw == "":
        return default
    if not is_decimal(raw):
        raise e.InvalidArgument(f"{key} must be an integer between 1 and 100, got {raw!r}")
    return int(raw)


class VersionRoutes:
    """The version and alias paths of :class:`~deployer.emulator.api.fc.FcApi`."""

    @staticmethod
    def rules() -> list[Rule]:
        """Fresh rules for a routing map (a werkzeug rule binds to one map)."""
        return [
            Rule("/2023-03-30/functions/<name>/versions", methods=["POST"], endpoint="publish"),
            Rule("/2023-03-30/functions/<name>/versions", methods=["GET"], endpoint="versions"),
            Rule("/2023-03-30/functions/<name>/versions/<version>", methods=["DELETE"],
                 endpoint="delete_version"),
            Rule("/2023-03-30/functions/<name>/aliases", methods=["POST"], endpoint="create_alias"),
            Rule("/2023-03-30/functions/<name>/aliases", methods=["GET"], endpoint="aliases"),
            Rule("/2023-03-30/functions/<name>/aliases/<alias>", methods=["GET"],
                 endpoint="get_alias"),
            Rule("/2023-03-30/functions/<name>/aliases/<alias>", methods=["PUT"],
                 endpoint="update_alias"),
            Rule("/2023-03-30/functions/<name>/aliases/<alias>", methods=["DELETE"],
                 endpoint="delete_alias"),
        ]

    def __init__(self, releases: FunctionReleases | None, body: Any) -> None:
        self._releases = releases
        self._body = body  # ctx -> the JSON object body (FcApi's parser)

    def handlers(self) -> dict[str, Any]:
        return {"publish": self.publish, "versions": self.versions,
                "delete_version": self.delete_version, "create_alias": self.create_alias,
                "aliases": self.aliases, "get_alias": self.get_alias,
                "update_alias": self.update_alias, "delete_alias": self.delete_alias}

    @property
    def svc(self) -> FunctionReleases:
        if self._releases is None:
            raise e.PathNotSupported("function versions are not enabled in this emulator")
        return self._releases

    @staticmethod
    def _ok(ctx: RequestContext, payload: Mapping[str, Any]) -> HttpResponse:
        return json_response(200, payload, {"x-fc-request-id": ctx.request_id})

    @staticmethod
    def _gone(ctx: RequestContext) -> HttpResponse:
        return HttpResponse(204, b"", {"x-fc-request-id": ctx.request_id})

    def publish(self, ctx: RequestContext, name: str) -> HttpResponse:
        body = self._body(ctx)
        version = self.svc.publish(ctx.account_id, ctx.region, name,
                                   _string(body, "description") or "")
        return self._ok(ctx, version_to_wire(version))

    def versions(self, ctx: RequestContext, name: str) -> HttpResponse:
        q = ctx.request.query_params()
        found, token, direction = self.svc.list_versions(
            ctx.account_id, ctx.region, name, direction=q.get("direction", ""),
            limit=_int(ctx, "limit", 20), next_token=q.get("nextToken", ""))
        payload: dict[str, Any] = {"direction": direction,
                                   "versions": [version_to_wire(v) for v in found]}
        if token:
            payload["nextToken"] = token
        return self._ok(ctx, payload)

    def delete_version(self, ctx: RequestContext, name: str, version: str) -> HttpResponse:
        self.svc.delete_version(ctx.account_id, ctx.region, name, version)
        return self._gone(ctx)

    def create_alias(self, ctx: RequestContext, name: str) -> HttpResponse:
        body = self._body(ctx)
        alias_name, version_id = _string(body, "aliasName"), _string(body, "versionId")
        if not alias_name:
            raise e.InvalidArgument("aliasName is required")
        if not version_id:
            raise e.InvalidArgument("versionId is required")
        alias = self.svc.create_alias(ctx.account_id, ctx.region, name, alias_name,
                                      version_id=version_id,
                                      description=_string(body, "description") or "",
                                      additional_version_weight=_weights(body))
        return self._ok(ctx, alias_to_wire(alias))

    def get_alias(self, ctx: RequestContext, name: str, alias: str) -> HttpResponse:
        return self._ok(ctx, alias_to_wire(
            self.svc.get_alias(ctx.account_id, ctx.region, name, alias)))

    def update_alias(self, ctx: RequestContext, name: str, alias: str) -> HttpResponse:
        body = self._body(ctx)
        changes = AliasChanges(version_id=_string(body, "versionId"),
                               description=_string(body, "description"),
                               additional_version_weight=_weights(body))
        return self._ok(ctx, alias_to_wire(
            self.svc.update_alias(ctx.account_id, ctx.region, name, alias, changes)))

    def delete_alias(self, ctx: RequestContext, name: str, alias: str) -> HttpResponse:
        self.svc.delete_alias(ctx.account_id, ctx.region, name, alias)
        return self._gone(ctx)

    def aliases(self, ctx: RequestContext, name: str) -> HttpResponse:
        q = ctx.request.query_params()
        found, token = self.svc.list_aliases(ctx.account_id, ctx.region, name,
                                             prefix=q.get("prefix", ""),
                                             limit=_int(ctx, "limit", 20),
                                             next_token=q.get("nextToken", ""))
        payload: dict[str, Any] = {"aliases": [alias_to_wire(a) for a in found]}
        if token:
            payload["nextToken"] = token
        return self._ok(ctx, payload)
