"""The HTTP trigger's request -> event and result -> answer mapping (built-in runtimes)."""

from __future__ import annotations

import base64
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.emulator.services.http_triggers import (
    HttpTriggerRequest,
    canonical_header,
    event_for,
    response_for,
)


def _event(**kw: object) -> dict:
    request = HttpTriggerRequest(**{"method": "POST", "raw_path": "/orders/a%20b",
                                    "query": "x=1&x=2&y=", "headers": [], "body": b"", **kw})
    return json.loads(event_for(request, account_id="123", region="cn-hangzhou",
                                url_prefix="orders-abc", request_id="1-00000001-ff",
                                now=1_693_896_071.895))


def test_request_maps_to_the_v1_event() -> None:
    event = _event(headers=[("content-type", "application/json"), ("x-tag", "a"),
                            ("X-Tag", "b"), ("user-agent", "curl/8")], body=b'{"n": 1}')
    assert event["version"] == "v1" and event["rawPath"] == "/orders/a%20b"
    assert event["body"] == '{"n": 1}' and event["isBase64Encoded"] is False
    assert event["headers"] == {"Content-Type": "application/json", "X-Tag": "a,b",
                                "User-Agent": "curl/8"}
    assert event["queryParameters"] == {"x": "1,2", "y": ""}
    context = event["requestContext"]
    assert context["http"] == {"method": "POST", "path": "/orders/a b", "protocol": "HTTP/1.1",
                               "sourceIp": "127.0.0.1", "userAgent": "curl/8"}
    assert context["time"] == "2023-09-05T06:41:11Z" and context["timeEpoch"] == "1693896071895"
    assert context["domainName"] == "orders-abc.cn-hangzhou.fcapp.run"


def test_binary_bodies_are_base64() -> None:
    event = _event(headers=[("Content-Type", "image/png")], body=b"\x89PNG\x00")
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\x89PNG\x00"


def test_the_response_struct_is_the_answer() -> None:
    answer = response_for(json.dumps({"statusCode": 201, "headers": {"X-Id": "7"},
                                      "body": "made"}).encode(), None)
    assert (answer.status, answer.headers, answer.body) == (201, (("X-Id", "7"),), b"made")
    raw = response_for(json.dumps({"statusCode": 200, "isBase64Encoded": True,
                                   "body": base64.b64encode(b"\x00\x01").decode()}).encode(),
                       None)
    assert raw.body == b"\x00\x01"


def test_other_results_errors_and_bad_structs() -> None:
    plain = response_for(b"hello", None)
    assert plain.status == 200 and plain.headers == (("Content-Type",
                                                     "text/plain; charset=utf-8"),)
    assert response_for(b'{"a": 1}', None).headers == (("Content-Type", "application/json"),)
    error = response_for(b'{"errorMessage": "boom"}', "UnhandledInvocationError")
    assert error.status == 502 and ("x-fc-error-type", "UnhandledInvocationError") in error.headers
    assert response_for(b'{"statusCode": 99}', None).status == 502
    assert response_for(b'{"statusCode": 200, "isBase64Encoded": true, "body": "!"}',
                        None).status == 502


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.one_of(st.none(), st.sampled_from(
    ["UnhandledInvocationError", "InitializationError"])))
def test_any_result_gives_an_http_answer(payload: bytes, error: str | None) -> None:
    answer = response_for(payload, error)
    assert 100 <= answer.status <= 599


@given(st.text(alphabet="abcXYZ-", min_size=1, max_size=20))
def test_canonical_header_is_idempotent(name: str) -> None:
    once = canonical_header(name)
    assert canonical_header(once) == once and once.lower() == name.lower()
