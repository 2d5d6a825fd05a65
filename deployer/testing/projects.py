"""Deploy a whole project (s.yaml, functions, flows) into an in-process cloud from a test.

:func:`deploy_project` runs ``deploy up --yes --output json`` in this process, exactly as a user
would run it, while the cloud is active: the CLI then targets the in-process cloud (see
:mod:`deployer.cli.in_process`) and writes its build output and deployment record under
:func:`workspace`, never into the project directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deployer.testing.active import handle, innermost

if TYPE_CHECKING:
    from deployer.testing.environment import LocalCloud

__all__ = ["DeployedProject", "ProjectDeployError", "deploy_project", "workspace"]


class ProjectDeployError(AssertionError):
    """``deploy up`` failed; the message carries its exit code and everything it printed on
    stderr (diagnostics, ``Error:`` and ``Hint:`` lines)."""

    def __init__(self, exit_code: int, stderr: str) -> None:
        super().__init__(f"deploy up exited {exit_code}:\n{stderr.rstrip()}")
        self.exit_code = exit_code
        self.stderr = stderr


@dataclass(frozen=True, slots=True)
class DeployedProject:
    """What ``deploy up --output json`` reported: every resource with its ARN and action."""

    account_id: str
    region: str
    write_calls: int
    resources: tuple[dict[str, Any], ...]
    record: Path
    document: dict[str, Any] = field(repr=False)

    def arn(self, name: str) -> str:
        """The ARN of the resource ``name`` (function, role, policy or flow); KeyError if the
        deploy did not include it."""
        for resource in self.resources:
            if resource["name"] == name:
                return str(resource["arn"])
        raise KeyError(name)


def workspace(cloud: LocalCloud, project_dir: Path) -> Path:
    """The directory standing in for ``<project_dir>/.deploy`` while ``cloud`` is active."""
    return handle(cloud).workspace(project_dir)


def deploy_project(cloud: LocalCloud, project_dir: Path, *, manifest: str = "s.yaml",
                   region: str | None = None, target: str = "local") -> DeployedProject:
    """Package, plan and deploy the project at ``project_dir`` into ``cloud`` (``deploy up
    --yes``): its functions, each flow's execution role and policy, and its flows.

    Runs in this process and returns when everything is deployed (a few hundred milliseconds
    for the seed project; ``requirements.txt`` files are installed with pip first). Call it
    inside the ``mock_cloud()`` block (or with the ``local_cloud`` fixture) that made
    ``cloud``. ``region`` defaults to the manifest's. Raises :class:`ProjectDeployError` with
    the CLI's diagnostics when ``deploy up`` fails (invalid s.yaml or flow: exit 3).
    """
    from click.testing import CliRunner

    from deployer.cli.main import cli

    active = innermost()
    if active is None or active.endpoint != cloud.endpoint:
        raise RuntimeError("deploy_project() deploys into an active cloud: call it inside the "
                           "mock_cloud() block (or the local_cloud fixture) that made it")

    args = ["-C", str(project_dir), "-t", manifest, "up", "--yes", "--output", "json",
            "--target", target]
    if region:
        args += ["--region", region]
    result = CliRunner().invoke(cli, args)
    if result.exit_code != 0:
        raise ProjectDeployError(result.exit_code, result.stderr)
    document = json.loads(result.stdout)
    return DeployedProject(
        account_id=document["account_id"], region=document["region"],
        write_calls=int(document["write_calls"]),
        resources=tuple(document["resources"]), record=Path(document["record"]),
        document=document)
