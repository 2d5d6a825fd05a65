"""Malformed requests over raw HTTP: always a specific JSON error and a 4xx, never a traceback."""

from __future__ import annotations

import hashlib
import http.client
import json
import secrets

import pytest

from deployer.emulator.api.signing import acs3_signature
from deployer.emulator.server import EmulatorServer
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.wire import acs_date


def _signed(cloud, method: str, target: str, body: bytes = b"", *, key: str | None = None,
            secret: str | None = None, sha: str | None = None,
            extra: dict[str, str] | None = None) -> dict[str, str]:
    headers = {"host": cloud.endpoint, "x-acs-version": "2023-03-30",
               "x-acs-action": "Any", "x-acs-date": acs_date(),
               "x-acs-signature-nonce": secrets.token_hex(16), "accept": "application/json",
               "x-acs-content-sha256": sha or hashlib.sha256(body).hexdigest(), **(extra or {})}
    signed = ";".join(sorted(headers))
    sig = acs3_signature(method, target, lambda n: [headers[n]], signed,
                         headers["x-acs-content-sha256"], secret or cloud.access_key_secret)
    headers["Authorization"] = (f"ACS3-HMAC-SHA256 Credential={key or cloud.access_key_id},"
                                f"SignedHeaders={signed},Signature={sig}")
    return headers


def _call(cloud, method: str, target: str, body: bytes = b"", headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=30)
    conn.request(method, target, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp, data


def _assert_error(resp, data: bytes, code: str, status: int) -> dict:
    assert resp.status == status, data
    payload = json.loads(data)
    assert payload["Code"] == code and payload["RequestId"]
    assert "Traceback" not in data.decode() and 'File "' not in data.decode()
    assert int(resp.getheader("Content-Length")) == len(data)
    return payload


@pytest.mark.parametrize(("body", "text"), [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (json.dumps({"functionName": "f", "runtime": "python3.10", "handler": "i.h",
                 "memorySize": "512", "code": {"zipFile": "UEsFBg=="}}).encode(), "memorySize"),
    (json.dumps({"functionName": 5}).encode(), "functionName"),
    (json.dumps({"functionName": "f", "runtime": "python3.10", "handler": "i.h",
                 "code": {"zipFile": "***"}}).encode(), "base64"),
    (json.dumps({"functionName": "f", "runtime": "python3.10", "handler": "i.h",
                 "tags": [{"key": "lower"}], "code": {"zipFile": "UEsFBg=="}}).encode(), "tags"),
])
def test_bad_bodies(cloud, body, text) -> None:
    target = "/2023-03-30/functions"
    resp, data = _call(cloud, "POST", target, body, _signed(cloud, "POST", target, body))
    assert text in _assert_error(resp, data, "InvalidArgument", 400)["Message"]


def test_unknown_paths_and_methods(cloud) -> None:
    for method, target in (("GET", "/2023-03-30/vpc-bindings"),
                           ("PATCH", "/2023-03-30/functions/f"),
                           ("GET", "/2023-03-30/functions/f/vpc-bindings")):
        resp, data = _call(cloud, method, target, b"", _signed(cloud, method, target))
        _assert_error(resp, data, "PathNotSupported", 400)
    resp, data = _call(cloud, "GET", "/favicon.ico")
    _assert_error(resp, data, "PathNotSupported", 400)


def test_authentication_failures(cloud) -> None:
    target = "/2023-03-30/functions"
    resp, data = _call(cloud, "GET", target)
    _assert_error(resp, data, "MissingRequiredHeader", 400)
    resp, data = _call(cloud, "GET", target, headers={"Authorization": "garbage"})
    _assert_error(resp, data, "InvalidArgument", 400)
    resp, data = _call(cloud, "GET", target, b"", _signed(cloud, "GET", target, key="LTAIx"))
    _assert_error(resp, data, "InvalidAccessKeyID", 403)
    resp, data = _call(cloud, "GET", target, b"", _signed(cloud, "GET", target, secret="bad"))
    _assert_error(resp, data, "SignatureNotMatch", 403)
    body = b'{"functionName": "x"}'
    headers = _signed(cloud, "POST", target, body)
    resp, data = _call(cloud, "POST", target, b'{"functionName": "y"}', headers)
    assert "payload hash" in _assert_error(resp, data, "SignatureNotMatch", 403)["Message"]
    resp, data = _call(cloud, "POST", "/", b"", {"host": "sts.aliyuncs.com",
                                                 "x-acs-version": "2015-04-01",
                                                 "x-acs-action": "GetCallerIdentity"})
    assert _assert_error(resp, data, "IncompleteSignature", 400)["HostId"] == "sts.aliyuncs.com"
    resp, data = _call(cloud, "POST", "/?Action=X&Version=1999-01-01")
    _assert_error(resp, data, "InvalidVersion", 400)
    # a CloudFlow action with another Version: CloudFlow's own code (cloudflow-api.md §6.3)
    resp, data = _call(cloud, "POST", "/?Action=DescribeFlow&Version=2020-01-01")
    _assert_error(resp, data, "APIVersionNotSupported", 400)
    resp, data = _call(cloud, "POST", "/?Action=AssumeRole&Version=2020-01-01")
    _assert_error(resp, data, "InvalidVersion", 400)


def test_oversized_bodies(tmp_path) -> None:
    server = EmulatorServer(tmp_path, runtime=EchoRuntime(), max_body=1024).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("POST", "/2023-03-30/functions", body=b"x" * 4096)
        resp = conn.getresponse()
        _assert_error(resp, resp.read(), "EntityTooLarge", 400)
    finally:
        server.stop()


def test_keep_alive_serves_several_requests_on_one_connection(cloud) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=30)
    for _ in range(3):
        conn.request("GET", "/_emulator/health")
        resp = conn.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["accountId"] == cloud.account_id
        assert resp.getheader("Content-Encoding") is None
    conn.close()


def test_admin_clock_and_reset(cloud, zip_b64) -> None:
    resp, data = _call(cloud, "GET", "/_emulator/clock")
    before = json.loads(data)["now"]
    admin = {"Content-Type": "application/json", "X-Emulator-Token": cloud.admin_token}
    resp, data = _call(cloud, "POST", "/_emulator/clock/advance", b'{"seconds": 60}', admin)
    assert json.loads(data)["now"] == before + 60 and json.loads(data)["virtual"] is True
    from alibabacloud_fc20230330 import models as fc
    client = cloud.fc_client()
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="gone", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))
    resp, data = _call(cloud, "POST", "/_emulator/reset", b"{}", admin)
    assert resp.status == 200
    assert client.list_functions(fc.ListFunctionsRequest()).body.functions == []
