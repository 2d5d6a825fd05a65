"""pytest plugin (entry point ``deployer``): fixtures for testing against the local cloud.

``local_cloud`` runs an in-process emulator (virtual clock, temporary state, SDK traffic to
cloud hosts intercepted); ``fc_client``, ``ram_client``, ``sts_client`` are official SDK
clients pointed at it; ``cli_runner`` is a Click ``CliRunner`` whose ``deploy`` commands run
against that same cloud (``local_cloud.deploy_project(path)`` deploys a whole project into it).
"""

from __future__ import annotations

import os

os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from deployer.testing.environment import LocalCloud


@pytest.fixture
def local_cloud(tmp_path: Any) -> Iterator[LocalCloud]:
    """A running local cloud for one test (state under ``tmp_path``)."""
    # imported here, not with the plugin: pytest loads the plugin in every run of every
    # project installed beside the toolkit, most of which never ask for the local cloud
    from deployer.testing.environment import mock_cloud

    with mock_cloud(state_dir=tmp_path / "local-cloud") as cloud:
        yield cloud


@pytest.fixture
def fc_client(local_cloud: LocalCloud) -> Any:
    return local_cloud.fc_client()


@pytest.fixture
def ram_client(local_cloud: LocalCloud) -> Any:
    return local_cloud.ram_client()


@pytest.fixture
def sts_client(local_cloud: LocalCloud) -> Any:
    return local_cloud.sts_client()


@pytest.fixture
def cli_runner(local_cloud: LocalCloud) -> Any:
    """A Click ``CliRunner``; ``deploy`` commands invoked through it target ``local_cloud``
    (never a background emulator) and write nothing into the project directory."""
    from click.testing import CliRunner

    return CliRunner()
