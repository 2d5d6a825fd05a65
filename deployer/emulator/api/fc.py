"""Function Compute 3.0's wire contract (ROA, ``/2023-03-30/...``, JSON bodies).

In this module: the route table (:data:`FC_ROUTES`, on the handlers: functions, invocation,
versions and aliases here; triggers, layers, asynchronous invocation, concurrency and custom
domains in the ``fc_*`` modules), the readers, the shapes (:func:`function_to_wire`,
:func:`version_to_wire`, :func:`alias_to_wire`) and the error table (:data:`FC_ERRORS`). Any
other FC path answers ``400 PathNotSupported``. Field names, defaults and shapes follow
fc3-api.md §2, §6-7; the domain is :mod:`services.functions`; the settings of a
Create/UpdateFunction body are read by :mod:`.fc_settings`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import (
    Body,
    ErrorTable,
    RequestContext,
    Routes,
    cases,
    json_object,
    page,
)
from deployer.emulator.api.fc_settings import read_code, read_settings, read_tags
from deployer.emulator.api.http import HttpResponse, json_response
from deployer.emulator.api.router import AuthScheme
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import Quota, Resource
from deployer.emulator.services.functions import Function, FunctionService, FunctionSettings
from deployer.emulator.services.functions.versions import (
    AliasChanges,
    FunctionAlias,
    FunctionReleases,
    FunctionVersion,
)
from deployer.timestamps import iso_seconds

__all__ = ["FC_AUTH", "FC_ERRORS", "FC_ROUTES", "FcApi", "FcServices", "alias_to_wire", "fc_page",
           "function_to_wire", "list_limit", "listing", "optional_string", "qualifier",
           "required_string", "version_to_wire"]

WARNING_HEADER = "x-deployer-warning"
"""Set on Create/UpdateFunction when the emulator cannot run the function exactly as FC does
(the host's Python runs another version than the runtime names); said once, when caused."""
_TASK_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$")
_FUNCTIONS = "/2023-03-30/functions"

FC_AUTH = AuthScheme.words(
    e.Style.ROA, missing=e.MissingRequiredHeader, malformed=e.InvalidArgument,
    unknown_key=e.InvalidAccessKeyID, mismatch=e.SignatureNotMatch,
    time_missing=e.MissingRequiredHeader, time_format=e.InvalidArgument,
    expired=e.RequestTimeTooSkewed, nonce_used=e.SignatureNonceUsed)
FC_ROUTES: Routes[Callable[..., HttpResponse | Body | None]] = Routes()
"""FC's entries; a handler answers a body (``200`` JSON), None (``204``) or a response."""

FC_ERRORS = ErrorTable({
    **e.TOKEN_ERRORS,
    **cases(svc.ResourceNotFound, {
        Resource.FUNCTION: e.FunctionNotFound, Resource.VERSION: e.VersionNotFound,
        Resource.ALIAS: e.AliasNotFound, Resource.TRIGGER: e.TriggerNotFound,
        Resource.LAYER: e.LayerNotFound, Resource.ASYNC_INVOKE_CONFIG: e.AsyncConfigNotExists,
        Resource.ASYNC_TASK: e.AsyncTaskNotFound,
        Resource.CONCURRENCY_CONFIG: e.ConcurrencyConfigNotFound,
        Resource.PROVISION_CONFIG: e.ProvisionConfigNotFound,
        Resource.SCALING_CONFIG: e.ScalingConfigNotFound,
        Resource.CUSTOM_DOMAIN: e.DomainNameNotFound}),
    svc.ResourceNotFound: e.NotFound,
    **cases(svc.AlreadyExists, {Resource.FUNCTION: e.FunctionAlreadyExists,
                                Resource.ALIAS: e.AliasAlreadyExists,
                                Resource.TRIGGER: e.TriggerAlreadyExists,
                                Resource.CUSTOM_DOMAIN: e.DomainNameAlreadyExists}),
    svc.AlreadyExists: e.InvalidArgument,
    svc.InvalidValue: e.InvalidArgument,
    svc.PayloadTooLarge: e.EntityTooLarge,
    svc.NotAuthorized: e.access_denied(e.AccessDenied),
    (svc.QuotaExceeded, Quota.INSTANCES): e.throttled(e.ResourceExhausted),
    (svc.QuotaExceeded, Quota.RESERVED_CONCURRENCY): e.throttled(e.ResourceExhausted),
}, e.InternalServerError)
"""FC's wire error for each domain error; CloudFlow's FC tasks report the same codes
(``FC.<Code>``, :mod:`services.fc_tasks`)."""


# --- shapes ------------------------------------------------------------------------------------

def function_to_wire(fn: Function) -> dict[str, Any]:
    """The ``Function`` object of the 2023-03-30 API (layers as objects, tags Key/Value)."""
    c = fn.config
    out: dict[str, Any] = {
        "functionName": fn.name, "functionId": fn.function_id, "functionArn": fn.arn,
        "runtime": c.runtime, "handler": c.handler, "memorySize": c.memory_size, "cpu": c.cpu,
        "diskSize": c.disk_size, "timeout": c.timeout,
        "instanceConcurrency": c.instance_concurrency, "codeSize": fn.code_size,
        "codeChecksum": fn.code_checksum, "description": c.description,
        "environmentVariables": dict(c.environment), "internetAccess": c.internet_access,
        "state": fn.state, "lastUpdateStatus": fn.last_update_status,
        "createdTime": iso_seconds(fn.created_at), "lastModifiedTime": iso_seconds(fn.modified_at),
        "layers": [{"arn": arn, "size": 0} for arn in c.layers],
        "tags": [{"Key": k, "Value": v} for k, v in fn.tags],
    }
    if c.role:
        out["role"] = c.role
    out.update(c.opaque)
    return out


def version_to_wire(v: FunctionVersion) -> dict[str, Any]:
    """The ``Version`` object."""
    return {"versionId": v.version_id, "description": v.description,
            "createdTime": iso_seconds(v.created_at), "lastModifiedTime": iso_seconds(v.created_at)}


def alias_to_wire(a: FunctionAlias) -> dict[str, Any]:
    """The ``Alias`` object."""
    return {"aliasName": a.alias_name, "versionId": a.version_id,
            "description": a.description,
            "additionalVersionWeight": dict(a.additional_version_weight),
            "createdTime": iso_seconds(a.created_at),
            "lastModifiedTime": iso_seconds(a.modified_at)}


# --- readers -----------------------------------------------------------------------------------

def list_limit(query: Mapping[str, str]) -> int:
    raw = query.get("limit")
    if raw is None or raw == "":
        return 20
    if not is_decimal(raw):
        raise e.InvalidArgument(f"limit must be an integer between 1 and 100, got {raw!r}")
    return int(raw)


def optional_string(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise e.InvalidArgument(f"{key} must be a string")
    return value


def required_string(body: Mapping[str, Any], key: str) -> str:
    value = optional_string(body, key)
    if not value:
        raise e.InvalidArgument(f"{key} is required")
    return value


def qualifier(ctx: RequestContext) -> str:
    """A per-qualifier config's ``qualifier`` (``LATEST`` when absent) [INFERRED]."""
    return ctx.query.get("qualifier") or "LATEST"


def listing(ctx: RequestContext) -> dict[str, Any]:
    """A List action's paging parameters (``nextToken``, ``limit``) as the services take them."""
    q = ctx.query
    return {"next_token": q.get("nextToken", ""), "limit": list_limit(q)}


def fc_page(key: str, items: list[Any], token: str | None, **more: Any) -> Body:
    """A List action's answer: ``{key: items}`` and ``nextToken`` when there is a next page."""
    return page(key, items, token, "nextToken", **more)


def _weights(body: Mapping[str, Any]) -> dict[str, float] | None:
    value = body.get("additionalVersionWeight")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise e.InvalidArgument('additionalVersionWeight must be an object such as {"2": 0.05}')
    return {str(k): v for k, v in value.items()}


def _header(ctx: RequestContext, name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = ctx.request.headers.get(name) or default
    if value not in allowed:
        raise e.InvalidArgument(f"{name} must be {' or '.join(allowed[:2])}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class FcServices:
    """The domain services behind FC's other resources (None: not served, the path answers
    ``PathNotSupported``)."""

    triggers: Any = None  # services.triggers.TriggerService
    layers: Any = None  # services.layers.LayerService
    async_configs: Any = None  # services.async_tasks.AsyncInvokeConfigs
    async_tasks: Any = None  # services.async_tasks.AsyncTaskService
    concurrency: Any = None  # services.function_concurrency.ConcurrencyLimits
    custom_domains: Any = None  # services.custom_domains.CustomDomainService
    provisioned: Any = None  # services.provisioning.ProvisionedInstances


class FcApi:
    """The FC 3.0 product registered with the router: :data:`FC_ROUTES` over ``functions`` and
    their versions and aliases (``releases``), and the ``services`` of triggers, layers,
    asynchronous invocation, concurrency and custom domains."""

    prefix = "/2023-03-30/"
    auth = FC_AUTH
    errors = FC_ERRORS

    def __init__(self, functions: FunctionService, releases: FunctionReleases,
                 services: FcServices | None = None) -> None:
        self._svc = functions
        self._releases = releases
        self.services = services or FcServices()

    def handle(self, ctx: RequestContext) -> HttpResponse:
        """The entry's answer: a body is ``200`` JSON, None ``204``."""
        handler, args = FC_ROUTES.find(ctx.request.method, ctx.request.raw_path)
        out = handler(self, ctx, **args)
        if isinstance(out, HttpResponse):
            return out
        reply = {"x-fc-request-id": ctx.request_id}
        return HttpResponse(204, b"", reply) if out is None else json_response(200, out, reply)

    def function_arn(self, ctx: RequestContext, name: str) -> str:
        """The ARN of function ``name`` (ResourceNotFound when it does not exist)."""
        return self._svc.get(*ctx.key(name)).arn

    def _function(self, ctx: RequestContext, fn: Function) -> HttpResponse:
        response = json_response(200, function_to_wire(fn), {"x-fc-request-id": ctx.request_id})
        if fn.warnings:
            response.headers[WARNING_HEADER] = " | ".join(fn.warnings)
        return response

    # --- functions ----------------------------------------------------------------------------

    @FC_ROUTES.route("POST", _FUNCTIONS)
    def create_function(self, ctx: RequestContext) -> HttpResponse:
        body = json_object(ctx.request.body)
        name = body.get("functionName")
        if not isinstance(name, str):
            raise e.InvalidArgument("functionName is required and must be a string")
        settings = read_settings(body)
        for required in ("runtime", "handler"):
            if required not in settings:
                raise e.InvalidArgument(f"{required} is required")
        code, checksum = read_code(body)
        if code is None:
            raise e.InvalidArgument("code.zipFile is required")
        return self._function(ctx, self._svc.create(
            *ctx.key(name), FunctionSettings(**settings), code, checksum=checksum,
            tags=read_tags(body)))

    @FC_ROUTES.route("GET", _FUNCTIONS + "/{name}")
    def get_function(self, ctx: RequestContext, name: str) -> Body:
        return function_to_wire(self._svc.get(*ctx.key(name), ctx.query.get("qualifier")))

    @FC_ROUTES.route("PUT", _FUNCTIONS + "/{name}")
    def update_function(self, ctx: RequestContext, name: str) -> HttpResponse:
        body = json_object(ctx.request.body)
        settings = read_settings(body)
        if not settings["opaque"]:
            del settings["opaque"]
        code, checksum = read_code(body)
        return self._function(ctx, self._svc.update(*ctx.key(name), settings, code=code,
                                                    checksum=checksum))

    @FC_ROUTES.route("DELETE", _FUNCTIONS + "/{name}")
    def delete_function(self, ctx: RequestContext, name: str) -> None:
        self._svc.delete(*ctx.key(name))

    @FC_ROUTES.route("GET", _FUNCTIONS)
    def list_functions(self, ctx: RequestContext) -> Body:
        fns, token = self._svc.list(*ctx.key(), prefix=ctx.query.get("prefix", ""),
                                    **listing(ctx))
        return fc_page("functions", [function_to_wire(f) for f in fns], token)

    @FC_ROUTES.route("GET", _FUNCTIONS + "/{name}/code")
    def get_function_code(self, ctx: RequestContext, name: str) -> Body:
        fn = self._svc.get(*ctx.key(name), ctx.query.get("qualifier"))
        url = f"{ctx.public_url}/_emulator/code/{fn.code_checksum}.zip"
        return {"checksum": fn.code_checksum, "url": url}

    @FC_ROUTES.route("POST", _FUNCTIONS + "/{name}/invocations")
    def invoke_function(self, ctx: RequestContext, name: str) -> HttpResponse:
        kind = _header(ctx, "x-fc-invocation-type", "Sync", ("Sync", "Async", "Task"))
        log_type = _header(ctx, "x-fc-log-type", "None", ("None", "Tail"))
        task_id = ctx.request.headers.get("x-fc-async-task-id")
        if task_id is not None and not _TASK_ID_RE.match(task_id):
            raise e.InvalidArgument(f"invalid x-fc-async-task-id '{task_id}'")
        out = self._svc.invoke(*ctx.key(name), ctx.request.body, request_id=ctx.request_id,
                               asynchronous=kind != "Sync", tail_logs=log_type == "Tail",
                               qualifier=ctx.query.get("qualifier"), task_id=task_id)
        reply = {"x-fc-request-id": ctx.request_id}
        if out.result is None:
            if task_id:
                reply["x-fc-async-task-id"] = task_id
            return HttpResponse(202, b"", reply)
        r = out.result
        reply.update({
            "x-fc-code-checksum": r.code_checksum, "x-fc-instance-id": r.instance_id,
            "x-fc-invocation-duration": str(round(r.duration_ms)),
            "x-fc-invocation-service-version": out.version_id,
            "x-fc-max-memory-usage": f"{r.max_memory_mb or 0.0:.2f}",
            "Content-Type": "application/json" if r.error_type else "application/octet-stream",
        })
        if r.error_type:
            reply["x-fc-error-type"] = r.error_type
        if log_type == "Tail":
            reply["x-fc-log-result"] = base64.b64encode(r.log_tail[-4096:]).decode("ascii")
        return HttpResponse(200, r.payload, reply)

    # --- versions and aliases -----------------------------------------------------------------

    @FC_ROUTES.route("POST", _FUNCTIONS + "/{name}/versions")
    def publish_function_version(self, ctx: RequestContext, name: str) -> Body:
        description = optional_string(json_object(ctx.request.body), "description") or ""
        return version_to_wire(self._releases.publish(*ctx.key(name), description))

    @FC_ROUTES.route("GET", _FUNCTIONS + "/{name}/versions")
    def list_function_versions(self, ctx: RequestContext, name: str) -> Body:
        found, token, direction = self._releases.list_versions(
            *ctx.key(name), direction=ctx.query.get("direction", ""), **listing(ctx))
        return fc_page("versions", [version_to_wire(v) for v in found], token,
                       direction=direction)

    @FC_ROUTES.route("DELETE", _FUNCTIONS + "/{name}/versions/{version}")
    def delete_function_version(self, ctx: RequestContext, name: str, version: str) -> None:
        self._releases.delete_version(*ctx.key(name, version))

    @FC_ROUTES.route("POST", _FUNCTIONS + "/{name}/aliases")
    def create_alias(self, ctx: RequestContext, name: str) -> Body:
        body = json_object(ctx.request.body)
        alias_name = required_string(body, "aliasName")
        return alias_to_wire(self._releases.create_alias(
            *ctx.key(name, alias_name), version_id=required_string(body, "versionId"),
            description=optional_string(body, "description") or "",
            additional_version_weight=_weights(body)))

    @FC_ROUTES.route("GET", _FUNCTIONS + "/{name}/aliases/{alias}")
    def get_alias(self, ctx: RequestContext, name: str, alias: str) -> Body:
        return alias_to_wire(self._releases.get_alias(*ctx.key(name, alias)))

    @FC_ROUTES.route("PUT", _FUNCTIONS + "/{name}/aliases/{alias}")
    def update_alias(self, ctx: RequestContext, name: str, alias: str) -> Body:
        body = json_object(ctx.request.body)
        changes = AliasChanges(version_id=optional_string(body, "versionId"),
                               description=optional_string(body, "description"),
                               additional_version_weight=_weights(body))
        return alias_to_wire(self._releases.update_alias(*ctx.key(name, alias), changes))

    @FC_ROUTES.route("DELETE", _FUNCTIONS + "/{name}/aliases/{alias}")
    def delete_alias(self, ctx: RequestContext, name: str, alias: str) -> None:
        self._releases.delete_alias(*ctx.key(name, alias))

    @FC_ROUTES.route("GET", _FUNCTIONS + "/{name}/aliases")
    def list_aliases(self, ctx: RequestContext, name: str) -> Body:
        found, token = self._releases.list_aliases(
            *ctx.key(name), prefix=ctx.query.get("prefix", ""), **listing(ctx))
        return fc_page("aliases", [alias_to_wire(a) for a in found], token)


# The other resources' entries join FC_ROUTES when their modules load.
from deployer.emulator.api import (  # noqa: E402,F401
    fc_async,
    fc_domains,
    fc_layers,
    fc_provision,
    fc_triggers,
)
