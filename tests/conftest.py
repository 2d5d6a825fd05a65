"""Suite-wide settings. Nothing in the suite may leave 127.0.0.1."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

# Read at import time by alibabacloud-credentials; its last resort queries ECS metadata.
os.environ["ALIBABA_CLOUD_ECS_METADATA_DISABLED"] = "true"

# The processes tests start (emulator daemons, `deploy`, nested pytest runs) import hundreds of
# the package's modules each. Under PYTHONDONTWRITEBYTECODE (CI sets it: no __pycache__ in the
# checkout) every one of them compiled those from source again, about 0.3 s of CPU per daemon;
# they share compiled files in a directory outside the checkout instead (docs/testing.md).
# So does this process from here on (the test modules and what they import: about 4.5 s of
# CPU per pytest worker once the directory is warm).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) and "PYTHONPYCACHEPREFIX" not in os.environ:
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(
        tempfile.gettempdir(), f"cloudflow-deployer-pycache-{os.getuid()}")
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]
    sys.dont_write_bytecode = False

# Tests press Ctrl-C on the processes they start (`deploy execute`, `dev`, `logs --follow`) and
# expect what a terminal gives them. A suite started as a shell's background job (`cmd &`
# without job control, or under nohup) ignores SIGINT, and ignored signals stay ignored
# across exec: those processes would never see the Ctrl-C. Python's own handler here makes
# them start with the default again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

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

# --real-cloud and the other parity options (docs/parity.md); --cpu-report (docs/testing.md)
pytest_plugins = ("tests.parity.plugin", "tests.cputime")

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project_root() -> Path:
    """The repository root (holds s.yaml, functions/, templates/)."""
    return PROJECT_ROOT


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` first (otherwise in collection order): the
    workers then share the long tests at the start and end together, instead of one running
    a long test alone at the end (docs/testing.md)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
