"""The toolkit's own retries (deployer/cloud/retry.py) against injected cloud faults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deployer.cloud.retry import RetryPolicy
from deployer.testing import LocalCloud, mock_cloud


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The back-off sleeps of every retry policy the CLI builds (none really sleeps)."""
    recorded: list[float] = []
    monkeypatch.setattr("deployer.cloud.connection.RetryPolicy",
                        lambda: RetryPolicy(sleep=recorded.append))
    return recorded


@pytest.fixture
def deployed(deploy, sleeps) -> Iterator[LocalCloud]:
    with mock_cloud() as cloud:
        assert deploy("up", "--yes").exit_code == 0
        sleeps.clear()
        yield cloud


def test_deploy_execute_survives_throttled_describe_execution(deploy, deployed, sleeps):
    with deployed.faults.inject("cloudflow", action="DescribeExecution", flow="MyWorkFlow",
                                error="Throttling", times=3) as fault:
        result = deploy.json("execute", "--delay", "5", "--name", "throttled")
        assert fault.fired == 3
    assert result["name"] == "throttled" and result["status"] == "Succeeded", result
    assert len(sleeps) == 3 and all(0 <= s <= 8 for s in sleeps)  # backed off, then polled on


def test_when_throttling_outlasts_the_retries_the_error_says_so(deploy, deployed, sleeps):
    deployed.faults.add("cloudflow", action="DescribeExecution", error="Throttling")
    result = deploy("execute", "--delay", "5", "--name", "starved")
    assert result.exit_code == 1, result.stderr
    assert "DescribeExecution failed: Throttling" in result.stderr
    assert "HTTP 429" in result.stderr and "Traceback" not in result.stderr
    assert len(sleeps) == 4  # five attempts
