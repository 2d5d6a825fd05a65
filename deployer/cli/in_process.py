"""The in-process cloud the CLI targets while a test's ``mock_cloud()`` runs.

``deployer.testing`` hands its running cloud to the CLI with :func:`activate` (an ordinary
import of this module, so the dependency is one the import contracts see: the CLI never
imports ``deployer.testing``); the root group passes the innermost active one to
``AppContext`` (``AppContext.in_process``), and every command of that invocation — through
``CliRunner``, the ``cli_runner`` fixture or ``cli.main()`` in the same process — targets it:
``--target local`` connects to it (never to a background emulator, and never starts one), and
what commands would write under ``<project>/.deploy/`` goes to a per-project directory of the
cloud's temporary state (:meth:`InProcessCloud.workspace`). Outside ``mock_cloud()`` nothing is
active and the CLI behaves as usual. Standard library only: a CLI run pays nothing for it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["InProcessCloud", "activate", "innermost"]


@dataclass(frozen=True, slots=True)
class InProcessCloud:
    """What a CLI command needs to reach a cloud running in this process."""

    endpoint: str  # host:port on 127.0.0.1
    access_key_id: str
    access_key_secret: str
    account_id: str
    intercepts: bool  # SDK requests to real cloud hosts reach this cloud too
    workspace_root: Path
    admin_token: str = ""  # for its log endpoints (``deploy logs``)

    def workspace(self, project_dir: Path) -> Path:
        """The directory that stands in for ``<project_dir>/.deploy`` (build output, rendered
        flows, deployment records, locks) while this cloud is active; one per project."""
        resolved = Path(project_dir).resolve()
        digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
        return self.workspace_root / f"{resolved.name or 'project'}-{digest}" / ".deploy"


_lock = threading.Lock()
_active: list[InProcessCloud] = []


@contextmanager
def activate(cloud: InProcessCloud) -> Iterator[InProcessCloud]:
    """Make ``cloud`` the one CLI invocations target until the block ends (nested ones
    stack: the innermost wins)."""
    with _lock:
        _active.append(cloud)
    try:
        yield cloud
    finally:
        with _lock:
            for index in range(len(_active) - 1, -1, -1):
                if _active[index] is cloud:
                    del _active[index]
                    break


def innermost() -> InProcessCloud | None:
    """The innermost active in-process cloud, or None outside every ``mock_cloud()``."""
    with _lock:
        return _active[-1] if _active else None
