"""FC 3.0 layers on the wire: CreateLayerVersion, GetLayerVersion, DeleteLayerVersion,
ListLayerVersions, ListLayers, GetLayerVersionByArn and PutLayerACL (``/2023-03-30/layers``,
``/2023-03-30/layerarn/{arn}``; fc3-api.md §2), entries of :data:`~.fc.FC_ROUTES`; the domain
is :mod:`services.layers`.

A version's ``code.location`` is the emulator's download URL of its zip (as
GetFunctionCode's ``url``);
``acl`` is ``"1"`` for a public layer and ``"0"`` for a private one [INFERRED: the SDK's
``Layer.acl`` is a string; PutLayerACL sends ``public=true|false``].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, RequestContext, json_object
from deployer.emulator.api.fc import FC_ROUTES, fc_page, list_limit, listing, optional_string
from deployer.emulator.api.fc_settings import read_code
from deployer.emulator.services.layers import LayerInput, LayerVersionRow
from deployer.timestamps import iso_seconds

if TYPE_CHECKING:
    from deployer.emulator.api.fc import FcApi

__all__ = ["layer_to_wire"]

_LAYERS = "/2023-03-30/layers"


def layer_to_wire(row: LayerVersionRow, public_url: str) -> dict[str, Any]:
    """The ``Layer`` object."""
    return {"layerName": row.name, "version": row.version, "description": row.description,
            "license": row.license, "compatibleRuntime": list(row.compatible_runtimes),
            "codeSize": row.code_size, "codeChecksum": row.code_checksum,
            "createTime": iso_seconds(row.created_at), "layerVersionArn": row.arn,
            "acl": "1" if row.public else "0",
            "code": {"location": f"{public_url}/_emulator/code/{row.code_checksum}.zip",
                     "repositoryType": "OSS"}}


def _version(raw: str) -> int:
    if not is_decimal(raw) or int(raw) < 1:
        raise e.InvalidArgument(f"version must be a positive integer, got {raw!r}")
    return int(raw)


@FC_ROUTES.route("POST", _LAYERS + "/{layer}/versions")
def create_layer_version(api: FcApi, ctx: RequestContext, layer: str) -> Body:
    body = json_object(ctx.request.body)
    code, _checksum = read_code(body)
    if code is None:
        raise e.InvalidArgument("code.zipFile is required")
    runtimes = body.get("compatibleRuntime") or []
    if not isinstance(runtimes, list) or not all(isinstance(r, str) for r in runtimes):
        raise e.InvalidArgument("compatibleRuntime must be a list of runtime names")
    spec = LayerInput(code, tuple(runtimes), optional_string(body, "description") or "",
                      optional_string(body, "license") or "")
    row = api.services.layers.create_version(*ctx.key(layer), spec)
    return layer_to_wire(row, ctx.public_url)


@FC_ROUTES.route("GET", _LAYERS + "/{layer}/versions/{version}")
def get_layer_version(api: FcApi, ctx: RequestContext, layer: str, version: str) -> Body:
    row = api.services.layers.get_version(*ctx.key(layer), _version(version))
    return layer_to_wire(row, ctx.public_url)


@FC_ROUTES.route("DELETE", _LAYERS + "/{layer}/versions/{version}")
def delete_layer_version(api: FcApi, ctx: RequestContext, layer: str, version: str) -> None:
    api.services.layers.delete_version(*ctx.key(layer), _version(version))


@FC_ROUTES.route("GET", _LAYERS + "/{layer}/versions")
def list_layer_versions(api: FcApi, ctx: RequestContext, layer: str) -> Body:
    q = ctx.query
    rows, following = api.services.layers.list_versions(
        *ctx.key(layer), start_version=_version(q.get("startVersion") or "1"),
        limit=list_limit(q))
    body: Body = {"layers": [layer_to_wire(r, ctx.public_url) for r in rows]}
    if following is not None:
        body["nextVersion"] = following
    return body


def _flag(value: str | None, name: str) -> bool:
    if value in (None, "", "false"):
        return False
    if value == "true":
        return True
    raise e.InvalidArgument(f"{name} must be true or false, got {value!r}")


@FC_ROUTES.route("GET", _LAYERS)
def list_layers(api: FcApi, ctx: RequestContext) -> Body:
    q = ctx.query
    rows, token = api.services.layers.list_layers(
        *ctx.key(), prefix=q.get("prefix", ""), public=_flag(q.get("public"), "public"),
        official=_flag(q.get("official"), "official"), **listing(ctx))
    return fc_page("layers", [layer_to_wire(r, ctx.public_url) for r in rows], token)


@FC_ROUTES.route("GET", "/2023-03-30/layerarn/{arn}")
def get_layer_version_by_arn(api: FcApi, ctx: RequestContext, arn: str) -> Body:
    return layer_to_wire(api.services.layers.by_arn(*ctx.key(arn)), ctx.public_url)


@FC_ROUTES.route("PUT", _LAYERS + "/{layer}/acl")
def put_layer_acl(api: FcApi, ctx: RequestContext, layer: str) -> None:
    q = ctx.query
    public = q.get("public")
    if public is None and q.get("acl") is not None:
        public = "true" if q.get("acl") == "1" else "false"
    api.services.layers.put_acl(*ctx.key(layer), _flag(public, "public"))
