"""Which local runtime runs a function: FC's runtime names grouped by how the emulator runs them.

* ``python3``, ``python3.9``, ``python3.10``, ``python3.12``: the Python worker
  (``bootstrap.py``), on this machine's Python.
* ``nodejs12`` ... ``nodejs20``: the same worker enters the sandbox, then becomes this machine's
  ``node`` running ``nodejs_runtime.js``. A runtime newer than the local Node.js is refused.
* ``custom``, ``custom.debian10``/``11``/``12``: the worker supervises the function's own HTTP
  server (``custom_supervisor.py``), started from ``customRuntimeConfig`` or ``bootstrap``.
* ``custom-container`` (a container image) and the languages the emulator has no runtime for
  (Java, Go, PHP, .NET) are refused by name when invoked.
"""

from __future__ import annotations

import enum
import re
import shutil
import subprocess
import threading

from deployer.emulator.runtime.model import ContainerImageNotSupported, RuntimeNotEmulated

__all__ = ["Family", "NodeBinary", "family_of", "node_major"]

_NODE = re.compile(r"^nodejs(\d+)$")
_PYTHON = frozenset(("python3", "python3.9", "python3.10", "python3.12"))
_CUSTOM = frozenset(("custom", "custom.debian10", "custom.debian11", "custom.debian12"))
_NODE_VERSIONS = frozenset((12, 14, 16, 18, 20))


class Family(enum.Enum):
    PYTHON = "python"
    NODEJS = "nodejs"
    CUSTOM = "custom"


def node_major(runtime: str) -> int | None:
    """20 for ``nodejs20``; None for other runtimes."""
    m = _NODE.match(runtime)
    return int(m.group(1)) if m else None


def family_of(runtime: str, function_name: str) -> Family:
    """The family that runs ``runtime``; raises :class:`RuntimeNotEmulated` (or
    :class:`ContainerImageNotSupported`) naming the function when none does."""
    if runtime in _PYTHON:
        return Family.PYTHON
    if runtime in _CUSTOM:
        return Family.CUSTOM
    if node_major(runtime) in _NODE_VERSIONS:
        return Family.NODEJS
    if runtime == "custom-container":
        raise ContainerImageNotSupported(
            f"function '{function_name}' uses runtime custom-container: its code is a container "
            "image, which needs a container engine; the local emulator runs code packages only",
            hint="run the function's image with a container engine, or package the server as a "
                 "zip and use runtime custom.debian12 with customRuntimeConfig.command")
    raise RuntimeNotEmulated(
        f"runtime '{runtime}' of function '{function_name}' is not run by the local emulator "
        "(it runs python3.x, nodejs12-20 and custom runtimes)")


class NodeBinary:
    """This machine's ``node`` (found on PATH once) and its version. Thread-safe."""

    def __init__(self, path: str | None = None) -> None:
        self._given = path
        self._lock = threading.Lock()
        self._found: tuple[str, str] | None = None

    def _probe(self) -> tuple[str, str]:
        with self._lock:
            if self._found is None:
                path = self._given or shutil.which("node") or ""
                version = ""
                if path:
                    try:
                        done = subprocess.run([path, "--version"], capture_output=True,
                                              text=True, timeout=30, check=False)
                        version = done.stdout.strip()
                    except (OSError, subprocess.SubprocessError):
                        path = ""
                self._found = (path, version)
            return self._found

    def for_runtime(self, runtime: str, function_name: str) -> str:
        """The node executable that can run ``runtime``; RuntimeNotEmulated when there is none
        or it is older than the runtime's major version."""
        path, version = self._probe()
        if not path:
            raise RuntimeNotEmulated(
                f"function '{function_name}' uses runtime {runtime}, which needs Node.js: "
                "'node' was not found on this machine's PATH",
                hint="install Node.js (20 runs every FC Node.js runtime)")
        wanted = node_major(runtime) or 0
        m = re.match(r"^v(\d+)\.", version)
        local = int(m.group(1)) if m else 0
        if local < wanted:
            raise RuntimeNotEmulated(
                f"function '{function_name}' uses runtime {runtime}, which needs Node.js "
                f"{wanted} or later; this machine has {version or 'an unknown version'}",
                hint=f"install Node.js {wanted} or later")
        return path

    def version(self) -> str:
        """``v20.1.0``, or "" when there is no node."""
        return self._probe()[1]
