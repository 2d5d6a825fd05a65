"""Validation rules of FC 3.0 function settings (fc3-api.md §6.1, §8.10)."""

from __future__ import annotations

import io
import math
import re
import stat
import sys
import zipfile
from collections.abc import Mapping
from pathlib import PurePosixPath

from deployer.emulator.runtime.families import NodeBinary, family_of, node_major
from deployer.emulator.runtime.model import RuntimeNotEmulated
from deployer.emulator.services.functions.mounts import check_mounts
from deployer.emulator.services.errors import InvalidValue, PayloadTooLarge

__all__ = ["RUNTIMES", "check_config_values", "check_custom_runtime", "check_function_name",
           "check_zip", "runtime_warning"]

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
ENV_KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
ROLE_ARN_RE = re.compile(r"^acs:ram::\d+:role/[A-Za-z0-9.\-]{1,64}$", re.IGNORECASE)
RUNTIMES = frozenset((
    "nodejs12", "nodejs14", "nodejs16", "nodejs18", "nodejs20", "go1", "python3", "python3.9",
    "python3.10", "python3.12", "java8", "java11", "php7.2", "dotnetcore3.1", "custom",
    "custom.debian10", "custom.debian11", "custom.debian12", "custom-container",
))
CUSTOM_RUNTIMES = frozenset(r for r in RUNTIMES if r.startswith("custom"))
CODE_ZIP_LIMIT = 100 * 1024 * 1024
MAX_UNZIPPED_BYTES = 500 * 1024 * 1024  # decompressed code package (docs/runtime.md, INF)
MAX_ZIP_ENTRIES = 65_535
MAX_RATIO = 200  # a member inflating more than 200:1 (to over 1 MB) is treated as a zip bomb
MAX_ENV_BYTES = 4 * 1024


_NODE = NodeBinary()


def runtime_warning(runtime: str) -> str | None:
    """Why the function will not run here exactly as on FC (None when it will): a Python or
    Node.js version other than the runtime's, or a runtime the emulator does not run."""
    if runtime.startswith("nodejs"):
        return _node_warning(runtime)
    try:
        family_of(runtime, "")
    except RuntimeNotEmulated:
        why = ("its container image needs a container engine" if runtime == "custom-container"
               else "it runs python3.x, nodejs12-20 and custom runtimes")
        return f"runtime {runtime}: the emulator stores the function but cannot invoke it ({why})"
    wanted = {"python3": (3, 6), "python3.9": (3, 9), "python3.10": (3, 10),
              "python3.12": (3, 12)}.get(runtime)
    host = sys.version_info[:2]
    if wanted is None or wanted == host:
        return None
    return (f"runtime {runtime} is run locally by this machine's Python {host[0]}.{host[1]} "
            f"(Function Compute runs Python {wanted[0]}.{wanted[1]}); code relying on "
            "behaviour that differs between the two versions may work differently in the cloud")


def _node_warning(runtime: str) -> str | None:
    version = _NODE.version()
    wanted = node_major(runtime)
    if not version:
        return (f"runtime {runtime}: Node.js is not installed on this machine, so the emulator "
                "cannot invoke the function")
    if version.startswith(f"v{wanted}."):
        return None
    return (f"runtime {runtime} is run locally by this machine's Node.js {version} (Function "
            f"Compute runs Node.js {wanted}); code relying on behaviour that differs between "
            "the two versions may work differently in the cloud")


def check_function_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise InvalidValue(
            f"invalid function name '{name}': 1-64 letters, digits, '_' or '-', "
            "not starting with a digit or '-'", field="functionName")


