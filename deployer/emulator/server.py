"""The emulator's HTTP/1.1 server: threaded, keep-alive, exact Content-Length, never gzip.

``EmulatorServer(state_dir, host, port, clock, runtime)`` binds 127.0.0.1 by default (another
interface only when ``host`` says so); port 0 picks a free port. ``start()`` serves from a
background thread and returns once listening; ``stop()`` shuts it down and closes the state.

The handler keeps the raw request target (signatures are computed over it), reads exactly
``Content-Length`` bytes, and hands a plain :class:`HttpRequest` to the router. Bodies over
``max_body`` (140 MB: a base64 100 MB zip in JSON) are refused with ``EntityTooLarge``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from deployer import __version__
from deployer.emulator.api import errors as e
from deployer.emulator.api.access import RequestAccess
from deployer.emulator.api.admin import AdminApi
from deployer.emulator.api.cloudflow import CloudFlowApi
from deployer.emulator.api.errors import Style, error_response
from deployer.emulator.api.fc import FcApi
from deployer.emulator.api.http import Headers, HttpRequest, HttpResponse
from deployer.emulator.api.ram import RamApi
from deployer.emulator.api.router import Router, fc_request_id
from deployer.emulator.api.sts import StsApi
from deployer.emulator.app import Emulator, Engine
from deployer.emulator.clock import Clock, SystemClock
from deployer.emulator.services.ports import FunctionRuntime

__all__ = ["MAX_BODY", "EmulatorServer"]

log = logging.getLogger("deployer.emulator")
MAX_BODY = 140 * 1024 * 1024
_DRAIN_LIMIT = 512 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: a response goes out as headers + body; with Nagle on, the body would wait for
    # the client's delayed ACK (about 40 ms a request).
    disable_nagle_algorithm = True
    server_version = f"cloudflow-deployer-emulator/{__version__}"
    server: _HttpServer

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def _handle(self) -> None:
        length_text = self.headers.get("Content-Length", "0") or "0"
        try:
            length = int(length_text)
            if length < 0:
                raise ValueError
        except ValueError:
            self._send(self._error(e.InvalidArgument("invalid Content-Length")), close=True)
            return
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._send(self._error(e.InvalidArgument("chunked request bodies are not supported;"
                                                     " send Content-Length")), close=True)
            return
        if length > self.server.max_body:
            self._drain(length)
            err = e.EntityTooLarge(
                f"payload size exceeds maximum allowed size ({self.server.max_body} bytes)")
            self._send(self._error(err), close=True)
            return
        body = self.rfile.read(length) if length else b""
        request = HttpRequest(self.command, self.path, Headers(tuple(self.headers.items())),
                              body, self.client_address[0])
        self._send(self.server.router.dispatch(request))

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _handle

    def _drain(self, length: int) -> None:
        if length > _DRAIN_LIMIT:
            return
        remaining = length
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)

    def _error(self, err: e.ApiError) -> HttpResponse:
        return error_response(err, fc_request_id(self.server.router.clock.now()), Style.ROA)

    def _send(self, response: HttpResponse, *, close: bool = False) -> None:
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and response.body:
            self.wfile.write(response.body)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    # SO_REUSEADDR: a restart may bind the port while connections of the previous run linger
    # in TIME_WAIT; Linux still refuses the bind when another socket listens there.
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], router: Router, max_body: int) -> None:
        self.router = router
        self.max_body = max_body
        super().__init__(address, _Handler)


class EmulatorServer:
    """An emulator behind an HTTP listener; see the module docstring."""

    def __init__(self, state_dir: Path, host: str = "127.0.0.1", port: int = 0,
                 clock: Clock | None = None, runtime: FunctionRuntime | None = None, *,
                 region: str = "cn-hangzhou", engines: Sequence[Engine] = (),
                 max_body: int = MAX_BODY, step_latency: float = 0.0,
                 console: bool = True) -> None:
        self.state_dir = Path(state_dir)
        self.clock = clock or SystemClock()
        self.emulator = Emulator(self.state_dir, self.clock, runtime, region=region,
                                 step_latency=step_latency)
        self.emulator.engines.extend(engines)
        ident = self.emulator.identity
        self.router = Router(ident.account_id, ident.secret_for, self.clock, region)
        self.router.access = RequestAccess(ident.account_id, ident.secret_for,
                                           self.emulator.tokens, self.emulator.authorizer)
        self.router.add_roa(FcApi(self.emulator.functions))
        self.router.add_rpc(RamApi(self.emulator.roles))
        self.router.add_rpc(StsApi(self.emulator.tokens))
        self.router.add_rpc(CloudFlowApi(self.emulator.flows, self.emulator.executions,
                                         releases=self.emulator.flow_versions,
                                         schedules=self.emulator.schedules))
        self.router.admin = AdminApi(clock=self.clock, health=self._health,
                                     reset=self.emulator.reset, code_path=self.emulator.code.path,
                                     advanced=self.emulator.flow_engine.clock_moved,
                                     logs=self._recent_logs)
        self.console = self._console() if console else None
        try:
            self._httpd = _HttpServer((host, port), self.router, max_body)
        except OSError:
            self.emulator.close()
            raise
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self.router.public_url = self.url
        self.emulator.serve_at(self.endpoint)
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        """``host:port`` as the SDKs' ``Config.endpoint`` wants it (no scheme)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    def _console(self) -> object:
        """The web console under ``/_console/`` (its own per-daemon token for its POSTs)."""
        import secrets

        from deployer.console.sources import Sources
        from deployer.emulator.api.console import ConsoleApi

        em = self.emulator
        sources = Sources(em.flows, em.executions, em.functions, self.clock,
                          em.identity.account_id, em.region, lambda: self.endpoint,
                          self._flow_stats, em.flow_engine.flow)
        api = ConsoleApi(sources, token=secrets.token_urlsafe(24), port=lambda: self.port)
        self.router.add_local(api)
        return api

    def _health(self) -> dict[str, object]:
        return {"endpoint": self.endpoint, "accountId": self.emulator.identity.account_id,
                "region": self.emulator.region, "pid": os.getpid(), "version": __version__,
                "clock": "virtual" if self.clock.is_virtual else "real",
                "stateDir": str(self.state_dir), "cloudflow": self._flow_stats()}

    def _flow_stats(self) -> dict[str, object]:
        engine = self.emulator.flow_engine
        stats = engine.stats()
        return {"runningExecutions": stats.running_executions,
                "pendingTimers": stats.pending_timers, "inFlight": stats.in_flight,
                "stepLatency": engine.step_latency, "autoAdvance": engine.auto_advance}

    def _recent_logs(self, region: str, function: str, limit: int) -> list[dict[str, object]]:
        records = self.emulator.functions.recent_invocations(
            self.emulator.identity.account_id, region or self.emulator.region, function, limit)
        return [{"requestId": r.request_id, "invokedAt": r.invoked_at,
                 "invocationType": r.invocation_type, "status": r.status,
                 "errorType": r.error_type, "durationMs": r.duration_ms, "log": r.log,
                 "instanceId": r.instance_id, "coldStart": r.cold_start}
                for r in records]

    def start(self) -> EmulatorServer:
        """Serve in a background thread (the socket already listens); start the engines."""
        for engine in self.emulator.engines:
            engine.start()
        httpd = self._httpd
        self._thread = threading.Thread(target=lambda: httpd.serve_forever(poll_interval=0.05),
                                        name=f"emulator-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening, stop engines and the runtime, close the database. Idempotent."""
        if self._httpd is None:
            return
        httpd, self._httpd = self._httpd, None  # type: ignore[assignment]
        if self._thread is not None:
            httpd.shutdown()
            self._thread.join(timeout=10)
        httpd.server_close()
        self.emulator.close()

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
