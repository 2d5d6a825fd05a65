"""SDK exceptions become CloudError types; only retryable ones are retried."""

from __future__ import annotations

import pytest
from alibabacloud_tea_openapi.exceptions import (
    ClientException,
    ServerException,
    ThrottlingException,
)

from deployer.cloud.errors import (
    CloudAuthError,
    CloudClientError,
    CloudConnectionError,
    CloudError,
    CloudNotFoundError,
    CloudServerError,
    CloudThrottledError,
    sdk_call,
    translate,
)
from deployer.cloud.retry import RetryPolicy
from deployer.errors import ExitCode


def client_exc(code: str, status: int, message: str = "msg") -> ClientException:
    return ClientException(
        code=code,
        status_code=status,
        message=f"code: {status}, {message} request id: r-1",
        request_id="r-1",
        data={"Code": code, "Message": message, "RequestId": "r-1", "statusCode": status},
    )


@pytest.mark.parametrize(
    ("code", "status", "klass"),
    [
        ("FunctionNotFound", 404, CloudNotFoundError),
        ("FlowNotExists", 404, CloudNotFoundError),
        ("EntityNotExist.Role", 404, CloudNotFoundError),
        ("InvalidArgument", 400, CloudClientError),
        ("SignatureNotMatch", 403, CloudAuthError),
        ("InvalidAccessKeyId.NotFound", 404, CloudAuthError),
        ("Throttling", 429, CloudThrottledError),
        ("ResourceThrottled", 503, CloudThrottledError),
    ],
)
def test_client_errors_are_classified_by_code_and_status(code, status, klass):
    err = translate(client_exc(code, status), service="FC", operation="GetFunction")
    assert type(err) is klass
    assert err.code == code
    assert err.status == status
    assert err.request_id == "r-1"
    assert err.message.startswith("FC GetFunction failed: ")
    assert code in err.message


def test_server_errors_are_retryable():
    exc = ServerException(code="InternalServerError", status_code=500, request_id="r-2",
                          message="boom", data={"Message": "boom"})
    err = translate(exc, service="CloudFlow", operation="StartExecution")
    assert isinstance(err, CloudServerError)
    assert err.retryable


def test_throttling_exception_with_retry_after_is_throttled():
    exc = ThrottlingException(code="Throttling.User", status_code=400, retry_after=100,
                              request_id="r", message="slow down", data={})
    assert isinstance(translate(exc, service="RAM", operation="GetRole"), CloudThrottledError)


def test_connection_failures_are_retryable_and_hint_at_the_endpoint():
    err = translate(ConnectionRefusedError("refused"), service="FC", operation="ListFunctions")
    assert isinstance(err, CloudConnectionError)
    assert err.retryable
    assert "cannot reach" in err.message
    assert err.hint


def test_not_found_maps_to_exit_code_4():
    err = translate(client_exc("FunctionNotFound", 404), service="FC", operation="GetFunction")
    assert err.exit_code == ExitCode.NOT_FOUND


def test_sdk_call_translates_and_keeps_cause():
    with pytest.raises(CloudClientError) as info, sdk_call("FC", "CreateFunction"):
        raise client_exc("InvalidArgument", 400, "memorySize must be a multiple of 64")
    assert "memorySize must be a multiple of 64" in info.value.message
    assert isinstance(info.value.__cause__, ClientException)


def test_retry_policy_retries_only_retryable_errors_with_backoff():
    sleeps: list[float] = []
    policy = RetryPolicy(max_attempts=4, initial_delay=0.5, max_delay=8, sleep=sleeps.append)
    calls = {"n": 0}

    def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise CloudServerError("down")
        return "ok"

    assert policy.call(flaky) == "ok"
    assert calls["n"] == 3
    assert len(sleeps) == 2 and all(0 <= s <= 8 for s in sleeps)

    calls["n"] = 0

    def refused() -> str:
        calls["n"] += 1
        raise CloudClientError("bad request")

    with pytest.raises(CloudClientError):
        policy.call(refused)
    assert calls["n"] == 1


def test_retry_policy_gives_up_after_max_attempts():
    policy = RetryPolicy(max_attempts=3, sleep=lambda s: None)
    calls = {"n": 0}

    def always() -> None:
        calls["n"] += 1
        raise CloudThrottledError("throttled")

    with pytest.raises(CloudError):
        policy.call(always)
    assert calls["n"] == 3
