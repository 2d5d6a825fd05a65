"""Which in-process cloud is active: the hook the ``deploy`` CLI uses to stay inside the mock.

``mock_cloud()`` pushes an :class:`ActiveCloud` here on entry and pops it on exit. The CLI's
``AppContext`` looks for this module in ``sys.modules`` (so a CLI run outside any test never
imports ``deployer.testing``); when a cloud is active, every ``deploy`` command run in the same
process — through ``CliRunner``, the ``cli_runner`` fixture or ``cli.main()`` — talks to that
cloud (never to a background emulator, and never starts one), and keeps the state it would
write under ``<project>/.deploy/`` in a per-project directory of the cloud's temporary state
(:meth:`ActiveCloud.workspace`). This module imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ActiveCloud", "current", "pop", "push"]


@dataclass(frozen=True, slots=True)
class ActiveCloud:
    """What a CLI command needs to reach a running in-process cloud."""

    endpoint: str  # host:port on 127.0.0.1
    access_key_id: str
    access_key_secret: str
    account_id: str
    intercepts: bool  # SDK requests to real cloud hosts reach this cloud too
    workspace_root: Path
    admin_token: str = ""  # for its log endpoints (``deploy logs``)

    @classmethod
    def of(cls, cloud: Any, *, intercepts: bool = True) -> ActiveCloud:
        """The handle of a :class:`~deployer.testing.LocalCloud` (its workspaces live under its
        state directory, so they go when the cloud's temporary state goes)."""
        return cls(cloud.endpoint, cloud.access_key_id, cloud.access_key_secret,
                   cloud.account_id, intercepts, Path(cloud.state_dir) / "projects",
                   cloud.admin_token)

    def workspace(self, project_dir: Path) -> Path:
        """The directory that stands in for ``<project_dir>/.deploy`` (build output, rendered
        flows, deployment records, locks) while this cloud is active; one per project."""
        resolved = Path(project_dir).resolve()
        digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
        return self.workspace_root / f"{resolved.name or 'project'}-{digest}" / ".deploy"


_lock = threading.Lock()
_stack: list[ActiveCloud] = []


def push(cloud: ActiveCloud) -> None:
    """Make ``cloud`` the active one (until :func:`pop`); nested clouds stack."""
    with _lock:
        _stack.append(cloud)


def pop(cloud: ActiveCloud) -> None:
    """Remove ``cloud`` (the innermost active one before it becomes active again)."""
    with _lock:
        for index in range(len(_stack) - 1, -1, -1):
            if _stack[index] is cloud:
                del _stack[index]
                return


def current() -> ActiveCloud | None:
    """The innermost active cloud, or None outside every ``mock_cloud()``."""
    with _lock:
        return _stack[-1] if _stack else None
