"""The wire error for a state directory that cannot be written (disk full, read-only, I/O)."""

from __future__ import annotations

import errno
import sqlite3

from deployer.emulator.api import errors as e
from deployer.emulator.api.errors import ApiError

__all__ = ["storage_error"]

_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def storage_error(exc: BaseException, where: str) -> ApiError | None:
    """The wire error for a failure to write the state directory ``where`` (disk full,
    read-only, I/O error), or None when ``exc`` is something else."""
    reason = ""
    if isinstance(exc, sqlite3.OperationalError):
        name = getattr(exc, "sqlite_errorname", "")
        text = str(exc)
        if name.startswith("SQLITE_FULL") or "disk is full" in text:
            reason = "full"
        elif name.startswith("SQLITE_READONLY") or "readonly database" in text:
            reason = "read-only"
        elif name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")) or "disk I/O error" in text:
            reason = "io"
    elif isinstance(exc, OSError) and exc.errno is not None:
        reason = ("full" if exc.errno in _FULL else "read-only" if exc.errno in _READ_ONLY
                  else "io" if exc.errno == errno.EIO else "")
    if not reason:
        return None
    tail = (" Nothing of this request was saved; what was saved before is intact. The emulator "
            "keeps running: retry once the state directory is writable again.")
    if reason == "full":
        return e.StorageFull(f"the emulator cannot save its state: the disk holding {where} is "
                             f"full ({exc}).{tail}")
    if reason == "read-only":
        return e.StorageReadOnly(f"the emulator cannot save its state: {where} is read-only "
                                 f"({exc}).{tail}")
    return e.StorageError(f"the emulator cannot save its state in {where}: I/O error "
                          f"({exc}).{tail}")
