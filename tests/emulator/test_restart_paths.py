"""What a SIGKILLed daemon finds when it starts again (docs/fdl-semantics.md, "Restarts"):

* a task whose invocation was cut off is invoked again (at-least-once), callback or not;
* a callback task whose invocation completed keeps waiting for its token: its function is not
  invoked again;
* a stored step that runs the pathological regex completes at once, and one that cannot run
  at all ends its execution Failed with a clear error; either way the daemon comes up.

Through the official SDKs and the admin surface (with the daemon's token), never the files,
except where a test breaks a stored execution on purpose."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.daemon import admin_request, admin_token
from tests.emulator.cloudflow_support import create, history
from tests.emulator.test_cloudflow_durability import Daemon

HANDLER = """import json, time

def handler(event, context):
    data = json.loads(event)
    time.sleep(max(0.0, data.get("until", 0) - time.time()))
    print("invoked at", time.time())
    return {"token": data.get("token", "")[:3], "until": data.get("until", 0)}
"""

TASK_FLOW = """Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Call
States:
  - Type: Task
    Name: Call
    Action: FC:InvokeFunction
    TaskMode: {mode}
    Parameters:
      resourceArn: acs:fc:cn-hangzhou:{account}:functions/worker/LATEST
      invocationType: Sync
      body:
        token.$: $Context.Current.TaskToken
        until.$: $Input.until
    End: true
"""


def _deploy_worker(cloud: Any) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("index.py", HANDLER)
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="worker", runtime="python3.10", handler="index.handler", timeout=60,
        code=fc.InputCodeLocation(zip_file=base64.b64encode(buf.getvalue()).decode()))))


def _get(daemon: Daemon, path: str) -> dict[str, Any]:
    """An admin read, with the daemon's token (its runtime file, as the CLI reads it)."""
    token = admin_token(daemon.state_dir)
    request = urllib.request.Request(f"http://127.0.0.1:{daemon.port}{path}",
                                     headers={"X-Emulator-Token": token})
    with urllib.request.urlopen(request, timeout=30) as answer:
        data: dict[str, Any] = json.loads(answer.read())
    return data


def _invocations(daemon: Daemon) -> list[dict[str, Any]]:
    """Completed invocations of the worker function (a cut-off one leaves none)."""
    return list(_get(daemon, "/_emulator/logs?function=worker")["invocations"])


def _pause(client: Any) -> None:
    """About one real second: a long poll on an execution that does not end meanwhile."""
    client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="Sentinel", execution_name="forever", wait_time_seconds=1))


def _until(condition: Any, client: Any, what: str, tries: int = 40) -> None:
    for _ in range(tries):
        if condition():
            return
        _pause(client)
    raise AssertionError(f"not reached: {what}")


def _idle(daemon: Daemon) -> bool:
    return _get(daemon, "/_emulator/health")["cloudflow"]["inFlight"] == 0


SENTINEL = ("Type: StateMachine\nSpecVersion: v1\nName: Sentinel\nStartAt: w\nStates:\n"
            "  - Type: Wait\n    Name: w\n    Seconds: 300\n    End: true\n")


def _setup(daemon: Daemon, mode: str) -> Any:
    cloud = daemon.cloud()
    _deploy_worker(cloud)
    client = cloud.fnf_client()
    create(client, "Sentinel", SENTINEL)
    client.start_execution(fnf.StartExecutionRequest(flow_name="Sentinel",
                                                     execution_name="forever"))
    create(client, "Work", TASK_FLOW.format(name="Work", mode=mode, account=cloud.account_id))
    return client


def _token(client: Any) -> str:
    submitted = [e for e in history(client, "Work", "e1") if e.type == "TaskSubmitted"]
    return str(json.loads(submitted[-1].event_detail)["TaskToken"])


def test_a_callback_task_whose_invocation_completed_waits_for_its_token(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path)
    daemon.start()
    try:
        client = _setup(daemon, "WaitForCustomCallback")
        client.start_execution(fnf.StartExecutionRequest(
            flow_name="Work", execution_name="e1", input=json.dumps({"until": 0})))
        _until(lambda: len(_invocations(daemon)) == 1 and _idle(daemon), client,
               "the callback's function returned")
        daemon.kill()
        daemon.start()
        client = daemon.cloud().fnf_client()
        _until(lambda: _idle(daemon), client, "the engine is idle after the restart")
        assert len(_invocations(daemon)) == 1  # not invoked again: it has the token
        assert client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Work", execution_name="e1")).body.status == "Running"
        client.report_task_succeeded(fnf.ReportTaskSucceededRequest(
            task_token=_token(client), output=json.dumps({"reported": True})))
        final = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Work", execution_name="e1", wait_time_seconds=30)).body
        assert (final.status, json.loads(final.output)) == ("Succeeded", {"reported": True})
        assert len(_invocations(daemon)) == 1
    finally:
        daemon.stop()


def _cut_off(tmp_path: Path, mode: str) -> tuple[Daemon, Any, float]:
    """Start Work/e1 with a function that runs 15 s; SIGKILL the daemon while it runs; start
    it again. Returns the daemon, a client and the real instant of the restart."""
    daemon = Daemon(tmp_path)
    daemon.start()
    client = _setup(daemon, mode)
    client.start_execution(fnf.StartExecutionRequest(
        flow_name="Work", execution_name="e1", input=json.dumps({"until": time.time() + 15})))
    _until(lambda: any(e.type == "TaskStarted" for e in history(client, "Work", "e1")), client,
           "the task was dispatched")
    assert _invocations(daemon) == []  # still running
    daemon.kill()
    restarted = time.time()
    daemon.start()
    return daemon, daemon.cloud().fnf_client(), restarted


