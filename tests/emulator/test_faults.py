"""Fault injection through the official SDKs: what the SDK sees is what the cloud would send,
an injected failure changes no state, and flows' Retry/Catch meet injected task errors."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_fnf20190315 import models as fnf_models
from alibabacloud_ram20150501 import models as ram_models
from alibabacloud_tea_openapi.exceptions import (
    ClientException,
    ServerException,
    ThrottlingException,
)
from darabonba.policy.retry import RetryOptions

from deployer.testing import EchoRuntime, LocalCloud, mock_cloud
from deployer.testing.faults import FaultError
from tests.emulator.cloudflow_support import create, history, wait_flow

ZIP = base64.b64encode(b"PK\x05\x06" + b"\0" * 18).decode()


@pytest.fixture(scope="module")
def runtime() -> EchoRuntime:
    return EchoRuntime()


@pytest.fixture(scope="module")
def cloud(runtime: EchoRuntime) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, runtime=runtime) as c:
        for name in ("f", "g"):
            c.fc_client().create_function(fc_models.CreateFunctionRequest(
                body=fc_models.CreateFunctionInput(
                    function_name=name, runtime="python3.10", handler="index.handler",
                    timeout=7, code=fc_models.InputCodeLocation(zip_file=ZIP))))
        yield c


@pytest.fixture(autouse=True)
def _no_faults(cloud: LocalCloud) -> Iterator[None]:
    yield
    cloud.faults.clear()


def _invoke(cloud: LocalCloud, name: str = "f", **kw):
    return cloud.fc_client(**kw).invoke_function(name, fc_models.InvokeFunctionRequest(
        body=b"{}"))


def _raises(exc_type, call):
    with pytest.raises(exc_type) as info:
        call()
    return info.value


def test_fc_error_faults_fire_the_next_n_times_before_the_function_runs(cloud, runtime):
    before = len(runtime.invoked)
    fault = cloud.faults.add("fc", action="InvokeFunction", function="f",
                             error="ResourceThrottled", times=2)
    for _ in range(2):
        err = _raises(ServerException, lambda: _invoke(cloud))
        assert (err.code, err.status_code) == ("ResourceThrottled", 503)
        assert err.request_id.startswith("1-") and err.data["RequestId"] == err.request_id
    assert len(runtime.invoked) == before  # refused before anything ran
    assert _invoke(cloud, "g").status_code == 200  # another function is not selected
    assert _invoke(cloud).body.read() == b"echo:{}"
    assert (fault.fired, fault.matched) == (2, 2)
    assert cloud.faults.get(fault.id)["remaining"] == 0


def test_an_injected_failure_changes_no_state(cloud):
    fc = cloud.fc_client()
    with cloud.faults.inject("fc", action="CreateFunction", error="InternalServerError"):
        err = _raises(ServerException, lambda: fc.create_function(
            fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
                function_name="never", runtime="python3.10", handler="index.handler",
                code=fc_models.InputCodeLocation(zip_file=ZIP)))))
    assert (err.code, err.status_code) == ("InternalServerError", 500)
    assert _raises(ClientException, lambda: fc.get_function(
        "never", fc_models.GetFunctionRequest())).code == "FunctionNotFound"
    fnf = cloud.fnf_client()
    create(fnf, "calm", wait_flow("calm"))
    with cloud.faults.inject("cloudflow", action="StartExecution", flow="calm",
                             error="Throttling"):
        err = _raises(ClientException, lambda: fnf.start_execution(
            fnf_models.StartExecutionRequest(flow_name="calm", execution_name="e1")))
    assert (err.code, err.status_code) == ("Throttling", 429)
    assert err.data["HostId"] == cloud.endpoint
    listed = fnf.list_executions(fnf_models.ListExecutionsRequest(flow_name="calm")).body
    assert listed.executions == []


def test_function_error_and_timeout_are_answered_as_fc_answers_them(cloud):
    cloud.faults.add("fc", function="f", function_error="disk on fire",
                     error_type="OSError", times=1)
    out = _invoke(cloud)
    assert out.status_code == 200
    assert out.headers["x-fc-error-type"] == "UnhandledInvocationError"
    assert json.loads(out.body.read()) == {"errorMessage": "disk on fire", "errorType": "OSError"}
    cloud.faults.add("fc", function="f", timeout=True, times=1)
    out = _invoke(cloud)
    assert out.headers["x-fc-error-type"] == "UnhandledInvocationError"
    assert json.loads(out.body.read()) == {"errorMessage": "Function timed out after 7 seconds"}
    cloud.faults.add("fc", function="nope", timeout=True)
    assert _raises(ClientException, lambda: _invoke(cloud, "nope")).code == "FunctionNotFound"


def test_retry_after_reaches_the_sdk_and_its_retries_sign_each_attempt_anew(cloud):
    cloud.faults.add("fc", action="GetFunction", error="ResourceExhausted",
                     retry_after_ms=5, times=2)
    fc = cloud.fc_client()
    err = _raises(ThrottlingException, lambda: fc.get_function(
        "f", fc_models.GetFunctionRequest()))
    assert (err.code, err.status_code, err.retry_after) == ("ResourceExhausted", 429, 5)
    retrying = cloud.fc_client(retry_options=RetryOptions({"retryCondition": [
        {"maxAttempts": 3, "errorCode": ["ResourceExhausted"]}]}))
    # one more refusal, then the retry succeeds: a reused nonce would be SignatureNonceUsed
    assert retrying.get_function("f", fc_models.GetFunctionRequest()).body.function_name == "f"
    assert cloud.faults.list()[0]["fired"] == 2


def test_pop_products_answer_their_own_throttling(cloud):
    cloud.faults.add("ram", action="ListPoliciesForRole", error="Throttling.User", times=1)
    err = _raises(ClientException, lambda: cloud.ram_client().list_policies_for_role(
        ram_models.ListPoliciesForRoleRequest(role_name="x")))
    assert (err.code, err.status_code) == ("Throttling.User", 400)
    cloud.faults.add("sts", error="InternalError", times=1)
    err = _raises(ServerException, lambda: cloud.sts_client().get_caller_identity())
    assert (err.code, err.status_code) == ("InternalError", 500)


def test_latency_delays_the_answer_without_holding_a_thread(cloud):
    fnf = cloud.fnf_client()
    create(fnf, "slowpoke", wait_flow("slowpoke", 300))
    with cloud.auto_advance_disabled():
        fnf.start_execution(fnf_models.StartExecutionRequest(flow_name="slowpoke",
                                                             execution_name="e1"))
        cloud.faults.add("cloudflow", action="DescribeExecution", latency=0.3, times=1)
        started = time.monotonic()
        body = fnf.describe_execution(fnf_models.DescribeExecutionRequest(
            flow_name="slowpoke", execution_name="e1", wait_time_seconds=1)).body
        elapsed = time.monotonic() - started
    assert body.status == "Running"
    assert elapsed >= 1.3  # the latency, then the long poll's full second
    read_timeout = cloud.fc_client(read_timeout=300)
    cloud.faults.add("fc", action="GetFunction", latency=2, times=1)
    err = _raises(Exception, lambda: read_timeout.get_function(
        "f", fc_models.GetFunctionRequest()))
    assert "timed out" in str(err).lower()  # the client gave up, as it would on the cloud


def test_probability_with_a_seed_is_repeatable(cloud):
    def pattern() -> list[bool]:
        fault = cloud.faults.add("fc", action="GetFunction", error="Throttling",
                                 probability=0.5, seed=42)
        outcome = []
        for _ in range(24):
            try:
                cloud.fc_client().get_function("g", fc_models.GetFunctionRequest())
                outcome.append(False)
            except ClientException as exc:
                assert exc.code == "Throttling"
                outcome.append(True)
        assert fault.matched == 24 and fault.fired == sum(outcome)
        fault.remove()
        return outcome

    first = pattern()
    assert 0 < sum(first) < 24
    assert pattern() == first


@pytest.mark.parametrize(("fields", "text"), [
    ({"service": "fc", "error": "Throttling", "latency": 1}, "exactly one of"),
    ({"service": "fc"}, "exactly one of"),
    ({"service": "ecs", "error": "Throttling"}, "service must be one of"),
    ({"service": "fc", "error": "Throttling", "probability": 2}, "probability"),
    ({"service": "fc", "error": "Throttling", "times": 0}, "times"),
    ({"service": "fc", "error": "NoSuchCode"}, "give its HTTP status"),
    ({"service": "cloudflow", "function_error": True}, "InvokeFunction"),
    ({"service": "fc", "action": "GetFunction", "timeout": True}, "InvokeFunction"),
    ({"service": "cloudflow", "function": "f", "error": "Throttling"}, "service fc"),
    ({"service": "fc", "latency": -1}, "latency seconds"),
    ({"service": "fc", "latency": "1"}, "finite number"),
    ({"service": "fc", "latency": 1, "status": 500}, "can only be given with error"),
    ({"service": "fc", "error": "Throttling", "colour": "red"}, "unknown field"),
])
def test_a_bad_fault_is_a_clear_400(cloud, fields, text):
    err = _raises(FaultError, lambda: cloud.faults._request("POST", "", fields))
    assert (err.status, err.code) == (400, "InvalidArgument")
    assert text in str(err), str(err)
    assert cloud.faults.list() == []


def test_custom_codes_need_a_status_and_keep_it(cloud):
    cloud.faults.add("fc", action="GetFunction", error="Busy.Backend", status=502, times=1)
    err = _raises(ServerException, lambda: cloud.fc_client().get_function(
        "f", fc_models.GetFunctionRequest()))
    assert (err.code, err.status_code) == ("Busy.Backend", 502)


FLAKY = """Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Call
States:
  - Type: Task
    Name: Call
    Action: FC:InvokeFunction
    TaskMode: RequestComplete
    Parameters:
      resourceArn: acs:fc:::functions/f
      invocationType: Sync
      body: {{}}
    Retry:
      - Errors: [FC.ResourceThrottled]
        MaxAttempts: 3
        IntervalSeconds: 2
        BackoffRate: 2
    Catch:
      - Errors: [FnF.ALL]
        OutputConstructor:
          failedCode.$: $Context.Current.Error.Code
        Next: Recover
    End: true
  - Type: Pass
    Name: Recover
    End: true
