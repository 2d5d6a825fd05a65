"""The cloud's documented quotas (``--throttle cloud``), on an injected monotonic clock."""

from __future__ import annotations

import pytest

from deployer.emulator.services.errors import Quota, QuotaExceeded
from deployer.emulator.services.quotas import CloudQuotas


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _admitted(quotas: CloudQuotas, action: str, calls: int) -> int:
    ok = 0
    for _ in range(calls):
        try:
            quotas.admit("acct", "cn-hangzhou", "cloudflow", action)
            ok += 1
        except QuotaExceeded as exc:
            assert exc.quota is Quota.API_RATE and exc.retry_after is not None
    return ok


def test_cloudflow_token_buckets_per_operation():
    ticks = Ticks()
    quotas = CloudQuotas("cloud", monotonic=ticks)
    assert _admitted(quotas, "DescribeExecution", 60) == 50  # a burst of 50
    assert _admitted(quotas, "StartExecution", 150) == 100  # its own bucket of 100
    assert _admitted(quotas, "ListFlows", 20) == 10  # "other operations": 10 each
    assert _admitted(quotas, "DescribeFlow", 20) == 10
    ticks.now += 1.0
    assert _admitted(quotas, "DescribeExecution", 10) == 5  # refilled at 5/s
    assert _admitted(quotas, "ListFlows", 10) == 2  # at 2/s
    with pytest.raises(QuotaExceeded) as info:
        quotas.admit("acct", "cn-hangzhou", "cloudflow", "ListFlows")
    assert info.value.retry_after == pytest.approx(0.5)
    assert _admitted(quotas, "ListFlows", 1) == 0
    quotas.admit("other-account", "cn-hangzhou", "cloudflow", "ListFlows")  # per account
    quotas.admit("acct", "cn-shanghai", "cloudflow", "ListFlows")  # and region


def test_fc_instances_and_the_off_mode():
    quotas = CloudQuotas("cloud", fc_instances=2)
    with quotas.instance("a", "r"), quotas.instance("a", "r"):
        with pytest.raises(QuotaExceeded) as info, quotas.instance("a", "r"):
            pass
        assert info.value.quota is Quota.INSTANCES
        with quotas.instance("a", "other-region"):
            pass
    with quotas.instance("a", "r"):  # released again
        pass
    quotas.set_mode("off")
    assert _admitted(quotas, "ListFlows", 100) == 100
    quotas.admit("acct", "cn-hangzhou", "fc", "GetFunction")  # FC has no API buckets
    with pytest.raises(ValueError):
        CloudQuotas("strict")
