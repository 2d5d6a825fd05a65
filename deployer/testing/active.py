"""How ``mock_cloud()`` hands its cloud to the ``deploy`` CLI of the same process.

The CLI does not look for tests: ``mock_cloud()`` passes its cloud to
:func:`deployer.cli.in_process.activate` (as :func:`handle` describes it) for as long as it
runs, and every ``deploy`` command run meanwhile in this process — through ``CliRunner``, the
``cli_runner`` fixture or ``cli.main()`` — targets that cloud (see that module).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deployer.cli.in_process import InProcessCloud, activate, innermost

__all__ = ["InProcessCloud", "activate", "handle", "innermost"]


def handle(cloud: Any, *, intercepts: bool = True) -> InProcessCloud:
    """What the CLI needs of a :class:`~deployer.testing.LocalCloud` (its workspaces live
    under its state directory, so they go when the cloud's temporary state goes)."""
    return InProcessCloud(cloud.endpoint, cloud.access_key_id, cloud.access_key_secret,
                          cloud.account_id, intercepts, Path(cloud.state_dir) / "projects",
                          cloud.admin_token)
