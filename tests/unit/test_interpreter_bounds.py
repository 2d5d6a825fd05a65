"""The interpreter with bounded expressions, size limits and the flow-level Timeout: a bound
exceeded fails the state with a documented code Retry/Catch match; a flow Timeout ends the
execution TimedOut at that instant (docs/fdl-semantics.md, "Bounds" and "Flow Timeout")."""

from __future__ import annotations

import json
import textwrap

import pytest

from deployer.fdl import check_flow
from deployer.fdl.interpreter import compile_flow, start, step
from deployer.fdl.interpreter import runtime as interpreter_runtime
from deployer.fdl.interpreter.commands import StartTimer, TimerPurpose
from deployer.fdl.interpreter.events import TimerFired
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.simulate import TaskAnswer
from tests.unit.interp_helpers import flow_of, run, types

ARN = "acs:fc:cn-hangzhou:123:functions/f/LATEST"


def _last_error(sim) -> dict:
    return json.loads(sim.history[-1].detail)


def test_the_pathological_regex_runs_as_a_state_and_answers():
    flow = flow_of("""
        - Type: Pass
          Name: Check
          OutputConstructor: {matched.$: "regexMatchString('(a+)+$', $Input.s)"}
          End: true
    """)
    sim = run(flow, {"s": "a" * 10_000 + "b"})
    assert sim.execution.status.value == "Succeeded"
    assert sim.execution.output == {"matched": False}


def test_an_evaluation_over_budget_fails_the_state():
    flow = flow_of("""
        - Type: Pass
          Name: Heavy
          InputConstructor:
            n.$: "regexMatchString('[ab]*a[ab]{1000}c', $Input.s)"
          Next: Done
        - Type: Succeed
          Name: Done
    """)
    failed = run(flow, {"s": "ab" * 30_000})
    assert failed.execution.status.value == "Failed"
    error = _last_error(failed)
    assert error["Error"] == "FnF.RuntimeError"
    assert "InputConstructor: n.$: the evaluation exceeded its budget" in error["Cause"]
    assert types(failed)[-3:] == ["StepFailed", "StepExited", "ExecutionFailed"]


def _fc_task(body: str, rules: str = "", after: str = "End: true"):
    """A flow whose Task ``Call`` sends ``body``, with Retry/Catch ``rules``."""
    return flow_of(f"""
        - Type: Task
          Name: Call
          Action: FC:InvokeFunction
          Parameters:
            resourceArn: {ARN}
            invocationType: Sync
            body: {body}
{textwrap.indent(textwrap.dedent(rules), " " * 10)}          {after}
        - Type: Pass
          Name: Recover
          End: true
    """)


def test_retry_and_catch_match_the_bound_codes():
    refs = ", ".join(["$Input.s"] * 18)
    flow = _fc_task(f'{{blob.$: "jsonToString([{refs}])"}}', """\
        Retry:
          - Errors: [FnF.DataLimitExceeded]
            MaxAttempts: 1
            IntervalSeconds: 1
        Catch:
          - Errors: [FnF.DataLimitExceeded]
            OutputConstructor: {code.$: $Context.Current.Error.Code}
            Next: Recover
        """)
    sim = run(flow, {"s": "x" * 60_000})  # 18 x 60,000 characters: over the 1 Mi cap
    assert sim.execution.status.value == "Succeeded"
    assert sim.execution.output == {"code": "FnF.DataLimitExceeded"}
    assert sim.ended_at == 1.0  # one retry after 1 s, then the catch


def test_task_parameters_over_64_kib_fail_the_state():
    flow = _fc_task("{a.$: $Input.s, b.$: $Input.s}", after="Next: Recover")
    sim = run(flow, {"s": "x" * 40_000})  # the input fits in 64 KiB, the parameters do not
    error = _last_error(sim)
    assert error["Error"] == "FnF.DataLimitExceeded"
    assert "the Parameters of state 'Call' is" in error["Cause"]
    assert H.TASK_SCHEDULED.value not in types(sim)


