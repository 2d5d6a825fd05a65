"""The emulator's local Function Compute Python runtime.

Pipeline of one ``ProcessRuntime.invoke(spec, event, ...)``:

1. ``codecache``: the code zip is unpacked once per code checksum into
   ``<work_dir>/code/<checksum>/`` (atomic rename, zip-slip safe, read-only).
2. ``process``: the pool picks an idle instance started from an equal :class:`FunctionSpec`
   (warm) or starts one (cold; at most ``max_instances`` per function, callers beyond wait).
3. ``worker``: the instance is a ``bootstrap.py`` subprocess whose environment holds only the
   function's variables, FC's ``FC_*`` variables, PATH and LANG. Requests and answers travel
   as length-prefixed frames over pipes; the worker's stdout/stderr is the function log.
4. ``bootstrap`` (in the worker): imports the handler module once per instance, runs the
   initializer once, calls ``handler(event: bytes, context)`` under virtual time when the clock
   is virtual, and serialises the result or the error exactly like FC's python3 runtime.
5. Back in ``process``: timeouts (real time) and crashes become FC's error bodies; the result
   carries payload, error type, log text and the last 4 KB of log.

Contract and decisions: docs/runtime.md; wire behaviour: reference fc3-api.md §7.6 and §8.
"""

from deployer.emulator.runtime.codecache import CodePackageError
from deployer.emulator.runtime.model import (
    FunctionErrorType,
    FunctionRuntime,
    FunctionSpec,
    InvocationResult,
    RuntimeUnavailableError,
)
from deployer.emulator.runtime.process import DEFAULT_MAX_INSTANCES, ProcessRuntime

__all__ = [
    "DEFAULT_MAX_INSTANCES",
    "CodePackageError",
    "FunctionErrorType",
    "FunctionRuntime",
    "FunctionSpec",
    "InvocationResult",
    "ProcessRuntime",
    "RuntimeUnavailableError",
]
