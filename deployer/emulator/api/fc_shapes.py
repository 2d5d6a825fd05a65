"""The JSON types of the Function's structured settings, as the official SDKs read them.

FC stores and echoes settings such as ``logConfig`` or ``nasConfig`` that mean nothing locally,
but the SDK's models parse them on every GetFunction and ListFunctions: a string where a model
expects an object makes the Python SDK drop the whole response body. So a setting must have the
shape below (``{}`` an object, ``[{}]`` a list of objects, with the nested objects the models
read), and the scalar settings their JSON type; fields inside are free.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deployer.emulator.api import errors as e

__all__ = ["check_settings"]

_REGISTRY = {"authConfig": {}, "certConfig": {}, "networkConfig": {}}
_MOUNTS = {"mountPoints": [{}]}
OBJECT_SHAPES: dict[str, Any] = {
    "logConfig": {}, "vpcConfig": {}, "tracingConfig": {}, "gpuConfig": {},
    "instanceLifecycleConfig": {"initializer": {}, "preStop": {}},
    "customContainerConfig": {"accelerationInfo": {}, "healthCheckConfig": {},
                              "registryConfig": _REGISTRY},
    "customRuntimeConfig": {"healthCheckConfig": {}},
    "customDNS": {"dnsOptions": [{}]},
    "microSandboxConfig": {"registryConfig": _REGISTRY},
    "nasConfig": _MOUNTS, "ossMountConfig": _MOUNTS, "polarFsConfig": _MOUNTS,
    "juiceFsConfig": _MOUNTS,
}
SCALAR_TYPES: dict[str, type] = {
    "disableOndemand": bool, "enableLongLiving": bool, "idleTimeout": int,
    "disableInjectCredentials": str, "instanceIsolationMode": str, "sessionAffinity": str,
    "sessionAffinityConfig": str, "resourceGroupId": str,
}
INJECT_CREDENTIALS = ("None", "Env", "Request", "All")
_JSON_NAMES = {bool: "a boolean", int: "an integer", str: "a string"}


def _check_shape(path: str, value: Any, shape: Any) -> None:
    if isinstance(shape, list):
        if not isinstance(value, list):
            raise e.InvalidArgument(f"{path} must be a list of objects")
        for i, item in enumerate(value):
            _check_shape(f"{path}[{i}]", item, shape[0])
        return
    if not isinstance(value, dict):
        raise e.InvalidArgument(f"{path} must be an object")
    for key, inner in shape.items():
        if value.get(key) is not None:
            _check_shape(f"{path}.{key}", value[key], inner)


def check_settings(settings: Mapping[str, Any]) -> None:
    """Raise InvalidArgument naming the first setting whose JSON type the SDKs cannot read."""
    for key, shape in OBJECT_SHAPES.items():
        if settings.get(key) is not None:
            _check_shape(key, settings[key], shape)
    for key, kind in SCALAR_TYPES.items():
        value = settings.get(key)
        if value is not None and (not isinstance(value, kind)
                                  or (isinstance(value, bool) and kind is not bool)):
            raise e.InvalidArgument(f"{key} must be {_JSON_NAMES[kind]}, "
                                    f"got {type(value).__name__}")
    mode = settings.get("disableInjectCredentials")
    if mode is not None and mode not in INJECT_CREDENTIALS:
        raise e.InvalidArgument(f"disableInjectCredentials must be one of "
                                f"{', '.join(INJECT_CREDENTIALS)}, got {mode!r}")
