"""The parity options of the suite (loaded by tests/conftest.py, so they work from any
directory): ``--real-cloud`` records the scenarios of tests/parity/recordings against
Alibaba Cloud (docs/parity.md)."""

from __future__ import annotations

from typing import Any

# tests/parity/test_recorder.py runs the mode's own pytest session in-process
pytest_plugins = ("pytester",)


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("parity", "parity with Alibaba Cloud (docs/parity.md)")
    group.addoption(
        "--real-cloud", action="store_true", default=False,
        help="run tests/parity's scenarios against Alibaba Cloud (FC 3.0, CloudFlow, STS, "
             "RAM) with the standard credentials chain and rewrite the recordings from the "
             "answers; creates and deletes its own uniquely named resources; skipped "
             "without credentials and always when CI is set")
    group.addoption(
        "--real-cloud-region", default=None, metavar="REGION",
        help="region of --real-cloud (default: ALIBABA_CLOUD_REGION_ID, else cn-hangzhou)")
    group.addoption(
        "--parity-record-dir", default=None, metavar="DIR",
        help="where --real-cloud writes recordings (default: tests/parity/recordings, in "
             "place, for review with git diff)")
