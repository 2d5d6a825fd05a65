"""The toolkit's own retries (deployer/cloud/retry.py) against injected cloud faults."""

from __future__ import annotations

from deployer.cloud.retry import RetryPolicy
from deployer.testing import mock_cloud


def test_deploy_execute_survives_throttled_describe_execution(deploy, monkeypatch):
    sleeps: list[float] = []
    monkeypatch.setattr("deployer.cloud.connection.RetryPolicy",
                        lambda: RetryPolicy(sleep=sleeps.append))
    with mock_cloud() as cloud:
        assert deploy("up", "--yes").exit_code == 0
        with cloud.faults.inject("cloudflow", action="DescribeExecution", flow="MyWorkFlow",
                                 error="Throttling", times=3) as fault:
            result = deploy.json("execute", "--delay", "5", "--name", "throttled")
            fired = fault.fired
    assert fired == 3
    assert result["name"] == "throttled" and result["status"] == "Succeeded", result
    assert len(sleeps) == 3 and all(0 <= s <= 8 for s in sleeps)  # backed off, then polled on


def test_when_throttling_outlasts_the_retries_the_error_says_so(deploy, monkeypatch):
    sleeps: list[float] = []
    monkeypatch.setattr("deployer.cloud.connection.RetryPolicy",
                        lambda: RetryPolicy(sleep=sleeps.append))
    with mock_cloud() as cloud:
        assert deploy("up", "--yes").exit_code == 0
        cloud.faults.add("cloudflow", action="DescribeExecution", error="Throttling")
        result = deploy("execute", "--delay", "5", "--name", "starved")
    assert result.exit_code == 1, result.stderr
    assert "DescribeExecution failed: Throttling" in result.stderr
    assert "HTTP 429" in result.stderr and "Traceback" not in result.stderr
    assert len(sleeps) == 4  # five attempts
