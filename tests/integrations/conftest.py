"""Shared fixtures of the integration tests: one in-process cloud for the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deployer.testing import LocalCloud, mock_cloud


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud() as local:
        yield local


@pytest.fixture
def fnf(cloud: LocalCloud):  # type: ignore[no-untyped-def]
    cloud.clear_mocks()
    return cloud.fnf_client()
