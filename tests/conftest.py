"""Suite-wide settings. Nothing in the suite may leave 127.0.0.1."""

from __future__ import annotations

import os
from pathlib import Path

# Read at import time by alibabacloud-credentials; its last resort queries ECS metadata.
os.environ["ALIBABA_CLOUD_ECS_METADATA_DISABLED"] = "true"

import pytest

try:
    from hypothesis import settings
except ImportError:  # the SDK matrix venvs (.ci/sdk-matrix) install no test extras
    pass
else:
    # Property tests check behaviour, not speed: on a loaded 2-core machine one example can
    # take longer than hypothesis's 200 ms default deadline, which made them fail on timing.
    settings.register_profile("deployer", deadline=None)
    settings.load_profile("deployer")

# --real-cloud and the other parity options (docs/parity.md)
pytest_plugins = ("tests.parity.plugin",)

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project_root() -> Path:
    """The repository root (holds s.yaml, functions/, templates/)."""
    return PROJECT_ROOT