@pytest.mark.parametrize(("constructor", "message"), [
    ("{%s: 1}" % ("k" * 130), "$Global key"),
    ('{big.$: "jsonToString([$Input.s, $Input.s, $Input.s, $Input.s, $Input.s])"}',
     "$Global value 'big'"),
])
def test_global_keys_and_values_have_the_documented_limits(constructor, message):
    flow = flow_of(f"""
        - Type: Pass
          Name: Keep
          GlobalConstructor: {constructor}
          End: true
    """)
    sim = run(flow, {"s": "x" * 60_000})
    error = _last_error(sim)
    assert error["Error"] == "FnF.DataLimitExceeded"
    assert message in error["Cause"]


def test_the_step_budget_covers_all_evaluations_of_one_step(monkeypatch):
    monkeypatch.setattr(interpreter_runtime, "STEP_EVALUATION_STEPS", 20_000)
    flow = flow_of("""
        - Type: Map
          Name: Each
          ItemsPath: $Input.items
          Processor:
            StartAt: Work
            States:
              - Type: Pass
                Name: Work
                InputConstructor: {parts.$: "length(split($Context.Execution.Input.s, ''))"}
                End: true
          End: true
    """)
    sim = run(flow, {"items": list(range(30)), "s": "x" * 1000})  # ~1,070 steps an item
    error = _last_error(sim)
    assert error["Error"] == "FnF.RuntimeError"
    assert "left of the budget of this step" in error["Cause"]
    ok = run(flow, {"items": list(range(10)), "s": "x" * 1000})
    assert ok.execution.output == {"Items": [{"parts": 1000}] * 10}


# -- the flow-level Timeout ------------------------------------------------------------------

TIMED = """Type: StateMachine
Name: timed
SpecVersion: v1
Timeout: {timeout}
StartAt: Sleep
States:
  - Type: Wait
    Name: Sleep
    Seconds: 20
    Next: Call
  - Type: Task
    Name: Call
    Action: FC:InvokeFunction
    Parameters: {{resourceArn: "ARN", invocationType: Sync}}
    End: true
""".replace("ARN", ARN)


def _timed(timeout: object, mode: str = "Standard"):
    check = check_flow(TIMED.format(timeout=timeout), execution_mode=mode)
    assert check.ok, [str(d) for d in check.errors]
    return compile_flow(check.flow)


def test_the_flow_timeout_ends_the_execution_timed_out():
    sim = run(_timed(30), answer=lambda command, now: None)  # the task never answers
    ex = sim.execution
    assert ex.status.value == "TimedOut"
    assert sim.ended_at == 30.0
    last = sim.history[-1]
    assert last.type is H.EXECUTION_TIMED_OUT
    assert json.loads(last.detail) == {
        "Error": "FnF.ExecutionTimeout",
        "Cause": "the execution ran longer than the flow's Timeout of 30 seconds"}


def test_the_flow_timeout_is_a_timer_of_the_execution():
    ex, commands = start(_timed('"25"'), input={}, execution_name="e", now=100.0)
    timers = [c for c in commands if isinstance(c, StartTimer)]
    assert timers[0] == StartTimer("e:execution-timeout", 125.0, TimerPurpose.EXECUTION_TIMEOUT)
    assert ex.max_duration_seconds == 25.0
    ended, _ = step(_timed('"25"'), ex, TimerFired(125.0, "e:execution-timeout"))
    assert ended.status.value == "TimedOut"


def test_a_flow_finishing_in_time_is_unaffected():
    sim = run(_timed(300), answer=lambda command, now: TaskAnswer('{"ok":1}', after=5))
    assert sim.execution.status.value == "Succeeded"
    assert sim.ended_at == 25.0


def test_timeout_zero_and_express_use_the_modes_limit():
    assert start(_timed(0), input={}, execution_name="e", now=0.0)[0] \
        .max_duration_seconds == 365 * 86_400
    ex, _ = start(_timed(0, "Express"), input={}, execution_name="e", now=0.0,
                  execution_mode="Express")
    assert ex.max_duration_seconds == 300
    ex, _ = start(_timed(60, "Express"), input={}, execution_name="e", now=0.0,
                  execution_mode="Express")
    assert ex.max_duration_seconds == 60


def test_a_configured_maximum_shorter_than_the_timeout_wins():
    ex, _ = start(_timed(600), input={}, execution_name="e", now=0.0, max_duration_seconds=50)
    assert ex.max_duration_seconds == 50
    sim = run(_timed(600), answer=lambda command, now: None, max_duration_seconds=50)
    assert json.loads(sim.history[-1].detail)["Cause"] == \
        "the execution ran longer than 50 seconds"
