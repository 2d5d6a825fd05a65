"""The process limit of each function instance: FC allows 1,024 processes and threads per
instance (reference fc3-api.md §8, limits), so a fork bomb is refused early, not ended by the
timeout.

The kernel enforces it with a ``pids`` cgroup per instance (``pids.max``, which counts threads
too): in the cgroup v2 hierarchy the instance's own group (the one its memory limit lives in,
with ``+pids`` enabled beside ``+memory``), in v1 a group of the ``pids`` hierarchy that the
worker joins before any user code runs. A ``fork``, ``clone`` or new thread beyond it fails
with ``EAGAIN`` at once, whatever the language. Where no pids controller can be written, the
bound is ``RLIMIT_NPROC`` (``sandbox.py``), which only works under uid separation: the
emulator logs that the process limit is not enforced.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["MAX_PROCESSES", "PidsGroup", "PidsGroups"]

MAX_PROCESSES = 1024  # FC: processes + threads per instance


class PidsGroup:
    """The ``pids`` cgroup of one instance."""

    def __init__(self, path: Path, own: bool) -> None:
        self.path = path
        self._own = own  # a v1 group of its own (a v2 one is the memory group's, shared)

    def attach(self, pid: int) -> None:
        if self._own:
            (self.path / "cgroup.procs").write_text(str(pid))

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def close(self) -> None:
        if self._own:
            with contextlib.suppress(OSError):
                self.path.rmdir()


def _own_v1_pids_cgroup() -> Path | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return Path("/sys/fs/cgroup/pids") / path.lstrip("/")
    return None


class PidsGroups:
    """Where instances' pids groups are made (probed once)."""

    def __init__(self, v2_base: Path | None) -> None:
        """``v2_base``: the v2 group whose children hold the instances' memory limits."""
        self._v2 = v2_base is not None and self._enable_v2(v2_base)
        self._v1_base = None if self._v2 else self._probe_v1()

    @staticmethod
    def _enable_v2(base: Path) -> bool:
        try:
            if "pids" not in (base.parent / "cgroup.controllers").read_text().split():
                return False
            (base / "cgroup.subtree_control").write_text("+pids")
            return True
        except OSError:
            return False

    @staticmethod
    def _probe_v1() -> Path | None:
        own = _own_v1_pids_cgroup()
        if own is None or not own.is_dir():
            return None
        base = own / f"deployer-pids-{os.getpid()}"
        try:
            base.mkdir(exist_ok=True)
            probe = base / "probe"
            probe.mkdir(exist_ok=True)
            (probe / "pids.max").write_text(str(MAX_PROCESSES))
            probe.rmdir()
        except OSError:
            with contextlib.suppress(OSError):
                base.rmdir()
            return None
        return base

    @property
    def available(self) -> bool:
        return self._v2 or self._v1_base is not None

    def limit(self, instance_id: str, v2_group: Path | None,
              maximum: int = MAX_PROCESSES) -> PidsGroup | None:
        """The pids group of a new instance, capped at ``maximum`` (None when none can be
        made; ``v2_group``: the instance's v2 memory group, when there is one)."""
        try:
            if self._v2 and v2_group is not None:
                (v2_group / "pids.max").write_text(str(maximum))
                return PidsGroup(v2_group, own=False)
            if self._v1_base is not None:
                group = self._v1_base / instance_id
                group.mkdir()
                (group / "pids.max").write_text(str(maximum))
                return PidsGroup(group, own=True)
        except OSError:
            return None
        return None

    def close(self) -> None:
        if self._v1_base is not None:
            with contextlib.suppress(OSError):
                for child in self._v1_base.iterdir():
                    if child.is_dir():
                        child.rmdir()
                self._v1_base.rmdir()
