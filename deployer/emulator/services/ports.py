"""Ports the function service depends on: the runtime that runs handlers.

The contract lives with the process runtime (``deployer.emulator.runtime.model``); it is
re-exported here so services depend on the port, not on the subprocess machinery. Tests may
pass any object with the same methods (``deployer.testing.runtimes.EchoRuntime``).
"""

from __future__ import annotations

from deployer.emulator.runtime.model import (
    CustomRuntimeSettings,
    FunctionRuntime,
    HealthCheck,
    HookRun,
    HttpCall,
    InstanceSpec,
    InvocationResult,
    LayerSource,
    MountPoint,
    RuntimeUnavailableError,
    TemporaryCredentials,
    missing_layer,
)

__all__ = [
    "CustomRuntimeSettings",
    "FunctionRuntime",
    "HealthCheck",
    "HookRun",
    "HttpCall",
    "InstanceSpec",
    "InvocationResult",
    "LayerSource",
    "MountPoint",
    "RuntimeUnavailableError",
    "TemporaryCredentials",
    "missing_layer",
]
