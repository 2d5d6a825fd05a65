"""Function Compute 3.0 (ROA, ``/2023-03-30/...``): wire JSON <-> FunctionService calls.

Emulated: CreateFunction, GetFunction, UpdateFunction, DeleteFunction, ListFunctions,
InvokeFunction (with ``qualifier``: LATEST, a version or an alias), GetFunctionCode, and the
version and alias actions (:mod:`.fc_versions`); any other FC path answers
``400 PathNotSupported``. Field names, defaults and shapes follow fc3-api.md §6-7.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api import strict
from deployer.emulator.api.fc_shapes import check_settings
from deployer.emulator.api.fc_versions import VersionRoutes
from deployer.emulator.api.http import HttpResponse, json_response, wire_time
from deployer.emulator.api.router import FC_AUTH, RequestContext
from deployer.emulator.services.functions import Function, FunctionConfig, FunctionService

__all__ = ["FcApi", "function_to_wire"]

_TASK_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$")
WARNING_HEADER = "x-deployer-warning"
"""Set on Create/UpdateFunction when the emulator cannot run the function exactly as FC does
(the host's Python runs another version than the runtime names); said once, when caused."""

OPAQUE_KEYS = (
    "logConfig", "instanceLifecycleConfig", "vpcConfig", "nasConfig", "ossMountConfig",
    "customDNS", "customRuntimeConfig", "customContainerConfig", "gpuConfig", "tracingConfig",
    "polarFsConfig", "juiceFsConfig", "microSandboxConfig", "disableOndemand",
    "enableLongLiving", "disableInjectCredentials", "idleTimeout", "instanceIsolationMode",
    "sessionAffinity", "sessionAffinityConfig", "resourceGroupId",
)
# wire key -> (snake_case field, accepted python types)
TYPED_KEYS: dict[str, tuple[str, tuple[type, ...]]] = {
    "runtime": ("runtime", (str,)),
    "handler": ("handler", (str,)),
    "memorySize": ("memory_size", (int,)),
    "cpu": ("cpu", (int, float)),
    "diskSize": ("disk_size", (int,)),
    "timeout": ("timeout", (int,)),
    "instanceConcurrency": ("instance_concurrency", (int,)),
    "environmentVariables": ("environment", (dict,)),
    "description": ("description", (str,)),
    "role": ("role", (str,)),
    "internetAccess": ("internet_access", (bool,)),
    "layers": ("layers", (list,)),
}




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
        "createdTime": wire_time(fn.created_at), "lastModifiedTime": wire_time(fn.modified_at),
        "layers": [{"arn": arn, "size": 0} for arn in c.layers],
        "tags": [{"Key": k, "Value": v} for k, v in fn.tags],
    }
    if c.role:
        out["role"] = c.role
    out.update(c.opaque)
    return out


def _check_type(key: str, value: Any, types: tuple[type, ...]) -> None:
    ok = isinstance(value, types) and not (bool not in types and isinstance(value, bool))
    if not ok:
        names = " or ".join("number" if t is float else t.__name__ for t in types)
        raise e.InvalidArgument(f"{key} must be of type {names}, got {type(value).__name__}")


def _settings(body: Mapping[str, Any]) -> dict[str, Any]:
    """Typed snake_case settings present in a Create/UpdateFunctionInput body."""
    out: dict[str, Any] = {}
    for key, (name, types) in TYPED_KEYS.items():
        if key in body and body[key] is not None:
            _check_type(key, body[key], types)
            out[name] = body[key]
    env = out.get("environment", {})
    if not all(isinstance(v, str) for v in env.values()):
        raise e.InvalidArgument("environmentVariables values must be strings")
    if "layers" in out:
        if not all(isinstance(v, str) for v in out["layers"]):
            raise e.InvalidArgument("layers must be a list of layer version ARNs")
        out["layers"] = tuple(out["layers"])
    opaque = {k: body[k] for k in OPAQUE_KEYS if k in body and body[k] is not None}
    check_settings(opaque)
    lifecycle = opaque.get("instanceLifecycleConfig")
    if lifecycle is not None:
        out.update(_lifecycle_hooks(lifecycle))
    out["opaque"] = opaque
    return out