"""


def _run(cloud: LocalCloud, flow: str, execution: str) -> dict:
    fnf = cloud.fnf_client()
    fnf.start_execution(fnf_models.StartExecutionRequest(flow_name=flow,
                                                         execution_name=execution))
    return cloud.wait_for_execution(flow, execution)


def test_a_flow_retry_absorbs_injected_throttling_and_catch_takes_over(cloud):
    create(cloud.fnf_client(), "flaky", FLAKY.format(name="flaky"))
    with cloud.faults.inject("fc", function="f", error="ResourceThrottled", times=2) as fault:
        done = _run(cloud, "flaky", "absorbed")
        assert fault.fired == 2
    assert done["Status"] == "Succeeded", done
    assert json.loads(done["Output"]) == {"Body": "echo:{}"}
    failed = [ev for ev in history(cloud.fnf_client(), "flaky", "absorbed")
              if ev.type == "TaskFailed"]
    assert [json.loads(ev.event_detail)["Error"] for ev in failed] == ["FC.ResourceThrottled"] * 2

    with cloud.faults.inject("fc", function="f", error="ResourceThrottled") as fault:
        done = _run(cloud, "flaky", "caught")
        assert fault.fired == 4  # the first try and three retries
    assert done["Status"] == "Succeeded", done
    assert json.loads(done["Output"]) == {"failedCode": "FC.ResourceThrottled"}


def test_function_errors_in_tasks_are_fc_unknown(cloud):
    create(cloud.fnf_client(), "unlucky", FLAKY.format(name="unlucky"))
    with cloud.faults.inject("fc", function="f", timeout=True):
        done = _run(cloud, "unlucky", "timed-out")
    assert json.loads(done["Output"]) == {"failedCode": "FC.Unknown"}
    events = history(cloud.fnf_client(), "unlucky", "timed-out")
    detail = next(json.loads(ev.event_detail) for ev in events if ev.type == "TaskFailed")
    assert "Function timed out after 7 seconds" in detail["Cause"]


def test_reset_clears_faults():
    with mock_cloud(intercept=False, runtime=EchoRuntime()) as cloud:
        cloud.faults.add("sts", error="Throttling")
        cloud.reset()
        assert cloud.faults.list() == []
        assert cloud.sts_client().get_caller_identity().body.account_id == cloud.account_id


def test_throttle_cloud_applies_cloudflows_documented_rates():
    with mock_cloud(intercept=False, runtime=EchoRuntime(), throttle="cloud") as cloud:
        assert cloud.faults.throttle == "cloud"
        fnf = cloud.fnf_client()
        started = time.monotonic()
        outcomes = []
        for _ in range(30):
            try:
                fnf.list_flows(fnf_models.ListFlowsRequest())
                outcomes.append("ok")
            except ThrottlingException as exc:  # 429 Throttling with x-acs-retry-after (ms)
                assert (exc.code, exc.status_code) == ("Throttling", 429)
                assert 0 < exc.retry_after <= 500
                outcomes.append("throttled")
        elapsed = time.monotonic() - started
        assert outcomes[:10] == ["ok"] * 10  # the burst of 10 "other API" calls
        assert outcomes.count("ok") <= 10 + 2 * elapsed + 1  # then 2 per second
        assert "throttled" in outcomes
        cloud.faults.throttle = "off"
        fnf.list_flows(fnf_models.ListFlowsRequest())
        with pytest.raises(FaultError) as info:
            cloud.faults.throttle = "harsh"
        assert info.value.status == 400 and "off, cloud" in str(info.value)


def test_the_fault_endpoint_is_guarded_like_the_admin_surface(cloud):
    import urllib.error
    import urllib.request

    url = f"{cloud.url}/_emulator/faults"
    body = json.dumps({"service": "sts", "error": "Throttling"}).encode()
    for headers, method in (({"Content-Type": "application/json"}, "POST"),  # no token
                            ({"X-Emulator-Token": cloud.admin_token}, "POST"),  # no JSON type
                            ({"Content-Type": "application/json",
                              "X-Emulator-Token": cloud.admin_token,
                              "Origin": "http://evil.example"}, "POST"),
                            ({"Content-Type": "application/json"}, "DELETE")):
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=10)
        assert info.value.code == 403
        assert json.loads(info.value.read())["Code"] == "AccessDenied"
    assert cloud.faults.list() == []
    with urllib.request.urlopen(url, timeout=10) as answer:  # reading needs no token
        assert json.loads(answer.read()) == {"faults": [], "throttle": "off"}


def test_ids_are_never_reused_until_a_reset_numbers_from_fault_1_again():
    with mock_cloud(intercept=False, runtime=EchoRuntime()) as fresh:
        first = fresh.faults.add("sts", error="Throttling")
        fresh.faults.clear()
        second = fresh.faults.add("sts", error="Throttling")
        assert (first.id, second.id) == ("fault-1", "fault-2")  # a cleared id names no other
        fresh.reset()
        assert fresh.faults.list() == []
        assert fresh.faults.add("sts", error="Throttling").id == "fault-1"  # as a new emulator
