"""A schedule survives a SIGKILL of the daemon: after the restart it is still there, and it
fires when the (virtual, remembered) clock reaches its instant. Through the official SDK."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_fnf20190315.client import Client
from alibabacloud_tea_openapi import models as open_api

from deployer.emulator import daemon as emulator_daemon

FLOW = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p\nStates:\n"
        "  - Type: Pass\n    Name: p\n    End: true\n")
# a task nobody reports: an execution that runs until the test ends (a 1 s long poll on it
# is the pause between two looks at the executions)
FOREVER = ("Type: StateMachine\nSpecVersion: v1\nName: forever\nStartAt: t\nStates:\n"
           "  - Type: Task\n    Name: t\n    Action: Mock:Wait\n"
           "    TaskMode: WaitForCustomCallback\n    End: true\n")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VirtualDaemon:
    """``python -m deployer.emulator --clock virtual`` as a subprocess we can SIGKILL."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self) -> None:
        self.port = _free_port()
        log = open(self.state_dir / "daemon.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deployer.emulator", "--state-dir", str(self.state_dir),
             "--port", str(self.port), "--clock", "virtual"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        for _ in range(400):
            try:
                with urllib.request.urlopen(self.url("/_emulator/health"), timeout=1):
                    return
            except (urllib.error.URLError, ConnectionError):
                try:
                    self.proc.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    continue
                raise AssertionError((self.state_dir / "daemon.log").read_text()[-2000:]) from None
        raise AssertionError("the daemon did not answer")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=15)

    def client(self) -> Client:
        keys = emulator_daemon.credentials(self.state_dir)
        return Client(open_api.Config(
            access_key_id=keys.access_key_id, access_key_secret=keys.access_key_secret,
            endpoint=f"127.0.0.1:{self.port}", protocol="http", region_id="cn-hangzhou",
            read_timeout=70000))

    def advance(self, seconds: float) -> None:
        request = urllib.request.Request(self.url("/_emulator/clock/advance"), method="POST",
                                         data=json.dumps({"seconds": seconds}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10):
            pass


def test_a_schedule_survives_a_kill_and_fires_after_the_restart(tmp_path: Path) -> None:
    daemon = VirtualDaemon(tmp_path)
    daemon.start()
    try:
        client = daemon.client()
        for name, text in (("daily", FLOW.format(name="daily")), ("forever", FOREVER)):
            client.create_flow(fnf.CreateFlowRequest(name=name, definition=text,
                                                     description="", type="FDL"))
        client.start_execution(fnf.StartExecutionRequest(flow_name="forever",
                                                         execution_name="forever"))
        client.create_schedule(fnf.CreateScheduleRequest(
            flow_name="daily", schedule_name="report", cron_expression="0 0 8 * * *",
            payload='{"from": "schedule"}', enable=True))
        daemon.kill()
        daemon.start()
        client = daemon.client()
        kept = client.describe_schedule(fnf.DescribeScheduleRequest(
            flow_name="daily", schedule_name="report")).body
        assert (kept.cron_expression, kept.enable) == ("0 0 8 * * *", True)
        assert client.list_executions(fnf.ListExecutionsRequest(
            flow_name="daily")).body.executions == []
        daemon.advance(86400)  # a virtual day: 08:00 UTC has passed once
        executions: list = []
        for _ in range(20):
            executions = client.list_executions(fnf.ListExecutionsRequest(
                flow_name="daily")).body.executions
            if executions:
                break
            client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="forever", execution_name="forever", wait_time_seconds=1))
        assert len(executions) == 1
        assert json.loads(executions[0].input) == {"from": "schedule"}
    finally:
        daemon.stop()
