"""Custom runtimes (custom, custom.debian10/11/12): the function's own HTTP server, started by the
process runtime in the sandbox and reached through its worker: start command, readiness, FC's
request headers, event and HTTP functions, hooks, errors, concurrency, logs."""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from runtime_support import ACCOUNT, REGION, call, make_spec, payload_json

from deployer.emulator.clock import SystemClock
from deployer.emulator.runtime import (
    CustomRuntimeSettings,
    HealthCheck,
    HttpCall,
    ProcessRuntime,
    RuntimeNotEmulated,
)
from deployer.emulator.runtime.model import TemporaryCredentials


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessRuntime]:
    rt = ProcessRuntime(tmp_path_factory.mktemp("custom") / "work", SystemClock())
    yield rt
    rt.close()


PORTS = iter(range(19101, 19400))

SERVER = """
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        rid = self.headers["x-fc-request-id"]
        data = self.rfile.read(int(self.headers.get("content-length") or 0))
        print(f"FC Invoke Start RequestId: {rid}", flush=True)
        print(f"{self.command} {self.path}", flush=True)
        print(f"FC Invoke End RequestId: {rid}", flush=True)
        if self.path == "/initialize":
            return self.reply(200, b"initialized")
        if data == b"fail":
            return self.reply(404, b'{"error": "failed"}', [("x-fc-status", "404")])
        if data == b"crash":
            os._exit(7)
        if data == b"500":
            return self.reply(500, b"internal")
        if data.startswith(b"sleep"):
            time.sleep(float(data[5:]))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.reply(200, json.dumps({"path": self.path, "body": data.decode(),
                                    "headers": headers, "pid": os.getpid(),
                                    "port": os.environ.get("FC_CUSTOM_LISTEN_PORT"),
                                    "thread": threading.get_ident()}).encode())

    def do_GET(self):
        print(f"GET {self.path} {self.headers.get('x-fc-control-path')}", flush=True)
        if self.path == "/pre-stop":
            return self.reply(200, b"bye")
        self.reply(202, f"got {self.path}".encode(), [("x-answer", "yes")])

    do_PUT = do_POST

ThreadingHTTPServer((sys.argv[1] if len(sys.argv) > 1 else "0.0.0.0",
                     int(os.environ["FC_CUSTOM_LISTEN_PORT"])), Handler).serve_forever()
"""


def custom_spec(tmp_path: Path, *, port: int | None = None, args: tuple[str, ...] = (),
                **overrides) -> object:
    settings = CustomRuntimeSettings(command=(sys.executable, "server.py"), args=args,
                                     port=port or next(PORTS))
    fields = {"runtime": "custom.debian10", "handler": "index.handler", "custom": settings,
              "timeout": 10, "memory_size": 256}
    fields.update(overrides)
    return make_spec(tmp_path, {"server.py": SERVER}, **fields)


def test_event_function_gets_the_payload_and_fc_headers(runtime, tmp_path):
    spec = custom_spec(tmp_path)
    result = call(runtime, spec, b'{"k": 1}', rid="rid-1")
    assert result.error_type is None, result.payload
    body = payload_json(result)
    assert (body["path"], body["body"]) == ("/invoke", '{"k": 1}')
    headers = body["headers"]
    assert headers["content-type"] == "application/octet-stream"
    assert {k: headers[k] for k in (
        "x-fc-request-id", "x-fc-function-name", "x-fc-function-handler",
        "x-fc-function-memory", "x-fc-region", "x-fc-account-id", "x-fc-qualifier",
        "x-fc-version-id", "x-fc-control-path")} == {
        "x-fc-request-id": "rid-1", "x-fc-function-name": "fn",
        "x-fc-function-handler": "index.handler", "x-fc-function-memory": "256",
        "x-fc-region": REGION, "x-fc-account-id": ACCOUNT, "x-fc-qualifier": "LATEST",
        "x-fc-version-id": "LATEST", "x-fc-control-path": "/invoke"}
    assert "x-fc-access-key-id" not in headers  # no role, no credentials
    assert body["port"] == str(spec.custom.port)
    warm = call(runtime, spec, b"again")
    assert not warm.cold_start and payload_json(warm)["pid"] == body["pid"]


