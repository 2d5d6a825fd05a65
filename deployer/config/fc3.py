"""The fc3 component's props: one table entry per prop (:data:`FC3_PROPS`).

An entry either reads and checks its prop into a :class:`FunctionSpec` field (``read``), or
says why a function using it is not deployed (``pending``): such a function is listed as "not
yet deployable: <prop>" by name, never deployed without it. Each entry also says what the
prop becomes (``status``): ``deployed`` (acted on), ``recorded`` (sent to Function Compute and
kept, with no local effect: docs/manifest.md says why) or ``refused``. Adding a prop is one
entry plus, in ``deployer.core.deploy.function_config``, its mapping to the API.

Runtimes (fc3-api.md §6.1): Python, Node.js and custom runtimes run on the emulator and
deploy; ``custom-container`` and the runtimes the emulator does not run (Java, Go, PHP,
.NET) list the function as not deployable by name; an unknown runtime is an error.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from deployer.config import fc3_settings as st
from deployer.config.fc3_domains import read_custom_domain
from deployer.config.fc3_instances import read_provision_config, read_scaling_config
from deployer.config.fc3_triggers import read_triggers
from deployer.config.outputs import AUTO_LOGSTORE, AUTO_ROLE, auto_log_project, lower_role_arn
from deployer.config.props import PropReader, type_name
from deployer.config.schema import ROLE_ARN, ROLE_NAME, check_region, default_cpu
from deployer.config.specs import FunctionSpec, handler_files
from deployer.config.variables import BROKEN

__all__ = ["FC3_PROPS", "FunctionContext", "build_function", "pending_reasons", "prop_status"]

PYTHON_RUNTIMES = ("python3.9", "python3.10", "python3.12")
NODEJS_RUNTIMES = ("nodejs12", "nodejs14", "nodejs16", "nodejs18", "nodejs20")
_CUSTOM_RUNTIMES = ("custom", "custom.debian10", "custom.debian11", "custom.debian12")
DEPLOYED_RUNTIMES = (*PYTHON_RUNTIMES, *NODEJS_RUNTIMES, *_CUSTOM_RUNTIMES)
OTHER_RUNTIMES = frozenset({"go1", "java8", "java11", "php7.2", "dotnetcore3.1",
                            "custom-container"})
DEFAULT_CUSTOM_HANDLER = "index.handler"
FUNCTION_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
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


_Values = dict[str, Any]
_Read = Callable[[PropReader, _Values, FunctionContext], Any]


@dataclass(frozen=True, slots=True)
class Fc3Prop:
    name: str
    read: _Read | None = None  # -> spec field ``field`` (None: pending)
    field: str | None = None
    pending: str = ""  # why a function with this prop is not deployed
    status: str = "deployed"  # deployed | recorded | refused | pending (module docstring)


def _region(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    return check_region(r)


def _name(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    return r.string("functionName", required=True, pattern=FUNCTION_NAME,
                    what="must start with a letter or _ and use letters, digits, _ and - "
                    "(1-64 chars)")


def _runtime(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    runtime = r.string("runtime", required=True)
    if runtime is None or runtime in DEPLOYED_RUNTIMES:
        return runtime
    if runtime == "python3":
        r.warning("runtime", "python3 is the legacy Python 3.6 runtime; use python3.10+")
        return runtime
    r.error("runtime", f"unknown runtime {runtime!r}; use one of "
            f"{', '.join(DEPLOYED_RUNTIMES)}")
    return None


def _code(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    """A local directory, or a local ``.zip`` package used as it is."""
    code = r.props.get("code")
    if isinstance(code, Mapping):
        r.error("code", "code in OSS is not supported; give a local directory or .zip file")
        return None
    text = r.string("code", required=True)
    if text is None:
        return None
    if re.match(r"^[a-z]+://", text):
        r.error("code", f"must be a local directory or .zip file (got {text!r})")
        return None
    path = (c.base_dir / text).resolve()
    if text.lower().endswith(".zip") and not path.is_dir():
        if not path.is_file():
            r.error("code", f"code package {text!r} does not exist")
        elif not zipfile.is_zipfile(path):
            r.error("code", f"code package {text!r} is not a zip file")
        else:
            return path
        return None
    if not path.is_dir():
        r.error("code", f"code directory {text!r} does not exist")
        return None
    return path


def _package_names(path: Path) -> set[str]:
    try:
        with zipfile.ZipFile(path) as archive:
            return set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return set()


def _handler(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    runtime = v.get("runtime") or ""
    custom = runtime.startswith("custom")
    if custom and r.props.get("handler") is None:
        return DEFAULT_CUSTOM_HANDLER
    handler = r.string("handler", required=True, pattern=r"[^\s]{1,128}" if custom else HANDLER,
                       what="must be <module>.<function>, e.g. index.handler")
    code = v.get("code_dir")
    files = handler_files(handler, runtime) if handler else ()
    if files and code:
        names = _package_names(code) if not code.is_dir() else None
        found = any((f in names) if names is not None else (code / f).is_file()
                    for f in files)
        if not found:
            r.error("handler", f"needs {files[0]} in the code "
                    f"{'package' if names is not None else 'directory'} "
                    f"{r.props.get('code')!r}, which has no such file")
    return handler


def _description(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    text = r.string("description", default="") or ""
    if len(text) > MAX_FUNCTION_DESCRIPTION:
        r.error("description", f"must be at most {MAX_FUNCTION_DESCRIPTION} characters "
                               f"(got {len(text)})")
    return text


def _memory(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    memory = r.integer("memorySize", default=512, low=128, high=32768, unit=" MB")
    if memory is not None and memory % 64:
        r.error("memorySize", f"must be a multiple of 64 (got {memory})")
        return 512
    return memory or 512


def _timeout(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    return r.integer("timeout", default=3, low=1, high=86400, unit=" seconds")


def _cpu(r: PropReader, v: _Values, c: FunctionContext) -> Any:
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


def _disk(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    disk = r.integer("diskSize", default=512, low=512, high=10240, unit=" MB")
    if disk not in (None, 512, 10240):
        r.error("diskSize", f"must be 512 or 10240 (got {disk})")
    return disk if disk in (512, 10240) else 512


def _concurrency(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    """Requests one instance serves at once: custom runtimes 1-200, built-in runtimes 1
    (FC 3.0; fc3-api.md §6.1)."""
    value = r.integer("instanceConcurrency", default=1, low=1, high=200)
    runtime = str(v.get("runtime") or "")
    if value not in (None, 1) and not runtime.startswith("custom"):
        r.error("instanceConcurrency", f"built-in runtimes ({runtime}) serve one request per "
                f"instance; only custom runtimes take more (got {value})")
        return 1
    return value or 1


def _internet(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    return r.boolean("internetAccess", default=True)


def _environment(r: PropReader, v: _Values, c: FunctionContext) -> Any:
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


def _role(r: PropReader, v: _Values, c: FunctionContext) -> Any:
    role = r.string("role")
    if role is None:
        return None
    if role.lower() == "auto":
        v["role_auto"] = True
        return lower_role_arn(c.account_id, AUTO_ROLE)
    if re.fullmatch(ROLE_ARN, role):
        return role
    if not re.fullmatch(ROLE_NAME, role):
        r.error("role", f"must be a RAM role name, a role ARN or auto (got {role!r})")
    return role


def _log_config(r: PropReader, v: _Values, c: FunctionContext) -> Any:
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


def _refused(name: str, why: str) -> Fc3Prop:
    return Fc3Prop(name, pending=f"{name} ({why})", status="refused")


def _setting(name: str, read: _Read, status: str = "deployed") -> Fc3Prop:
    """A prop sent to FC under its own name in ``FunctionSpec.settings``."""
    return Fc3Prop(name, read, f"settings.{name}", status=status)


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
    Fc3Prop("layers", st.read_layers, "layers"),
    Fc3Prop("instanceLifecycleConfig", st.read_lifecycle, "instance_lifecycle_config"),
    Fc3Prop("tags", st.read_tag_map, "tags"),
    _setting("customRuntimeConfig", st.read_custom_runtime),
    _setting("vpcConfig", st.read_vpc, "recorded"),
    _setting("nasConfig", st.read_mounts("nasConfig")),
    _setting("ossMountConfig", st.read_mounts("ossMountConfig")),
    _setting("customDNS", st.read_custom_dns, "recorded"),
    _setting("tracingConfig", st.read_tracing, "recorded"),
    _setting("sessionAffinity", st.read_recorded(
        "sessionAffinity", str, ("NONE", "HEADER_FIELD", "MCP_SSE", "GENERATED_COOKIE")),
        "recorded"),
    _setting("sessionAffinityConfig", st.read_recorded("sessionAffinityConfig", str),
             "recorded"),
    _setting("instanceIsolationMode", st.read_recorded(
        "instanceIsolationMode", str, ("SHARE", "SESSION_EXCLUSIVE")), "recorded"),
    _setting("enableLongLiving", st.read_recorded("enableLongLiving", bool), "recorded"),
    _setting("resourceGroupId", st.read_recorded("resourceGroupId", str), "recorded"),
    Fc3Prop("triggers", read_triggers, "triggers"),
    Fc3Prop("asyncInvokeConfig", st.read_async_invoke, "async_invoke_config"),
    Fc3Prop("concurrencyConfig", st.read_concurrency_config, "reserved_concurrency"),
    Fc3Prop("provisionConfig", read_provision_config, "provision_config"),
    Fc3Prop("scalingConfig", read_scaling_config, "scaling_config"),
    Fc3Prop("customDomain", read_custom_domain, "custom_domain"),
    _refused("customContainerConfig", "container images need a container engine; "
             "custom-container functions are not deployed by this toolkit"),
    _refused("gpuConfig", "GPU functions run container images, which this toolkit does not "
             "deploy"),
    _refused("vpcBinding", "VPC bindings are not deployed by this toolkit"),
    _refused("artifact", "artifacts are not deployed by this toolkit"),
    _refused("supplement", "fc3's supplement is not deployed by this toolkit"),
    _refused("annotations", "fc3's annotations are not deployed by this toolkit"),
)
_BY_NAME = {p.name: p for p in FC3_PROPS}
#: Props refused by name (not pending: there is nothing to deploy later).
FC3_REFUSED = {"endpoint": "endpoints come from --target (aliyun: the region's public "
                           "endpoints; local: the emulator); remove it"}


def pending_reasons(props: Mapping[str, Any], runtime: Any) -> list[str]:
    """Why a function with these (raw) props is not deployed: each pending prop by name,
    and a runtime this toolkit does not deploy."""
    reasons: list[str] = []
    if isinstance(runtime, str) and runtime in OTHER_RUNTIMES:
        if runtime == "custom-container":
            reasons.append("runtime custom-container: container images need a container "
                           "engine; this toolkit deploys code packages")
        else:
            reasons.append(f"runtime {runtime} is not deployed by this toolkit (the emulator "
                           "runs Python, Node.js and custom runtimes)")
    found = [p for key in props if (p := _BY_NAME.get(str(key))) and p.pending]
    refused = [p.pending for p in found if p.status == "refused"]
    later = [p.pending for p in found if p.status == "pending"]
    if refused:
        reasons.append(f"not deployed by this toolkit: {', '.join(refused)}")
    if later:
        reasons.append(f"{LATER}: {', '.join(later)}")
    return reasons


def build_function(resource: str, reader: PropReader, ctx: FunctionContext
                   ) -> FunctionSpec | None:
    """A FunctionSpec from resolved fc3 props, or None after reporting problems."""
    before = len(reader.log.errors)
    reader.check_keys(tuple(_BY_NAME), FC3_REFUSED, "fc3")
    values: _Values = {}
    settings: dict[str, Any] = {}
    for prop in FC3_PROPS:
        if prop.read is None:
            continue
        result = prop.read(reader, values, ctx)
        if prop.field is None:
            continue
        if prop.field.startswith("settings."):
            if result is not None:
                settings[prop.name] = result
        else:
            values[prop.field] = result
    required = ("region", "function_name", "runtime", "handler", "code_dir")
    if len(reader.log.errors) > before or not all(values.get(k) for k in required):
        return None
    fields = {k: v for k, v in values.items() if k not in required}
    return FunctionSpec(resource, values["region"], values["function_name"],
                        values["runtime"], values["handler"], values["code_dir"],
                        position=reader.log.position(reader.path[:2]),
                        settings=MappingProxyType(settings), **fields)


def prop_status() -> dict[str, str]:
    """Each fc3 prop and what it becomes: deployed, recorded, refused, or pending (a
    function using it is listed as not yet deployable)."""
    return {p.name: p.status for p in FC3_PROPS} | {k: "refused" for k in FC3_REFUSED}
