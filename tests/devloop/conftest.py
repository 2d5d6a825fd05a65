"""Fixtures of the developer-loop tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from deployer.emulator import daemon
from tests.devloop.support import copy_seed_app


@pytest.fixture
def app(tmp_path: Path):
    """A copy of the seed app; a background emulator a test started in it is stopped after."""
    root = copy_seed_app(tmp_path)
    yield root
    daemon.stop(root / ".deploy" / "emulator")
