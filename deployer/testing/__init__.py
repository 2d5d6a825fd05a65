"""Test helpers for projects deploying to Function Compute and CloudFlow (moto-style).

``mock_cloud()`` runs the local cloud in-process and routes the official SDKs (and every
``deploy`` command run in the same process) to it, with :mod:`deployer.testing.routing`, which
any process can install for its own endpoint map; ``LocalCloud.deploy_project(path)`` deploys
a whole project into it, as ``deploy up`` does;
``invoke_handler`` runs one handler in-process with a fake context; ``EchoRuntime`` stands in
for the process runtime where handlers need not run.
"""

from __future__ import annotations

import os

# The credentials chain reads this at import time; its last resort queries the ECS metadata
# address, which tests must never do.
os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deployer.testing.environment import LocalCloud, UnmockedRequestError, mock_cloud
    from deployer.testing.handlers import FakeContext, invoke_handler
    from deployer.testing.projects import DeployedProject, ProjectDeployError
    from deployer.testing.runtimes import EchoRuntime

# Imported on first use: the package's pytest plugin (deployer.testing.pytest_plugin) is
# loaded by every pytest run in an environment that has the toolkit, and importing it must not
# import the emulator.
_MODULES = {
    "LocalCloud": "environment", "UnmockedRequestError": "environment",
    "mock_cloud": "environment", "FakeContext": "handlers", "invoke_handler": "handlers",
    "DeployedProject": "projects", "ProjectDeployError": "projects",
    "EchoRuntime": "runtimes",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = [
    "DeployedProject",
    "EchoRuntime",
    "FakeContext",
    "LocalCloud",
    "ProjectDeployError",
    "UnmockedRequestError",
    "invoke_handler",
    "mock_cloud",
]
