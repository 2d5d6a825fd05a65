"""FC 3.0's Create/UpdateFunction bodies read into typed values: the settings the emulator acts
on (snake_case, typed), the settings it stores and echoes (``opaque``), the code and the tags.

The structured settings have the JSON types the official SDKs read. FC stores and echoes
settings such as ``logConfig`` or ``nasConfig`` that mean nothing locally, but the SDK's models
parse them on every GetFunction and ListFunctions: a string where a model expects an object
makes the Python SDK drop the whole response body. So a setting must have the shape below
(``{}`` an object, ``[{}]`` a list of objects, with the nested objects the models read), and
the scalar settings their JSON type; fields inside are free.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from deployer.emulator.api import errors as e

__all__ = ["check_settings", "read_code", "read_settings", "read_tags"]

TYPED_KEYS: dict[str, tuple[str, tuple[type, ...]]] = {  # wire key -> (field, accepted types)
    "runtime": ("runtime", (str,)), "handler": ("handler", (str,)),
    "memorySize": ("memory_size", (int,)), "cpu": ("cpu", (int, float)),
    "diskSize": ("disk_size", (int,)), "timeout": ("timeout", (int,)),
    "instanceConcurrency": ("instance_concurrency", (int,)),
    "environmentVariables": ("environment", (dict,)), "description": ("description", (str,)),
    "role": ("role", (str,)), "internetAccess": ("internet_access", (bool,)),
    "layers": ("layers", (list,)),
}

_REGISTRY: dict[str, Any] = {"authConfig": {}, "certConfig": {}, "networkConfig": {}}
_MOUNTS: dict[str, Any] = {"mountPoints": [{}]}
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
OPAQUE_KEYS = (*OBJECT_SHAPES, *SCALAR_TYPES)
"""The settings FC stores and echoes that mean nothing locally (``opaque``)."""
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


def _check_type(key: str, value: Any, types: tuple[type, ...]) -> None:
    ok = isinstance(value, types) and not (bool not in types and isinstance(value, bool))
    if not ok:
        names = " or ".join("number" if t is float else t.__name__ for t in types)
        raise e.InvalidArgument(f"{key} must be of type {names}, got {type(value).__name__}")


def read_settings(body: Mapping[str, Any]) -> dict[str, Any]:
    """Typed snake_case settings present in a Create/UpdateFunctionInput body, with the
    stored-only ones under ``opaque``."""
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
    out.update(_lifecycle_hooks(opaque.get("instanceLifecycleConfig")))
    out["opaque"] = opaque
    return out


def _lifecycle_hooks(lifecycle: Any) -> dict[str, Any]:
    """``instanceLifecycleConfig``'s initializer and preStop as snake_case settings (a hook is
    a handler and a timeout; the ``command`` form is refused by name)."""
    if lifecycle is None:
        return {}
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


def read_code(body: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
    """``code.zipFile`` decoded and ``code.checksum`` (None, None without ``code``)."""
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


def read_tags(body: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """``tags`` as (key, value) pairs."""
    tags = body.get("tags") or []
    if not isinstance(tags, list) or not all(
            isinstance(t, dict) and isinstance(t.get("Key"), str)
            and isinstance(t.get("Value", ""), str) for t in tags):
        raise e.InvalidArgument('tags must be a list of {"Key": ..., "Value": ...} objects')
    return tuple((t["Key"], t.get("Value", "")) for t in tags)
