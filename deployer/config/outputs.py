"""What deploying a resource yields: the ``output`` (and ``info``) that
``${resources.<name>.output.<key>}`` reads.

fc3's deploy answers with the function as ``s info`` shows it (devsapp/fc3: GetFunction's
fields in camelCase, plus ``region``); the fnf/flow component with the flow's fields. Both are
determined by the resource's props, the account and the region — the ARN is built from them
and ``auto`` values are named deterministically (below) — so the loader computes them before
anything is deployed, in dependency order, and ``deploy up`` checks, right after applying a
resource, that what the service answered is what its dependents were built with.

``logConfig: auto`` (fc3 ``src/resources/sls``): project ``serverless-<region>-<uuid>``, where
the uuid is derived from the account id (uuid-by-string, a name-based version-5 UUID, as fc3
does; INFERRED), logstore ``default-logs``, request and instance metrics on, ``logBeginRule:
DefaultRegex``. ``role: auto`` (fc3's ``initFcDefaultServiceRole``): the role
``aliyunfcdefaultrole``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from deployer.config.specs import FlowSpec, FunctionSpec

__all__ = [
    "AUTO_LOGSTORE",
    "AUTO_ROLE",
    "auto_log_project",
    "flow_output",
    "function_output",
    "lower_role_arn",
    "name_uuid",
]

AUTO_ROLE = "aliyunfcdefaultrole"
AUTO_LOGSTORE = "default-logs"


def name_uuid(name: str) -> str:
    """A version-5 style UUID derived from ``name`` alone: SHA-1 of its UTF-8 bytes, with
    the version and variant bits set (what uuid-by-string computes without a namespace)."""
    digest = bytearray(hashlib.sha1(name.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def auto_log_project(region: str, account_id: str) -> str:
    """The Log Service project ``logConfig: auto`` uses (at most 63 characters)."""
    return f"serverless-{region}-{name_uuid(account_id)}"[:63]


def lower_role_arn(account_id: str, name: str) -> str:
    return f"acs:ram::{account_id}:role/{name}"


def _function_arn(region: str, account_id: str, name: str) -> str:
    return f"acs:fc:{region}:{account_id}:functions/{name}"


def function_output(spec: FunctionSpec, *, account_id: str, region: str) -> dict[str, Any]:
    """fc3's deploy output for ``spec`` (the fields this toolkit sets, in the API's names)."""
    out: dict[str, Any] = {
        "region": region,
        "functionName": spec.function_name,
        "functionArn": _function_arn(region, account_id, spec.function_name),
        "description": spec.description,
        "runtime": spec.runtime,
        "handler": spec.handler,
        "memorySize": spec.memory_size,
        "timeout": spec.timeout,
        "cpu": spec.cpu,
        "diskSize": spec.disk_size,
        "instanceConcurrency": spec.instance_concurrency,
        "internetAccess": spec.internet_access,
        "environmentVariables": dict(spec.environment_variables or {}),
    }
    if spec.role:
        out["role"] = spec.role
    if spec.log_config is not None:
        out["logConfig"] = _plain(spec.log_config)
    return out


def flow_output(spec: FlowSpec, *, account_id: str, region: str) -> dict[str, Any]:
    """The fnf/flow component's output for ``spec`` (DescribeFlow's fields and the ARN)."""
    out: dict[str, Any] = {
        "region": region,
        "name": spec.name,
        "flowArn": f"acs:fnf:{region}:{account_id}:flow/{spec.name}",
        "description": spec.description,
        "type": spec.type,
        "executionMode": spec.execution_mode.value,
    }
    role = spec.role_arn or (lower_role_arn(account_id, spec.role_name) if spec.role_name else "")
    if role:
        out["roleArn"] = role
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value
