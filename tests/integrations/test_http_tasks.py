"""HTTP:Request performed for real by the emulator against loopback servers only: the
documented output shape, method, headers, query and body, non-2xx statuses and an
unreachable server as catchable errors, and the Task's Timeout."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from alibabacloud_fnf20190315 import models as fnf_models

from deployer.testing import LocalCloud


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    arrived: ClassVar[threading.Condition] = threading.Condition()  # notified per request

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        with _Handler.arrived:
            _Handler.seen.append({"method": self.command, "path": self.path, "body": body,
                                  "headers": dict(self.headers)})
            _Handler.arrived.notify_all()
        if self.path.startswith("/missing"):
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"no such thing")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"Data": {"echo": body, "path": self.path}}).encode())

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Call
States:
  - Type: Task
    Name: Call
    Action: HTTP:Request
    Parameters:
      method: {method}
      url: {url}
      headers:
        X-Trace: abc
      query:
        page: "2"
      body.$: $Input
    Catch:
      - Errors: [FnF.ALL]
        Next: Caught
        OutputConstructor:
          error.$: $Context.Current.Error.Code
    End: true
  - Type: Pass
    Name: Caught
    End: true
"""


def _run(cloud: LocalCloud, fnf: Any, name: str, url: str, method: str = "POST",
         payload: dict[str, Any] | None = None) -> dict[str, Any]:
    fnf.create_flow(fnf_models.CreateFlowRequest(
        name=name, definition=FLOW.format(name=name, url=url, method=method),
        description="", type="FDL"))
    fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name=name, execution_name="e1", input=json.dumps(payload or {"q": "hi"})))
    done = cloud.wait_for_execution(name, "e1")
    assert done["Status"] == "Succeeded", done
    return dict(json.loads(done["Output"]))


def test_the_service_answer_is_the_task_output(cloud: LocalCloud, fnf: Any,
                                               service: str) -> None:
    out = _run(cloud, fnf, "http-ok", f"{service}/embed", "post")
    assert out["Code"] == 200
    assert out["Header"]["Content-Type"] == "application/json"
    assert json.loads(out["Body"]) == {"Data": {"echo": '{"q":"hi"}', "path": "/embed?page=2"}}
    sent = _Handler.seen[-1]
    assert sent["method"] == "POST" and sent["headers"]["X-Trace"] == "abc"
    assert sent["headers"]["Content-Type"] == "application/json"


def test_a_404_is_a_catchable_error(cloud: LocalCloud, fnf: Any, service: str) -> None:
    assert _run(cloud, fnf, "http-404", f"{service}/missing") == {"error": "HTTP.404"}


def test_an_unreachable_server_is_a_catchable_error(cloud: LocalCloud, fnf: Any) -> None:
    out = _run(cloud, fnf, "http-down", "http://127.0.0.1:9/nothing-listens")
    assert out == {"error": "HTTP.ConnectionError"}


def test_a_bad_method_is_refused_by_name(cloud: LocalCloud, fnf: Any, service: str) -> None:
    assert _run(cloud, fnf, "http-bad", service, "FETCH") == {"error": "HTTP.InvalidArgument"}


def test_a_callback_request_carries_the_token_and_waits_for_its_report(
        cloud: LocalCloud, fnf: Any, service: str) -> None:
    flow = ("Type: StateMachine\nSpecVersion: v1\nName: http-cb\nStartAt: Ask\nStates:\n"
            "  - Type: Task\n    Name: Ask\n    Action: HTTP:Request\n"
            "    TaskMode: WaitForCustomCallback\n    Parameters:\n"
            f"      method: POST\n      url: {service}/approve\n      body: {{}}\n"
            "    End: true\n")
    fnf.create_flow(fnf_models.CreateFlowRequest(name="http-cb", definition=flow,
                                                 description="", type="FDL"))
    before = len(_Handler.seen)
    fnf.start_execution(fnf_models.StartExecutionRequest(flow_name="http-cb",
                                                         execution_name="e1"))
    with _Handler.arrived:
        assert _Handler.arrived.wait_for(lambda: len(_Handler.seen) > before, 30.0)
    token = _Handler.seen[-1]["headers"]["X-FnF-Http-Callback-Task-Token"]
    waiting = fnf.describe_execution(fnf_models.DescribeExecutionRequest(
        flow_name="http-cb", execution_name="e1")).body
    assert waiting.status == "Running"  # answered, and now waiting for its report
    fnf.report_task_succeeded(fnf_models.ReportTaskSucceededRequest(
        task_token=token, output=json.dumps({"approved": True})))
    done = cloud.wait_for_execution("http-cb", "e1")
    assert json.loads(done["Output"]) == {"approved": True}
