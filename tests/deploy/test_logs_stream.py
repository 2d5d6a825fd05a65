"""`deploy logs --follow` on the local target: the emulator streams a function's invocations
(``GET /_emulator/logs/stream``, server-sent events) and ``core.functions.follow_logs`` reads
them as they are recorded instead of polling; Log Service keeps its poll."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from deployer.cloud.connection import CloudConnection, Endpoints, StaticKeys
from deployer.cloud.fc import FunctionComputeClient
from deployer.cloud.log_stream import LogStream
from deployer.cloud.logs import EmulatorLogs
from deployer.core.functions import follow_logs
from deployer.errors import NotFoundError
from deployer.testing import mock_cloud
from deployer.testing.environment import LocalCloud
from tests.console.sse import EventStream
from tests.emulator.cloudflow_support import deploy_seed_functions


@pytest.fixture
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False) as local:
        deploy_seed_functions(local)
        yield local


def invoke(cloud: LocalCloud, job: str, function: str = "GetJobStatus") -> str:
    from alibabacloud_fc20230330 import models

    response = cloud.fc_client().invoke_function(function, models.InvokeFunctionRequest(
        body=json.dumps({"job_id": job, "delay": 0}).encode()))
    return str(response.headers["x-fc-request-id"])


def stream_path(function: str) -> str:
    return f"/_emulator/logs/stream?function={function}&region=cn-hangzhou"


def test_the_emulator_streams_invocations_as_they_are_recorded(cloud: LocalCloud) -> None:
    before = invoke(cloud, "before")
    with EventStream(cloud, stream_path("GetJobStatus")) as stream:
        assert stream.status == 200
        assert stream.next().kind == "ready"  # the starting point: "before" is not sent
        first = invoke(cloud, "first")
        event = stream.next()
        assert event.kind == "invocation" and event.json()["requestId"] == first
        assert "Job first" in event.json()["log"] and event.json()["status"] == "Succeeded"
        invoke(cloud, "other", function="StartJob")  # another function's: not on this stream
        second = invoke(cloud, "second")
        assert stream.next().json()["requestId"] == second
    # reconnecting with Last-Event-ID gives what was recorded meanwhile, in order
    missed = [invoke(cloud, f"missed-{n}") for n in range(3)]
    with EventStream(cloud, stream_path("GetJobStatus"),
                     {"Last-Event-ID": event.id}) as stream:
        assert stream.next().kind == "ready"
        replay = [stream.next().json()["requestId"] for _ in range(4)]
        assert replay == [second, *missed] and before not in replay
        cloud.fc_client().delete_function("GetJobStatus")
        assert stream.next().kind == "gone"
        with pytest.raises(EOFError):
            stream.next()


def test_the_log_stream_refuses_what_the_admin_api_refuses(cloud: LocalCloud) -> None:
    with EventStream(cloud, stream_path("Nope")) as stream:
        assert stream.status == 404 and b"NotFound" in stream.response.read()
    with EventStream(cloud, "/_emulator/logs/stream") as stream:
        assert stream.status == 400 and b"'function' is required" in stream.response.read()
    with EventStream(cloud, stream_path("StartJob"),
                     {"Host": "evil.example"}) as stream:
        assert stream.status == 403 and b"AccessDenied" in stream.response.read()


def _fc(cloud: LocalCloud) -> FunctionComputeClient:
    return FunctionComputeClient(CloudConnection(
        region=cloud.region, endpoints=Endpoints.single(cloud.endpoint),
        credential=StaticKeys(cloud.access_key_id, cloud.access_key_secret),
        headers={"x-deployer-region": cloud.region}))


def test_follow_logs_reads_the_stream_and_never_polls(cloud: LocalCloud) -> None:
    def no_polling(seconds: float) -> None:
        raise AssertionError(f"polled (slept {seconds} s) although the emulator streams")

    invoke(cloud, "before")
    logs = EmulatorLogs(cloud.endpoint, cloud.region, token=cloud.admin_token)
    # the stream is open from here on
    arriving = follow_logs(_fc(cloud), logs, "StartJob", sleep=no_polling)
    started = invoke(cloud, "streamed", function="StartJob")
    first = next(arriving)  # blocks until the emulator sends it
    assert first.request_id == started and first.status == "Succeeded"
    assert "Started job with ID" in first.log and first.instance_id
    cloud.fc_client().delete_function("StartJob")
    with pytest.raises(NotFoundError, match="StartJob does not exist"):
        next(arriving)


class _OldDaemon(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"Code": "PathNotSupported", "Message": "not supported"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_daemon_without_the_stream_is_polled() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OldDaemon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"127.0.0.1:{server.server_address[1]}"
        assert LogStream.open(endpoint, "cn-hangzhou", "StartJob", dict) is None
    finally:
        server.shutdown()
        server.server_close()
