"""StartExecution is asynchronous, as on the cloud: it answers once the start is committed,
``Running`` and before any state has run; the execution then proceeds in the engine. Steps
that are ready together commit in one transaction (group commit). Through the official SDK."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.testing.environment import LocalCloud
from tests.emulator.cloudflow_support import create, history, pass_flow, wait_flow
from tests.emulator.test_cloudflow_durability import Daemon


def _start(client: Any, flow: str, name: str, input: str = "{}") -> Any:
    return client.start_execution(fnf.StartExecutionRequest(
        flow_name=flow, execution_name=name, input=input)).body


def _wait(client: Any, flow: str, name: str, seconds: int = 30) -> Any:
    return client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name=flow, execution_name=name, wait_time_seconds=seconds)).body


def test_start_answers_running_before_any_state_runs(cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "one", pass_flow("one"))
    body = _start(client, "one", "e1", '{"a": 1}')
    assert body.status == "Running"
    assert body.stopped_time is None and body.output is None
    assert body.input == '{"a": 1}' and body.name == "e1" and body.started_time
    assert body.flow_definition == pass_flow("one")
    done = _wait(client, "one", "e1")  # the long poll: answered when it ends
    assert done.status == "Succeeded" and json.loads(done.output) == {"a": 1}
    assert done.started_time == body.started_time
    types = [e.type for e in history(client, "one", "e1")]
    assert types[0] == "ExecutionStarted" and types[-1] == "ExecutionSucceeded"
    assert types.count("ExecutionStarted") == 1
    assert cloud.wait_for_execution("one", "e1")["Status"] == "Succeeded"


def test_start_of_a_running_name_is_idempotent_and_sync_still_returns_the_result(
        cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=100))
    with cloud.auto_advance_disabled():
        first = _start(client, "w", "same")
        again = _start(client, "w", "same")
        assert (first.status, again.status) == ("Running", "Running")
        assert again.started_time == first.started_time
    assert cloud.wait_for_execution("w", "same")["Status"] == "Succeeded"
    create(client, "x", pass_flow("x"), execution_mode="Express")
    sync = client.start_sync_execution(fnf.StartSyncExecutionRequest(
        flow_name="x", execution_name="s", input='{"k": "v"}')).body
    assert sync.status == "Succeeded" and json.loads(sync.output) == {"k": "v"}
    assert sync.stopped_time


def test_stop_right_after_start_stops_the_started_execution(cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=100))
    with cloud.auto_advance_disabled():
        assert _start(client, "w", "e").status == "Running"
        stopped = client.stop_execution(fnf.StopExecutionRequest(
            flow_name="w", execution_name="e", error="E", cause="c")).body
    assert stopped.status == "Stopped"
    types = [e.type for e in history(client, "w", "e")]
    assert types[0] == "ExecutionStarted" and types[-1] == "ExecutionStopped"


def test_concurrent_starts_share_transactions(cloud: LocalCloud) -> None:
    """Many clients starting at once: every start answered Running ends Succeeded exactly
    once, and the first steps that were ready together took fewer transactions than steps."""
    create(cloud.fnf_client(), "one", pass_flow("one"))
    before = cloud.health()["cloudflow"]
    errors: list[BaseException] = []

    def work(t: int) -> None:
        client = cloud.fnf_client()
        try:
            for i in range(25):
                assert _start(client, "one", f"c{t}-{i}").status == "Running"
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    client = cloud.fnf_client()
    for t in range(8):
        for i in range(25):
            assert _wait(client, "one", f"c{t}-{i}").status == "Succeeded"
    after = cloud.health()["cloudflow"]
    steps = after["stepsCommitted"] - before["stepsCommitted"]
    transactions = after["stepTransactions"] - before["stepTransactions"]
    assert steps == 200  # one step each: the whole Pass flow runs in its first step
    assert 1 <= transactions < steps


def _event_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# a first step that is much more work than its start: a Map of 600 Pass iterations (~3,000 events)
HEAVY = """Type: StateMachine
SpecVersion: v1
Name: heavy
StartAt: each
States:
  - Type: Map
    Name: each
    ItemsPath: $Input.items
    MaxConcurrency: 100
    Processor:
      StartAt: p
      States:
        - Type: Pass
          Name: p
          End: true
    End: true
"""


@pytest.mark.slow
def test_answered_starts_survive_sigkill_before_their_first_step(tmp_path: Path) -> None:
    """The daemon is SIGKILLed right after the last of a burst of starts was answered, while
    first steps are still queued: after the restart every answered execution ends exactly
    once, and some of them ran their first step only after the restart."""
    daemon = Daemon(tmp_path)
    daemon.start()
    try:
        client = daemon.cloud().fnf_client()
        create(client, "heavy", HEAVY)
        payload = json.dumps({"items": list(range(600))})
        answered: list[str] = []
        lock = threading.Lock()

        def work(t: int) -> None:
            c = daemon.cloud().fnf_client()
            for i in range(5):
                body = _start(c, "heavy", f"h{t}-{i}", payload)
                assert body.status == "Running" and body.stopped_time is None
                with lock:
                    answered.append(body.name)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        daemon.kill()
        killed_at = time.time()
        daemon.start()
        client = daemon.cloud().fnf_client()
        late = 0
        assert len(answered) == 20
        for name in answered:
            assert _wait(client, "heavy", name).status == "Succeeded", name
            events = history(client, "heavy", name)
            assert [e.event_id for e in events] == list(range(1, len(events) + 1))
            kinds = [e.type for e in events]
            assert kinds.count("ExecutionStarted") == 1
            assert kinds.count("ExecutionSucceeded") == 1
            late += _event_time(events[0].time) >= killed_at
        print(f"{late} of {len(answered)} first steps ran after the restart")
        assert late > 0  # the kill came between some answers and their first step
    finally:
        daemon.stop()
