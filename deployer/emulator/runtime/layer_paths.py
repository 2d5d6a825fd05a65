"""What a runtime puts on its search paths for the layers mounted at ``/opt``.

FC docs ("Create a custom layer", 各运行时支持添加的特定目录; CONFIRMED): Python ``/opt/python``,
Node.js ``/opt/nodejs/node_modules``, every runtime but the custom ones ``/opt/bin`` on ``PATH``
and ``/opt/lib`` on ``LD_LIBRARY_PATH``; FC's Python runtime also puts
``/opt/python/lib/pythonX.Y/site-packages`` before ``/opt/python`` (its bootstrap's source).

Standard library only: the worker loads it by path (``bootstrap.py``).
"""

from __future__ import annotations

import os

__all__ = ["search_paths"]


def search_paths(opt: str, family: str, python_version: tuple[int, int] | None) -> dict[str, str]:
    """What the runtime family adds to its search paths for a layer tree seen at ``opt``:
    ``{"python": "a:b", "NODE_PATH": ..., "PATH": ..., "LD_LIBRARY_PATH": ...}`` (only the
    keys that apply)."""
    out: dict[str, str] = {}
    if family == "python" and python_version is not None:
        major, minor = python_version
        out["python"] = os.pathsep.join(
            [f"{opt}/python/lib/python{major}.{minor}/site-packages", f"{opt}/python"])
    if family == "nodejs":
        out["NODE_PATH"] = f"{opt}/nodejs/node_modules"
    if family != "custom":
        out["PATH"] = f"{opt}/bin"
        out["LD_LIBRARY_PATH"] = f"{opt}/lib"
    return out