def _lifecycle_hooks(lifecycle: Mapping[str, Any]) -> dict[str, Any]:
    """``instanceLifecycleConfig``'s initializer and preStop as snake_case settings (a hook is
    a handler and a timeout; the ``command`` form is refused by name)."""
    out: dict[str, Any] = {}
    for wire, name in (("initializer", "initializer"), ("preStop", "pre_stop")):
        hook = lifecycle.get(wire) or {}
        for key, types in (("handler", (str,)), ("timeout", (int,))):
            if hook.get(key) is not None:
                _check_type(f"instanceLifecycleConfig.{wire}.{key}", hook[key], types)
        if hook.get("command"):
            raise e.InvalidArgument(
                f"instanceLifecycleConfig.{wire}.command is not supported by the emulator: "
                f"set instanceLifecycleConfig.{wire}.handler instead")
        out[f"{name}_handler"] = hook.get("handler") or None
        out[f"{name}_timeout"] = hook.get("timeout") if hook.get("handler") else None
    return out


def _code(body: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
    code = body.get("code")
    if code is None:
        return None, None
    if not isinstance(code, dict):
        raise e.InvalidArgument("code must be an object")
    if code.get("ossBucketName") or code.get("ossObjectName"):
        raise e.InvalidArgument("code from OSS is not supported by the emulator; use zipFile")
    zip_b64, checksum = code.get("zipFile"), code.get("checksum")
    if not isinstance(zip_b64, str) or not zip_b64:
        raise e.InvalidArgument("code.zipFile must be a base64 string")
    if checksum is not None and not isinstance(checksum, str):
        raise e.InvalidArgument("code.checksum must be a string")
    try:
        return base64.b64decode(zip_b64, validate=True), checksum
    except (binascii.Error, ValueError):
        raise e.InvalidArgument("code.zipFile is not valid base64") from None


def _tags(body: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    tags = body.get("tags") or []
    if not isinstance(tags, list) or not all(
            isinstance(t, dict) and isinstance(t.get("Key"), str)
            and isinstance(t.get("Value", ""), str) for t in tags):
        raise e.InvalidArgument('tags must be a list of {"Key": ..., "Value": ...} objects')
    return tuple((t["Key"], t.get("Value", "")) for t in tags)


def _json_body(ctx: RequestContext) -> dict[str, Any]:
    try:
        body = strict.loads(ctx.request.body or b"{}")
    except strict.JsonLimitError as exc:
        raise e.InvalidArgument(f"the request body is refused: {exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise e.InvalidArgument(f"the request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise e.InvalidArgument("the request body must be a JSON object")
    return body


class FcApi:
    """The FC 3.0 API module registered with the router."""

    prefix = "/2023-03-30/"
    auth = FC_AUTH

    def __init__(self, functions: FunctionService) -> None:
        self._svc = functions
        self._map = Map([
            Rule("/2023-03-30/functions", methods=["POST"], endpoint="create"),
            Rule("/2023-03-30/functions", methods=["GET"], endpoint="list"),
            Rule("/2023-03-30/functions/<name>", methods=["GET"], endpoint="get"),
            Rule("/2023-03-30/functions/<name>", methods=["PUT"], endpoint="update"),
            Rule("/2023-03-30/functions/<name>", methods=["DELETE"], endpoint="delete"),
            Rule("/2023-03-30/functions/<name>/code", methods=["GET"], endpoint="code"),
            Rule("/2023-03-30/functions/<name>/invocations", methods=["POST"],
                 endpoint="invoke"),
            *VersionRoutes.rules(),
        ], strict_slashes=False, merge_slashes=False)
        self._handlers: dict[str, Callable[..., HttpResponse]] = {
            "create": self.create, "list": self.list, "get": self.get, "update": self.update,
            "delete": self.delete, "code": self.code, "invoke": self.invoke,
            **VersionRoutes(functions.versions, _json_body).handlers(),
        }

    def handle(self, ctx: RequestContext) -> HttpResponse:
        request = ctx.request
        try:
            endpoint, args = self._map.bind("emulator").match(
                request.raw_path, method=request.method)
        except (NotFound, MethodNotAllowed):
            raise e.PathNotSupported(
                f"'{request.method}' against '{request.raw_path}' is not supported") from None
        args = {k: unquote(v) for k, v in args.items()}
        return self._handlers[endpoint](ctx, **args)

    @staticmethod
    def _ok(ctx: RequestContext, payload: Mapping[str, Any], status: int = 200) -> HttpResponse:
        return json_response(status, payload, {"x-fc-request-id": ctx.request_id})

    def _function(self, ctx: RequestContext, fn: Function) -> HttpResponse:
        response = self._ok(ctx, function_to_wire(fn))
        if fn.warnings:
            response.headers[WARNING_HEADER] = " | ".join(fn.warnings)
        return response

    def create(self, ctx: RequestContext) -> HttpResponse:
        body = _json_body(ctx)
        name = body.get("functionName")
        if not isinstance(name, str):
            raise e.InvalidArgument("functionName is required and must be a string")
        settings = _settings(body)
        for required in ("runtime", "handler"):
            if required not in settings:
                raise e.InvalidArgument(f"{required} is required")
        code, checksum = _code(body)
        if code is None:
            raise e.InvalidArgument("code.zipFile is required")
        fn = self._svc.create(ctx.account_id, ctx.region, name, FunctionConfig(**settings),
                              code, checksum=checksum, tags=_tags(body))
        return self._function(ctx, fn)

    def get(self, ctx: RequestContext, name: str) -> HttpResponse:
        qualifier = ctx.request.query_params().get("qualifier")
        return self._ok(ctx, function_to_wire(
            self._svc.get(ctx.account_id, ctx.region, name, qualifier)))

    def update(self, ctx: RequestContext, name: str) -> HttpResponse:
        body = _json_body(ctx)
        settings = _settings(body)
        if not settings["opaque"]:
            del settings["opaque"]
        code, checksum = _code(body)
        fn = self._svc.update(ctx.account_id, ctx.region, name, settings, code=code,
                              checksum=checksum)
        return self._function(ctx, fn)

    def delete(self, ctx: RequestContext, name: str) -> HttpResponse:
        self._svc.delete(ctx.account_id, ctx.region, name)
        return HttpResponse(204, b"", {"x-fc-request-id": ctx.request_id})

    def list(self, ctx: RequestContext) -> HttpResponse:
        q = ctx.request.query_params()
        raw_limit = q.get("limit", "20")
        if not is_decimal(raw_limit):
            raise e.InvalidArgument(
                f"limit must be an integer between 1 and 100, got {raw_limit!r}")
        fns, token = self._svc.list(ctx.account_id, ctx.region, prefix=q.get("prefix", ""),
                                    next_token=q.get("nextToken", ""), limit=int(raw_limit))
        payload: dict[str, Any] = {"functions": [function_to_wire(f) for f in fns]}
        if token:
            payload["nextToken"] = token
        return self._ok(ctx, payload)

    def code(self, ctx: RequestContext, name: str) -> HttpResponse:
        fn = self._svc.get(ctx.account_id, ctx.region, name,
                           ctx.request.query_params().get("qualifier"))
        url = f"{ctx.public_url}/_emulator/code/{fn.code_checksum}.zip"
        return self._ok(ctx, {"checksum": fn.code_checksum, "url": url})

    def invoke(self, ctx: RequestContext, name: str) -> HttpResponse:
        headers = ctx.request.headers
        kind = headers.get("x-fc-invocation-type") or "Sync"
        if kind not in ("Sync", "Async", "Task"):
            raise e.InvalidArgument(f"x-fc-invocation-type must be Sync or Async, got {kind!r}")
        log_type = headers.get("x-fc-log-type") or "None"
        if log_type not in ("None", "Tail"):
            raise e.InvalidArgument(f"x-fc-log-type must be None or Tail, got {log_type!r}")
        task_id = headers.get("x-fc-async-task-id")
        if task_id is not None and not _TASK_ID_RE.match(task_id):
            raise e.InvalidArgument(f"invalid x-fc-async-task-id '{task_id}'")
        qualifier = ctx.request.query_params().get("qualifier")
        out = self._svc.invoke(ctx.account_id, ctx.region, name, ctx.request.body,
                               request_id=ctx.request_id, asynchronous=kind != "Sync",
                               tail_logs=log_type == "Tail", qualifier=qualifier)
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
