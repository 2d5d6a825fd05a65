"""Fixtures for the deploy workflow: a copy of the seed project and a CLI runner helper."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from deployer.cli.main import cli

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's application (s.yaml, functions/, templates/)."""
    root = tmp_path / "app"
    root.mkdir()
    shutil.copy(PROJECT_ROOT / "s.yaml", root / "s.yaml")
    shutil.copytree(PROJECT_ROOT / "functions", root / "functions")
    shutil.copytree(PROJECT_ROOT / "templates", root / "templates")
    return root


@dataclass
class Deploy:
    """Runs ``deploy -C <project> ... --target aliyun`` in-process (inside ``mock_cloud()``)."""

    project: Path
    runner: CliRunner

    def __call__(self, *args: str, target: str = "aliyun") -> Result:
        return self.runner.invoke(cli, ["-C", str(self.project), *args, "--target", target],
                                  catch_exceptions=False)

    def json(self, *args: str, code: int = 0, target: str = "aliyun") -> Any:
        result = self(*args, "--output", "json", target=target)
        assert result.exit_code == code, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def deploy(project: Path) -> Callable[..., Result]:
    return Deploy(project, CliRunner())
