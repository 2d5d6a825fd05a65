"""A function's ``nasConfig`` and ``ossMountConfig`` as the directories its instances mount.

FC mounts a NAS file system (``serverAddr`` ``<host>:<path>``) or an OSS bucket path at each
``mountDir``. Locally each one is a directory under the runtime's mount root, named after what
it mounts, so functions naming the same NAS path or bucket path share it, and it outlives
instances and restarts: ``nas/<host>/<path>`` and ``oss/<bucket>/<bucketPath>``
(docs/runtime.md, "NAS and OSS mounts"). An OSS mount point's ``readOnly`` is honoured; NAS
mounts are writable (FC's NAS mount points have no read-only switch).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.ports import MountPoint

__all__ = ["check_mounts", "function_mounts"]

_NAME = re.compile(r"[^A-Za-z0-9._-]")
#: Where FC lets a NAS or OSS mount point be [INFERRED from fc3's schema and FC's console]
_MOUNT_DIR = re.compile(r"/mnt/[A-Za-z0-9._/-]+|/home/[A-Za-z0-9._/-]+|/data[A-Za-z0-9._/-]*")


def _segments(path: str) -> list[str]:
    """``path``'s segments, each safe as a directory name (no ``..``, no separators)."""
    out = []
    for part in str(path).split("/"):
        if part in ("", ".", ".."):
            continue
        out.append(_NAME.sub("_", part))
    return out


def _points(config: Any) -> list[Mapping[str, Any]]:
    points = config.get("mountPoints") if isinstance(config, Mapping) else None
    return [p for p in points or () if isinstance(p, Mapping) and isinstance(
        p.get("mountDir"), str) and p["mountDir"].startswith("/")]


def check_mounts(opaque: Mapping[str, Any]) -> None:
    """InvalidValue for a mount point whose ``mountDir`` FC does not allow (or which goes up
    with ``..``): the sandbox mounts nothing over the system's own directories."""
    for key in ("nasConfig", "ossMountConfig"):
        config = opaque.get(key)
        points = config.get("mountPoints") if isinstance(config, Mapping) else None
        for i, point in enumerate(points or ()):
            where = point.get("mountDir") if isinstance(point, Mapping) else None
            if not isinstance(where, str) or not _MOUNT_DIR.fullmatch(where) or \
                    ".." in where.split("/"):
                raise InvalidValue(f"{key}.mountPoints[{i}].mountDir must be a directory "
                                   f"under /mnt/, /home/ or /data, got {where!r}",
                                   field=key)


def function_mounts(opaque: Mapping[str, Any]) -> tuple[MountPoint, ...]:
    """The mount points of a function's stored settings (module docstring), in their order."""
    mounts: list[MountPoint] = []
    for point in _points(opaque.get("nasConfig")):
        server = str(point.get("serverAddr") or "")
        host, _, path = server.partition(":")
        source = "/".join(["nas", *(_segments(host) or ["nas"]), *_segments(path)])
        mounts.append(MountPoint(source, point["mountDir"].rstrip("/") or "/"))
    for point in _points(opaque.get("ossMountConfig")):
        bucket = _segments(str(point.get("bucketName") or "")) or ["bucket"]
        source = "/".join(["oss", *bucket, *_segments(str(point.get("bucketPath") or ""))])
        mounts.append(MountPoint(source, point["mountDir"].rstrip("/") or "/",
                                 bool(point.get("readOnly"))))
    return tuple(mounts)
