"""The typed cloud clients against the emulator (through mock_cloud's real endpoints), and
retries against a loopback server that answers 503 / 429."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from deployer.cloud.cloudflow import CloudFlowClient
from deployer.cloud.connection import (
    CloudConnection,
    Endpoints,
    StaticKeys,
    default_credential,
)
from deployer.cloud.errors import CloudClientError, CloudServerError, CloudThrottledError
from deployer.cloud.fc import FunctionComputeClient, FunctionConfig
from deployer.cloud.ram import RamClient
from deployer.cloud.retry import RetryPolicy
from deployer.cloud.sts import get_caller_identity
from deployer.core import roles
from deployer.testing import mock_cloud

FLOW = """Type: StateMachine
Name: Tiny
SpecVersion: v1
StartAt: Hello
States:
  - Type: Pass
    Name: Hello
    End: true
"""


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", source)
    return buffer.getvalue()


@pytest.fixture
def conn():
    with mock_cloud() as cloud:
        yield cloud, CloudConnection(region="cn-hangzhou",
                                     endpoints=Endpoints.for_region("cn-hangzhou"),
                                     credential=default_credential())


def test_sts_identity(conn):
    cloud, connection = conn
    identity = get_caller_identity(connection)
    assert identity.account_id == cloud.account_id
    assert identity.arn == f"acs:ram::{cloud.account_id}:root"


def test_function_lifecycle(conn):
    _, connection = conn
    fc = FunctionComputeClient(connection)
    config = FunctionConfig(runtime="python3.10", handler="index.handler", timeout=30,
                            environment_variables={"STAGE": "dev"})
    assert fc.get_function("Echo") is None
    created = fc.create_function("Echo", config, _zip(
        "def handler(event, context):\n    print('seen')\n    return event\n"))
    assert created.arn.endswith(":functions/Echo") and created.state == "Active"
    assert fc.get_function("Echo").config.differences(config) == {}
    call = fc.invoke("Echo", b'{"a": 1}')
    assert json.loads(call.payload) == {"a": 1} and not call.failed and "seen" in call.log
    updated = fc.update_function("Echo", config=FunctionConfig(
        runtime="python3.10", handler="index.handler", timeout=60), zip_bytes=_zip(
        "def handler(event, context):\n    raise KeyError('k')\n"))
    assert updated.config.timeout == 60 and updated.code_checksum != created.code_checksum
    failed = fc.invoke("Echo", b"{}")
    assert failed.failed and json.loads(failed.payload)["errorType"] == "KeyError"
    assert [f.name for f in fc.list_functions()] == ["Echo"]
    assert fc.list_functions(prefix="Nope") == []
    assert fc.delete_function("Echo") is True
    assert fc.delete_function("Echo") is False


def test_ram_role_and_policy_lifecycle(conn):
    _, connection = conn
    ram = RamClient(connection)
    assert ram.get_role("flow-role") is None
    role = ram.create_role("flow-role", roles.trust_policy("fc.aliyuncs.com"), "test")
    assert role.arn.endswith(":role/flow-role")
    ram.update_trust_policy("flow-role", roles.trust_policy())
    assert roles.same_document(ram.get_role("flow-role").trust_policy, roles.trust_policy())
    assert ram.get_policy_document("invoke") is None
    document = roles.invoke_policy(["acs:fc:cn-hangzhou:1:functions/A"])
    ram.create_policy("invoke", document, "test")
    assert roles.same_document(ram.get_policy_document("invoke"), document)
    ram.attach_policy("flow-role", "invoke")
    ram.attach_policy("flow-role", "invoke")  # already attached: fine
    assert [p.name for p in ram.list_role_policies("flow-role")] == ["invoke"]
    with pytest.raises(CloudClientError):  # DeleteConflict: still attached
        ram.delete_role("flow-role")
    assert ram.detach_policy("flow-role", "invoke") is True
    assert ram.detach_policy("flow-role", "invoke") is False
    assert ram.delete_policy("invoke") is True and ram.delete_policy("invoke") is False
    assert ram.delete_role("flow-role") is True and ram.delete_role("flow-role") is False


def test_flow_and_execution_lifecycle(conn):
    cloud, connection = conn
    ram, flows = RamClient(connection), CloudFlowClient(connection)
    role = ram.create_role("tiny-role", roles.trust_policy(), "test")
    assert flows.describe_flow("Tiny") is None
    created = flows.create_flow("Tiny", FLOW, description="d", role_arn=role.arn,
                                execution_mode="Standard")
    assert created.name == "Tiny"
    updated = flows.update_flow("Tiny", FLOW, description="d2", role_arn=role.arn)
    assert updated.description == "d2"
    assert flows.describe_flow("Tiny").description == "d2"
    started = flows.start_execution("Tiny", '{"x": 1}', "run-1")
    cloud.wait_for_execution("Tiny", "run-1")
    done = flows.describe_execution("Tiny", "run-1", wait_seconds=1)
    assert done.finished and done.status == "Succeeded" and started.name == "run-1"
    assert json.loads(done.output) == {"x": 1}
    assert [e.name for e in flows.list_executions("Tiny")] == ["run-1"]
    events = flows.history("Tiny", "run-1")
    assert events[0].type == "ExecutionStarted" and events[-1].type == "ExecutionSucceeded"
    assert flows.history("Tiny", "run-1", after_event_id=events[-2].event_id) == [events[-1]]
    assert flows.delete_flow("Tiny") is True
    assert flows.delete_flow("Tiny") is False


class _Flaky(BaseHTTPRequestHandler):
    """Answers with the queued ``answers`` (status, error code), then a GetCallerIdentity body."""

    answers: ClassVar[list[tuple[int, str]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, code = self.answers.pop(0) if self.answers else (200, "")
        body = {"RequestId": "r-1"}
        body.update({"Code": code, "Message": "try later"} if code else
                    {"AccountId": "1234567890123456", "Arn": "acs:ram::1:root",
                     "IdentityType": "Account"})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _connection(endpoint: str, sleeps: list[float], attempts: int = 5) -> CloudConnection:
    retry = RetryPolicy(max_attempts=attempts, sleep=sleeps.append)
    return CloudConnection(region="cn-hangzhou", endpoints=Endpoints.single(endpoint),
                           credential=StaticKeys("ak", "secret"), retry=retry)


def test_retries_throttling_and_5xx_then_succeeds(flaky):
    _, endpoint = flaky
    _Flaky.answers = [(503, "ServiceUnavailable"), (429, "Throttling.User"), (500, "InternalError")]
    sleeps: list[float] = []
    identity = get_caller_identity(_connection(endpoint, sleeps))
    assert identity.account_id == "1234567890123456"
    assert len(sleeps) == 3 and all(0 <= s <= 8 for s in sleeps)


def test_gives_up_after_max_attempts(flaky):
    _, endpoint = flaky
    _Flaky.answers = [(500, "InternalError")] * 3
    sleeps: list[float] = []
    with pytest.raises(CloudServerError) as info:
        get_caller_identity(_connection(endpoint, sleeps, attempts=3))
    assert len(sleeps) == 2 and "HTTP 500" in info.value.message


def test_client_errors_are_not_retried(flaky):
    _, endpoint = flaky
    _Flaky.answers = [(400, "InvalidParameter"), (429, "Throttling")]
    sleeps: list[float] = []
    with pytest.raises(CloudClientError):
        get_caller_identity(_connection(endpoint, sleeps))
    assert sleeps == []
    _Flaky.answers = [(429, "Throttling")] * 2
    with pytest.raises(CloudThrottledError):
        get_caller_identity(_connection(endpoint, sleeps, attempts=2))
    assert len(sleeps) == 1


def test_loopback_endpoint_takes_its_region_from_the_header():
    with mock_cloud(intercept=False) as cloud:
        keys = StaticKeys(cloud.access_key_id, cloud.access_key_secret)

        def client(region: str) -> FunctionComputeClient:
            return FunctionComputeClient(CloudConnection(
                region=region, endpoints=Endpoints.single(cloud.endpoint), credential=keys,
                headers={"x-deployer-region": region}))

        shanghai, hangzhou = client("cn-shanghai"), client("cn-hangzhou")
        created = shanghai.create_function(
            "Regional", FunctionConfig(runtime="python3.10", handler="index.handler"),
            _zip("def handler(event, context):\n    return 1\n"))
        assert created.arn.startswith(f"acs:fc:cn-shanghai:{cloud.account_id}:")
        assert hangzhou.get_function("Regional") is None
        assert [f.name for f in shanghai.list_functions()] == ["Regional"]
