"""FC's built-in Python packages, as far as this host has them: the worker's only site-packages.

FC's Python runtimes preinstall a documented set of modules (docs/runtime.md lists them, from
Function Compute's "Python runtime overview" pages). A worker's ``sys.path`` holds the code root,
the standard library and one *view* directory per runtime: symbolic links to those of the
built-in distributions that are installed in the emulator's environment, with their installed
dependencies (as on FC, where a built-in package's dependencies are importable too). Anything
else — the emulator's own packages included — is not importable, so a dependency missing from
the zip fails with ``ImportModuleError`` as it would on FC. Built-ins the host lacks are not
importable either; docs/runtime.md says so.

A second view, ``emulator``, holds what the worker itself needs (``time_machine`` for virtual
time); the bootstrap removes it from ``sys.path`` once loaded.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as metadata
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["FC_BUILTIN_PACKAGES", "PackageViews", "runtime_key"]

_COMMON_PY3 = (
    "oss2", "tablestore", "aliyun-fc2", "aliyun-python-sdk-ecs", "aliyun-python-sdk-vpc",
    "aliyun-python-sdk-rds", "aliyun-python-sdk-kms", "aliyun-mns", "aliyun-python-sdk-cdn",
    "aliyun-python-sdk-ram", "aliyun-python-sdk-sts", "aliyun-python-sdk-iot",
    "aliyun-log-python-sdk", "wand", "scrapy", "PyMySQL", "elasticsearch", "Pillow",
    "pyOpenSSL", "redis", "requests",
)
FC_BUILTIN_PACKAGES: dict[str, tuple[str, ...]] = {
    "python3.10": _COMMON_PY3,
    "python3.9": (*_COMMON_PY3, "pydatahub", "opencv-python", "numpy", "scipy", "matplotlib"),
    "python3": (*_COMMON_PY3, "pydatahub", "opencv-python", "numpy", "scipy", "matplotlib"),
    "python3.12": (
        "oss2", "alibabacloud_ecs20140526", "alibabacloud_vpc20160428",
        "alibabacloud_rds20140815", "alibabacloud_kms20160120", "alibabacloud-mns-open20220119",
        "alibabacloud_cdn20180510", "alibabacloud_ram20150501", "alibabacloud_sts20150401",
        "alibabacloud_iot20180120", "alibabacloud_sls20201230", "wand", "scrapy", "PyMySQL",
        "elasticsearch", "Pillow", "pyOpenSSL", "redis", "requests",
    ),
}
EMULATOR_PACKAGES = ("time-machine",)
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def runtime_key(runtime: str) -> str:
    return runtime if runtime in FC_BUILTIN_PACKAGES else "python3.10"


def _distribution(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _closure(names: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions among ``names`` and their required dependencies."""
    seen: dict[str, metadata.Distribution] = {}
    pending = list(names)
    while pending:
        dist = _distribution(pending.pop())
        if dist is None:
            continue
        key = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = dist
        for requirement in dist.requires or []:
            match = _NAME.match(requirement)
            if match and "extra ==" not in requirement.replace("extra==", "extra =="):
                pending.append(match.group(1))
    return list(seen.values())


def _entries(dist: metadata.Distribution) -> set[Path]:
    """The top-level files and directories a distribution installed (and its dist-info)."""
    base = Path(str(dist.locate_file("")))
    tops: set[Path] = set()
    for file in dist.files or []:
        parts = Path(str(file)).parts
        if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth"):
            continue
        if parts[0].endswith(".data"):
            continue
        candidate = base / parts[0]
        if candidate.exists() and not str(parts[0]).startswith("../"):
            tops.add(candidate)
    return tops


class PackageViews:
    """Builds (once per runtime key) ``<work_dir>/packages/<key>/`` link farms. Thread-safe."""

    def __init__(self, work_dir: Path) -> None:
        self._root = Path(work_dir) / "packages"
        self._lock = threading.Lock()
        self._built: dict[str, tuple[Path, list[str]]] = {}

    def view(self, key: str) -> tuple[Path, list[str]]:
        """(view directory, the real directories its links point into)."""
        with self._lock:
            if key not in self._built:
                names = EMULATOR_PACKAGES if key == "emulator" else FC_BUILTIN_PACKAGES[key]
                self._built[key] = self._build(key, names)
            return self._built[key]

    def _build(self, key: str, names: Iterable[str]) -> tuple[Path, list[str]]:
        target = self._root / key
        staging = self._root / f".{key}-{os.getpid()}-{threading.get_ident()}"
        staging.mkdir(parents=True, exist_ok=True)
        sources: set[str] = set()
        for dist in _closure(names):
            for entry in _entries(dist):
                link = staging / entry.name
                if not link.exists():
                    link.symlink_to(entry)
                    sources.add(str(entry.parent))
        with contextlib.suppress(FileNotFoundError):
            for old in target.iterdir():
                old.unlink()
            target.rmdir()
        os.replace(staging, target)
        for path in (self._root, target):
            path.chmod(0o755)
        return target, sorted(sources)
