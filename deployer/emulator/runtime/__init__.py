"""The emulator's local Function Compute runtime: Python, Node.js and custom runtimes.

Pipeline of one ``ProcessRuntime.invoke(spec, event, ...)``:

1. ``families``: the runtime name picks the family (Python, Node.js, custom); container images
   and languages without a local runtime are refused by name.
2. ``pool``: an idle instance started from an equal :class:`InstanceSpec` with room (warm), or a
   new one (cold; at most ``max_instances`` per function, callers beyond wait); instances past
   their idle time are never reused (``reaper`` stops them, preStop first).
3. ``codecache`` / ``layers``: the code zip is unpacked once per checksum into
   ``<work_dir>/code/<checksum>/`` (atomic, zip-slip safe, read-only), the layers merged into
   one ``/opt`` tree.
4. ``worker``: the instance is a ``bootstrap.py`` subprocess whose environment holds only the
   function's variables, FC's ``FC_*`` variables, PATH and LANG; it enters the sandbox, then
   stays the Python runtime, becomes ``node nodejs_runtime.js`` or supervises the function's
   HTTP server (``custom_supervisor.py``). Requests are frames over pipes (``frame_runs``) or
   HTTP through the worker's relay (``custom_runs``); stdout/stderr is the function log.
5. Back in ``process``: timeouts (real time) and crashes become FC's error bodies; the result
   carries payload, error type, log text and the last 4 KB of log.

Contract and decisions: docs/runtime.md; wire behaviour: reference fc3-api.md §7.6 and §8.
"""

from deployer.emulator.runtime.codecache import CodePackageError
from deployer.emulator.runtime.model import (
    ContainerImageNotSupported,
    CustomRuntimeSettings,
    FunctionErrorType,
    FunctionRuntime,
    HealthCheck,
    HookRun,
    HttpCall,
    InstanceSpec,
    InvocationResult,
    LayerSource,
    RuntimeNotEmulated,
    RuntimeUnavailableError,
)
from deployer.emulator.runtime.process import (
    DEFAULT_IDLE_TTL,
    DEFAULT_MAX_INSTANCES,
    ProcessRuntime,
)

__all__ = [
    "DEFAULT_IDLE_TTL",
    "DEFAULT_MAX_INSTANCES",
    "CodePackageError",
    "ContainerImageNotSupported",
    "CustomRuntimeSettings",
    "FunctionErrorType",
    "FunctionRuntime",
    "HealthCheck",
    "HookRun",
    "HttpCall",
    "InstanceSpec",
    "InvocationResult",
    "LayerSource",
    "ProcessRuntime",
    "RuntimeNotEmulated",
    "RuntimeUnavailableError",
]
