"""Fixtures of the parity tests: the emulator the recordings replay against, and the target
``--real-cloud`` records from."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from deployer.emulator.clock import SystemClock
from deployer.testing import mock_cloud
from tests.parity.recording import RECORDINGS_DIR
from tests.parity.schema import SharedRules, load_shared_rules
from tests.parity.targets import TARGET_ENV, ChainTarget, LocalTarget, Target, skip_reason


@pytest.fixture(scope="session")
def shared_rules() -> SharedRules:
    return load_shared_rules()


@pytest.fixture(scope="package")
def parity_emulator() -> Iterator[LocalTarget]:
    """The in-process emulator on the real clock: recordings are real-time traces (a Wait
    the cloud spends in real time must not be skipped by a virtual clock). Package scope:
    an enclosing mock_cloud() turns every `deploy` command of the process to it, so it must
    not outlive these tests (a later `deploy emulator start` in the same worker was refused)."""
    with mock_cloud(clock=SystemClock(), intercept=False) as cloud:
        yield LocalTarget(cloud)


def real_cloud_region(config: pytest.Config) -> str:
    return (config.getoption("--real-cloud-region")
            or os.environ.get("ALIBABA_CLOUD_REGION_ID") or "cn-hangzhou")


@pytest.fixture(scope="package")
def real_cloud(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The cloud ``--real-cloud`` records from (skips when it may not run: see
    ``targets.skip_reason``); with ``DEPLOYER_PARITY_TARGET=emulator``, ``mock_cloud()``
    answers in its place through the very same credentials chain and endpoints."""
    reason = skip_reason(request.config.getoption("--real-cloud"))
    if reason:
        pytest.skip(reason)
    region = real_cloud_region(request.config)
    if os.environ.get(TARGET_ENV) == "emulator":
        with mock_cloud(clock=SystemClock(), region=region):
            yield ChainTarget(region, against="emulator")
        return
    yield ChainTarget(region)


@pytest.fixture(scope="session")
def record_dir(request: pytest.FixtureRequest) -> Path:
    """Where recordings go; answers of the emulator never overwrite the committed ones."""
    given = request.config.getoption("--parity-record-dir")
    enabled = request.config.getoption("--real-cloud")
    emulated = enabled and os.environ.get(TARGET_ENV) == "emulator"
    if emulated and (given is None or Path(given).resolve() == RECORDINGS_DIR):
        pytest.fail(f"{TARGET_ENV}=emulator records the emulator's answers: give "
                    "--parity-record-dir outside tests/parity/recordings", pytrace=False)
    return Path(given).resolve() if given else RECORDINGS_DIR
