"""Typed client over the Function Compute 3.0 SDK (``alibabacloud_fc20230330``)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError

SERVICE = "Function Compute"


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Where Function Compute writes a function's logs: a Log Service project and logstore."""

    project: str
    logstore: str
    enable_request_metrics: bool = True
    enable_instance_metrics: bool = False
    log_begin_rule: str = ""

    def to_sdk(self) -> Any:
        from alibabacloud_fc20230330 import models

        return models.LogConfig(
            project=self.project, logstore=self.logstore,
            enable_request_metrics=self.enable_request_metrics,
            enable_instance_metrics=self.enable_instance_metrics,
            log_begin_rule=self.log_begin_rule or None)


def _log_config(value: Any) -> LogConfig | None:
    if value is None or not (value.project or value.logstore):
        return None
    return LogConfig(
        project=value.project or "", logstore=value.logstore or "",
        enable_request_metrics=bool(value.enable_request_metrics
                                    if value.enable_request_metrics is not None else True),
        enable_instance_metrics=bool(value.enable_instance_metrics or False),
        log_begin_rule=value.log_begin_rule or "")


@dataclass(frozen=True, slots=True)
class FunctionConfig:
    """The configuration of a function that a deploy manages (code aside)."""

    runtime: str
    handler: str
    memory_size: int = 512
    timeout: int = 3
    cpu: float = 0.35
    disk_size: int = 512
    description: str = ""
    environment_variables: Mapping[str, str] = field(default_factory=dict)
    instance_concurrency: int = 1
    internet_access: bool = True
    role: str = ""
    log_config: LogConfig | None = None  # None: not managed by the deploy (left as it is)

    def differences(self, other: FunctionConfig) -> dict[str, tuple[Any, Any]]:
        """``{field: (other's value, this value)}`` for every field that differs."""
        out: dict[str, tuple[Any, Any]] = {}
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name == "log_config":
                if mine is not None and mine != theirs:
                    out[f.name] = (_log_json(theirs), _log_json(mine))
                continue
            if isinstance(mine, Mapping) or isinstance(theirs, Mapping):
                mine, theirs = dict(mine or {}), dict(theirs or {})
            elif (isinstance(mine, float) or isinstance(theirs, float)) and abs(
                float(mine or 0) - float(theirs or 0)
            ) < 1e-9:
                continue
            if mine != theirs:
                out[f.name] = (theirs, mine)
        return out

    def to_sdk_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "runtime": self.runtime,
            "handler": self.handler,
            "memory_size": self.memory_size,
            "timeout": self.timeout,
            "cpu": self.cpu,
            "disk_size": self.disk_size,
            "description": self.description,
            "environment_variables": dict(self.environment_variables),
            "instance_concurrency": self.instance_concurrency,
            "internet_access": self.internet_access,
            "role": self.role,
        }
        if self.log_config is not None:
            kwargs["log_config"] = self.log_config.to_sdk()
        return kwargs


def _log_json(value: LogConfig | None) -> dict[str, Any] | None:
    if value is None:
        return None
    out: dict[str, Any] = {"project": value.project, "logstore": value.logstore,
                           "enableRequestMetrics": value.enable_request_metrics,
                           "enableInstanceMetrics": value.enable_instance_metrics}
    if value.log_begin_rule:
        out["logBeginRule"] = value.log_begin_rule
    return out


@dataclass(frozen=True, slots=True)
class RemoteFunction:
    """A function as the service describes it."""

    name: str
    arn: str
    config: FunctionConfig
    code_checksum: str
    code_size: int
    state: str
    last_modified: str
    #: what the service said it cannot do exactly as asked (the emulator's
    #: ``x-deployer-warning`` header: e.g. the host's Python runs another runtime version)
    warnings: tuple[str, ...] = ()
    tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Invocation:
    """The result of a synchronous invocation."""

    request_id: str
    payload: bytes
    error_type: str | None
    log: str

    @property
    def failed(self) -> bool:
        return self.error_type is not None


def _warnings(response: Any) -> tuple[str, ...]:
    raw = getattr(response, "headers", None) or {}
    headers = {str(k).lower(): str(v) for k, v in raw.items()}
    text = headers.get("x-deployer-warning", "")
    return tuple(part.strip() for part in text.split(" | ") if part.strip())


