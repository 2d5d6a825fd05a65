"""The fc3 and fnf props we accept: rules (fc3-api.md §6.1), defaults (§6.3), spec building."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from deployer.config.props import PropReader, type_name
from deployer.config.releases import flow_release, flow_schedules
from deployer.config.specs import ExecutionMode, FlowSpec, FunctionSpec, handler_files
from deployer.config.variables import BROKEN

__all__ = [
    "CLOUDFLOW_REGIONS",
    "FC_REGIONS",
    "PYTHON_RUNTIMES",
    "build_flow",
    "build_function",
    "default_cpu",
]

CLOUDFLOW_REGIONS = (
    "cn-hangzhou", "cn-shanghai", "cn-beijing", "cn-qingdao", "cn-shenzhen",
    "ap-southeast-1", "us-west-1",
)
FC_REGIONS = frozenset({
    *CLOUDFLOW_REGIONS, "cn-zhangjiakou", "cn-huhehaote", "cn-chengdu", "cn-hongkong",
    "cn-wulanchabu", "ap-southeast-2", "ap-southeast-3", "ap-southeast-5", "ap-southeast-7",
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "eu-central-1", "eu-west-1", "us-east-1",
    "me-central-1", "cn-heyuan-acdr-1", "cn-shanghai-finance-1",
})
PYTHON_RUNTIMES = ("python3.9", "python3.10", "python3.12")
OTHER_RUNTIMES = frozenset({
    "nodejs12", "nodejs14", "nodejs16", "nodejs18", "nodejs20", "go1", "java8", "java11",
    "php7.2", "dotnetcore3.1", "custom", "custom.debian10", "custom.debian11",
    "custom.debian12", "custom-container",
})
FUNCTION_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
FLOW_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,127}"
ROLE_NAME = r"[A-Za-z0-9.-]{1,64}"
ROLE_ARN = r"acs:ram::\d+:role/.+"
HANDLER = r"(?:[A-Za-z0-9_.-]+/)*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
HANDLER += r"\.[A-Za-z_][A-Za-z0-9_]*"
ENV_NAME = r"[A-Za-z][A-Za-z0-9_]*"
ENV_TOTAL_LIMIT = 4096
#: The longest function description Function Compute takes (fc3-api.md §6.1; the emulator too).
MAX_FUNCTION_DESCRIPTION = 256

FC3_PROPS = (
    "region", "functionName", "runtime", "handler", "code", "description", "memorySize",
    "timeout", "cpu", "diskSize", "instanceConcurrency", "internetAccess",
    "environmentVariables", "role", "layers", "instanceLifecycleConfig", "tags", "logConfig",
)
_LATER = "not deployed by this tool yet; remove it or deploy it with Serverless Devs"
FC3_UNSUPPORTED = {
    key: _LATER
    for key in (
        "vpcConfig", "nasConfig", "ossMountConfig", "triggers",
        "asyncInvokeConfig", "provisionConfig", "scalingConfig", "concurrencyConfig",
        "customDomain", "customContainerConfig", "customRuntimeConfig", "customDNS",
        "gpuConfig", "tracingConfig", "sessionAffinity", "vpcBinding", "artifact",
    )
} | {"endpoint": "use the global --endpoint option (or the emulator) instead"}
FNF_PROPS = (
    "region", "name", "description", "type", "executionMode", "definition",
    "definitionVars", "role", "roleArn", "publishVersion", "aliases", "schedules",
)
FNF_UNSUPPORTED = {"endpoint": "use the global --endpoint option (or the emulator) instead"}


def check_region(reader: PropReader) -> str | None:
    """The ``region`` prop, which must be one where both FC 3.0 and CloudFlow exist."""
    region = reader.string("region", required=True)
    if region is None or region in CLOUDFLOW_REGIONS:
        return region
    where = "Function Compute 3.0 but no CloudFlow" if region in FC_REGIONS else "no known"
    reader.error(
        "region",
        f"region {region!r} has {where} service; this project needs both, "
        f"use one of: {', '.join(CLOUDFLOW_REGIONS)}",
    )
    return None


def default_cpu(memory_mb: int) -> float:
    """fc3's default of 0.35 vCPU, moved into the allowed memory(GB)/cpu ratio range [1, 4]."""
    gigabytes = memory_mb / 1024
    low = math.ceil(round(gigabytes / 4 / 0.05, 6)) * 0.05
    high = math.floor(round(gigabytes / 0.05, 6)) * 0.05
    return round(min(max(0.35, low), high), 2)