def test_a_task_cut_off_by_a_crash_is_invoked_again(tmp_path: Path) -> None:
    daemon, client, restarted = _cut_off(tmp_path, "RequestComplete")
    try:
        final = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Work", execution_name="e1", wait_time_seconds=30)).body
        assert final.status == "Succeeded"
        assert json.loads(final.output)["Body"]["token"] == "tt-"
        (record,) = _invocations(daemon)  # the cut-off invocation never completed
        assert record["invokedAt"] >= restarted - 1
    finally:
        daemon.stop()


def test_a_callback_task_cut_off_before_its_function_returned_is_invoked_again(
        tmp_path: Path) -> None:
    daemon, client, restarted = _cut_off(tmp_path, "WaitForCustomCallback")
    try:
        _until(lambda: len(_invocations(daemon)) == 1, client, "the function ran again")
        (record,) = _invocations(daemon)
        assert record["invokedAt"] >= restarted - 1
        client.report_task_succeeded(fnf.ReportTaskSucceededRequest(
            task_token=_token(client), output="{}"))
        final = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Work", execution_name="e1", wait_time_seconds=30)).body
        assert final.status == "Succeeded"
    finally:
        daemon.stop()


REGEX_AFTER_WAIT = """Type: StateMachine
SpecVersion: v1
Name: Late
StartAt: Pause
States:
  - Type: Wait
    Name: Pause
    Seconds: 300
    Next: Check
  - Type: Pass
    Name: Check
    OutputConstructor:
      matched.$: "regexMatchString('(a+)+$', $Input.s)"
    End: true
"""


def _started(client: Any, name: str) -> None:
    """Wait until execution ``name`` of Late has run its first step (StartExecution answers
    before it: its Wait's timer is stored by that step)."""
    for _ in range(40):
        if any(e.step_name == "Pause" for e in history(client, "Late", name)):
            return
        client.describe_execution(fnf.DescribeExecutionRequest(  # about a second: it waits
            flow_name="Late", execution_name=name, wait_time_seconds=1))
    raise AssertionError(f"Late/{name} never ran its first step")


def _due_now(state_dir: Path) -> None:
    """Make every stored Wait due (the daemon is down): the restart fires them at once."""
    with sqlite3.connect(state_dir / "emulator.db") as conn:
        assert conn.execute("UPDATE timers SET fire_at=0 WHERE purpose='wait'").rowcount >= 1


def test_a_stored_step_with_the_pathological_regex_runs_at_start(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path)  # the real clock: the 300 s Wait is pending when it is killed
    daemon.start()
    try:
        client = daemon.cloud().fnf_client()
        create(client, "Late", REGEX_AFTER_WAIT)
        client.start_execution(fnf.StartExecutionRequest(
            flow_name="Late", execution_name="e1",
            input=json.dumps({"s": "a" * 10_000 + "b"})))
        _started(client, "e1")
        daemon.kill()
        _due_now(tmp_path)
        daemon.start()  # answers health while (or after) the step runs
        client = daemon.cloud().fnf_client()
        final = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Late", execution_name="e1", wait_time_seconds=30)).body
        assert (final.status, json.loads(final.output)) == ("Succeeded", {"matched": False})
    finally:
        daemon.stop()


def test_a_stored_execution_that_cannot_be_stepped_fails_and_the_daemon_comes_up(
        tmp_path: Path) -> None:
    daemon = Daemon(tmp_path)
    daemon.start()
    try:
        client = daemon.cloud().fnf_client()
        create(client, "Late", REGEX_AFTER_WAIT)
        for name in ("broken", "fine"):
            client.start_execution(fnf.StartExecutionRequest(
                flow_name="Late", execution_name=name, input=json.dumps({"s": "ab"})))
            _started(client, name)
        daemon.kill()
        with sqlite3.connect(tmp_path / "emulator.db") as conn:  # a state this version
            conn.execute("UPDATE executions SET state='{\"status\": \"Running\"}' "  # can't load
                         "WHERE name='broken'")
        _due_now(tmp_path)
        daemon.start()
        client = daemon.cloud().fnf_client()
        broken = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Late", execution_name="broken", wait_time_seconds=30)).body
        assert broken.status == "Failed"
        last = history(client, "Late", "broken")[-1]
        assert last.type == "ExecutionFailed"
        error = json.loads(last.event_detail)
        assert error["Error"] == "FnF.InternalError"
        assert "could not run the execution's next step (KeyError" in error["Cause"]
        fine = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="Late", execution_name="fine", wait_time_seconds=30)).body
        assert (fine.status, json.loads(fine.output)) == ("Succeeded", {"matched": False})
        assert _get(daemon, "/_emulator/health")["cloudflow"]["pendingTimers"] == 0
        # the daemon's admin surface works too (with its token): a reset clears everything
        assert admin_request(tmp_path, "/_emulator/reset") == {"reset": True}
    finally:
        daemon.stop()
