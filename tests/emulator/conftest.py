from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Callable, Iterator

import pytest

from deployer.testing.environment import LocalCloud, mock_cloud
from deployer.testing.runtimes import EchoRuntime

HANDLER = "def handler(event, context):\n    return event\n"


def _make_zip(files: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in (files or {"index.py": HANDLER}).items():
            zf.writestr(name, text)
    return buf.getvalue()


@pytest.fixture
def make_zip() -> Callable[..., bytes]:
    return _make_zip


@pytest.fixture
def zip_b64() -> str:
    return base64.b64encode(_make_zip()).decode()


@pytest.fixture
def runtime() -> EchoRuntime:
    return EchoRuntime()


@pytest.fixture
def cloud(runtime: EchoRuntime) -> Iterator[LocalCloud]:
    with mock_cloud(runtime=runtime, intercept=False) as c:
        yield c
