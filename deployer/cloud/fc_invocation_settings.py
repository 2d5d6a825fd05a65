"""Typed client for a function's invocation settings in FC 3.0: its asynchronous invocation
configuration (Get/Put/DeleteAsyncInvokeConfig, for LATEST), its reserved concurrency
(Get/Put/DeleteConcurrencyConfig) and its provisioned instances (Get/Put/Delete
ProvisionConfig and ScalingConfig, for LATEST); the same calls on Alibaba Cloud and the
emulator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError

__all__ = ["InvocationSettingsClient"]

_ASYNC_KEYS = ("maxAsyncRetryAttempts", "maxAsyncEventAgeInSeconds", "destinationConfig",
               "asyncTask")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    return value


class InvocationSettingsClient(ServiceClient):
    """A function's asyncInvokeConfig and reserved concurrency."""

    SERVICE = "Function Compute"

    def get_async_invoke_config(self, function: str) -> dict[str, Any] | None:
        """The configuration for LATEST in PutAsyncInvokeConfig's names (None: none)."""
        from alibabacloud_fc20230330 import models

        try:
            body = self._call("GetAsyncInvokeConfig", lambda: (
                self._conn.fc.get_async_invoke_config(
                    function, models.GetAsyncInvokeConfigRequest()))).body
        except CloudNotFoundError:
            return None
        wire = _plain(body.to_map())
        return {k: wire[k] for k in _ASYNC_KEYS if k in wire}

    def put_async_invoke_config(self, function: str, config: Mapping[str, Any]) -> None:
        from alibabacloud_fc20230330 import models

        body = models.PutAsyncInvokeConfigInput().from_map(_plain(config))
        self._call("PutAsyncInvokeConfig", lambda: self._conn.fc.put_async_invoke_config(
            function, models.PutAsyncInvokeConfigRequest(body=body)))

    def delete_async_invoke_config(self, function: str) -> bool:
        from alibabacloud_fc20230330 import models

        try:
            self._call("DeleteAsyncInvokeConfig", lambda: (
                self._conn.fc.delete_async_invoke_config(
                    function, models.DeleteAsyncInvokeConfigRequest())))
        except CloudNotFoundError:
            return False
        return True

    def get_reserved_concurrency(self, function: str) -> int | None:
        try:
            body = self._call("GetConcurrencyConfig", lambda: (
                self._conn.fc.get_concurrency_config(function))).body
        except CloudNotFoundError:
            return None
        return None if body.reserved_concurrency is None else int(body.reserved_concurrency)

    def put_reserved_concurrency(self, function: str, reserved: int) -> None:
        from alibabacloud_fc20230330 import models

        request = models.PutConcurrencyConfigRequest(
            body=models.PutConcurrencyInput(reserved_concurrency=reserved))
        self._call("PutConcurrencyConfig", lambda: self._conn.fc.put_concurrency_config(
            function, request))

    def delete_reserved_concurrency(self, function: str) -> bool:
        try:
            self._call("DeleteConcurrencyConfig", lambda: (
                self._conn.fc.delete_concurrency_config(function)))
        except CloudNotFoundError:
            return False
        return True

    # -- provisioned instances (provisionConfig, scalingConfig), per qualifier

    def instances_qualifiers(self, kind: str, function: str) -> list[str]:
        """The qualifiers ``function`` has a provision or scaling config for (List*Configs;
        a config's qualifier is its functionArn's last part after the function's name)."""
        from alibabacloud_fc20230330 import models

        name = "Provision" if kind == "provision" else "Scaling"
        request = getattr(models, f"List{name}ConfigsRequest")(function_name=function,
                                                                 limit=100)
        call = getattr(self._conn.fc, f"list_{kind}_configs")
        body = self._call(f"List{name}Configs", lambda: call(request)).body
        listed = body.provision_configs if kind == "provision" else body.scaling_configs
        out = []
        for config in listed or ():
            tail = str(config.function_arn or "").split(":functions/", 1)[-1]
            fn, _, qualifier = tail.partition("/")
            if fn == function:
                out.append(qualifier or "LATEST")
        return out

    def get_instances_config(self, kind: str, function: str,
                             qualifier: str = "LATEST") -> dict[str, Any] | None:
        """``kind`` "provision" or "scaling": the configuration in s.yaml's shape (the keys
        it sends; defaults filled as FC answers them), None when there is none."""
        from alibabacloud_fc20230330 import models

        name = "Provision" if kind == "provision" else "Scaling"
        request = getattr(models, f"Get{name}ConfigRequest")(qualifier=qualifier)
        call = getattr(self._conn.fc, f"get_{kind}_config")
        try:
            body = self._call(f"Get{name}Config", lambda: call(function, request)).body
        except CloudNotFoundError:
            return None
        return _instances(kind, _plain(body.to_map()))

    def put_instances_config(self, kind: str, function: str, config: Mapping[str, Any],
                             qualifier: str = "LATEST") -> None:
        from alibabacloud_fc20230330 import models

        name = "Provision" if kind == "provision" else "Scaling"
        body = getattr(models, f"Put{name}ConfigInput")().from_map(_plain(config))
        request = getattr(models, f"Put{name}ConfigRequest")(qualifier=qualifier, body=body)
        call = getattr(self._conn.fc, f"put_{kind}_config")
        self._call(f"Put{name}Config", lambda: call(function, request))

    def delete_instances_config(self, kind: str, function: str,
                                qualifier: str = "LATEST") -> bool:
        from alibabacloud_fc20230330 import models

        name = "Provision" if kind == "provision" else "Scaling"
        request = getattr(models, f"Delete{name}ConfigRequest")(qualifier=qualifier)
        call = getattr(self._conn.fc, f"delete_{kind}_config")
        try:
            self._call(f"Delete{name}Config", lambda: call(function, request))
        except CloudNotFoundError:
            return False
        return True


def _instances(kind: str, wire: Mapping[str, Any]) -> dict[str, Any]:
    """A Get*Config answer in the shape s.yaml's reader gives (what plans compare)."""
    if kind == "provision":
        target = wire.get("defaultTarget", wire.get("target"))
        return {"defaultTarget": target,
                "alwaysAllocateCPU": wire.get("alwaysAllocateCPU", True),
                "alwaysAllocateGPU": wire.get("alwaysAllocateGPU", True),
                "scheduledActions": wire.get("scheduledActions") or [],
                "targetTrackingPolicies": wire.get("targetTrackingPolicies") or []}
    out = {"minInstances": wire.get("minInstances")}
    out.update({k: wire[k] for k in ("horizontalScalingPolicies", "scheduledPolicies",
                                     "residentPoolId") if wire.get(k)})
    return out
