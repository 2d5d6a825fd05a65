"""The one routing decision (deployer/emulator/runtime/routing.py), host by host: what is routed
to the emulator, what passes, and what is refused with which error. No request is made."""

from __future__ import annotations

import pytest

from deployer.emulator.runtime.routing import (
    EMULATED_HOSTS,
    CloudEndpointNotEmulated,
    Routing,
    UnmockedRequestError,
)

LOCAL = "127.0.0.1:9125"

EMULATED = [
    "fcv3.cn-hangzhou.aliyuncs.com",  # FC 3.0 control plane
    "1234567890123456.cn-shanghai.fc.aliyuncs.com",  # FC data plane
    "1234567890123456.cn-shanghai-internal.fc.aliyuncs.com",
    "cn-heyuan-acdr-1.fc.aliyuncs.com", "fc.ap-southeast-1.aliyuncs.com",
    "cn-hangzhou.fnf.aliyuncs.com", "fnf.ap-southeast-1.aliyuncs.com",  # CloudFlow
    "ram.aliyuncs.com",
    "sts.aliyuncs.com", "sts.cn-hangzhou.aliyuncs.com", "sts-vpc.cn-hangzhou.aliyuncs.com",
    "my-project.cn-hangzhou.log.aliyuncs.com",  # Log Service: <project>.<region>.log
    "cn-hangzhou.log.aliyuncs.com",  # Log Service without a project: CreateProject
    "FCV3.CN-HANGZHOU.ALIYUNCS.COM", "ram.aliyuncs.com.",  # case and a trailing dot
]
NOT_EMULATED = {  # host -> the service the error names
    "oss-cn-hangzhou.aliyuncs.com": "oss",
    "bucket.oss-cn-hangzhou-internal.aliyuncs.com": "oss",
    "dashscope.aliyuncs.com": "dashscope",
    "ecs.aliyuncs.com": "ecs",
    "ecs-cn-hangzhou.aliyuncs.com": "ecs",
    "kms.cn-hangzhou.aliyuncs.com": "kms",
    "vpc.aliyuncs.com": "vpc",
    "fcv3.cn-hangzhou.aliyuncs.com.evil.aliyun.com": "evil",  # emulated names, not the host
}


@pytest.mark.parametrize("host", EMULATED)
def test_emulated_endpoints_go_to_the_local_endpoint(host):
    routing = Routing({EMULATED_HOSTS: LOCAL})
    assert routing.route(host) == LOCAL
    assert routing.target(f"https://{host}/2023-03-30/functions?limit=1#x") == \
        f"http://{LOCAL}/2023-03-30/functions?limit=1"
    assert routing.target(f"http://{host}") == f"http://{LOCAL}/"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]"])
def test_loopback_passes_unchanged_under_every_policy(host):
    for routing in (Routing({EMULATED_HOSTS: LOCAL}), Routing({}, other_hosts=None)):
        assert routing.route(host) is None
    assert Routing({}).target("http://127.0.0.1:8080/x") is None


@pytest.mark.parametrize(("host", "service"), NOT_EMULATED.items())
def test_other_alibaba_cloud_endpoints_are_refused_naming_the_service(host, service):
    for routing in (Routing({EMULATED_HOSTS: LOCAL}), Routing({}, other_hosts=None)):
        with pytest.raises(CloudEndpointNotEmulated) as info:
            routing.target(f"https://{host}/x")
        message = str(info.value)
        assert f"https://{host}/x" in message
        assert f"does not serve the Alibaba Cloud service '{service}' ({host})" in message
        assert "Function Compute, CloudFlow, RAM, STS and Log Service" in message
        assert isinstance(info.value, UnmockedRequestError)  # mock_cloud()'s error, too


def test_the_ecs_metadata_service_is_refused_with_where_credentials_come_from():
    with pytest.raises(CloudEndpointNotEmulated, match="ECS instance metadata") as info:
        Routing({}, other_hosts=None).route("100.100.100.200")
    assert "ALIBABA_CLOUD_ACCESS_KEY_ID" in str(info.value)


def test_other_hosts_follow_the_routing_policy():
    with pytest.raises(UnmockedRequestError, match=r"https://example\.com/a blocked") as info:
        Routing({EMULATED_HOSTS: LOCAL}).target("https://example.com/a")
    assert type(info.value) is UnmockedRequestError
    assert Routing({EMULATED_HOSTS: LOCAL}, other_hosts=None).target("https://example.com/") \
        is None

    def refuse(host: str, url: str | None) -> Exception:
        return PermissionError(f"{host} {url}")

    with pytest.raises(PermissionError, match=r"10\.1\.2\.3 None"):
        Routing({}, other_hosts=refuse).route("10.1.2.3")


def test_an_endpoint_map_routes_only_its_own_patterns():
    routing = Routing({r"ram\.aliyuncs\.com": "127.0.0.1:1", r"api\.example\.com": "127.0.0.1:2"})
    assert routing.target("https://api.example.com/v1") == "http://127.0.0.1:2/v1"
    assert routing.route("ram.aliyuncs.com") == "127.0.0.1:1"
    with pytest.raises(CloudEndpointNotEmulated, match="'sts'"):
        routing.route("sts.aliyuncs.com")  # emulated elsewhere, not by this map
    with pytest.raises(UnmockedRequestError):
        routing.route("www.example.com")


class _InProcess:
    """An in-process endpoint as the routing sees one (it is never called here)."""

    address = "127.0.0.1:9125"

    def send(self, adapter: object, request: object, stream: bool, timeout: object) -> None:
        return None

    def request(self, session: object, method: str, url: str, options: dict) -> None:
        return None


def test_in_process_endpoints_and_addresses():
    local = _InProcess()
    routing = Routing({EMULATED_HOSTS: local}, addresses={"127.0.0.1:9125": local})
    assert routing.resolve("https://cn-hangzhou.fnf.aliyuncs.com/?Action=X") is local
    assert routing.resolve("http://127.0.0.1:9125/2023-03-30/functions") is local  # loopback
    assert routing.resolve("http://127.0.0.1:9126/") is None  # another port: out as is
    # over HTTP (what the endpoint declines, or target()): its address, same path and query
    assert routing.target("https://ram.aliyuncs.com/?Action=GetRole&x=1") == \
        "http://127.0.0.1:9125/?Action=GetRole&x=1"
    with pytest.raises(CloudEndpointNotEmulated, match="'oss'"):
        routing.resolve("https://oss-cn-hangzhou.aliyuncs.com/bucket")
    with pytest.raises(UnmockedRequestError):  # refusals are not remembered
        routing.resolve("https://example.com/")
    with pytest.raises(UnmockedRequestError):
        routing.resolve("https://example.com/again")
