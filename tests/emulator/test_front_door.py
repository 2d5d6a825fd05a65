"""The HTTP front door over raw sockets: every malformed request gets a 4xx in the cloud's JSON
error shape (never a dropped connection, never a 500); chunked bodies, Expect: 100-continue,
keep-alive and pipelining work."""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket

import pytest
from alibabacloud_fc20230330 import models as fc

from tests.emulator.cloudflow_support import create, pass_flow
from tests.emulator.wire import Wire, assert_cloud_error, exchange, request, signed_headers

FUNCTIONS = "/2023-03-30/functions"


@pytest.mark.parametrize("value", ["+3", "1_0", "-1", "3,3", "0x3", " 3 4", "3.0", "٣",
                                   "99999999999999999999999"])
def test_malformed_content_length_is_refused(cloud, value) -> None:
    data = (f"POST {FUNCTIONS} HTTP/1.1\r\nHost: x\r\nContent-Length: {value}\r\n\r\n"
            "abc").encode()
    with Wire(cloud.server.port) as wire:
        reply = wire.send(data).reply()
        assert_cloud_error(reply, 400, "InvalidArgument")
        assert "Content-Length" in reply.json()["Message"] and wire.closed()


@pytest.mark.parametrize("second", ["4", "3"])
def test_duplicate_content_length_is_refused(cloud, second) -> None:
    data = (f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: {second}"
            "\r\n\r\nabcd").encode()
    payload = assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")
    assert "HostId" in payload  # RPC style for "/"


def test_content_length_with_chunked_is_refused(cloud) -> None:
    data = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")


def test_bad_chunk_size_is_refused(cloud) -> None:
    data = (f"POST {FUNCTIONS} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            "zz\r\nabc\r\n0\r\n\r\n").encode()
    assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")


@pytest.mark.parametrize("data", [
    b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + os.urandom(32) + b"\r\n\r\n",
    b"GET /_emulator/health HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 70_000 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
], ids=["unknown-method", "tls-hello", "no-host", "huge-header", "space-in-name", "nul",
        "h2-preface"])
def test_unparsable_requests_get_a_json_400(cloud, data) -> None:
    assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")


@pytest.mark.parametrize(("method", "target"), [
    ("TRACE", FUNCTIONS), ("OPTIONS", FUNCTIONS), ("PATCH", f"{FUNCTIONS}/f"),
    ("GET", "/favicon.ico"), ("CONNECT", "example.com:443"),
    ("GET", "http://elsewhere.example/2023-03-30/functions"),
])
def test_unknown_routes_and_methods(cloud, method, target) -> None:
    headers = (signed_headers(cloud, method, target) if target.startswith(FUNCTIONS)
               else {"Host": "x"})
    data = request(method, target, headers)
    assert_cloud_error(exchange(cloud.server.port, data), 400, "PathNotSupported")


@pytest.mark.parametrize("target", [
    f"{FUNCTIONS}/%ED%A0%80",  # UTF-8 of a lone surrogate
    f"{FUNCTIONS}/%FF%FE",
    f"{FUNCTIONS}?prefix=%C3%28",
])
def test_invalid_utf8_in_the_target(cloud, target) -> None:
    reply = exchange(cloud.server.port, request("GET", target, {"Host": "x"}))
    assert "UTF-8" in assert_cloud_error(reply, 400, "InvalidArgument")["Message"]


def test_raw_non_ascii_bytes_in_the_path(cloud) -> None:
    data = b"GET /2023-03-30/functions/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n"
    assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")


def test_invalid_utf8_in_a_header(cloud) -> None:
    data = b"GET /2023-03-30/functions HTTP/1.1\r\nHost: x\r\nX-Fc-Log-Type: \xed\xa0\x80\r\n\r\n"
    reply = exchange(cloud.server.port, data)
    assert "not valid UTF-8" in assert_cloud_error(reply, 400, "InvalidArgument")["Message"]


def test_invalid_utf8_in_a_form_body(cloud) -> None:
    body = b"Action=DescribeFlow&Version=2019-03-15&Name=%ED%A0%80"
    data = request("POST", "/", {"Host": "x",
                                 "Content-Type": "application/x-www-form-urlencoded"}, body)
    payload = assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")
    assert "form-encoded body" in payload["Message"] and "HostId" in payload


def _create_body(name: str, extra: str = "") -> bytes:
    zip_b64 = base64.b64encode(b"PK\x05\x06" + b"\x00" * 18).decode()
    return (f'{{"functionName": {name}, "runtime": "python3.10", "handler": "index.handler",'
            f' "code": {{"zipFile": "{zip_b64}"}}{extra}}}').encode()


@pytest.mark.parametrize(("body", "words"), [
    (_create_body('"\\ud800"'), "lone surrogate"),
    (_create_body('"ok"', ', "description": "\\udfff"'), "lone surrogate"),
    (_create_body('"ok"', ', "tags": ' + "[" * 200 + "]" * 200), "nested deeper"),
    (_create_body('"ok"', ', "x": ' + "[" * 100_000), "nested deeper"),
    (_create_body('"ok"', ', "memorySize": ' + "9" * 5000), "digits"),
    (_create_body('"ok"', ', "cpu": 1e999'), "out of range"),
    (_create_body('"ok"', ', "cpu": NaN'), "not a JSON value"),
    (b'{"functionName": "\xff\xfe"}', "not valid JSON"),
])
def test_json_bodies_beyond_the_limits(cloud, body, words) -> None:
    headers = signed_headers(cloud, "POST", FUNCTIONS, body,
                             **{"content-type": "application/json"})
    reply = exchange(cloud.server.port, request("POST", FUNCTIONS, headers, body))
    assert words in assert_cloud_error(reply, 400, "InvalidArgument")["Message"]


@pytest.mark.parametrize("value", ["[" * 300 + "]" * 300, '{"n": ' + "1" * 5000 + "}",
                                   '{"s": "\\ud83d"}', '{"x": 1e400}'])
def test_json_rpc_parameters_beyond_the_limits(cloud, value) -> None:
    client = cloud.fnf_client()
    create(client, "p", pass_flow("p"))
    from urllib.parse import urlencode

    body = urlencode({"Action": "StartExecution", "Version": "2019-03-15", "FlowName": "p",
                      "Input": value}).encode()
    data = request("POST", "/", {"Host": "x",
                                 "Content-Type": "application/x-www-form-urlencoded"}, body)
    payload = assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")
    assert payload["Message"].startswith("Input: ")


def test_chunked_request_bodies_are_dechunked_before_the_signature_check(cloud) -> None:
    body = _create_body('"chunky"')
    headers = signed_headers(cloud, "POST", FUNCTIONS, body,
                             **{"content-type": "application/json"})
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=30)
    pieces = (body[i:i + 7] for i in range(0, len(body), 7))
    conn.request("POST", FUNCTIONS, body=pieces, headers=headers, encode_chunked=True)
    resp = conn.getresponse()
    assert resp.status == 200, resp.read()
    assert json.loads(resp.read())["functionName"] == "chunky"
    got = cloud.fc_client().get_function("chunky", fc.GetFunctionRequest()).body
    assert got.function_name == "chunky"


