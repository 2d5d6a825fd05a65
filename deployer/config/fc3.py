"""The fc3 component's props: one table entry per prop (:data:`FC3_PROPS`).

An entry either reads and checks its prop into a :class:`FunctionSpec` field (``read``), or
says why a function using it is not deployed yet (``pending``): such a function is listed as
"not yet deployable: <prop>" by name, never deployed without it. Adding a prop is one entry
plus, in ``deployer.core.deploy.function_config``, its mapping to the API.

Runtimes (fc3-api.md §6.1): the Python ones run on the emulator and deploy; other FC runtimes
are listed as not yet deployable by name; an unknown runtime is an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from deployer.config.outputs import AUTO_LOGSTORE, AUTO_ROLE, auto_log_project, role_arn
from deployer.config.props import PropReader, type_name
from deployer.config.schema import check_region, default_cpu
from deployer.config.specs import FunctionSpec, handler_files
from deployer.config.variables import BROKEN

__all__ = ["FC3_PROPS", "FunctionContext", "build_function", "pending_reasons"]

PYTHON_RUNTIMES = ("python3.9", "python3.10", "python3.12")
OTHER_RUNTIMES = frozenset({
    "nodejs12", "nodejs14", "nodejs16", "nodejs18", "nodejs20", "go1", "java8", "java11",
    "php7.2", "dotnetcore3.1", "custom", "custom.debian10", "custom.debian11",
    "custom.debian12", "custom-container",
})
FUNCTION_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
ROLE_NAME = r"[A-Za-z0-9.-]{1,64}"
ROLE_ARN = r"acs:ram::\d+:role/.+"
HANDLER = r"(?:[A-Za-z0-9_.-]+/)*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
HANDLER += r"\.[A-Za-z_][A-Za-z0-9_]*"
ENV_NAME = r"[A-Za-z][A-Za-z0-9_]*"
ENV_TOTAL_LIMIT = 4096
#: The longest function description Function Compute takes (fc3-api.md §6.1).
MAX_FUNCTION_DESCRIPTION = 256
LOG_CONFIG_KEYS = ("project", "logstore", "enableRequestMetrics", "enableInstanceMetrics",
                   "logBeginRule")
SLS_PROJECT = r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]"
SLS_LOGSTORE = r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]"
LATER = "not yet deployable"


@dataclass(frozen=True, slots=True)
class FunctionContext:
    """What reading props needs beyond them: s.yaml's directory, and the account and
    region that ``auto`` values are named after."""

    base_dir: Path
    account_id: str
    region: str | None  # the deploy's region override (else the prop)


Values = dict[str, Any]
Read = Callable[[PropReader, Values, FunctionContext], Any]


@dataclass(frozen=True, slots=True)
class Fc3Prop:
    name: str
    read: Read | None = None  # -> spec field ``field`` (None: pending)
    field: str | None = None
    pending: str = ""  # why a function with this prop is not deployed yet


def _region(r: PropReader, v: Values, c: FunctionContext) -> Any:
    return check_region(r)


def _name(r: PropReader, v: Values, c: FunctionContext) -> Any:
    return r.string("functionName", required=True, pattern=FUNCTION_NAME,
                    what="must start with a letter or _ and use letters, digits, _ and - "
                    "(1-64 chars)")


def _runtime(r: PropReader, v: Values, c: FunctionContext) -> Any:
    runtime = r.string("runtime", required=True)
    if runtime is None or runtime in PYTHON_RUNTIMES:
        return runtime
    if runtime == "python3":
        r.warning("runtime", "python3 is the legacy Python 3.6 runtime; use python3.10+")
        return runtime
    r.error("runtime", f"unknown runtime {runtime!r}; use one of {', '.join(PYTHON_RUNTIMES)}")
    return None


def _code(r: PropReader, v: Values, c: FunctionContext) -> Any:
    code = r.props.get("code")
    if isinstance(code, Mapping):
        r.error("code", "code in OSS is not supported; give a local directory")
        return None
    text = r.string("code", required=True)
    if text is None:
        return None
    if re.match(r"^[a-z]+://", text) or text.endswith(".zip"):
        r.error("code", f"must be a local directory (got {text!r})")
        return None
    path = (c.base_dir / text).resolve()
    if not path.is_dir():
        r.error("code", f"code directory {text!r} does not exist")
        return None
    return path


def _handler(r: PropReader, v: Values, c: FunctionContext) -> Any:
    handler = r.string("handler", required=True, pattern=HANDLER,
                       what="must be <module>.<function>, e.g. index.handler")
    code_dir = v.get("code_dir")
    if handler and code_dir and not any((code_dir / f).is_file() for f in handler_files(handler)):
        r.error("handler", f"needs {handler_files(handler)[0]} in the code directory "
                f"{r.props.get('code')!r}, which has no such file")
    return handler


def _description(r: PropReader, v: Values, c: FunctionContext) -> Any:
    text = r.string("description", default="") or ""
    if len(text) > MAX_FUNCTION_DESCRIPTION:
        r.error("description", f"must be at most {MAX_FUNCTION_DESCRIPTION} characters "
                               f"(got {len(text)})")
    return text


def _memory(r: PropReader, v: Values, c: FunctionContext) -> Any:
    memory = r.integer("memorySize", default=512, low=128, high=32768, unit=" MB")
    if memory is not None and memory % 64:
        r.error("memorySize", f"must be a multiple of 64 (got {memory})")
        return 512
    return memory or 512


def _timeout(r: PropReader, v: Values, c: FunctionContext) -> Any:
    return r.integer("timeout", default=3, low=1, high=86400, unit=" seconds")


def _cpu(r: PropReader, v: Values, c: FunctionContext) -> Any:
    memory = v.get("memory_size") or 512
    cpu = r.number("cpu")
    if cpu is None:
        return default_cpu(memory)
    if not 0.05 <= cpu <= 16 or abs(cpu / 0.05 - round(cpu / 0.05)) > 1e-6:
        r.error("cpu", f"must be a multiple of 0.05 between 0.05 and 16 (got {cpu})")
    elif not 1 <= (memory / 1024) / cpu <= 4:
        r.error("cpu", f"memory (GB) / cpu must be between 1 and 4 "
                       f"(memorySize {memory} / cpu {cpu} = {memory / 1024 / cpu:.2f})")
    return cpu


def _disk(r: PropReader, v: Values, c: FunctionContext) -> Any:
    disk = r.integer("diskSize", default=512, low=512, high=10240, unit=" MB")
    if disk not in (None, 512, 10240):
        r.error("diskSize", f"must be 512 or 10240 (got {disk})")
    return disk if disk in (512, 10240) else 512


def _concurrency(r: PropReader, v: Values, c: FunctionContext) -> Any:
    value = r.integer("instanceConcurrency", default=1, low=1, high=200)
    if value not in (None, 1):
        r.error("instanceConcurrency", f"Python runtimes support only 1 (got {value})")
    return 1


def _internet(r: PropReader, v: Values, c: FunctionContext) -> Any:
    return r.boolean("internetAccess", default=True)


def _environment(r: PropReader, v: Values, c: FunctionContext) -> Any:
    result: dict[str, str] = {}
    for key, value in (r.mapping("environmentVariables") or {}).items():
        field = ("environmentVariables", key)
        if value is BROKEN:
            continue
        if not re.fullmatch(ENV_NAME, str(key)):
            r.error(field, "name must start with a letter and use letters, digits and _")
        elif str(key).startswith("FC_"):
            r.error(field, "names starting with FC_ are reserved by Function Compute")
        elif isinstance(value, (Mapping, list)) or value is None:
            r.error(field, f"must be a string (got {type_name(value)})")
        else:
            result[str(key)] = value if isinstance(value, str) else \
                str(value).lower() if isinstance(value, bool) else str(value)
    total = sum(len(k.encode()) + len(x.encode()) for k, x in result.items())
    if total > ENV_TOTAL_LIMIT:
        r.error("environmentVariables",
                f"names and values total {total} bytes; the limit is 4 KB ({ENV_TOTAL_LIMIT})")
    return MappingProxyType(result)


def _role(r: PropReader, v: Values, c: FunctionContext) -> Any:
    role = r.string("role")
    if role is None:
        return None
    if role.lower() == "auto":
        v["role_auto"] = True
        return role_arn(c.account_id, AUTO_ROLE)
    if re.fullmatch(ROLE_ARN, role):
        return role
    if not re.fullmatch(ROLE_NAME, role):
        r.error("role", f"must be a RAM role name, a role ARN or auto (got {role!r})")
    return role


def _log_config(r: PropReader, v: Values, c: FunctionContext) -> Any:
    """``logConfig: {project, logstore, ...}``, or ``auto`` (what fc3 creates)."""
    raw = r.props.get("logConfig")
    if isinstance(raw, str) and raw.lower() == "auto":
        v["log_auto"] = True
        region = c.region or v.get("region") or "cn-hangzhou"
        return MappingProxyType({
            "project": auto_log_project(region, c.account_id), "logstore": AUTO_LOGSTORE,
            "enableRequestMetrics": True, "enableInstanceMetrics": True,
            "logBeginRule": "DefaultRegex"})
    value = r.mapping("logConfig")
    if value is None:
        return None
    sub = PropReader(value, (*r.path, "logConfig"), r.log)
    sub.check_keys(LOG_CONFIG_KEYS, {}, "logConfig")
    project = sub.string("project", required=True, pattern=SLS_PROJECT,
                         what="must be a Log Service project name (3-63 lowercase letters, "
                         "digits and -)")
    logstore = sub.string("logstore", required=True, pattern=SLS_LOGSTORE,
                          what="must be a logstore name (3-63 lowercase letters, digits, _ "
                          "and -)")
    result: dict[str, Any] = {
        "project": project, "logstore": logstore,
        "enableRequestMetrics": sub.boolean("enableRequestMetrics", default=True),
        "enableInstanceMetrics": sub.boolean("enableInstanceMetrics", default=False)}
    rule = sub.one_of("logBeginRule", ("DefaultRegex", "None"), default="None")
    if rule != "None":
        result["logBeginRule"] = rule
    return MappingProxyType(result) if project and logstore else None


def _auto_only(name: str, flag: str) -> Read:
    """``vpcConfig: auto`` / ``nasConfig: auto``: accepted and recorded (anything else is
    pending; see :func:`pending_reasons`)."""

    def read(r: PropReader, v: Values, c: FunctionContext) -> Any:
        value = r.props.get(name)
        if isinstance(value, str) and value.lower() == "auto":
            v[flag] = True
        elif value is not None and value is not BROKEN:
            r.error(name, f"only {name}: auto is deployed yet (got {type_name(value)})")
        return None

    return read


def _later(name: str, why: str = "") -> Fc3Prop:
    return Fc3Prop(name, pending=f"{name}{why}")


FC3_PROPS: tuple[Fc3Prop, ...] = (
    Fc3Prop("region", _region, "region"),
    Fc3Prop("functionName", _name, "function_name"),
    Fc3Prop("runtime", _runtime, "runtime"),
    Fc3Prop("code", _code, "code_dir"),
    Fc3Prop("handler", _handler, "handler"),
    Fc3Prop("description", _description, "description"),
    Fc3Prop("memorySize", _memory, "memory_size"),
    Fc3Prop("timeout", _timeout, "timeout"),
    Fc3Prop("cpu", _cpu, "cpu"),
    Fc3Prop("diskSize", _disk, "disk_size"),
    Fc3Prop("instanceConcurrency", _concurrency, "instance_concurrency"),
    Fc3Prop("internetAccess", _internet, "internet_access"),
    Fc3Prop("environmentVariables", _environment, "environment_variables"),
    Fc3Prop("role", _role, "role"),
    Fc3Prop("logConfig", _log_config, "log_config"),
    Fc3Prop("vpcConfig", _auto_only("vpcConfig", "vpc_auto")),
    Fc3Prop("nasConfig", _auto_only("nasConfig", "nas_auto")),
    *(_later(name) for name in (
        "triggers", "layers", "instanceLifecycleConfig", "tags", "asyncInvokeConfig",
        "provisionConfig", "scalingConfig", "concurrencyConfig", "customDomain",
        "customContainerConfig", "customRuntimeConfig", "customDNS", "gpuConfig",
        "tracingConfig", "ossMountConfig", "sessionAffinity", "sessionAffinityConfig",
        "vpcBinding", "artifact", "enableLongLiving", "instanceIsolationMode",
        "resourceGroupId", "supplement", "annotations")),
)
_BY_NAME = {p.name: p for p in FC3_PROPS}
#: Props refused by name (not pending: there is nothing to deploy later).
FC3_REFUSED = {"endpoint": "endpoints come from --target (aliyun: the region's public "
                           "endpoints; local: the emulator); remove it"}


def pending_reasons(props: Mapping[str, Any], runtime: Any) -> list[str]:
    """Why a function with these (raw) props is not deployed: each pending prop by name, an
    ``auto``-less vpcConfig/nasConfig, and a runtime this toolkit does not deploy yet."""
    reasons: list[str] = []
    if isinstance(runtime, str) and runtime in OTHER_RUNTIMES:
        if runtime == "custom-container":
            reasons.append("runtime custom-container: container images do not run on the "
                           "emulator, and customContainerConfig is not deployed yet")
        else:
            reasons.append(f"runtime {runtime} is {LATER} (Python runtimes are)")
    later = [p.pending for key in props if (p := _BY_NAME.get(str(key))) and p.pending]
    for name in ("vpcConfig", "nasConfig"):
        value = props.get(name)
        if value is not None and not (isinstance(value, str) and (
                value.lower() == "auto" or "${" in value)):
            later.append(f"{name} (only {name}: auto is deployed yet)")
    if later:
        reasons.append(f"{LATER}: {', '.join(later)}")
    return reasons


def build_function(resource: str, reader: PropReader, ctx: FunctionContext
                   ) -> FunctionSpec | None:
    """A FunctionSpec from resolved fc3 props, or None after reporting problems."""
    before = len(reader.log.errors)
    reader.check_keys(tuple(_BY_NAME), FC3_REFUSED, "fc3")
    values: Values = {}
    for prop in FC3_PROPS:
        if prop.read is not None:
            result = prop.read(reader, values, ctx)
            if prop.field is not None:
                values[prop.field] = result
    required = ("region", "function_name", "runtime", "handler", "code_dir")
    if len(reader.log.errors) > before or not all(values.get(k) for k in required):
        return None
    fields = {k: v for k, v in values.items() if k not in required}
    return FunctionSpec(resource, values["region"], values["function_name"],
                        values["runtime"], values["handler"], values["code_dir"],
                        position=reader.log.position(reader.path[:2]), **fields)