def _remote(fn: Any, warnings: tuple[str, ...] = ()) -> RemoteFunction:
    config = FunctionConfig(
        runtime=fn.runtime or "",
        handler=fn.handler or "",
        memory_size=int(fn.memory_size or 0),
        timeout=int(fn.timeout or 0),
        cpu=float(fn.cpu or 0),
        disk_size=int(fn.disk_size or 0),
        description=fn.description or "",
        environment_variables=dict(fn.environment_variables or {}),
        instance_concurrency=int(fn.instance_concurrency or 1),
        internet_access=bool(fn.internet_access if fn.internet_access is not None else True),
        role=fn.role or "",
        log_config=_log_config(getattr(fn, "log_config", None)),
    )
    return RemoteFunction(
        name=fn.function_name or "",
        arn=fn.function_arn or "",
        config=config,
        code_checksum=str(fn.code_checksum or ""),
        code_size=int(fn.code_size or 0),
        state=fn.state or "",
        last_modified=fn.last_modified_time or "",
        warnings=warnings,
        tags=tuple((t.key or "", t.value or "") for t in getattr(fn, "tags", None) or ()),
    )


class FunctionComputeClient(ServiceClient):
    """Create, read, update, delete, list and invoke FC 3.0 functions."""

    SERVICE = SERVICE

    def get_function(self, name: str) -> RemoteFunction | None:
        """The function ``name``, or None when it does not exist."""
        from alibabacloud_fc20230330 import models

        try:
            response = self._call(
                "GetFunction",
                lambda: self._conn.fc.get_function(name, models.GetFunctionRequest()),
            )
        except CloudNotFoundError:
            return None
        return _remote(response.body)

    def create_function(
        self, name: str, config: FunctionConfig, zip_bytes: bytes,
        tags: Mapping[str, str] | None = None,
    ) -> RemoteFunction:
        """Create ``name``; ``tags`` are set with it (FC keeps them across updates)."""
        from alibabacloud_fc20230330 import models

        body = models.CreateFunctionInput(
            function_name=name,
            code=models.InputCodeLocation(zip_file=base64.b64encode(zip_bytes).decode("ascii")),
            tags=[models.Tag(key=k, value=v) for k, v in (tags or {}).items()] or None,
            **config.to_sdk_kwargs(),
        )
        response = self._call(
            "CreateFunction",
            lambda: self._conn.fc.create_function(models.CreateFunctionRequest(body=body)),
        )
        return _remote(response.body, _warnings(response))

    def update_function(
        self, name: str, *, config: FunctionConfig | None = None, zip_bytes: bytes | None = None
    ) -> RemoteFunction:
        """Update configuration and/or code (only what is given changes)."""
        from alibabacloud_fc20230330 import models

        kwargs: dict[str, Any] = config.to_sdk_kwargs() if config else {}
        if zip_bytes is not None:
            kwargs["code"] = models.InputCodeLocation(
                zip_file=base64.b64encode(zip_bytes).decode("ascii")
            )
        body = models.UpdateFunctionInput(**kwargs)
        response = self._call(
            "UpdateFunction",
            lambda: self._conn.fc.update_function(name, models.UpdateFunctionRequest(body=body)),
        )
        return _remote(response.body, _warnings(response))

    def delete_function(self, name: str) -> bool:
        """Delete ``name``; False when it did not exist."""
        try:
            self._call("DeleteFunction", lambda: self._conn.fc.delete_function(name))
        except CloudNotFoundError:
            return False
        return True

    def list_functions(self, prefix: str | None = None) -> list[RemoteFunction]:
        """All functions (every page), optionally those whose name starts with ``prefix``."""
        from alibabacloud_fc20230330 import models

        out: list[RemoteFunction] = []
        token: str | None = None
        while True:
            request = models.ListFunctionsRequest(limit=100, next_token=token, prefix=prefix)
            body = self._call(
                "ListFunctions", lambda r=request: self._conn.fc.list_functions(r)
            ).body
            out.extend(_remote(f) for f in body.functions or [])
            token = body.next_token
            if not token:
                return out

    def invoke(self, name: str, payload: bytes, *, tail_logs: bool = True) -> Invocation:
        """Invoke ``name`` synchronously. Function errors are data (``error_type``), not raised."""
        from alibabacloud_fc20230330 import models
        from darabonba.runtime import RuntimeOptions

        headers = models.InvokeFunctionHeaders(
            x_fc_invocation_type="Sync", x_fc_log_type="Tail" if tail_logs else "None"
        )
        request = models.InvokeFunctionRequest(body=payload)
        response = self._call(
            "InvokeFunction",
            lambda: self._conn.fc.invoke_function_with_options(
                name, request, headers, RuntimeOptions()
            ),
        )
        resp_headers = {k.lower(): v for k, v in (response.headers or {}).items()}
        raw = response.body.read() if hasattr(response.body, "read") else (response.body or b"")
        log = resp_headers.get("x-fc-log-result", "")
        return Invocation(
            request_id=resp_headers.get("x-fc-request-id", ""),
            payload=raw if isinstance(raw, bytes) else str(raw).encode(),
            error_type=resp_headers.get("x-fc-error-type"),
            log=base64.b64decode(log).decode("utf-8", "replace") if log else "",
        )
