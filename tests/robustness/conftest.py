"""Fixtures of the adversarial tests: an in-process emulator driven by the official SDKs."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Iterator

import pytest

from deployer.testing.environment import LocalCloud, mock_cloud
from deployer.testing.runtimes import EchoRuntime
from tests.deploy.conftest import project  # noqa: F401 (a copy of the application)


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

