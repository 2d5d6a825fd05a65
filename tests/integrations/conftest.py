"""Shared fixtures of the integration tests: one in-process cloud for the module."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from deployer.testing import LocalCloud, mock_cloud


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud() as local:
        yield local


@pytest.fixture
def fnf(cloud: LocalCloud):  # type: ignore[no-untyped-def]
    cloud.clear_mocks()
    return cloud.fnf_client()


@pytest.fixture
def project(tmp_path: Path, project_root: Path) -> Path:
    """A copy of the repository's s.yaml, functions/ and templates/ (tests may edit it)."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(project_root / "s.yaml", root / "s.yaml")
    shutil.copytree(project_root / "functions", root / "functions")
    shutil.copytree(project_root / "templates", root / "templates")
    return root