def test_expect_100_continue(cloud) -> None:
    body = _create_body('"expected"')
    headers = {**signed_headers(cloud, "POST", FUNCTIONS, body,
                                **{"content-type": "application/json"}),
               "Expect": "100-continue", "Content-Length": str(len(body))}
    with Wire(cloud.server.port) as wire:
        wire.send(request("POST", FUNCTIONS, headers))
        assert wire.reply().status == 100  # before any byte of the body was sent
        wire.send(body)
        reply = wire.reply()
        assert reply.status == 200 and reply.json()["functionName"] == "expected"


def test_expect_100_continue_with_a_body_too_large_gets_no_100(cloud) -> None:
    data = request("POST", FUNCTIONS, {"Host": "x", "Expect": "100-continue",
                                       "Content-Length": str(500 * 1024 * 1024)})
    with Wire(cloud.server.port) as wire:
        assert_cloud_error(wire.send(data).reply(), 400, "EntityTooLarge")


def test_unsupported_expectation(cloud) -> None:
    data = request("POST", "/", {"Host": "x", "Expect": "200-ok"}, b"abc")
    assert_cloud_error(exchange(cloud.server.port, data), 417, "ExpectationFailed")


def test_pipelined_requests_are_answered_in_order(cloud) -> None:
    one = request("GET", "/_emulator/health", {"Host": cloud.endpoint})
    two = request("GET", "/_emulator/clock", {"Host": cloud.endpoint})
    with Wire(cloud.server.port) as wire:
        wire.send(one + two + one)
        first, second, third = wire.reply(), wire.reply(), wire.reply()
    assert first.json()["accountId"] == cloud.account_id
    assert second.json()["virtual"] is True
    assert third.json()["status"] == "ok"


def test_accepted_connections_have_tcp_nodelay(cloud) -> None:
    with Wire(cloud.server.port) as wire:
        wire.send(request("GET", "/_emulator/health", {"Host": cloud.endpoint})).reply()
        client_side = wire.sock.getsockname()
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                peer = socket.socket(fileno=os.dup(fd))
            except OSError:
                continue
            with peer:
                try:
                    found = (peer.type == socket.SOCK_STREAM
                             and peer.getpeername() == client_side)
                except OSError:
                    found = False
                if found:
                    assert peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                    return
    pytest.fail("the server side of the connection was not found")
