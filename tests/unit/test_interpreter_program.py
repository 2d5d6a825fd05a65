"""The compiled flow: one evaluator per state, compiled once and shared by executions; stored
executions (also those written by earlier versions) load into it and continue unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deployer.fdl.interpreter import (
    Execution,
    InvokeTask,
    StartTimer,
    TaskFailed,
    TimerFired,
    compile_flow,
    new_execution,
    start,
    step,
)
from deployer.fdl.interpreter.runtime import task_token
from deployer.fdl.interpreter.states import EVALUATORS
from deployer.fdl.syntax.ast import StateType
from tests.unit.golden_scenarios import FIXTURE, SCENARIOS, dump, events_of
from tests.unit.interp_helpers import flow_of

GOLDEN: dict[str, list[dict[str, Any]]] = json.loads(FIXTURE.read_text(encoding="utf-8"))

CATCHING = """
    - Type: Task
      Name: Call
      Action: FC:InvokeFunction
      Parameters: {resourceArn: "acs:fc:cn-hangzhou:1:functions/f/LATEST",
                   invocationType: Sync, body: {n.$: $Input.missing.deeper}}
      Retry: [{Errors: [FnF.ALL], MaxAttempts: 1, IntervalSeconds: 2}]
      Catch: [{Errors: [FnF.ALL], Next: Caught,
               OutputConstructor: {token.$: $Context.Current.TaskToken,
                                   retries.$: $Context.Current.RetryCount}}]
      End: true
    - {Type: Pass, Name: Caught, End: true}
"""

#: ``Execution.to_json()`` of the flow below, written by the previous implementation while
#: the task backed off before its retry: it still carried the failed attempt's task fields.
STORED_WHILE_BACKING_OFF = (
    '{"name":"old","flow_name":"t","input":{"n":1},"role_arn":"","execution_mode":"Standard",'
    '"status":"Running","output":null,"error_code":"","error_detail":"","started_at":0.0,'
    '"stopped_at":null,"global_vars":{},"runs":[{"run_id":0,"path":[],"parent":-1,"slot":0,'
    '"open_event":1,"state":{"name":"Call","raw_input":{"n":1},"entered_event":2,'
    '"input":{"n":1},"input_ready":true,"phase":"retry","retry_counts":[1],"retry_count":1,'
    '"task_id":"old:task:4","task_token":"tt-5a6efaac3b812376abf162f2d6d3f3bb",'
    '"task_event":4,"timer_id":"old:retry:2:1","timeout_timer":"","children":[],"results":[],'
    '"items":[],"queue":[],"remaining":0}}],"next_run_id":1,"next_event_id":7,"tasks":{},'
    '"timers":{"old:execution-timeout":-1,"old:retry:2:1":0},"max_events":5000,'
    '"max_duration_seconds":31536000.0,"new_events":[]}'
)
RETRYING = CATCHING.replace(", body: {n.$: $Input.missing.deeper}", "")


def test_every_state_kind_has_an_evaluator() -> None:
    kinds = {cls.__name__.removesuffix("State").upper() for cls in EVALUATORS}
    assert kinds == {kind.name for kind in StateType}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_one_compiled_flow_serves_the_recorded_traces(name: str) -> None:
    scenario = SCENARIOS[name]
    program = compile_flow(scenario.flow())
    options = {k: v for k, v in scenario.options.items() if k != "start_time"}
    for _ in range(2):  # a second execution on the same compiled flow is the same
        execution = new_execution(program, input=scenario.input, execution_name="golden",
                                  now=scenario.options.get("start_time", 0.0), **options)
        for index, event in enumerate(events_of(scenario)):
            execution, commands = step(program, execution, event)
            assert dump(execution.to_json()) == GOLDEN[name][index]["execution"], index
            assert dump([c.to_json() for c in commands]) == GOLDEN[name][index]["commands"]


def test_a_catch_after_failing_parameters_sees_the_attempt_token() -> None:
    program = compile_flow(flow_of(CATCHING))
    ex, commands = start(program, input={"n": 1}, execution_name="e", now=0.0)
    retry = next(c for c in commands if isinstance(c, StartTimer) and "retry" in c.timer_id)
    stored = json.loads(json.dumps(ex.to_json()))
    assert stored["runs"][0]["state"]["phase"] == "retry"
    ex = Execution.from_json(stored)
    ex, _ = step(program, ex, TimerFired(retry.fire_at, retry.timer_id))
    # no task was scheduled, yet the token is the one the attempt would have given its task
    assert "TaskScheduled" not in [e.type.value for e in ex.new_events]
    assert ex.output == {"token": task_token("t", "e", 4), "retries": 1}


def test_an_execution_stored_while_backing_off_by_the_previous_version_continues() -> None:
    program = compile_flow(flow_of(RETRYING))
    live, commands = start(program, input={"n": 1}, execution_name="old", now=0.0, flow_name="t")
    task = next(c for c in commands if isinstance(c, InvokeTask))
    live, _ = step(program, live, TaskFailed(1.0, task.task_id, "FC.Unknown", "boom"))
    stored = Execution.from_json(json.loads(STORED_WHILE_BACKING_OFF))
    assert stored.timers == live.timers and stored.next_event_id == live.next_event_id
    fire = TimerFired(3.0, "old:retry:2:1")
    from_live, live_commands = step(program, live, fire)
    from_stored, stored_commands = step(program, stored, fire)
    assert stored_commands == live_commands
    assert from_stored.new_events == from_live.new_events
    assert from_stored.to_json() == from_live.to_json()