def _range(field: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise InvalidValue(f"{field} must be between {low:g} and {high:g}, got {value:g}",
                           field=field)


def check_config_values(values: Mapping[str, object]) -> None:
    """Check the snake_case settings of a function (complete config after defaults)."""
    runtime = str(values["runtime"])
    if runtime not in RUNTIMES:
        raise InvalidValue(f"runtime '{runtime}' is not supported; valid: "
                           + ", ".join(sorted(RUNTIMES)), field="runtime")
    handler = str(values["handler"])
    needs_dot = runtime.startswith(("python", "nodejs"))  # file.function; custom: any string
    if not handler or len(handler) > 128 or (needs_dot and "." not in handler):
        raise InvalidValue(f"invalid handler '{handler}': expected 'module.function'",
                           field="handler")
    memory = int(values["memory_size"])  # type: ignore[call-overload]
    _range("memorySize", memory, 128, 32768)
    if memory % 64:
        raise InvalidValue(f"memorySize must be a multiple of 64, got {memory}",
                           field="memorySize")
    cpu = float(values["cpu"])  # type: ignore[arg-type]
    _range("cpu", cpu, 0.05, 16)
    if not math.isclose(round(cpu / 0.05) * 0.05, cpu, abs_tol=1e-9):
        raise InvalidValue(f"cpu must be a multiple of 0.05, got {cpu:g}", field="cpu")
    if values["disk_size"] not in (512, 10240):
        raise InvalidValue("diskSize must be 512 or 10240", field="diskSize")
    _range("timeout", int(values["timeout"]), 1, 86400)  # type: ignore[call-overload]
    concurrency = int(values["instance_concurrency"])  # type: ignore[call-overload]
    _range("instanceConcurrency", concurrency, 1, 200 if runtime in CUSTOM_RUNTIMES else 1)
    _check_env(values["environment"])  # type: ignore[arg-type]
    if len(str(values["description"])) > 256:
        raise InvalidValue("description must be at most 256 characters", field="description")
    role = str(values["role"])
    if role and not ROLE_ARN_RE.match(role):
        raise InvalidValue(f"invalid role '{role}': expected acs:ram::<account>:role/<name>",
                           field="role")
    init_timeout = values.get("initializer_timeout")
    if init_timeout is not None:
        _range("initializer.timeout", int(init_timeout), 1, 300)  # type: ignore[call-overload]
    stop_timeout = values.get("pre_stop_timeout")
    if stop_timeout is not None:
        _range("preStop.timeout", int(stop_timeout), 1, 90)  # type: ignore[call-overload]
    opaque = values.get("opaque") or {}
    if isinstance(opaque, Mapping):
        check_custom_runtime(opaque.get("customRuntimeConfig"))
        check_mounts(opaque)
        idle = opaque.get("idleTimeout")
        if isinstance(idle, int) and idle < 0:
            raise InvalidValue(f"idleTimeout must be a number of seconds (0: the default "
                               f"idle time), got {idle}", field="idleTimeout")


_HEALTH_RANGES = {"initialDelaySeconds": (0, 120), "periodSeconds": (1, 120),
                  "timeoutSeconds": (1, 3), "failureThreshold": (1, 120),
                  "successThreshold": (1, 120)}  # the SDK's CustomHealthCheckConfig


def check_custom_runtime(config: object) -> None:
    """``customRuntimeConfig``: ``command``/``args`` lists of strings, ``port`` 1-65535 (the
    server's port, default 9000), ``healthCheckConfig`` within the SDK's documented ranges."""
    if config is None:
        return
    assert isinstance(config, Mapping)  # its JSON shape was checked on the wire
    for key in ("command", "args"):
        value = config.get(key)
        if value is not None and (not isinstance(value, list)
                                  or not all(isinstance(v, str) for v in value)):
            raise InvalidValue(f"customRuntimeConfig.{key} must be a list of strings",
                               field=f"customRuntimeConfig.{key}")
    port = config.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)
                             or not 1 <= port <= 65535):
        raise InvalidValue(f"customRuntimeConfig.port must be a port number (1-65535), "
                           f"got {port!r}", field="customRuntimeConfig.port")
    health = config.get("healthCheckConfig") or {}
    for key, (low, high) in _HEALTH_RANGES.items():
        value = health.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value <= high):
            raise InvalidValue(
                f"customRuntimeConfig.healthCheckConfig.{key} must be an integer between "
                f"{low} and {high}, got {value!r}", field=f"customRuntimeConfig.{key}")
    url = health.get("httpGetUrl")
    if url is not None and (not isinstance(url, str) or len(url) > 2048
                            or not url.startswith("/")):
        raise InvalidValue("customRuntimeConfig.healthCheckConfig.httpGetUrl must be a path "
                           "starting with '/' (at most 2,048 characters)",
                           field="customRuntimeConfig.healthCheckConfig.httpGetUrl")


def _check_env(env: Mapping[str, str]) -> None:
    total = 0
    for key, value in env.items():
        if not ENV_KEY_RE.match(key):
            raise InvalidValue(f"invalid environment variable name '{key}'",
                               field="environmentVariables")
        if key.startswith("FC_"):
            raise InvalidValue(f"environment variable '{key}': the prefix FC_ is reserved",
                               field="environmentVariables")
        total += len(key.encode()) + len(value.encode())
    if total > MAX_ENV_BYTES:
        raise InvalidValue(f"environment variables take {total} bytes; the limit is 4 KB",
                           field="environmentVariables")


def check_zip(data: bytes) -> None:
    """The package must be a readable zip of at most 100 MB."""
    if len(data) > CODE_ZIP_LIMIT:
        raise PayloadTooLarge(
            f"code package is {len(data)} bytes; the limit is {CODE_ZIP_LIMIT} bytes",
            limit=CODE_ZIP_LIMIT)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            _check_members(zf)
            bad = zf.testzip()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as exc:
        raise InvalidValue(f"code.zipFile is not a valid zip file: {exc}",
                           field="code") from None
    if bad is not None:
        raise InvalidValue(f"code.zipFile is corrupt (bad CRC in '{bad}')", field="code")


def _check_members(zf: zipfile.ZipFile) -> None:
    """Paths, links, entry count and unpacked size, from the central directory (no inflating)."""
    infos = zf.infolist()
    if len(infos) > MAX_ZIP_ENTRIES:
        raise InvalidValue(f"code.zipFile has {len(infos)} entries; the limit is "
                           f"{MAX_ZIP_ENTRIES}", field="code")
    total = 0
    for info in infos:
        name = info.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        if name.startswith("/") or ".." in parts or re.match(r"^[A-Za-z]:", name):
            raise InvalidValue(f"code.zipFile member '{info.filename}' has a path outside "
                               "the code directory (absolute or with '..')", field="code")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise InvalidValue(f"code.zipFile member '{info.filename}' is a symbolic link; "
                               "links are not allowed in code packages", field="code")
        total += info.file_size
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(
                info.compress_size, 1):
            raise InvalidValue(f"code.zipFile member '{info.filename}' inflates "
                               f"{info.compress_size} bytes to {info.file_size} bytes: the "
                               "package looks like a zip bomb", field="code")
    if total > MAX_UNZIPPED_BYTES:
        raise InvalidValue(f"code.zipFile unpacks to {total} bytes; the limit is "
                           f"{MAX_UNZIPPED_BYTES} bytes", field="code")