def build_function(
    resource: str, reader: PropReader, base_dir: Path
) -> FunctionSpec | None:
    """A FunctionSpec from fc3 props, or None after reporting problems to the reader's log."""
    before = len(reader.log.errors)
    reader.check_keys(FC3_PROPS, FC3_UNSUPPORTED, "fc3")
    region = check_region(reader)
    name = reader.string(
        "functionName", required=True, pattern=FUNCTION_NAME,
        what="must start with a letter or _ and use letters, digits, _ and - (1-64 chars)",
    )
    runtime = _runtime(reader)
    handler = reader.string(
        "handler", required=True, pattern=HANDLER,
        what="must be <module>.<function>, e.g. index.handler",
    )
    code_dir = _code_dir(reader, base_dir)
    if handler and code_dir and not any((code_dir / f).is_file() for f in handler_files(handler)):
        reader.error("handler", f"needs {handler_files(handler)[0]} in the code directory "
                     f"{reader.props.get('code')!r}, which has no such file")
    memory = _memory(reader)
    cpu = _cpu(reader, memory)
    spec_args: dict[str, Any] = dict(
        description=_function_description(reader),
        memory_size=memory,
        timeout=reader.integer("timeout", default=3, low=1, high=86400, unit=" seconds"),
        cpu=cpu,
        disk_size=_disk(reader),
        instance_concurrency=_concurrency(reader),
        internet_access=reader.boolean("internetAccess", default=True),
        environment_variables=_environment(reader),
        role=_function_role(reader),
        layers=_layers(reader),
        instance_lifecycle_config=_frozen_map(reader.mapping("instanceLifecycleConfig")),
        tags=_tags(reader),
        log_config=_log_config(reader),
        position=reader.log.position(reader.path[:2]),
    )
    # a None required value was reported here or while resolving its magic variable
    if len(reader.log.errors) > before or not (region and name and runtime and handler
                                               and code_dir):
        return None
    return FunctionSpec(resource, region, name, runtime, handler, code_dir, **spec_args)


def build_flow(resource: str, reader: PropReader, base_dir: Path) -> FlowSpec | None:
    """A FlowSpec from fnf props, or None after reporting problems to the reader's log."""
    before = len(reader.log.errors)
    reader.check_keys(FNF_PROPS, FNF_UNSUPPORTED, "fnf")
    region = check_region(reader)
    name = reader.string(
        "name", required=True, pattern=FLOW_NAME,
        what="must start with a letter or _ and use letters, digits, _ and - (1-128 chars)",
    )
    definition = _definition(reader, base_dir)
    kind = reader.one_of("type", ("FDL",), default="FDL")
    mode = reader.one_of("executionMode", [m.value for m in ExecutionMode], default="Standard")
    variables = reader.mapping("definitionVars")
    role_name = reader.string("role", pattern=ROLE_NAME, what="must be a RAM role name "
                              "(1-64 letters, digits, . and -); use roleArn for an ARN")
    role_arn = reader.string("roleArn", pattern=ROLE_ARN,
                             what="must look like acs:ram::<account-id>:role/<name>")
    release, schedules = flow_release(reader), flow_schedules(reader)
    if "role" in reader.props and "roleArn" in reader.props:
        reader.error("roleArn", "give either role (a role to create) or roleArn, not both")
    elif role_name is None and role_arn is None and len(reader.log.errors) == before:
        reader.warning("role", "no execution role: the flow cannot invoke functions in the cloud")
    if len(reader.log.errors) > before or not (region and name and definition):
        return None
    return FlowSpec(
        resource, region, name, definition,
        description=reader.string("description", default="") or "",
        type=kind, execution_mode=ExecutionMode(mode),
        definition_vars=_frozen_map(variables) or MappingProxyType({}),
        role_name=role_name, role_arn=role_arn,
        position=reader.log.position(reader.path[:2]),
        release=release, schedules=schedules,
    )


def _runtime(reader: PropReader) -> str | None:
    runtime = reader.string("runtime", required=True)
    if runtime is None or runtime in PYTHON_RUNTIMES:
        return runtime
    if runtime == "python3":
        reader.warning("runtime", "python3 is the legacy Python 3.6 runtime; use python3.10+")
        return runtime
    supported = ", ".join(PYTHON_RUNTIMES)
    if runtime in OTHER_RUNTIMES:
        reader.error("runtime", f"only Python runtimes are supported ({supported}); "
                                f"got {runtime!r}")
    else:
        reader.error("runtime", f"unknown runtime {runtime!r}; use one of {supported}")
    return None


def _code_dir(reader: PropReader, base_dir: Path) -> Path | None:
    code = reader.props.get("code")
    if isinstance(code, Mapping):
        reader.error("code", "code in OSS is not supported; give a local directory")
        return None
    text = reader.string("code", required=True)
    if text is None:
        return None
    if re.match(r"^[a-z]+://", text) or text.endswith(".zip"):
        reader.error("code", f"must be a local directory (got {text!r})")
        return None
    path = (base_dir / text).resolve()
    if not path.is_dir():
        reader.error("code", f"code directory {text!r} does not exist")
        return None
    return path


def _definition(reader: PropReader, base_dir: Path) -> Path | None:
    value = reader.props.get("definition")
    if isinstance(value, Mapping):
        reader.error("definition", "inline definitions are not supported; give a file path "
                                   "(a .yaml file, or a .yaml.j2 Jinja2 template)")
        return None
    text = reader.string("definition", required=True)
    if text is None:
        return None
    path = (base_dir / text).resolve()
    if not path.is_file():
        reader.error("definition", f"definition file {text!r} does not exist")
        return None
    return path


