"""Durability: the daemon is SIGKILLed at random moments while 50 seed-like executions poll;
after every restart they resume from their last committed step and end exactly once. Progress
is read through the SDK (GetExecutionHistory), never from the emulator's files."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_tea_openapi import models as open_api

from deployer.emulator import daemon as emulator_daemon
from tests.emulator.cloudflow_support import create, deploy_seed_functions, history, seed_flow

TERMINAL = {"ExecutionSucceeded", "ExecutionFailed", "ExecutionStopped", "ExecutionTimedOut"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Daemon:
    """``python -m deployer.emulator`` (on the real clock unless ``clock="virtual"``), as a
    subprocess."""

    def __init__(self, state_dir: Path, clock: str = "real") -> None:
        self.state_dir = state_dir
        self.clock = clock
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self) -> None:
        self.port = _free_port()  # a new port each time: no TIME_WAIT surprises
        log = open(self.state_dir / "daemon.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deployer.emulator", "--state-dir", str(self.state_dir),
             "--port", str(self.port), "--clock", self.clock],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        for _ in range(400):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_emulator/health",
                                            timeout=1):
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):  # still starting
                try:
                    self.proc.wait(timeout=0.05)  # doubles as the pause between attempts
                except subprocess.TimeoutExpired:
                    continue
                log_tail = (self.state_dir / "daemon.log").read_text()[-2000:]
                raise AssertionError(f"daemon exited: {log_tail}") from None
        raise AssertionError("daemon did not answer")

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=15)

    def cloud(self) -> Any:
        keys = emulator_daemon.credentials(self.state_dir)
        return _Cloud(self.port, keys.account_id, keys.access_key_id, keys.access_key_secret)


class _Cloud:
    def __init__(self, port: int, account: str, ak: str, secret: str) -> None:
        self.account_id = account
        self._cfg = dict(access_key_id=ak, access_key_secret=secret,
                         endpoint=f"127.0.0.1:{port}", protocol="http",
                         region_id="cn-hangzhou", read_timeout=70000)

    def config(self) -> Any:
        return open_api.Config(**self._cfg)

    def fc_client(self) -> Any:
        from alibabacloud_fc20230330.client import Client

        return Client(self.config())

    def fnf_client(self) -> Any:
        from alibabacloud_fnf20190315.client import Client

        return Client(self.config())


def _events(client: Any, names: list[str]) -> int:
    """History events committed so far by the Poll executions ``names``."""
    return sum(len(history(client, "Poll", name)) for name in names)


def _pause(client: Any) -> None:
    """About one real second: a long poll on an execution that never ends in this test."""
    client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="Sentinel", execution_name="forever", wait_time_seconds=1))


SENTINEL = ("Type: StateMachine\nSpecVersion: v1\nName: Sentinel\nStartAt: w\nStates:\n"
            "  - Type: Wait\n    Name: w\n    Seconds: 300\n    End: true\n")


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(20240501)
    daemon = Daemon(tmp_path)
    daemon.start()
    try:
        cloud = daemon.cloud()
        deploy_seed_functions(cloud)
        client = cloud.fnf_client()
        create(client, "Poll", seed_flow(account=cloud.account_id, name="Poll", wait=1))
        create(client, "Sentinel", SENTINEL)
        client.start_execution(fnf.StartExecutionRequest(flow_name="Sentinel",
                                                         execution_name="forever"))
        # delay -1: success at the first poll whatever the instance; 1000: never -> timeout
        expected = {f"e{i:02d}": ("Succeeded" if i % 2 else "Failed") for i in range(24)}
        for name, status in expected.items():
            delay = -1 if status == "Succeeded" else 1000
            client.start_execution(fnf.StartExecutionRequest(
                flow_name="Poll", execution_name=name, input=json.dumps({"delay": delay})))
        # ~1,300 events in all: kill four times at random points of the run
        thresholds = sorted(rng.sample(range(150, 950), 4))
        for threshold in thresholds:
            for _ in range(60):
                if _events(client, list(expected)) >= threshold:
                    break
                _pause(client)
            daemon.kill()
            daemon.start()
            client = daemon.cloud().fnf_client()
        for name, status in expected.items():
            final = client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="Poll", execution_name=name, wait_time_seconds=30)).body
            assert final.status == status, name
            events = history(client, "Poll", name)
            assert [e.event_id for e in events] == list(range(1, len(events) + 1))
            assert sum(e.type in TERMINAL for e in events) == 1, name
            if status == "Succeeded":
                assert json.loads(final.output)["try_count"] == 1
            else:
                failed = json.loads(events[-1].event_detail)
                assert failed["Error"] == "timeout"
                polls = [e for e in events
                         if e.type == "StepExited" and e.step_name == "GetJobStatus"]
                assert len(polls) == 4
        assert _events(client, list(expected)) > thresholds[-1] + 250  # killed mid-run
    finally:
        daemon.stop()
