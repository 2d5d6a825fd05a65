"""Lifecycle of a background emulator process: start, status, stop, reset, credentials.

The daemon (``python -m deployer.emulator``) holds the state dir's lock (``emulator.lock``, a
kernel ``flock``: one emulator per state dir), writes ``emulator.pid`` and ``emulator.json``
(pid, endpoint and the admin token, mode 0600) once it listens and removes them on a clean
stop; its log is ``emulator.log``. A pid file whose process is gone is stale and is cleaned
up. A start that fails stops what it started (its whole process group). Polling waits use an
injected ``sleep``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.emulator.daemon_files import (
    INFO_FILE,
    PID_FILE,
    admin_request,
    admin_token,
    clear_runtime_files,
    read_info,
    write_runtime_files,
)
from deployer.emulator.latency import LatencyModel
from deployer.emulator.state_dir import StateDirUnusable, check_writable, unwritable
from deployer.emulator.state_lock import StartLock, StateDirInUse, StateLock
from deployer.emulator.store.identity import load_or_create_identity
from deployer.errors import NotFoundError, OperationError

__all__ = [
    "DaemonCredentials",
    "EmulatorStatus",
    "admin_request",
    "admin_token",
    "clear_runtime_files",
    "credentials",
    "reset",
    "start_daemon",
    "status",
    "stop",
    "write_runtime_files",
]

LOG_FILE = "emulator.log"
Sleep = Callable[[float], None]


@dataclass(frozen=True, slots=True)
class EmulatorStatus:
    running: bool
    state_dir: Path
    pid: int | None = None
    endpoint: str | None = None
    account_id: str | None = None
    clock: str | None = None
    message: str = ""
    latency: dict[str, Any] | None = None  # the health document's latency model (wire keys)

    @property
    def console_url(self) -> str | None:
        """The web console's root (``http://<endpoint>/_console/``) while running."""
        return f"http://{self.endpoint}/_console/" if self.running and self.endpoint else None

    @property
    def latency_model(self) -> LatencyModel | None:
        """The latency model in force while running (None when unknown)."""
        wire = self.latency or {}
        try:
            return LatencyModel(float(wire["coldStart"]), float(wire["stepLatency"]))
        except (KeyError, TypeError, ValueError):
            return None

    def to_json(self) -> dict[str, Any]:
        doc = {**_fields(self), "console_url": self.console_url}
        model = self.latency_model
        doc["latency"] = None if model is None else {
            "model": model.kind, "cold_start": model.cold_start,
            "step_latency": model.step_latency}
        return doc


@dataclass(frozen=True, slots=True)
class DaemonCredentials:
    endpoint: str
    region: str
    account_id: str
    access_key_id: str
    access_key_secret: str

    def to_env(self) -> dict[str, str]:
        return {"ALIBABA_CLOUD_ACCESS_KEY_ID": self.access_key_id,
                "ALIBABA_CLOUD_ACCESS_KEY_SECRET": self.access_key_secret,
                "ALIBABA_CLOUD_ACCOUNT_ID": self.account_id,
                "DEPLOY_EMULATOR_ENDPOINT": self.endpoint,
                "ALIBABA_CLOUD_REGION": self.region}


