"""Unpack a function's code zip once per code checksum, atomically and safely.

Layout: ``<work_dir>/code/<checksum>/`` holds the unpacked zip, read-only (files 0444,
directories 0555), like FC's ``/code`` mount. Unpacking goes to a private temporary directory
that is renamed into place, so a reader never sees a half-written tree and two unpackers of
the same checksum (threads or processes) race harmlessly: the first rename wins.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import zipfile
from pathlib import Path, PurePosixPath

from deployer.emulator.runtime.model import RuntimeUnavailableError

__all__ = ["CodeCache", "CodePackageError", "make_read_only"]

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class CodePackageError(RuntimeUnavailableError):
    """The stored code zip cannot be unpacked (corrupt, or a member escapes the code root)."""


class CodeCache:
    """Content-addressed store of unpacked code trees under ``<work_dir>/code``. Thread-safe."""

    def __init__(self, work_dir: Path) -> None:
        self._root = Path(work_dir) / "code"
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @property
    def root(self) -> Path:
        """``<work_dir>/code``: where unpacked trees live."""
        return self._root

    def ensure(self, checksum: str, zip_path: Path) -> Path:
        """Return the code root for ``checksum``, unpacking ``zip_path`` on first use.

        Raises :class:`CodePackageError` for an unreadable zip or a member whose path would land
        outside the code root (absolute, ``..``, drive letters).
        """
        target = self._root / _directory_name(checksum)
        if target.is_dir():
            return target
        with self._lock:
            lock = self._locks.setdefault(target.name, threading.Lock())
        with lock:
            if not target.is_dir():
                self._unpack(Path(zip_path), target)
        return target

    def _unpack(self, zip_path: Path, target: Path) -> None:
        self._root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=self._root))
        try:
            _extract(zip_path, staging)
            make_read_only(staging)
            try:
                os.rename(staging, target)
            except OSError:
                if not target.is_dir():  # not a lost race: a real failure
                    raise
            else:
                staging = target
                target.chmod(0o555)
        finally:
            if staging != target and staging.exists():
                _remove_tree(staging)


def _directory_name(checksum: str) -> str:
    if _SAFE_NAME.match(checksum) and checksum not in {".", ".."}:
        return checksum
    return "sha256-" + hashlib.sha256(checksum.encode("utf-8")).hexdigest()


def _member_path(root: Path, name: str) -> Path | None:
    """Where a zip member goes under ``root``; None for directory entries; raises if unsafe."""
    normalized = name.replace("\\", "/")
    parts = [p for p in PurePosixPath(normalized).parts if p not in ("", ".")]
    unsafe = (
        normalized.startswith("/")
        or ".." in parts
        or (parts and re.match(r"^[A-Za-z]:", parts[0]) is not None)
    )
    if unsafe:
        raise CodePackageError(f"code zip member '{name}' would be written outside the code root")
    if not parts or normalized.endswith("/"):
        return None
    return root.joinpath(*parts)


def _extract(zip_path: Path, root: Path) -> None:
    try:
        with zipfile.ZipFile(zip_path) as archive:
            for info in archive.infolist():
                destination = _member_path(root, info.filename)
                if destination is None:
                    if info.filename.strip("/"):
                        (root / info.filename.strip("/")).mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as source, open(destination, "wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
                if (info.external_attr >> 16) & 0o111:  # executable in the zip (bootstrap...)
                    destination.chmod(0o755)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise CodePackageError(f"cannot unpack code zip {zip_path}: {exc}") from exc


def make_read_only(root: Path) -> None:
    for directory, dirnames, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(directory, name)
            mode = os.stat(path).st_mode
            os.chmod(path, 0o555 if mode & stat.S_IXUSR else 0o444)
        for name in dirnames:
            os.chmod(os.path.join(directory, name), 0o555)


def _remove_tree(root: Path) -> None:
    for directory, dirnames, _ in os.walk(root):
        os.chmod(directory, 0o755)
        for name in dirnames:
            os.chmod(os.path.join(directory, name), 0o755)
    shutil.rmtree(root, ignore_errors=True)
