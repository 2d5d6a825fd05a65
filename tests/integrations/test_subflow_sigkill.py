"""Parents waiting on child executions survive SIGKILL of the daemon: after the restart a
sub-flow's task finds its child again (no second child) and takes its output, and a
distributed Map's run carries on from the children it had started (each item runs once)."""

from __future__ import annotations

import json
from pathlib import Path

from alibabacloud_fnf20190315 import models as fnf

from tests.emulator.cloudflow_support import create
from tests.emulator.test_cloudflow_durability import Daemon

CHILD = ("Type: StateMachine\nSpecVersion: v1\nName: slow-child\nStartAt: w\nStates:\n"
         "  - Type: Wait\n    Name: w\n    Seconds: 3\n    Next: out\n"
         "  - Type: Pass\n    Name: out\n    OutputConstructor:\n      got.$: $Input.n\n"
         "    End: true\n")
PARENT = ("Type: StateMachine\nSpecVersion: v1\nName: waiting-parent\nStartAt: call\n"
          "States:\n  - Type: Task\n    Name: call\n    Action: FNF:StartExecution\n"
          "    TaskMode: WaitForSystemCallback\n    Parameters:\n"
          "      resourceArn: acs:fnf:::flow/slow-child\n      input.$: $Input\n"
          "    End: true\n")
MAP = ("Type: StateMachine\nSpecVersion: v1\nName: fan\nStartAt: m\nStates:\n"
       "  - Type: Map\n    Name: m\n    ProcessorConfig:\n      ExecutionMode: Standard\n"
       "    ItemsPath: $Input.items\n    MaxConcurrency: 2\n    Processor:\n"
       "      StartAt: w\n      States:\n        - Type: Wait\n          Name: w\n"
       "          Seconds: 2\n          Next: out\n        - Type: Pass\n"
       "          Name: out\n          OutputConstructor:\n            got.$: $Input.n\n"
       "          End: true\n    End: true\n")


def test_a_waiting_parent_and_its_child_survive_sigkill(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path)
    daemon.start()
    try:
        client = daemon.cloud().fnf_client()
        create(client, "slow-child", CHILD)
        create(client, "waiting-parent", PARENT)
        create(client, "fan", MAP)
        client.start_execution(fnf.StartExecutionRequest(
            flow_name="waiting-parent", execution_name="p1", input=json.dumps({"n": 7})))
        client.start_execution(fnf.StartExecutionRequest(
            flow_name="fan", execution_name="f1",
            input=json.dumps({"items": [{"n": n} for n in range(4)]})))
        for _ in range(100):  # each try is a short long-poll: no sleep
            running = client.list_executions(fnf.ListExecutionsRequest(
                flow_name="slow-child", status="Running")).body.executions
            if running:
                break
            client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="waiting-parent", execution_name="p1", wait_time_seconds=1))
        assert running, "the child never started"
        daemon.kill()
        daemon.start()
        client = daemon.cloud().fnf_client()
        final = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="waiting-parent", execution_name="p1", wait_time_seconds=30)).body
        assert final.status == "Succeeded"
        assert json.loads(final.output) == {"got": 7}
        children = client.list_executions(fnf.ListExecutionsRequest(
            flow_name="slow-child")).body.executions
        assert [c.name for c in children] == [running[0].name]
        mapped = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="fan", execution_name="f1", wait_time_seconds=30)).body
        assert mapped.status == "Succeeded"
        result = json.loads(mapped.output)
        assert result["Items"] == [{"got": n} for n in range(4)]
        runs = client.list_executions(fnf.ListExecutionsRequest(
            flow_name="fan", map_run_name=result["MapRunName"])).body.executions
        assert len(runs) == 4
    finally:
        daemon.stop()
