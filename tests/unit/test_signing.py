"""Signature verifiers against the reference vectors (fc3-api.md §4.3, cloudflow-api.md §5.4)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deployer.checksums import crc64, crc64_decimal
from deployer.emulator.api.http import Headers, HttpRequest
from deployer.emulator.api.signing import (
    SignatureError,
    SignatureFailure,
    acs3_signature,
    rpc_v1_signature,
    verify_acs3,
    verify_rpc_v1,
)

AK, SECRET = "LTAI5tFAKEKEYID0000000", "FakeSecretForLocalCapture0000000"
UA = "AlibabaCloud (Linux; x86_64) Python/3.11.7 Core/0.4.3 TeaDSL/2"


def _acs3_request(method: str, target: str, action: str, body: bytes = b"",
                  extra: tuple[tuple[str, str], ...] = (), signature: str = "") -> HttpRequest:
    headers = [("host", "127.0.0.1:9000"), ("x-acs-version", "2023-03-30"),
               ("x-acs-action", action), ("user-agent", UA),
               ("x-acs-date", "2024-01-01T00:00:00Z"),
               ("x-acs-signature-nonce", "0" * 32), ("accept", "application/json"), *extra,
               ("x-acs-content-sha256", hashlib.sha256(body).hexdigest()),
               ("x-acs-credentials-provider", "static_ak")]
    signed = ";".join(sorted(h for h, _ in headers))
    headers.append(("Authorization",
                    f"ACS3-HMAC-SHA256 Credential={AK},SignedHeaders={signed},"
                    f"Signature={signature}"))
    return HttpRequest(method, target, Headers(tuple(headers)), body)


def _secret(key: str) -> str | None:
    return SECRET if key == AK else None


V1 = ("GET", "/2023-03-30/functions/hello-py?qualifier=LATEST", "GetFunction", b"", (),
      "2f25718f18060bdbac817b629910a53877dc804cce3fd8911f508b7c4295a547")
V2 = ("POST", "/2023-03-30/functions/hello-py/invocations", "InvokeFunction",
      b'{"key": "value"}', (("content-type", "application/octet-stream"),
                            ("x-fc-invocation-type", "Sync"), ("x-fc-log-type", "Tail")),
      "26b24fc02b54882af93b8051e42f80ccddc5cb71c3dd5132e3fa505a1afd7783")
V3 = ("GET", "/2023-03-30/functions?limit=10&nextToken=abc+def&prefix=hello", "ListFunctions",
      b"", (), "c5932ef37cc28abd1ba5a7315631ff30c73862e39e26d1603485c91bec15def7")


@pytest.mark.parametrize("vector", [V1, V2, V3], ids=["V1", "V2", "V3"])
def test_acs3_reference_vectors_verify(vector: tuple) -> None:
    method, target, action, body, extra, sig = vector
    req = _acs3_request(method, target, action, body, extra, sig)
    assert verify_acs3(req, _secret) == AK


def test_acs3_tampered_body_is_a_payload_hash_failure() -> None:
    method, target, action, body, extra, sig = V2
    good = _acs3_request(method, target, action, body, extra, sig)
    tampered = HttpRequest(good.method, good.raw_target, good.headers, b'{"key": "evil"}')
    with pytest.raises(SignatureError) as info:
        verify_acs3(tampered, _secret)
    assert info.value.reason is SignatureFailure.PAYLOAD_HASH


@pytest.mark.parametrize(("secret_for", "reason"), [
    (lambda k: None, SignatureFailure.UNKNOWN_KEY),
    (lambda k: "wrong-secret", SignatureFailure.MISMATCH),
])
def test_acs3_unknown_key_and_wrong_secret(secret_for, reason) -> None:
    req = _acs3_request(*V1[:5], V1[5])
    with pytest.raises(SignatureError) as info:
        verify_acs3(req, secret_for)
    assert info.value.reason is reason


def test_acs3_missing_and_garbled_authorization() -> None:
    req = _acs3_request(*V1[:5], V1[5])
    no_auth = HttpRequest("GET", req.raw_target,
                          Headers(tuple(h for h in req.headers.items if h[0] != "Authorization")))
    with pytest.raises(SignatureError) as info:
        verify_acs3(no_auth, _secret)
    assert info.value.reason is SignatureFailure.MISSING
    garbled = HttpRequest("GET", req.raw_target, Headers(
        (*no_auth.headers.items, ("Authorization", "ACS3-HMAC-SHA256 garbage"))))
    with pytest.raises(SignatureError) as info:
        verify_acs3(garbled, _secret)
    assert info.value.reason is SignatureFailure.MALFORMED


@given(st.dictionaries(st.text(alphabet="abcXYZ_", min_size=1, max_size=5),
                       st.text(max_size=12), max_size=4))
def test_acs3_sign_then_verify_roundtrip(query: dict[str, str]) -> None:
    from urllib.parse import urlencode

    target = "/2023-03-30/functions" + ("?" + urlencode(query) if query else "")
    unsigned = _acs3_request("GET", target, "ListFunctions")
    auth = unsigned.headers.get("authorization") or ""
    signed_headers = auth.split("SignedHeaders=")[1].split(",")[0]
    sig = acs3_signature("GET", target, unsigned.headers.get_all, signed_headers,
                         hashlib.sha256(b"").hexdigest(), SECRET)
    assert verify_acs3(_acs3_request("GET", target, "ListFunctions", signature=sig),
                       _secret) == AK


RPC_COMMON = {"AccessKeyId": "testAccessKeyId", "Format": "json",
              "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
              "Timestamp": "2024-05-01T08:00:00Z", "Version": "2019-03-15"}


@pytest.mark.parametrize(("method", "params", "nonce", "expected"), [
    ("GET", {"Action": "DescribeExecution", "ExecutionName": "exec-1", "FlowName": "my_flow",
             "WaitTimeSeconds": "10"}, "2f1e2d3c4b5a69788796a5b4c3d2e1f2",
     "7My1oQLZyu+50MfJRlnSLBv7tTs="),
    ("GET", {"Action": "GetExecutionHistory", "ExecutionName": "exec-1", "FlowName": "my_flow",
             "Limit": "50"}, "3f1e2d3c4b5a69788796a5b4c3d2e1f3", "5188p2alcAev8jrZrSy+vj0+Xx8="),
    ("POST", {"Action": "StartExecution", "ExecutionName": "exec-1", "FlowName": "my_flow",
              "Input": '{"a": 1}'}, "1f1e2d3c4b5a69788796a5b4c3d2e1f1",
     "j2vg6ZGCGhooIaLBGY1EaWpmdQk="),
    ("GET", {"Action": "DescribeFlow", "Name": "missing"}, "4f1e2d3c4b5a69788796a5b4c3d2e1f4",
     "P+5Em+466vnBM6/mPBmFMwMj/RI="),
])
def test_rpc_v1_reference_vectors(method, params, nonce, expected) -> None:
    from urllib.parse import urlencode

    all_params = {**RPC_COMMON, **params, "SignatureNonce": nonce}
    sig, _ = rpc_v1_signature(method, all_params, "testAccessKeySecret")
    assert sig == expected
    if method == "POST":  # action params travel in a form body
        query = {k: v for k, v in all_params.items() if k not in params or k == "Action"}
        form = {k: v for k, v in params.items() if k != "Action"}
        req = HttpRequest(method, "/?" + urlencode({**query, "Signature": sig}), Headers(
            (("content-type", "application/x-www-form-urlencoded"),)), urlencode(form).encode())
    else:
        req = HttpRequest(method, "/?" + urlencode({**all_params, "Signature": sig}), Headers())
    lookup = {"testAccessKeyId": "testAccessKeySecret"}.get
    assert verify_rpc_v1(req, lookup) == "testAccessKeyId"
    with pytest.raises(SignatureError) as info:
        verify_rpc_v1(req, {"testAccessKeyId": "other"}.get)
    assert info.value.reason is SignatureFailure.MISMATCH


def test_crc64_check_value_and_chunking() -> None:
    assert crc64_decimal(b"123456789") == "11051210869376104954"
    assert crc64(b"6789", crc64(b"12345")) == crc64(b"123456789")
    assert crc64(b"") == 0
