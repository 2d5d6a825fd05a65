"""Typed client over the Function Compute 3.0 SDK (``alibabacloud_fc20230330``)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError
from deployer.cloud.fc_config import FunctionConfig, LogConfig, config_from_wire

__all__ = ["FunctionComputeClient", "FunctionConfig", "Invocation", "LogConfig",
           "RemoteFunction"]


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
    wire = fn.to_map() if hasattr(fn, "to_map") else dict(fn)
    return RemoteFunction(
        name=wire.get("functionName") or "",
        arn=wire.get("functionArn") or "",
        config=config_from_wire(wire),
        code_checksum=str(wire.get("codeChecksum") or ""),
        code_size=int(wire.get("codeSize") or 0),
        state=wire.get("state") or "",
        last_modified=wire.get("lastModifiedTime") or "",
        warnings=warnings,
        tags=tuple((t.get("Key") or "", t.get("Value") or "")
                   for t in wire.get("tags") or ()),
    )


class FunctionComputeClient(ServiceClient):
    """Create, read, update, delete, list and invoke FC 3.0 functions."""

    SERVICE = "Function Compute"

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

        wire = config.to_wire()
        wire.update(functionName=name,
                    code={"zipFile": base64.b64encode(zip_bytes).decode("ascii")})
        if tags:
            wire["tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
        body = models.CreateFunctionInput().from_map(wire)
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

        wire: dict[str, Any] = config.to_wire(update=True) if config else {}
        if zip_bytes is not None:
            wire["code"] = {"zipFile": base64.b64encode(zip_bytes).decode("ascii")}
        body = models.UpdateFunctionInput().from_map(wire)
        response = self._call(
            "UpdateFunction",
            lambda: self._conn.fc.update_function(name, models.UpdateFunctionRequest(body=body)),
        )
        return _remote(response.body, _warnings(response))

    def tag_function(self, arn: str, tags: Mapping[str, str]) -> None:
        """Set ``tags`` on the function ``arn`` (TagResources; others are kept)."""
        from alibabacloud_fc20230330 import models

        body = models.TagResourcesInput(
            resource_id=[arn], resource_type="function",
            tag=[models.Tag(key=k, value=v) for k, v in tags.items()])
        self._call("TagResources", lambda: self._conn.fc.tag_resources(
            models.TagResourcesRequest(body=body)))

    def untag_function(self, arn: str, keys: list[str]) -> None:
        """Remove the tags ``keys`` from the function ``arn`` (UntagResources)."""
        from alibabacloud_fc20230330 import models

        request = models.UntagResourcesRequest(resource_id=[arn], resource_type="function",
                                               tag_key=keys)
        self._call("UntagResources", lambda: self._conn.fc.untag_resources(request))

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

    def invoke_async(self, name: str, payload: bytes, *, task_id: str,
                     qualifier: str | None = None) -> str:
        """Queue an asynchronous invocation as task ``task_id`` (``x-fc-invocation-type:
        Async`` with ``x-fc-async-task-id``); the request id."""
        from alibabacloud_fc20230330 import models
        from darabonba.runtime import RuntimeOptions

        headers = models.InvokeFunctionHeaders(x_fc_invocation_type="Async",
                                               x_fc_async_task_id=task_id)
        request = models.InvokeFunctionRequest(body=payload, qualifier=qualifier)
        response = self._call("InvokeFunction", lambda: self._conn.fc.invoke_function_with_options(
            name, request, headers, RuntimeOptions()))
        found = {k.lower(): v for k, v in (response.headers or {}).items()}
        return str(found.get("x-fc-request-id", ""))

    def get_async_task(self, name: str, task_id: str,
                       qualifier: str | None = None) -> dict[str, Any] | None:
        """The asynchronous task ``task_id`` of ``name`` (GetAsyncTask's AsyncTask, API
        names), None when there is no such task."""
        from alibabacloud_fc20230330 import models

        try:
            response = self._call("GetAsyncTask", lambda: self._conn.fc.get_async_task(
                name, task_id, models.GetAsyncTaskRequest(qualifier=qualifier)))
        except CloudNotFoundError:
            return None
        return dict(response.body.to_map())

    def invoke(self, name: str, payload: bytes, *, tail_logs: bool = True,
               qualifier: str | None = None) -> Invocation:
        """Invoke ``name`` synchronously. Function errors are data (``error_type``), not raised."""
        from alibabacloud_fc20230330 import models
        from darabonba.runtime import RuntimeOptions

        headers = models.InvokeFunctionHeaders(
            x_fc_invocation_type="Sync", x_fc_log_type="Tail" if tail_logs else "None"
        )
        request = models.InvokeFunctionRequest(body=payload, qualifier=qualifier)
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
