"""One deploy at a time per project: an advisory lock on ``.deploy/deploy.lock``.

``deploy up`` and ``deploy down`` package, plan and apply while holding it, so two processes
never interleave their writes to the build directory, the cloud and the deployment record (a
record rewritten from a stale copy would forget what the other process created). The second
process fails at once with a clear error instead of waiting or racing. The lock is released by
the operating system when its holder exits, even on ``kill -9``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from deployer.errors import OperationError

__all__ = ["DeployLockedError", "project_lock"]

LOCK_NAME = "deploy.lock"


class DeployLockedError(OperationError):
    """Another process holds the project's deploy lock."""


@contextlib.contextmanager
def project_lock(deploy_dir: Path, command: str) -> Iterator[None]:
    """Hold ``deploy_dir/deploy.lock`` for the block; ``command`` is written into it so a
    second process can say who holds it.

    Never blocks: raises :class:`DeployLockedError` (exit 1) when another process holds the
    lock, OperationError when the directory cannot be written. Where ``fcntl`` is missing
    (Windows) the block runs unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - POSIX only
        yield
        return
    path = deploy_dir / LOCK_NAME
    try:
        deploy_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OperationError(f"cannot create the lock file {path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise DeployLockedError(
                f"another deploy is running in this project ({holder})",
                hint=f"wait for it to finish, then run `deploy {command}` again; nothing was "
                "changed") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"`deploy {command}`, pid {os.getpid()}".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
