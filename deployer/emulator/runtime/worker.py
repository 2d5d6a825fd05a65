"""Parent side of one instance: the worker subprocess, its pipes, one exchange at a time.

A :class:`Worker` owns three pipes: requests (parent -> worker), responses (worker -> parent)
and the log (the worker's fd 1 and 2). An exchange writes one request frame and then waits in
``select`` on the response and log pipes until the response frame is complete, the real-time
deadline passes, or the response pipe closes (the worker died). Reading the log while waiting
means a chatty handler can never block on a full pipe.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.emulator.runtime import bootstrap, frames
from deployer.emulator.runtime.isolation import MemoryMonitor, kill_tree
from deployer.emulator.runtime.worker_logs import MAX_STORED_LOG, BoundedLog, LogTap

__all__ = ["MAX_STORED_LOG", "Exchange", "RunOutcome", "Worker"]

BOOTSTRAP_PATH = Path(bootstrap.__file__).resolve()
TERM_GRACE_S = 0.5  # after SIGTERM on timeout, before SIGKILL
STOP_GRACE_S = 1.0  # after closing the request pipe of an idle worker, before SIGKILL
SAMPLE_S = 0.02  # memory sampling period while a request runs (without a memory cgroup)


class RunOutcome(enum.Enum):
    OK = "ok"
    ERROR = "error"  # the worker answered with an error body
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # the worker exited before answering
    OUT_OF_MEMORY = "oom"  # the instance went over its memorySize (killed)


@dataclass(frozen=True, slots=True)
class Exchange:
    outcome: RunOutcome
    body: bytes
    log: bytes
    duration_ms: float
    max_memory_mb: float | None = None  # peak of the instance during the request
    extra: dict[str, Any] | None = None  # other keys of the worker's answer header


class Worker:
    """One worker process. Not thread-safe for exchanges (the pool gives it to one caller);
    :meth:`kill` may be called from any thread."""

    def __init__(
        self, *, python: str, code_root: Path, env: dict[str, str], config: dict[str, Any],
        monitor: MemoryMonitor | None = None, uid: int | None = None, relay: bool = False,
    ) -> None:
        """``relay``: the worker is a custom runtime's supervisor; requests reach its server
        through :meth:`open_stream`, and a thread keeps reading its log (:meth:`log_since`)."""
        request_read, self._request_write = os.pipe()
        self._response_read, response_write = os.pipe()
        self._log_read, log_write = os.pipe()
        self._control: socket.socket | None = None
        theirs: socket.socket | None = None
        if relay:
            self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        child_fds = (request_read, response_write) + ((theirs.fileno(),) if theirs else ())
        try:
            self.process = _start(python, code_root, env, uid, child_fds, log_write)
        except BaseException:
            for fd in (self._request_write, self._response_read, self._log_read):
                os.close(fd)
            if self._control is not None:
                self._control.close()
            raise
        finally:
            for fd in (request_read, response_write, log_write):
                os.close(fd)
            if theirs is not None:
                theirs.close()
        self._tap: LogTap | None = None
        os.set_blocking(self._log_read, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._response_read, selectors.EVENT_READ)
        self._selector.register(self._log_read, selectors.EVENT_READ)
        self._reap_lock = threading.Lock()
        self._rusage_maxrss_kb: int | None = None
        self._closed = False
        self._pending_log = bytearray()
        self.uid = uid
        self.monitor = monitor or MemoryMonitor(0, None, 0)
        try:
            self.monitor.attach(self.process.pid)
        except OSError:
            self.monitor = MemoryMonitor(self.monitor.limit_mb, None, 0)
            self.monitor.attach(self.process.pid)
        self._send(frames.encode_frame(config))

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    def start(self, timeout_s: float) -> Exchange:
        """Wait up to ``timeout_s`` real seconds for the worker's ready frame.

        The startup log (``FunctionCompute python3 runtime inited.``) is kept and handed out
        with the next exchange's log. A worker that dies or hangs while starting is reaped.
        """
        ready = self._await(time.monotonic(), timeout_s)
        if ready.outcome is RunOutcome.OK:
            self._pending_log = bytearray(ready.log)
            if self._control is not None:  # from now on the log is read by a thread
                self._selector.unregister(self._log_read)
                self._tap = LogTap(self._log_read, bytes(self._pending_log))
                self._pending_log = bytearray()
        return ready

    def open_stream(self) -> socket.socket | None:
        """A new connection to the custom runtime's server, through the worker's relay (None
        when the worker is gone)."""
        if self._control is None:
            raise RuntimeError("this worker has no relay")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self._control, [b"c"], [theirs.fileno()])
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        return ours

    def log_since(self, mark: int) -> tuple[bytes, int]:
        """A relayed worker's log written since ``mark`` (a position :meth:`log_mark` gave) and
        the new mark; what was dropped to keep the buffer bounded is left out."""
        assert self._tap is not None
        return self._tap.since(mark)

    def log_mark(self) -> int:
        assert self._tap is not None
        return self._tap.mark()

    def exits_within(self, seconds: float) -> bool:
        """Whether the worker exits within ``seconds`` real seconds (a custom runtime's
        supervisor exits right after its server died)."""
        try:
            self._reap(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def alive(self) -> bool:
        """The worker process has not exited (an exited one is reaped here)."""
        return not self.exits_within(0.0)

    def exchange(self, header: dict[str, Any], body: bytes, timeout_s: float) -> Exchange:
        """Send one request and wait up to ``timeout_s`` real seconds for its answer.

        On timeout the worker is terminated (SIGTERM, then SIGKILL after a short grace) and
        reaped; on a dead worker it is reaped. Either way it must not be used again.
        ``duration_ms`` is the worker's own measure of the request when it answered.
        """
        started = time.monotonic()
        self.monitor.before_request()
        if not self._send(frames.encode_frame(header, body)):
            return self._died(self._take_pending_log(), started)
        return self._await(started, timeout_s)

    def _await(self, started: float, timeout_s: float) -> Exchange:
        log = self._take_pending_log()
        deadline = started + timeout_s
        response = bytearray()
        sampling = not self.monitor.kernel_enforced and self.monitor.limit_mb > 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._terminate()
                self._drain_log(log)
                return Exchange(RunOutcome.TIMEOUT, b"", bytes(log), _elapsed_ms(started),
                                self.monitor.peak_mb())
            events = self._selector.select(min(remaining, SAMPLE_S) if sampling else remaining)
            if sampling and not events and self.monitor.over_limit():
                return self._out_of_memory(log, started)
            for key, _ in events:
                if key.fd == self._log_read:
                    self._drain_log(log)
                    continue
                chunk = os.read(self._response_read, 1 << 20)
                if not chunk:
                    return self._died(log, started)
                response += chunk
            try:
                answer = _complete_frame(response)
            except ValueError:  # the handler wrote garbage on the protocol pipe
                return self._died(log, started)
            if answer is not None:
                duration = answer[0].get("duration_ms", _elapsed_ms(started))
                self._drain_log(log)
                outcome = RunOutcome.OK if answer[0].get("ok") else RunOutcome.ERROR
                peak = self.monitor.peak_mb()
                if peak is not None and self.monitor.limit_mb and peak > self.monitor.limit_mb:
                    return self._out_of_memory(log, started)
                return Exchange(outcome, answer[1], bytes(log), duration, peak, answer[0])

    def _out_of_memory(self, log: BoundedLog, started: float) -> Exchange:
        peak = self.monitor.peak_mb()
        self.kill()
        try:
            self._reap(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self._reap(timeout=None)
        self._drain_log(log)
        return Exchange(RunOutcome.OUT_OF_MEMORY, b"", bytes(log), _elapsed_ms(started),
                        max(peak or 0.0, float(self.monitor.limit_mb)))

    def _take_pending_log(self) -> BoundedLog:
        log, self._pending_log = BoundedLog(bytes(self._pending_log)), bytearray()
        return log

    def stop(self) -> None:
        """Stop gracefully (EOF on the request pipe), SIGKILL if it lingers; reap. Idempotent.
        Processes the handler started (in any session) are killed first."""
        if self.process.returncode is None:
            kill_tree(self.process.pid, monitor=self.monitor, uid=self.uid, include_root=False)
        fd, self._request_write = self._request_write, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            self._reap(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()
            self._reap(timeout=None)
        self._close_fds()
        self.monitor.close()

    def kill(self) -> None:
        """SIGKILL the worker and every process below it, whatever its session or group."""
        if self.process.returncode is None:
            kill_tree(self.process.pid, monitor=self.monitor, uid=self.uid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    # -- internals

    def _send(self, frame: bytes) -> bool:
        try:
            frames.write_all(self._request_write, frame)
        except (BrokenPipeError, OSError):
            return False
        return True

    def _died(self, log: BoundedLog, started: float) -> Exchange:
        oom = self.monitor.oom_killed()
        peak = self.monitor.peak_mb()
        kill_tree(self.process.pid, monitor=self.monitor, uid=self.uid, include_root=False)
        try:
            self._reap(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:  # closed its response pipe but lingers
            self.kill()
            self._reap(timeout=None)
        self._drain_log(log)
        duration = _elapsed_ms(started)
        outcome = RunOutcome.OUT_OF_MEMORY if oom else RunOutcome.CRASHED
        return Exchange(outcome, b"", bytes(log), duration, peak or self._max_memory_mb())

    def _terminate(self) -> None:
        """Timeout: SIGTERM the worker (it logs its stacks), then kill the whole tree."""
        kill_tree(self.process.pid, monitor=self.monitor, uid=self.uid, include_root=False)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.process.pid, signal.SIGTERM)
        try:
            self._reap(timeout=TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()
            self._reap(timeout=None)
        kill_tree(self.process.pid, monitor=self.monitor, uid=self.uid, include_root=False)

    def _reap(self, timeout: float | None) -> None:
        """Wait for the worker (wait4, for its peak memory); raises TimeoutExpired."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._reap_lock:
            while self.process.returncode is None:
                pid, status, rusage = os.wait4(self.process.pid, os.WNOHANG)
                if pid:
                    self.process.returncode = os.waitstatus_to_exitcode(status)
                    self._rusage_maxrss_kb = rusage.ru_maxrss
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired(self.process.args, timeout or 0)
                time.sleep(0.002)

    def _max_memory_mb(self) -> float | None:
        return None if self._rusage_maxrss_kb is None else self._rusage_maxrss_kb / 1024

    def _drain_log(self, log: BoundedLog) -> None:
        while True:
            try:
                chunk = os.read(self._log_read, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                return
            log += chunk

    def _close_fds(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._selector.close()
        if self._control is not None:
            self._control.close()
        if self._tap is not None:
            self._tap.stop()
        for fd in (self._request_write, self._response_read, self._log_read):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close(self) -> None:
        """Release the pipes of a worker already reaped (after a timeout or a crash)."""
        self._close_fds()


def _start(python: str, code_root: Path, env: dict[str, str], uid: int | None,
           child_fds: tuple[int, ...], log_write: int) -> subprocess.Popen[bytes]:
    """The worker process: ``bootstrap.py`` with the pipes (and relay socket) it is given, in a
    session of its own, under the instance's uid when there is one."""
    identity: dict[str, Any] = (
        {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {})
    return subprocess.Popen(
        [python, "-S", "-u", str(BOOTSTRAP_PATH), *map(str, child_fds)],
        stdin=subprocess.DEVNULL, stdout=log_write, stderr=log_write, cwd=code_root, env=env,
        pass_fds=child_fds, start_new_session=True, **identity)


def _complete_frame(buffer: bytearray) -> tuple[dict[str, Any], bytes] | None:
    if len(buffer) < frames.FRAME.size:
        return None
    header_size, body_size = frames.FRAME.unpack_from(buffer)
    end = frames.FRAME.size + header_size + body_size
    if len(buffer) < end:
        return None
    header = json.loads(bytes(buffer[frames.FRAME.size : frames.FRAME.size + header_size]))
    if not isinstance(header, dict):
        raise ValueError("the worker's answer header is not an object")
    return header, bytes(buffer[frames.FRAME.size + header_size : end])


def _elapsed_ms(started: float) -> float:
    return (time.monotonic() - started) * 1000.0
