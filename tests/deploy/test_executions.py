"""`deploy executions`, `deploy history` defaulting to the latest, and execution-name reuse."""

from __future__ import annotations

import json

from deployer.testing import mock_cloud


def test_executions_newest_first_with_status_and_limit(deploy):
    with mock_cloud() as cloud:
        deploy("up")
        for name, delay in (("first", 100), ("second", 5), ("third", 1000)):
            assert deploy("execute", "--delay", str(delay), "--name", name).exit_code in (0, 5)
            cloud.advance(60)
        listing = deploy.json("executions")
        failed = deploy.json("executions", "--status", "failed", "--limit", "1")
        text = deploy("executions", "--limit", "2")
        empty = deploy("executions", "--status", "Running")
    assert [e["name"] for e in listing["executions"]] == ["third", "second", "first"]
    assert [e["status"] for e in listing["executions"]] == ["Failed", "Succeeded", "Failed"]
    assert failed["status"] == "Failed"
    assert [e["name"] for e in failed["executions"]] == ["third"]  # the newest Failed one
    assert all(e["duration_seconds"] is not None for e in listing["executions"])
    lines = [line.split()[0] for line in text.stdout.splitlines()[2:] if line.strip()]
    assert lines == ["third", "second"]
    assert empty.exit_code == 0 and "No executions of MyWorkFlow with status Running." in \
        empty.stdout


def test_history_defaults_to_the_latest_execution_like_status(deploy):
    with mock_cloud():
        deploy("up")
        no_runs = deploy("history")
        deploy.json("execute", "--delay", "5", "--name", "older")
        deploy.json("execute", "--delay", "5", "--name", "newer")
        history = deploy.json("history")
        status = deploy.json("status")
        named = deploy.json("history", "older")
    assert no_runs.exit_code == 4 and "flow MyWorkFlow has no executions" in no_runs.stderr
    assert "Hint: start one with `deploy execute`" in no_runs.stderr
    assert history["name"] == status["name"] == "newer"
    assert history["events"][-1]["Type"] == "ExecutionSucceeded"
    assert named["name"] == "older"


def test_reusing_the_name_of_a_running_execution_attaches_and_says_so(deploy):
    with mock_cloud() as cloud:
        deploy("up")
        with cloud.auto_advance_disabled():  # keep dup1 running in its first Wait
            first = deploy.json("execute", "--name", "dup1", "--delay", "1", "--no-wait")
            again = deploy("execute", "--name", "dup1", "--delay", "7", "--no-wait",
                           "--output", "json")
        described = deploy.json("status", "dup1", "--wait")
    assert first["attached"] is False and first["input"] == {"delay": 1}
    assert again.exit_code == 0
    doc = json.loads(again.stdout)
    assert doc["attached"] is True and doc["input"] == {"delay": 1}
    assert "execution dup1 is already running" in again.stderr
    assert "nothing new was started, attaching to it" in again.stderr
    assert "Started execution" not in again.stderr
    assert described["input"] == {"delay": 1} and described["status"] == "Succeeded"


def test_reusing_a_finished_execution_name_is_the_clouds_error_with_a_hint(deploy):
    with mock_cloud():
        deploy("up")
        deploy.json("execute", "--name", "done1", "--delay", "1")
        again = deploy("execute", "--name", "done1", "--delay", "1")
    assert again.exit_code == 1
    assert "ExecutionAlreadyExists" in again.stderr
    assert "Hint: execution names are unique per flow and done1 has already run" in again.stderr
    assert again.stdout == ""


def test_a_bad_execution_name_is_a_usage_error_with_the_rule(deploy):
    result = deploy("execute", "--name", "bad name!", "--delay", "1")
    assert result.exit_code == 2
    assert "Invalid value for '--name': 'bad name!' is not a valid execution name" in \
        result.stderr
    assert "use 1-128 letters, digits, _ and -, starting with a letter or _" in result.stderr