def test_role_credentials_come_as_headers_unless_disabled(runtime, tmp_path):
    keys = TemporaryCredentials("STS.key", "secret", "token", 2e9)
    spec = custom_spec(tmp_path, role="acs:ram::1:role/r", credentials=lambda: keys)
    headers = payload_json(call(runtime, spec))["headers"]
    assert (headers["x-fc-access-key-id"], headers["x-fc-access-key-secret"],
            headers["x-fc-security-token"]) == ("STS.key", "secret", "token")
    hidden = dataclasses.replace(spec, disable_inject_credentials="Request")
    assert "x-fc-access-key-id" not in payload_json(call(runtime, hidden))["headers"]


def test_x_fc_status_404_is_a_function_error_and_a_5xx_restarts_the_instance(runtime,
                                                                              tmp_path):
    spec = custom_spec(tmp_path)
    failed = call(runtime, spec, b"fail")
    assert (failed.error_type, failed.payload) == ("UnhandledInvocationError",
                                                   b'{"error": "failed"}')
    pid = payload_json(call(runtime, spec))["pid"]
    broken = call(runtime, spec, b"500")
    assert broken.error_type == "UnhandledInvocationError" and broken.payload == b"internal"
    after = call(runtime, spec)
    assert after.cold_start and payload_json(after)["pid"] != pid


def test_a_server_that_dies_is_a_crash(runtime, tmp_path):
    spec = custom_spec(tmp_path)
    call(runtime, spec)
    crashed = call(runtime, spec, b"crash", rid="c-1")
    assert crashed.error_type == "UnhandledInvocationError"
    assert crashed.payload.startswith(b'{"errorMessage": "Process exited unexpectedly')
    assert call(runtime, spec).cold_start


def test_http_function_requests_are_forwarded_as_they_are(runtime, tmp_path):
    spec = custom_spec(tmp_path)
    result = runtime.invoke_http(spec, HttpCall(
        "GET", "/a%20b/c", "x=1&y=2", (("accept", "text/plain"), ("x-fc-spoofed", "no"))),
        request_id="h-1")
    assert (result.http_status, result.payload) == (202, b"got /a%20b/c?x=1&y=2")
    assert ("x-answer", "yes") in result.http_headers
    assert "GET /a%20b/c?x=1&y=2 /http-invoke" in result.log_text
    put = runtime.invoke_http(spec, HttpCall("PUT", "/items", "", (), b"data"),
                              request_id="h-2")
    body = json.loads(put.payload)
    assert (body["path"], body["body"]) == ("/items", "data")
    assert "x-fc-spoofed" not in body["headers"]  # a client cannot set FC's own headers
    assert body["headers"]["x-fc-control-path"] == "/http-invoke"