def _pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs. A process that has exited but is not reaped yet (a zombie: its
    parent started it and has not waited, or init reaps it later) has ended: its files and
    locks are closed, so waiting for it to go would only wait for its parent."""
    try:  # a daemon started by this very process is a zombie once it exits: reap it
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Linux: the process has exited and waits to be reaped (``Z`` in /proc/PID/stat);
    elsewhere False."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rpartition(")")[2].split()  # the command name may hold spaces and ")"
    return bool(fields) and fields[0] in ("Z", "X")


def _health(endpoint: str, timeout: float = 2.0) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://{endpoint}/_emulator/health", timeout=timeout) as r:
            data: dict[str, Any] = json.loads(r.read())
            return data
    except (OSError, urllib.error.URLError, ValueError):
        return None


def status(state_dir: Path) -> EmulatorStatus:
    """Whether a daemon of ``state_dir`` runs and answers; cleans a stale pid file."""
    pid_path, info_path = state_dir / PID_FILE, state_dir / INFO_FILE
    if not pid_path.exists():
        return EmulatorStatus(False, state_dir, message="not running")
    try:
        pid = int(pid_path.read_text().strip())
    except (ValueError, OSError):
        pid = 0
    info = read_info(state_dir) if info_path.exists() else {}
    if not pid or not _pid_alive(pid):
        clear_runtime_files(state_dir)
        return EmulatorStatus(False, state_dir, message="not running (removed a stale pid file)")
    endpoint = info.get("endpoint")
    health = _health(endpoint) if endpoint else None
    if health is None:
        return EmulatorStatus(False, state_dir, pid, endpoint,
                              message=f"process {pid} does not answer on {endpoint}")
    latency = health.get("latency")
    return EmulatorStatus(True, state_dir, pid, endpoint, health.get("accountId"),
                          health.get("clock"), message="running",
                          latency=latency if isinstance(latency, dict) else None)


def _check_port_free(host: str, port: int) -> None:
    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise OperationError(
                f"port {port} on {host} is already in use ({exc.strerror})",
                hint="stop whatever listens there or choose another port with --port") from None


def _holder_message(state_dir: Path, exc: StateDirInUse) -> OperationError:
    holder = exc.holder
    return OperationError(
        f"{exc}, but it does not answer",
        hint=f"stop it (`deploy emulator stop --state-dir {state_dir}`"
             + (f" or `kill {holder.pid}`" if holder.pid else "") + ") or use another --state-dir")


def _probe_lock(state_dir: Path, sleep: Sleep = time.sleep) -> None:
    """Raise when another live process holds the state dir (a daemon that does not answer).
    A holder gets up to 3 s to let go: one killed a moment ago may still be exiting (a
    SIGKILLed process with many threads, or a zombie not yet reaped, still looks alive)."""
    deadline = time.monotonic() + 3.0
    while True:
        try:
            StateLock.acquire(state_dir).release()
            return
        except StateDirInUse as exc:
            if time.monotonic() > deadline:
                raise _holder_message(state_dir, exc) from None
        sleep(0.05)


def _end(proc: subprocess.Popen[bytes], sleep: Sleep, grace: float = 5.0) -> None:
    """Stop a daemon this process started, with everything it started (its process group):
    SIGTERM, then SIGKILL after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while proc.poll() is None and time.monotonic() < deadline:
            sleep(0.05)
        if proc.poll() is not None:
            break
    proc.wait()


def start_daemon(state_dir: Path, *, host: str = "127.0.0.1", port: int = 9125, clock: str = "real",
          timeout: float = 20.0, sleep: Sleep = time.sleep, step_latency: float | None = None,
          cold_start: float | None = None, throttle: str = "off",
          retention: dict[str, str] | None = None,
          mocks: Sequence[Path] = ()) -> EmulatorStatus:
    """Start a background daemon and return once ``/_emulator/health`` answers.

    ``mocks``: mock files the daemon loads at start (mocked task results).

    ``step_latency`` and ``cold_start`` (seconds) set the latency model; None keeps the
    clock's default (:func:`deployer.emulator.latency.latency_model`). ``retention``: the
    durations of ``--execution-retention`` and ``--log-retention`` (keys ``executions`` and
    ``logs``, e.g. ``"7d"``; absent keeps the default).

    Commands started together start one daemon: each waits for ``emulator.start.lock``, and
    those after the first find its daemon running. Already running → its status with message
    "already running". Raises OperationError when
    the port is taken, another process holds the state dir, or the daemon exits / stays
    silent for ``timeout`` seconds; in the last two cases what was started is stopped (its
    process group, SIGTERM then SIGKILL) and its runtime files are removed.
    """
    try:
        check_writable(state_dir)
    except StateDirUnusable as exc:
        raise OperationError(exc.message, hint=exc.hint) from None
    try:
        starting = StartLock.acquire(state_dir, timeout + 10, sleep)
    except TimeoutError as exc:
        raise OperationError(str(exc), hint=f"see {state_dir / LOG_FILE}") from None
    with starting:  # commands started together: one starts the daemon, the others find it
        current = status(state_dir)
        if current.running:
            message = _already_running(current, cold_start, step_latency)
            return EmulatorStatus(**{**_fields(current), "message": message})
        options = [arg for flag, value in (("--step-latency", step_latency),
                                           ("--cold-start", cold_start))
                   if value is not None for arg in (flag, repr(float(value)))]
        for key, text in (retention or {}).items():
            options += [f"--{'execution' if key == 'executions' else 'log'}-retention", text]
        for path in mocks:
            options += ["--mocks", str(path)]
        return _spawn(state_dir, host=host, port=port, clock=clock, timeout=timeout,
                      sleep=sleep, throttle=throttle, options=options)


def _spawn(state_dir: Path, *, host: str, port: int, clock: str, timeout: float, sleep: Sleep,
           throttle: str, options: list[str]) -> EmulatorStatus:
    """Start the daemon process and wait until it answers (see :func:`start`); ``options``:
    the latency model's, retention's and the mocks' flags."""
    _check_port_free(host, port)
    _probe_lock(state_dir, sleep)
    state_dir.mkdir(parents=True, exist_ok=True)
    log = open(state_dir / LOG_FILE, "ab")  # noqa: SIM115 - handed to the child
    command = [sys.executable, "-m", "deployer.emulator", "--state-dir", str(state_dir),
               "--host", host, "--port", str(port), "--clock", clock, "--throttle", throttle,
               *options]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    log.close()
    try:
        return _await_start(state_dir, proc, timeout, sleep)
    except BaseException:
        _end(proc, sleep)
        if read_info(state_dir).get("pid") == proc.pid:
            clear_runtime_files(state_dir)
        raise


