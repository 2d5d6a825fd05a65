"""A schedule survives a SIGKILL of the daemon: after the restart it is still there, and it
fires when the (virtual, remembered) clock reaches its instant. Through the official SDK."""

from __future__ import annotations

import json
from pathlib import Path

from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.daemon import admin_request
from tests.emulator.test_cloudflow_durability import Daemon

FLOW = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p\nStates:\n"
        "  - Type: Pass\n    Name: p\n    End: true\n")
# a task nobody reports: an execution that runs until the test ends (a 1 s long poll on it
# is the pause between two looks at the executions)
FOREVER = ("Type: StateMachine\nSpecVersion: v1\nName: forever\nStartAt: t\nStates:\n"
           "  - Type: Task\n    Name: t\n    Action: Mock:Wait\n"
           "    TaskMode: WaitForCustomCallback\n    End: true\n")


def _advance(daemon: Daemon, seconds: float) -> None:
    """Move the daemon's virtual clock (the admin endpoint, with the daemon's token)."""
    admin_request(daemon.state_dir, "/_emulator/clock/advance", {"seconds": seconds})


def test_a_schedule_survives_a_kill_and_fires_after_the_restart(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, clock="virtual")
    daemon.start()
    try:
        client = daemon.cloud().fnf_client()
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
        client = daemon.cloud().fnf_client()
        kept = client.describe_schedule(fnf.DescribeScheduleRequest(
            flow_name="daily", schedule_name="report")).body
        assert (kept.cron_expression, kept.enable) == ("0 0 8 * * *", True)
        assert client.list_executions(fnf.ListExecutionsRequest(
            flow_name="daily")).body.executions == []
        _advance(daemon, 86400)  # a virtual day: 08:00 UTC has passed once
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