def test_built_in_runtimes_have_no_server_to_forward_to(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": "def handler(e, c):\n    return e\n"})
    with pytest.raises(RuntimeNotEmulated, match="invokes its event handler"):
        runtime.invoke_http(spec, HttpCall("GET", "/"), request_id="x")


def test_tail_log_is_what_the_server_marked_for_the_request(runtime, tmp_path):
    spec = custom_spec(tmp_path)
    result = call(runtime, spec, b"x", rid="tail-1")
    assert result.log_tail == (b"FC Invoke Start RequestId: tail-1\nPOST /invoke\n"
                               b"FC Invoke End RequestId: tail-1\n")
    unmarked = runtime.invoke_http(spec, HttpCall("GET", "/q"), request_id="tail-2",
                                   tail_logs=True)
    assert unmarked.log_tail == b"" and "GET /q" in unmarked.log_text


def test_initializer_and_pre_stop_hooks(runtime, tmp_path):
    spec = custom_spec(tmp_path, initializer_handler="anything", initializer_timeout=5,
                       pre_stop_handler="anything", pre_stop_timeout=5)
    runs = []
    runtime.hook_sink = runs.append
    try:
        first = call(runtime, spec, rid="i-1")
        assert "POST /initialize" in first.log_text and "POST /invoke" in first.log_text
        assert "POST /initialize" not in call(runtime, spec, rid="i-2").log_text
        runtime.retire(ACCOUNT, REGION, "fn")
        _wait_for(lambda: runs)
    finally:
        runtime.hook_sink = None
    assert runs[0].hook == "PreStop" and runs[0].ok
    assert "GET /pre-stop /pre-stop" in runs[0].log_text


def _wait_for(condition, timeout: float = 20.0) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        done.wait(0.05)
    raise AssertionError("condition not met")


def test_the_default_start_command_is_the_packages_bootstrap(runtime, tmp_path):
    port = next(PORTS)
    bootstrap = f"#!/bin/sh\nexec {sys.executable} server.py\n"
    spec = make_spec(tmp_path, {"bootstrap": bootstrap, "server.py": SERVER},
                     executable=frozenset({"bootstrap"}), runtime="custom",
                     handler="index.handler", custom=CustomRuntimeSettings(port=port))
    assert payload_json(call(runtime, spec, b"hi"))["body"] == "hi"
    missing = make_spec(tmp_path, {"server.py": SERVER}, runtime="custom",
                        custom=CustomRuntimeSettings(port=port))
    failed = call(runtime, missing)
    assert failed.error_type == "UnhandledInvocationError"
    assert "Failed to start function instance" in json.loads(failed.payload)["errorMessage"]
    assert "bootstrap does not exist" in json.loads(failed.payload)["errorMessage"]
    plain = make_spec(tmp_path, {"bootstrap": bootstrap, "server.py": SERVER}, runtime="custom",
                      custom=CustomRuntimeSettings(port=port))
    assert "is not executable" in json.loads(call(runtime, plain).payload)["errorMessage"]


def test_readiness_refuses_what_fc_refuses(runtime, tmp_path):
    loopback = custom_spec(tmp_path, args=("127.0.0.1",))
    message = json.loads(call(runtime, loopback).payload)["errorMessage"]
    assert "listens on 127.0.0.1 only" in message and "0.0.0.0" in message
    exits = make_spec(tmp_path, {"server.py": "raise SystemExit(4)\n"}, runtime="custom",
                      custom=CustomRuntimeSettings(command=(sys.executable, "server.py"),
                                                   port=next(PORTS)))
    result = call(runtime, exits)
    assert "exited unexpectedly (code 4) before it listened" in json.loads(
        result.payload)["errorMessage"]
    with socket.create_server(("0.0.0.0", 0)) as taken:
        busy = custom_spec(tmp_path, port=taken.getsockname()[1])
        result = call(runtime, busy)
    if runtime._pool.shared_network:  # instances share this machine's ports
        assert "is already in use on this machine" in json.loads(result.payload)["errorMessage"]
    else:  # each instance has a network of its own (docs/runtime.md "Network"), as on FC
        assert result.error_type is None, result.payload


def test_health_check_path_must_answer_2xx_or_3xx(runtime, tmp_path):
    healthy = custom_spec(tmp_path)
    healthy = dataclasses.replace(healthy, custom=dataclasses.replace(
        healthy.custom, health_check=HealthCheck(http_get_url="/ready")))
    assert call(runtime, healthy).error_type is None  # GET answers 202
    failing = make_spec(tmp_path, {"server.py": SERVER.replace("202", "503")},
                        runtime="custom.debian12",
                        custom=CustomRuntimeSettings(command=(sys.executable, "server.py"),
                                                     port=next(PORTS),
                                                     health_check=HealthCheck(
                                                         http_get_url="/ready")))
    result = call(runtime, failing)
    assert "health check failed" in json.loads(result.payload)["errorMessage"]
    assert "HTTP 503" in json.loads(result.payload)["errorMessage"]


def test_timeout_fails_the_request(runtime, tmp_path):
    spec = custom_spec(tmp_path, timeout=1)
    result = call(runtime, spec, b"sleep5", rid="t-1")
    assert result.payload == b'{"errorMessage": "Function timed out after 1 seconds"}'
    assert result.log_text.endswith(
        "FC Invoke End RequestId: t-1, Error: Unhandled function error\n")
    assert call(runtime, spec).cold_start  # one request per instance: it was stopped


def test_instance_concurrency_lets_requests_share_an_instance(runtime, tmp_path):
    spec = custom_spec(tmp_path, instance_concurrency=4)
    call(runtime, spec)  # a ready instance
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: call(runtime, spec, b"sleep0.5", rid=f"p{i}"),
                                range(4)))
    assert {payload_json(r)["pid"] for r in results} == {payload_json(results[0])["pid"]}
    assert len({payload_json(r)["thread"] for r in results}) == 4  # served at the same time
    assert runtime.instance_count(ACCOUNT, REGION, "fn") == 1
