"""A state directory the emulator cannot use, said plainly with the way out.

Two causes reach users: a directory that cannot be written (a read-only file system, no
permission, no space left) and a damaged database (``emulator.db`` that SQLite cannot read).
:func:`check_writable` is run before anything is started on a directory;
:func:`damaged_database` turns the store's :class:`~deployer.emulator.store.errors
.DatabaseDamaged` into the same error. Each carries a ``hint``: what to run or change.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["StateDirUnusable", "check_writable", "damaged_database", "unwritable"]

_PROBE = ".write-probe"


class StateDirUnusable(RuntimeError):
    """The emulator cannot use its state directory; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def line(self) -> str:
        """One log line with both (what a daemon's caller shows from its log)."""
        return f"Error: {self.message} Hint: {self.hint}"


def check_writable(state_dir: Path) -> None:
    """Raise :class:`StateDirUnusable` unless ``state_dir`` (created if missing) can be
    written: a file is created and removed in it."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        # a name of this process's own: commands started together probe at the same time
        fd, probe = tempfile.mkstemp(prefix=_PROBE, dir=state_dir)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise unwritable(state_dir, exc) from None


def unwritable(state_dir: Path, exc: OSError) -> StateDirUnusable:
    """The error for an ``OSError`` met while writing ``state_dir``."""
    elsewhere = ("use another state directory (--state-dir DIR, or -C to a project on a "
                 "writable disk)")
    if exc.errno == errno.EROFS:
        return StateDirUnusable(
            f"the emulator's state directory {state_dir} is on a read-only file system.",
            f"{elsewhere}, or make that file system writable.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return StateDirUnusable(
            f"the emulator's state directory {state_dir} cannot be written: permission "
            f"denied ({exc.filename or state_dir}).",
            f"give your user write access to it, or {elsewhere}.")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StateDirUnusable(
            f"no space is left for the emulator's state directory {state_dir}.",
            f"free some space on that disk, or {elsewhere}.")
    return StateDirUnusable(
        f"the emulator's state directory {state_dir} cannot be written: "
        f"{exc.strerror or exc}.", elsewhere + ".")


def damaged_database(state_dir: Path, detail: str) -> StateDirUnusable:
    """The error for a database SQLite cannot read."""
    return StateDirUnusable(
        f"the emulator's database {state_dir / 'emulator.db'} is damaged and cannot be read "
        f"({detail}).",
        f"run `deploy emulator reset --yes --state-dir {state_dir}` to delete it and start "
        "afresh (every function, flow, role and execution in it is lost; the account and "
        "keys stay), or restore it from a copy.")
