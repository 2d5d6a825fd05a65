"""What a new instance is started with: its environment and its config frame (fc3-api.md §8.6).

The environment holds ``PATH`` and ``LANG`` from the host, the function's variables and FC's
``FC_*`` variables; role credentials are not in it (they travel in the config frame, so they
never show in ``/proc/<pid>/environ``) and the worker puts them into ``os.environ`` itself unless
``disableInjectCredentials`` says ``Env``/``All``. The config frame also carries the sandbox
settings, ``sys.path`` and the cloud endpoint the worker routes SDK calls to.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from deployer.emulator.runtime.model import InstanceSpec, TemporaryCredentials
from deployer.emulator.runtime.pid_limits import MAX_PROCESSES
from deployer.emulator.runtime.routing import EMULATED_HOSTS

__all__ = ["QUALIFIER", "VERSION_ID", "credentials_frame", "host_python", "runtime_version",
           "version_variable", "worker_config", "worker_environment"]

RUNTIME_DIR = Path(__file__).resolve().parent
NODE_SCRIPT = RUNTIME_DIR / "nodejs_runtime.js"
CUSTOM_STARTUP_TIMEOUT_S = 120.0  # FC: a custom runtime's server must be ready within 120 s
QUALIFIER = "LATEST"
VERSION_ID = "LATEST"  # the version a LATEST invocation runs
MAX_OPEN_FILES = 100_000
_PASSED_HOST_VARIABLES = ("PATH", "LANG")
# the device nodes a worker may use (the rest of /dev, disks included, is out of its reach)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
           "/dev/pts", "/dev/ptmx", "/dev/shm")


def runtime_version(runtime: str) -> tuple[int, int] | None:
    """(3, 10) for ``python3.10``; ``python3`` is FC's Python 3.6."""
    if runtime == "python3":
        return (3, 6)
    prefix, _, minor = runtime.partition("python3.")
    return (3, int(minor)) if not prefix and minor.isdigit() else None


def host_python() -> tuple[int, int]:
    return sys.version_info[:2]


DEBIAN_11_PLUS = frozenset(("python3.12", "custom.debian11", "custom.debian12"))


def version_variable(runtime: str) -> str:
    """FC names the invoked version ``FC_FUNCTION_VERSION`` on Debian 11+ runtimes (python3.12,
    custom.debian11/12) and ``FC_VER_ID`` on the older ones (§8.6)."""
    return "FC_FUNCTION_VERSION" if runtime in DEBIAN_11_PLUS else "FC_VER_ID"


