"""Fixtures of the CLI tests: a copy of the repository's application."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path, project_root: Path) -> Path:
    """A copy of the repository's s.yaml, functions/ and templates/ (tests may edit it)."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(project_root / "s.yaml", root / "s.yaml")
    shutil.copytree(project_root / "functions", root / "functions")
    shutil.copytree(project_root / "templates", root / "templates")
    return root
