"""Fixtures of the adversarial tests: an in-process emulator driven by the official SDKs."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Iterator

import pytest

from deployer.testing.environment import LocalCloud, mock_cloud
from deployer.testing.runtimes import EchoRuntime


@pytest.fixture
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud(runtime=EchoRuntime(), intercept=False) as c:
        yield c


@pytest.fixture
def zip_b64() -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("index.py", "def handler(event, context):\n    return event\n")
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture
def project(tmp_path):
    """A copy of the repository's application (s.yaml, functions/, templates/)."""
    import shutil
    from pathlib import Path

    source = Path(__file__).resolve().parents[2]
    root = tmp_path / "app"
    root.mkdir()
    shutil.copy(source / "s.yaml", root / "s.yaml")
    for folder in ("functions", "templates"):
        shutil.copytree(source / folder, root / folder)
    return root
