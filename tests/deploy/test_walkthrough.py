"""The seed walkthrough through the CLI: `deploy up`, then `deploy execute --delay N`.

Each scenario runs on a fresh in-process emulator (``mock_cloud()``, virtual clock), so
GetJobStatus starts on a fresh instance and its module-level ``start_time`` is taken at the
first poll (t = 10 s), exactly as in the walkthrough. `--target aliyun` inside mock_cloud()
exercises the real endpoints and the credentials chain; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import re

import pytest

from deployer.testing import mock_cloud


@pytest.mark.parametrize(
    ("delay", "exit_code", "status", "try_count", "job_status"),
    [(20, 0, "Succeeded", 4, "success"), (29, 0, "Succeeded", 4, "success"),
     (30, 5, "Failed", 4, "running"), (100, 5, "Failed", 4, "running")],
)
def test_execute_delay_outcomes_on_an_exact_clock(deploy, delay, exit_code, status, try_count,
                                                  job_status):
    with mock_cloud():
        assert deploy("up").exit_code == 0
        result = deploy.json("execute", "--delay", str(delay), code=exit_code)
    assert result["status"] == status
    assert result["input"] == {"delay": delay}
    assert result["duration_seconds"] == 40
    if status == "Succeeded":
        assert result["output"]["job_status"] == job_status
        assert result["output"]["try_count"] == try_count
        assert result["error"] is None
        assert result["states"][-1] == "JobSucceeded"
    else:
        assert result["error"]["code"] == "timeout"
        assert result["states"][-1] == "FailJobFailed"
        assert result["states"].count("GetJobStatus") == try_count


def test_seed_walkthrough_in_text_mode(deploy):
    with mock_cloud() as cloud:
        up = deploy("up")
        run = deploy("execute", "--delay", "20")
    assert up.exit_code == 0, up.stderr
    first = up.stderr.splitlines()[0]
    assert first == ("Target: aliyun (Alibaba Cloud), region cn-hangzhou, "
                     f"account {cloud.account_id}")
    assert "Deployed: 5 created, 0 updated, 0 unchanged (6 write calls)." in up.stdout
    assert f"acs:fc:cn-hangzhou:{cloud.account_id}:functions/StartJob" in up.stdout
    assert run.exit_code == 0, run.stderr
    polls = [line for line in run.stdout.splitlines()
             if "GetJobStatus" in line and "succeeded" in line]
    assert [p.split("try_count=")[1] for p in polls] == ["1", "2", "3", "4"]
    assert [("job_status=success" in p) for p in polls] == [False, False, False, True]
    assert "+ 40.0s  ExecutionSucceeded" in run.stdout
    assert "\x1b[" not in run.stdout  # not a terminal: plain lines, no control codes
    assert ": Succeeded in 40 s" in run.stdout
    assert '"job_status": "success"' in run.stdout


def test_failed_execution_shows_the_error_code(deploy):
    with mock_cloud():
        deploy("up")
        run = deploy("execute", "--delay", "30")
    assert run.exit_code == 5
    assert ": Failed in 40 s" in run.stdout
    assert "Error: timeout" in run.stdout
    assert "+ 40.0s  FailJobFailed" in run.stdout


def test_no_wait_then_status_and_history(deploy):
    with mock_cloud():
        deploy("up")
        started = deploy.json("execute", "--delay", "5", "--name", "run-1", "--no-wait")
        assert started == {"flow": "MyWorkFlow", "name": "run-1", "status": started["status"],
                           "started_time": started["started_time"], "input": {"delay": 5},
                           "attached": False,
                           "console_url": "https://fnf.console.aliyun.com/fnf/cn-hangzhou/flows"
                                          "/item/MyWorkFlow/executions/item/run-1"}
        waited = deploy.json("status", "run-1", "--wait")
        latest = deploy.json("status")
        history = deploy.json("history", "run-1")
        text = deploy("history", "run-1")
        missing = deploy("status", "no-such-run")
    assert waited["status"] == "Succeeded" and waited["output"]["try_count"] == 2
    assert latest["name"] == "run-1" and latest["status"] == "Succeeded"
    types = [e["Type"] for e in history["events"]]
    assert types[0] == "ExecutionStarted" and types[-1] == "ExecutionSucceeded"
    assert [e["EventId"] for e in history["events"]] == list(range(1, len(types) + 1))
    assert "ExecutionSucceeded" in text.stdout
    # piped output (CI logs): one line per event, timestamps never wrapped
    event_lines = [line for line in text.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert len(event_lines) == len(types)
    assert all(re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line)
               for line in event_lines)
    assert missing.exit_code == 4


def test_handler_that_raises_fails_the_execution(deploy, project):
    handler = project / "functions" / "get_job_status" / "index.py"
    handler.write_text("def handler(event, context):\n    raise RuntimeError('db down')\n")
    with mock_cloud():
        deploy("up")
        run = deploy.json("execute", "--delay", "20", code=5)
        text = deploy("status", run["name"])
        invoked = deploy("invoke", "GetJobStatus", "--event", '{"job_id": "j"}')
    assert run["status"] == "Failed"
    assert run["states"][-1] == "GetJobStatus"
    assert run["error"]["code"]  # the FC error code the flow reported
    assert "db down" in (run["error"]["detail"] or "")
    assert "Error:" in text.stdout and text.exit_code == 0  # status without --wait: exit 0
    assert invoked.exit_code == 1
    assert "RuntimeError: db down" in invoked.stdout