def _already_running(current: EmulatorStatus, cold_start: float | None,
                     step_latency: float | None) -> str:
    """"already running", saying so when latency values were asked for that differ from the
    model in force (a running emulator is not changed behind its users' backs)."""
    model = current.latency_model
    if model is None or (cold_start in (None, model.cold_start)
                         and step_latency in (None, model.step_latency)):
        return "already running"
    return ("already running (not with the latency asked for: `deploy emulator stop` first "
            "to change it)")


def _await_start(state_dir: Path, proc: subprocess.Popen[bytes], timeout: float,
                 sleep: Sleep) -> EmulatorStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            current = status(state_dir)
            if current.running:  # another daemon (a foreground one) took the directory first
                return EmulatorStatus(**{**_fields(current), "message": "already running"})
            tail = " ".join((state_dir / LOG_FILE).read_text(errors="replace").strip()
                            .splitlines()[-1:])
            said, _, hint = tail.removeprefix("Error: ").partition(" Hint: ")
            raise OperationError(f"the emulator exited during start: {said}",
                                 hint=hint or f"see {state_dir / LOG_FILE}")
        current = status(state_dir)
        if current.running and current.pid == proc.pid:
            return EmulatorStatus(**{**_fields(current), "message": "started"})
        sleep(0.1)
    raise OperationError(f"the emulator did not answer within {timeout:g} s (stopped it)",
                         hint=f"see {state_dir / LOG_FILE}")


def _fields(st: EmulatorStatus) -> dict[str, Any]:
    return {f: getattr(st, f) for f in EmulatorStatus.__dataclass_fields__}


def stop(state_dir: Path, *, timeout: float = 15.0, sleep: Sleep = time.sleep) -> EmulatorStatus:
    """SIGTERM the daemon and wait for it to exit (SIGKILL after ``timeout``)."""
    current = status(state_dir)
    if current.pid is None:
        holder = _silent_holder(state_dir)
        if holder is None:
            return EmulatorStatus(False, state_dir, message=current.message)
        current = EmulatorStatus(False, state_dir, holder, message="not answering")
        assert current.pid is not None
    os.kill(current.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _pid_alive(current.pid) and time.monotonic() < deadline:
        sleep(0.05)
    if _pid_alive(current.pid):
        os.kill(current.pid, signal.SIGKILL)
    clear_runtime_files(state_dir)
    return EmulatorStatus(False, state_dir, current.pid, current.endpoint, message="stopped")


def _silent_holder(state_dir: Path) -> int | None:
    """The pid of a process that holds the state dir without a pid file (None if nobody)."""
    try:
        StateLock.acquire(state_dir).release()
    except StateDirInUse as exc:
        return exc.holder.pid if exc.holder.pid and _pid_alive(exc.holder.pid) else None
    return None


def reset(state_dir: Path) -> EmulatorStatus:
    """Forget every resource: through the admin API when running (a virtual clock comes back
    to the present too), else in the files (the clock's saved instant goes with them)."""
    current = status(state_dir)
    if current.running and current.endpoint:
        admin_request(state_dir, "/_emulator/reset", {"clock": "now"})
        return EmulatorStatus(**{**_fields(current), "message": "reset (running emulator)"})
    import shutil

    from deployer.emulator.app import DB_FILE

    try:
        _probe_lock(state_dir)
        for name in (DB_FILE, f"{DB_FILE}-wal", f"{DB_FILE}-shm"):
            (state_dir / name).unlink(missing_ok=True)
    except OSError as exc:
        unusable = unwritable(state_dir, exc)
        raise OperationError(f"cannot reset: {unusable.message}", hint=unusable.hint) from None
    shutil.rmtree(state_dir / "code", ignore_errors=True)
    shutil.rmtree(state_dir / "runtime", ignore_errors=True)
    return EmulatorStatus(False, state_dir, message="reset")


def credentials(state_dir: Path, region: str = "cn-hangzhou") -> DaemonCredentials:
    """The emulator's endpoint and keys (local fakes); NotFoundError before the first start."""
    path = state_dir / "identity.json"
    if not path.exists():
        raise NotFoundError(f"no emulator state in {state_dir}",
                            hint="run `deploy emulator start` first")
    ident = load_or_create_identity(state_dir)
    current = status(state_dir)
    return DaemonCredentials(current.endpoint or "127.0.0.1:9125", region, ident.account_id,
                       ident.access_key_id, ident.access_key_secret)


