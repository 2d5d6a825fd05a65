"""Bounded expressions and the flow-level Timeout through the official CloudFlow SDK against
mock_cloud(): the pathological regex answers at once while other requests keep their latency,
a bound exceeded is a state error a Catch takes, and a flow's Timeout ends it TimedOut on the
virtual and the real clock."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.clock import SystemClock
from deployer.testing.environment import LocalCloud, mock_cloud
from tests.emulator.cloudflow_support import create, history, start

REGEX_FLOW = """Type: StateMachine
SpecVersion: v1
Name: Regex
StartAt: Check
States:
  - Type: Pass
    Name: Check
    OutputConstructor:
      matched.$: "regexMatchString('(a+)+$', $Input.s)"
    End: true
"""


def _health_latencies(cloud: LocalCloud, stop: threading.Event, answered: threading.Event,
                      out: list[float]) -> None:
    while not stop.is_set():
        began = time.perf_counter()
        with urllib.request.urlopen(f"{cloud.url}/_emulator/health", timeout=30) as answer:
            assert json.loads(answer.read())["status"] == "ok"
        out.append(time.perf_counter() - began)
        answered.set()


def test_pathological_regex_finishes_while_other_requests_keep_their_latency(
        cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "Regex", REGEX_FLOW)
    subject = json.dumps({"s": "a" * 10_000 + "b"})  # 2^10000 steps for a backtracking engine
    baseline: list[float] = []
    _health_latencies_n(cloud, baseline, 5)
    latencies: list[float] = []
    stop, answered = threading.Event(), threading.Event()
    poller = threading.Thread(target=_health_latencies, args=(cloud, stop, answered, latencies))
    cpu_before = time.process_time()
    poller.start()
    try:
        for i in range(10):
            start(client, "Regex", f"r{i}", subject)
            if i == 4:  # health answers in the middle of the batch, not after it
                assert answered.wait(timeout=30)
        for i in range(10):
            final = client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="Regex", execution_name=f"r{i}", wait_time_seconds=30)).body
            assert final.status == "Succeeded"
            assert json.loads(final.output) == {"matched": False}
        answered_meanwhile = len(latencies)
    finally:
        stop.set()
        poller.join()
    cpu = time.process_time() - cpu_before
    assert answered_meanwhile >= 1
    # CPU: ten 10,000-character matches, with SDK calls and history on both sides, in well
    # under what one backtracking match of 30 characters takes (seconds).
    assert cpu < 10
    # Latency: none of the health calls waited behind a step (a frozen server answers in
    # hours); the bound is generous against the shared machine's noise.
    assert max(latencies) < max(2.0, 20 * max(baseline))


def _health_latencies_n(cloud: LocalCloud, out: list[float], n: int) -> None:
    for _ in range(n):
        began = time.perf_counter()
        cloud.health()
        out.append(time.perf_counter() - began)


_REFS = ", ".join(["$Input.s"] * 18)
CATCH_FLOW = f"""Type: StateMachine
SpecVersion: v1
Name: Bounded
StartAt: Build
States:
  - Type: Parallel
    Name: Build
    Branches:
      - StartAt: Huge
        States:
          - Type: Pass
            Name: Huge
            OutputConstructor:
              blob.$: "jsonToString([{_REFS}])"
            End: true
    Catch:
      - Errors: [FnF.DataLimitExceeded]
        OutputConstructor:
          code.$: $Context.Current.Error.Code
        Next: Recovered
    End: true
  - Type: Pass
    Name: Recovered
    End: true
"""


def test_a_bound_exceeded_is_a_state_error_the_flow_catches(cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "Bounded", CATCH_FLOW)
    start(client, "Bounded", "e1", json.dumps({"s": "x" * 60_000}))
    final = cloud.wait_for_execution("Bounded", "e1")
    assert final["Status"] == "Succeeded"
    assert json.loads(final["Output"]) == {"code": "FnF.DataLimitExceeded"}
    failed = [e for e in history(client, "Bounded", "e1") if e.type == "StepFailed"]
    assert "1048576-character limit" in json.loads(failed[0].event_detail)["Cause"]


TIMED = """Type: StateMachine
SpecVersion: v1
Name: {name}
Timeout: {timeout}
StartAt: Ask
States:
  - Type: Task
    Name: Ask
    Action: MNS:SendMessage
    TaskMode: WaitForCustomCallback
    Parameters:
      token.$: $Context.Current.TaskToken
    End: true
"""


def _timed_out(client: Any, flow: str, name: str, seconds: int) -> None:
    events = history(client, flow, name)
    assert events[-1].type == "ExecutionTimedOut"
    assert json.loads(events[-1].event_detail) == {
        "Error": "FnF.ExecutionTimeout",
        "Cause": f"the execution ran longer than the flow's Timeout of {seconds} seconds"}


def test_the_flow_timeout_on_the_virtual_clock_fires_when_time_gets_there(
        cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "Timed", TIMED.format(name="Timed", timeout=600))
    start(client, "Timed", "e1")
    assert client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="Timed", execution_name="e1")).body.status == "Running"
    # A timeout alone never makes virtual time jump (as with a Task's Timeout): the callback
    # waits until somebody moves the clock.
    assert cloud.health()["cloudflow"]["pendingTimers"] >= 1
    cloud.advance(599)
    assert client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="Timed", execution_name="e1", wait_time_seconds=1)).body.status == "Running"
    cloud.advance(1)
    final = client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="Timed", execution_name="e1", wait_time_seconds=30)).body
    assert final.status == "TimedOut"
    _timed_out(client, "Timed", "e1", 600)


def test_the_flow_timeout_with_a_longer_wait_ends_the_execution_first(
        cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    definition = ("Type: StateMachine\nSpecVersion: v1\nName: Short\nTimeout: 100\n"
                  "StartAt: w\nStates:\n  - Type: Wait\n    Name: w\n    Seconds: 300\n"
                  "    End: true\n")
    create(client, "Short", definition)
    begun = cloud.now()
    start(client, "Short", "e1")
    final = cloud.wait_for_execution("Short", "e1")  # the Wait lets time jump: to t+100
    assert final["Status"] == "TimedOut"
    assert cloud.now() - begun == 100


def test_the_flow_timeout_on_the_real_clock() -> None:
    with mock_cloud(clock=SystemClock(), intercept=False) as cloud:
        client = cloud.fnf_client()
        create(client, "RealTimed", TIMED.format(name="RealTimed", timeout='"2"'))
        began = time.monotonic()
        start(client, "RealTimed", "e1")
        final = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="RealTimed", execution_name="e1", wait_time_seconds=30)).body
        assert final.status == "TimedOut"
        assert time.monotonic() - began >= 1.9
        _timed_out(client, "RealTimed", "e1", 2)


def test_create_flow_refuses_a_timeout_beyond_the_modes_limit(cloud: LocalCloud) -> None:
    from tests.emulator.cloudflow_support import client_error

    client = cloud.fnf_client()
    definition = ("Type: StateMachine\nSpecVersion: v1\nName: TooLong\nTimeout: 301\n"
                  "StartAt: p\nStates:\n  - Type: Pass\n    Name: p\n    End: true\n")
    error = client_error(lambda: create(client, "TooLong", definition, execution_mode="Express"))
    assert "FDL408" in error.message
    assert create(client, "LongEnough", definition.replace("301", "300").replace(
        "TooLong", "LongEnough"), execution_mode="Express").name == "LongEnough"
