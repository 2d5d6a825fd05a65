"""Parent side of a custom runtime's requests: HTTP to its server, through the worker's relay.

What FC sends a custom runtime (FC docs, "Custom runtime: context and log format" and "Event
handlers" / "Lifecycle hooks" of custom runtimes; CONFIRMED unless marked):

* an event invocation: ``POST /invoke``, the payload as body, ``Content-Type:
  application/octet-stream``; the initializer: ``POST /initialize`` without a body; PreStop:
  ``GET /pre-stop``; an HTTP function: the client's request as is (method, path, query,
  headers, body). Each with the common headers of :func:`common_headers` and
  ``x-fc-control-path`` (``/invoke``, ``/initialize``, ``/pre-stop``, ``/http-invoke``).
* The answer: the body is the result; ``x-fc-status: 404`` reports a function error, ``200``
  success, and without it the call succeeded (FC: "If you do not specify x-fc-status, Function
  Compute considers the invocation successful"); a 5xx status also fails the call and FC
  restarts the instance [status 5xx failing the call: INFERRED from "500: Function Compute
  restarts the instance"]. A hook succeeds on ``x-fc-status: 200``, else on a 2xx status.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass, field

from deployer.emulator.runtime.model import InstanceSpec, TemporaryCredentials
from deployer.emulator.runtime.worker import SAMPLE_S, RunOutcome, Worker

__all__ = ["HttpAnswer", "call_server", "common_headers", "hook_ok", "invoke_ok"]

DEATH_GRACE_S = 0.5  # a connection closed without an answer: does the instance die?
MAX_RESPONSE = 32 * 1024 * 1024 + 1  # FC's synchronous response limit, plus one byte to see it


@dataclass(slots=True)
class HttpAnswer:
    """What one HTTP exchange with the server came to."""

    outcome: RunOutcome  # OK (an answer came back), TIMEOUT, CRASHED or OUT_OF_MEMORY
    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    log: bytes = b""
    duration_ms: float = 0.0
    max_memory_mb: float | None = None

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


def common_headers(spec: InstanceSpec, request_id: str, credentials: TemporaryCredentials | None,
                   control_path: str) -> list[tuple[str, str]]:
    """FC's common request headers for a custom runtime (credentials only when the function
    has a role and ``disableInjectCredentials`` is not ``Request``/``All``)."""
    headers = [
        ("x-fc-request-id", request_id), ("x-fc-function-name", spec.function_name),
        ("x-fc-function-handler", spec.handler),
        ("x-fc-function-memory", str(spec.memory_size)),
        ("x-fc-region", spec.region), ("x-fc-account-id", spec.account_id),
        ("x-fc-qualifier", spec.qualifier), ("x-fc-version-id", spec.version_id),
        ("x-fc-service-logproject", ""), ("x-fc-service-logstore", ""),
        ("x-fc-control-path", control_path),
    ]
    if spec.initializer_handler:
        headers += [("x-fc-function-initializer", spec.initializer_handler),
                    ("x-fc-initialization-timeout",
                     str(spec.initializer_timeout or spec.timeout))]
    if spec.pre_stop_handler:
        headers.append(("x-fc-instance-lifecycle-pre-stop-handler", spec.pre_stop_handler))
    if credentials is not None and spec.disable_inject_credentials not in ("Request", "All"):
        headers += [("x-fc-access-key-id", credentials.access_key_id),
                    ("x-fc-access-key-secret", credentials.access_key_secret),
                    ("x-fc-security-token", credentials.security_token)]
    return headers


def invoke_ok(answer: HttpAnswer) -> bool:
    """An invocation's verdict (see the module docstring)."""
    status = answer.header("x-fc-status")
    if status is not None:
        return status.strip() == "200"
    return answer.status < 500


def hook_ok(answer: HttpAnswer) -> bool:
    status = answer.header("x-fc-status")
    if status is not None:
        return status.strip() == "200"
    return 200 <= answer.status < 300


def call_server(worker: Worker, method: str, target: str, headers: list[tuple[str, str]],
                body: bytes, timeout_s: float) -> HttpAnswer:
    """One HTTP request to the instance's server, waiting up to ``timeout_s`` real seconds;
    the log it wrote meanwhile comes with the answer. A dead worker is CRASHED; a timeout
    closes this request's connection only (the caller decides about the instance)."""
    started = time.monotonic()
    mark = worker.log_mark()
    stream = worker.open_stream()
    if stream is None:
        return _finish(worker, HttpAnswer(RunOutcome.CRASHED), mark, started)
    result: list[HttpAnswer] = []
    sender = threading.Thread(target=_send, daemon=True,
                              args=(stream, method, target, headers, body, result))
    sender.start()
    sampling = not worker.monitor.kernel_enforced and worker.monitor.limit_mb > 0
    deadline = started + timeout_s
    while True:
        sender.join(min(SAMPLE_S, max(0.0, deadline - time.monotonic())))
        if not sender.is_alive():
            break
        if time.monotonic() >= deadline:
            stream.close()
            return _finish(worker, HttpAnswer(RunOutcome.TIMEOUT), mark, started)
        if not worker.alive():
            stream.close()
            return _finish(worker, HttpAnswer(RunOutcome.CRASHED), mark, started)
        if sampling and worker.monitor.over_limit():
            stream.close()
            return _finish(worker, HttpAnswer(RunOutcome.OUT_OF_MEMORY), mark, started)
    answer = result[0] if result else HttpAnswer(RunOutcome.CRASHED)
    if answer.outcome is RunOutcome.CRASHED and not worker.exits_within(DEATH_GRACE_S):
        answer.outcome = RunOutcome.ERROR  # the server closed the connection without answering
    return _finish(worker, answer, mark, started)


def _finish(worker: Worker, answer: HttpAnswer, mark: int, started: float) -> HttpAnswer:
    answer.log, _ = worker.log_since(mark)
    answer.duration_ms = (time.monotonic() - started) * 1000.0
    answer.max_memory_mb = worker.monitor.peak_mb()
    return answer


def _send(stream: socket.socket, method: str, target: str, headers: list[tuple[str, str]],
          body: bytes, out: list[HttpAnswer]) -> None:
    connection = http.client.HTTPConnection("instance")
    connection.sock = stream
    try:
        connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        names = {name.lower() for name, _ in headers}
        for name, value in headers:
            connection.putheader(name, value)
        if "host" not in names:
            connection.putheader("host", "localhost")
        if body or method in ("POST", "PUT", "PATCH"):
            connection.putheader("content-length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        data = response.read(MAX_RESPONSE)
        out.append(HttpAnswer(RunOutcome.OK, response.status, list(response.getheaders()), data))
    except (OSError, http.client.HTTPException):
        out.append(HttpAnswer(RunOutcome.CRASHED))
    finally:
        connection.close()