def _memory(reader: PropReader) -> int:
    memory = reader.integer("memorySize", default=512, low=128, high=32768, unit=" MB")
    if memory is not None and memory % 64:
        reader.error("memorySize", f"must be a multiple of 64 (got {memory})")
        return 512
    return memory or 512


def _cpu(reader: PropReader, memory: int) -> float:
    cpu = reader.number("cpu")
    if cpu is None:
        return default_cpu(memory)
    if not 0.05 <= cpu <= 16 or abs(cpu / 0.05 - round(cpu / 0.05)) > 1e-6:
        reader.error("cpu", f"must be a multiple of 0.05 between 0.05 and 16 (got {cpu})")
    elif not 1 <= (memory / 1024) / cpu <= 4:
        reader.error("cpu", f"memory (GB) / cpu must be between 1 and 4 "
                            f"(memorySize {memory} / cpu {cpu} = {memory / 1024 / cpu:.2f})")
    return cpu


def _disk(reader: PropReader) -> int:
    disk = reader.integer("diskSize", default=512, low=512, high=10240, unit=" MB")
    if disk not in (None, 512, 10240):
        reader.error("diskSize", f"must be 512 or 10240 (got {disk})")
    return disk if disk in (512, 10240) else 512


def _concurrency(reader: PropReader) -> int:
    value = reader.integer("instanceConcurrency", default=1, low=1, high=200)
    if value not in (None, 1):
        reader.error("instanceConcurrency", f"Python runtimes support only 1 (got {value})")
    return 1


def _environment(reader: PropReader) -> Mapping[str, str]:
    variables = reader.mapping("environmentVariables")
    result: dict[str, str] = {}
    for key, value in (variables or {}).items():
        field = ("environmentVariables", key)
        if value is BROKEN:
            continue
        if not re.fullmatch(ENV_NAME, str(key)):
            reader.error(field, "name must start with a letter and use letters, digits and _")
        elif str(key).startswith("FC_"):
            reader.error(field, "names starting with FC_ are reserved by Function Compute")
        elif isinstance(value, (Mapping, list)) or value is None:
            reader.error(field, f"must be a string (got {type_name(value)})")
        else:
            text = value if isinstance(value, str) else str(value).lower() \
                if isinstance(value, bool) else str(value)
            result[str(key)] = text
    total = sum(len(k.encode()) + len(v.encode()) for k, v in result.items())
    if total > ENV_TOTAL_LIMIT:
        reader.error("environmentVariables",
                     f"names and values total {total} bytes; the limit is 4 KB ({ENV_TOTAL_LIMIT})")
    return MappingProxyType(result)


def _function_description(reader: PropReader) -> str:
    description = reader.string("description", default="") or ""
    if len(description) > MAX_FUNCTION_DESCRIPTION:
        reader.error("description", f"must be at most {MAX_FUNCTION_DESCRIPTION} characters "
                                    f"(got {len(description)})")
    return description


def _function_role(reader: PropReader) -> str | None:
    role = reader.string("role")
    if role is None or role == "auto" or re.fullmatch(ROLE_ARN, role):
        return role
    if not re.fullmatch(ROLE_NAME, role):
        reader.error("role", f"must be a RAM role name, a role ARN or auto (got {role!r})")
    return role


def _layers(reader: PropReader) -> tuple[str, ...]:
    layers = reader.sequence("layers") or []
    bad = [i for i, layer in enumerate(layers) if not isinstance(layer, str)]
    for index in bad:
        reader.error(("layers", index), "must be a layer version ARN string")
    return tuple(layer for layer in layers if isinstance(layer, str))


def _tags(reader: PropReader) -> tuple[tuple[str, str], ...]:
    tags: list[tuple[str, str]] = []
    for index, tag in enumerate(reader.sequence("tags") or []):
        if not (isinstance(tag, Mapping) and isinstance(tag.get("key"), str)
                and isinstance(tag.get("value", ""), str)):
            reader.error(("tags", index), "must be a map {key: <string>, value: <string>}")
            continue
        tags.append((tag["key"], tag.get("value", "")))
    return tuple(tags)


LOG_CONFIG_KEYS = ("project", "logstore", "enableRequestMetrics", "enableInstanceMetrics",
                   "logBeginRule")
SLS_PROJECT = r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]"
SLS_LOGSTORE = r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]"


def _log_config(reader: PropReader) -> Mapping[str, Any] | None:
    """``logConfig: {project, logstore, ...}``: the Log Service logstore FC writes to."""
    if reader.props.get("logConfig") == "auto":
        reader.error("logConfig", "'auto' (creating Log Service resources) is not supported; "
                     "give {project: <name>, logstore: <name>} of an existing logstore")
        return None
    value = reader.mapping("logConfig")
    if value is None:
        return None
    sub = PropReader(value, (*reader.path, "logConfig"), reader.log)
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


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else MappingProxyType(dict(value))