def worker_environment(spec: InstanceSpec, code_root: Path, instance_id: str) -> dict[str, str]:
    """The worker's whole environment: PATH and LANG, the function's variables, FC's (§8.6)."""
    env = {name: os.environ[name] for name in _PASSED_HOST_VARIABLES if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update({str(k): str(v) for k, v in spec.environment.items()})
    env.update(
        {
            "FC_FUNC_CODE_PATH": f"{code_root}{os.sep}",
            "FC_FUNCTION_NAME": spec.function_name,
            "FC_FUNCTION_HANDLER": spec.handler,
            "FC_FUNCTION_MEMORY_SIZE": str(spec.memory_size),
            "FC_REGION": spec.region,
            "FC_ACCOUNT_ID": spec.account_id,
            "FC_INSTANCE_ID": instance_id,
            "FC_RUNTIME": spec.runtime,
            "FC_TIMEOUT": str(spec.timeout),
            "FC_QUALIFIER": spec.qualifier,
            version_variable(spec.runtime): spec.version_id,
        }
    )
    if spec.initializer_handler:
        env["FC_INITIALIZER_HANDLER"] = spec.initializer_handler
        env["FC_INITIALIZATION_TIMEOUT"] = str(spec.initializer_timeout or spec.timeout)
    if spec.custom is not None:
        env["FC_CUSTOM_LISTEN_PORT"] = str(spec.custom.port)
    return env


def credentials_frame(creds: TemporaryCredentials | None) -> dict[str, str] | None:
    if creds is None:
        return None
    return {"access_key_id": creds.access_key_id, "access_key_secret": creds.access_key_secret,
            "security_token": creds.security_token}


def worker_config(spec: InstanceSpec, *, packages: list[str], emulator_packages: list[str],
                  sandbox: dict[str, Any], virtual_time: bool,
                  credentials: TemporaryCredentials | None, family: str = "python",
                  layers: Path | None = None, node: str = "") -> dict[str, Any]:
    """The config frame of a new worker (see ``bootstrap.py``): what every family needs, and
    the Node.js executable and script or the custom runtime's server settings."""
    config = {
        "family": family,
        "function_name": spec.function_name,
        "handler": spec.handler,
        "initializer": spec.initializer_handler,
        "initializer_timeout": spec.initializer_timeout or spec.timeout,
        "pre_stop": spec.pre_stop_handler,
        "pre_stop_timeout": spec.pre_stop_timeout or spec.timeout,
        "memory_size": spec.memory_size,
        "timeout": spec.timeout,
        "region": spec.region,
        "account_id": spec.account_id,
        "runtime": spec.runtime,
        "qualifier": spec.qualifier,
        "version_id": spec.version_id,
        "packages": packages,
        "emulator_packages": emulator_packages,
        "virtual_time": virtual_time,
        "cloud_endpoint": spec.cloud_endpoint,
        "internet_access": spec.internet_access,
        "disable_inject_credentials": spec.disable_inject_credentials,
        "credentials": credentials_frame(credentials),
        "sandbox": sandbox,
        "layers": None if layers is None else {
            "tree": str(layers), "python_version": runtime_version(spec.runtime)},
    }
    if family == "nodejs":
        config.update(node=node, node_script=str(NODE_SCRIPT),
                      emulated_hosts=EMULATED_HOSTS.pattern)
    if spec.custom is not None:
        custom = spec.custom
        config["emulated_hosts"] = EMULATED_HOSTS.pattern
        config["custom"] = {
            "command": list(custom.command), "args": list(custom.args), "port": custom.port,
            "health_check": dataclasses.asdict(custom.health_check),
            "startup_timeout": CUSTOM_STARTUP_TIMEOUT_S}
    return config


def _environment_dir(interpreter: str) -> str:
    """The directory of ``interpreter`` that must stay visible: a virtual environment's root
    (its ``pyvenv.cfg`` and site-packages, which the interpreter reads at start, e.g. a
    custom runtime's server started with it), else the interpreter's own directory."""
    bin_dir = os.path.dirname(interpreter)
    root = os.path.dirname(bin_dir)
    return root if os.path.isfile(os.path.join(root, "pyvenv.cfg")) else bin_dir


def mount_sources(spec: InstanceSpec, root: Path) -> list[dict[str, Any]]:
    """The instance's NAS and OSS mount points with their directories under ``root`` (made
    when missing). A directory that leads outside ``root`` (a symbolic link that function
    code wrote into a shared mount, say) is neither made nor mounted: its entry carries
    ``outside`` instead, which the worker reports."""
    out: list[dict[str, Any]] = []
    base = root.resolve()
    for mount in spec.mounts:
        source = (root / mount.source).resolve()
        entry = {"source": str(source), "target": mount.target,
                 "read_only": mount.read_only, "root": str(base)}
        if source != base and base not in source.parents:
            entry["outside"] = f"{mount.source} leads outside {base}"
        else:
            source.mkdir(parents=True, exist_ok=True)
        out.append(entry)
    return out


def sandbox_settings(spec: InstanceSpec, *, tmp_dir: Path, code_root: Path, readable: list[str],
                     package_sources: list[str], landlock: bool, private_tmp: bool,
                     separate_uid: bool, interpreter: str = "",
                     layers: Path | None = None,
                     network: dict[str, Any] | None = None,
                     mounts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The ``sandbox`` part of the config frame (applied by ``sandbox.py`` in the worker).

    ``interpreter`` is the worker's Python: its directory (a virtual environment's root)
    stays visible (read-only) inside the private /tmp, so a handler or a custom runtime can
    start ``sys.executable`` even when the emulator's environment lives below /tmp. So do
    this package's directory (the Node.js runtime's script) and the merged ``layers`` tree,
    which is also mounted on ``/opt``. ``network``
    (``network.InstanceNetworks.settings``): the instance gets a network namespace of its own
    whose ways out are the gateway and, with internet access, its network stack
    (``internet.py``); None leaves it on the host's network. ``mounts``
    (:func:`mount_sources`): bind-mounted at their targets in the private mount namespace,
    writable unless read-only."""
    bin_dir = [_environment_dir(interpreter)] if interpreter else []
    bin_dir.append(str(RUNTIME_DIR))
    if layers is not None:
        bin_dir.append(str(layers))
    return {
        "opt": str(layers) if layers is not None else "",
        "tmp_dir": str(tmp_dir),
        "code_root": str(code_root),
        "private_tmp": private_tmp,
        "file_size": spec.disk_size * 1024 * 1024,
        "max_open_files": MAX_OPEN_FILES,
        "max_processes": MAX_PROCESSES if separate_uid else 0,
        "landlock": landlock,
        "read": [*readable, str(code_root), *package_sources, *bin_dir],
        "keep": [str(code_root), *package_sources, *bin_dir],  # visible in the private /tmp
        "write": [str(tmp_dir), "/tmp" if private_tmp else str(tmp_dir), *DEVICES,
                  *(m["target"] for m in mounts or () if not m["read_only"])],
        "network": network,
        "mounts": mounts or [],
    }
