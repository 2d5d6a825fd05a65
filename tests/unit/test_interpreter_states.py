"""State behaviour driven event by event through start/step, plus the nested cases."""

from __future__ import annotations

import json

from deployer.fdl.interpreter import (
    CancelTimer,
    CompleteExecution,
    ExecutionStatus,
    InvokeTask,
    StartTimer,
    StopRequested,
    TaskSucceeded,
    TimerFired,
    TimerPurpose,
    start,
    step,
)
from deployer.fdl.interpreter.simulate import TaskAnswer
from tests.unit.golden_scenarios import FAILING_MAP
from tests.unit.interp_helpers import entered, flow_of, returns, run, types

WAIT = """
    - Type: Wait
      Name: W
      Seconds.$: $Input.s
      Next: P
    - {Type: Pass, Name: P, End: true}
"""


def test_wait_starts_a_timer_and_stop_cancels_it() -> None:
    flow = flow_of(WAIT)
    ex, commands = start(flow, input={"s": 86 * 3}, execution_name="e1", now=100.0)
    timers = [c for c in commands if isinstance(c, StartTimer) and c.purpose is TimerPurpose.WAIT]
    assert len(timers) == 1 and timers[0].fire_at == 100.0 + 258
    ex2, commands2 = step(flow, ex, StopRequested(150.0, "Abort", "user asked"))
    assert ex.status is ExecutionStatus.RUNNING  # the given execution is not modified
    assert ex2.status is ExecutionStatus.STOPPED and not ex2.timers
    assert CancelTimer(timers[0].timer_id) in commands2
    assert commands2[-1] == CompleteExecution("Stopped", None, "Abort", "user asked")
    terminal = [e for e in ex2.new_events if e.type.value.startswith("Execution")]
    assert [e.type.value for e in terminal] == ["ExecutionStopped"]
    ex3, commands3 = step(flow, ex2, TimerFired(400.0, timers[0].timer_id))
    assert commands3 == [] and ex3.new_events == [] and ex3.status is ExecutionStatus.STOPPED


def test_wait_completes_when_its_timer_fires() -> None:
    flow = flow_of(WAIT)
    ex, commands = start(flow, input={"s": 5}, execution_name="e1", now=0.0)
    timer = next(
        c for c in commands if isinstance(c, StartTimer) and c.purpose is TimerPurpose.WAIT
    )
    ex, commands = step(flow, ex, TimerFired(5.0, "not-a-timer"))
    assert commands == [] and ex.status is ExecutionStatus.RUNNING
    ex, commands = step(flow, ex, TimerFired(5.0, timer.timer_id))
    assert ex.status is ExecutionStatus.SUCCEEDED and ex.output == {"s": 5}
    assert ex.new_events[-1].time == "1970-01-01T00:00:05.000Z"


def test_wait_seconds_out_of_range_is_a_runtime_error() -> None:
    for bad in (0, 301, 1.5, "10", None):
        sim = run(flow_of(WAIT), {"s": bad})
        assert sim.execution.error_code == "FnF.RuntimeError", bad
    express = run(flow_of(WAIT), {"s": 21}, execution_mode="Express")
    assert express.execution.error_code == "FnF.RuntimeError"


CALLBACK = """
    - Type: Task
      Name: Approve
      Action: FC:InvokeFunction
      TaskMode: WaitForCustomCallback
      Parameters:
        resourceArn: acs:fc:cn-hangzhou:1:functions/notify/LATEST
        invocationType: Async
        body:
          token.$: $Context.Current.TaskToken
      End: true
"""


def test_custom_callback_token_flow() -> None:
    flow = flow_of(CALLBACK)
    ex, commands = start(flow, input={}, execution_name="cb", now=0.0)
    invoke = next(c for c in commands if isinstance(c, InvokeTask))
    assert invoke.task_token and invoke.parameters["body"]["token"] == invoke.task_token
    assert ex.task_for_token(invoke.task_token) == invoke.task_id
    assert "TaskSubmitted" in [e.type.value for e in ex.new_events]
    ex, _ = step(flow, ex, TaskSucceeded(60.0, invoke.task_id, '{"approved": true}'))
    assert ex.status is ExecutionStatus.SUCCEEDED
    assert ex.output == {"approved": True}  # callback output passes through, no Body


def test_task_tokens_differ_between_flows_sharing_an_execution_name() -> None:
    flow = flow_of(CALLBACK)
    tokens = set()
    for flow_name in ("FlowA", "FlowB"):
        _, commands = start(flow, input={}, execution_name="same", now=0.0, flow_name=flow_name)
        tokens.add(next(c for c in commands if isinstance(c, InvokeTask)).task_token)
    assert len(tokens) == 2


def test_task_timeout_fails_with_fnf_timeout_and_late_result_is_ignored() -> None:
    flow = flow_of(CALLBACK.replace("End: true", "Timeout: 30\n      End: true"))
    ex, commands = start(flow, input={}, execution_name="to", now=0.0)
    invoke = next(c for c in commands if isinstance(c, InvokeTask))
    timer = next(
        c for c in commands if isinstance(c, StartTimer) and c.purpose is TimerPurpose.TASK_TIMEOUT
    )
    assert timer.fire_at == 30.0 and invoke.timeout_seconds == 30
    ex, _ = step(flow, ex, TimerFired(30.0, timer.timer_id))
    assert ex.status is ExecutionStatus.FAILED and ex.error_code == "FnF.Timeout"
    assert "TaskTimedOut" in [e.type.value for e in ex.new_events]
    ex2, commands2 = step(flow, ex, TaskSucceeded(31.0, invoke.task_id, "{}"))
    assert commands2 == [] and ex2.new_events == []


def test_dynamic_timeout_and_task_success_cancels_timer() -> None:
    flow = flow_of(CALLBACK.replace("End: true", "Timeout.$: $Input.t\n      End: true"))
    sim = run(flow, {"t": 10}, lambda c, now: TaskAnswer('{"x":1}', after=4))
    assert sim.execution.status is ExecutionStatus.SUCCEEDED and sim.duration_seconds == 4
    assert any(isinstance(c, CancelTimer) for c in sim.commands)
    bad = run(flow, {"t": -1}, lambda c, now: returns({}))
    assert bad.execution.error_code == "FnF.RuntimeError"


NL = "\n"
ARN = "acs:fc:::services/s.LATEST/functions/f"


def _task(name: str, end: str = "End: true") -> str:
    return f"""
            - Type: Task
              Name: {name}
              Action: FC:InvokeFunction
              Parameters: {{resourceArn: "{ARN}", invocationType: Sync}}
              {end}"""


def test_failing_branch_cancels_siblings_and_outer_catch_handles_it() -> None:
    flow = flow_of(
        f"""
    - Type: Parallel
      Name: Par
      Branches:
        - StartAt: Slow
          States:
            - Type: Wait
              Name: Slow
              Seconds: 100
              End: true
        - StartAt: Boom
          States:{_task("Boom")}
      Catch:
        - Errors: [FC.Unknown]
          OutputConstructor:
            code.$: $Context.Current.Error.Code
          Next: Handled
      End: true
    - {{Type: Pass, Name: Handled, End: true}}
    """,
        start_at="Par",
    )
    sim = run(
        flow, {}, lambda c, now: TaskAnswer.failure("FC.Unknown", '{"errorMessage":"x"}', after=2)
    )
    assert sim.execution.status is ExecutionStatus.SUCCEEDED
    assert sim.execution.output == {"code": "FC.Unknown"}
    assert sim.duration_seconds == 2  # the 100 s Wait was cancelled
    assert any(isinstance(c, CancelTimer) and ":wait:" in c.timer_id for c in sim.commands)


def test_succeed_inside_a_branch_ends_only_the_branch() -> None:
    flow = flow_of(
        """
    - Type: Parallel
      Name: Par
      Branches:
        - StartAt: Done
          States:
            - {Type: Succeed, Name: Done}
            - {Type: Fail, Name: Never, Code: X}
        - StartAt: Other
          States:
            - {Type: Pass, Name: Other, InputConstructor: {o: 1}, End: true}
      Next: After
    - {Type: Pass, Name: After, End: true}
    """,
        start_at="Par",
    )
    sim = run(flow, {"v": 1})
    assert sim.execution.output == {"Branch0": {"v": 1}, "Branch1": {"o": 1}}
    assert "Never" not in entered(sim) and entered(sim)[-1] == "After"


def test_map_of_parallel_and_max_concurrency_queues_items() -> None:
    flow = flow_of(
        f"""
    - Type: Map
      Name: M
      ItemsPath: $Input.xs
      MaxConcurrency: 2
      Processor:
        StartAt: Par
        States:
          - Type: Parallel
            Name: Par
            Branches:
              - StartAt: Call
                States:{_task("Call").replace(NL + " " * 12, NL + " " * 20)}
              - StartAt: Echo
                States:
                  - {{Type: Pass, Name: Echo, End: true}}
            End: true
      End: true
    """,
        start_at="M",
    )
    active: list[float] = []

    def answer(command: InvokeTask, now: float) -> TaskAnswer:
        active.append(now)
        return TaskAnswer(json.dumps({"t": now}), after=10)

    sim = run(flow, {"xs": [1, 2, 3, 4, 5]}, answer)
    assert sim.execution.status is ExecutionStatus.SUCCEEDED
    assert active == [0, 0, 10, 10, 20]
    items = sim.execution.output["Items"]
    assert [i["Branch1"] for i in items] == [1, 2, 3, 4, 5]
    assert [i["Branch0"] for i in items] == [{"Body": {"t": t}} for t in (0, 0, 10, 10, 20)]


def test_parallel_of_map_and_error_in_iteration_reaches_execution() -> None:
    flow = flow_of(FAILING_MAP, start_at="Par")
    good = run(flow, {"xs": [1, 2]})
    assert good.execution.output == {"Branch0": {"Items": [1, 2]}}
    bad = run(flow, {"xs": [1, 3, 2]})
    assert (bad.execution.error_code, bad.execution.error_detail) == ("TooBig", "over two")
    assert types(bad).count("ExecutionFailed") == 1


def test_input_over_64_kib_fails_the_state() -> None:
    flow = flow_of("""
    - Type: Pass
      Name: Big
      OutputConstructor:
        s.$: $Input.s
        t.$: $Input.s
      End: true
    """)
    sim = run(flow, {"s": "x" * 40_000})
    assert sim.execution.error_code == "FnF.DataLimitExceeded"


def test_history_ids_and_schedule_ids() -> None:
    sim = run(flow_of("- {Type: Pass, Name: P, End: true}"), {"a": 1})
    rows = [(e.event_id, e.schedule_event_id, e.type.value, e.step_name) for e in sim.history]
    assert rows == [
        (1, 0, "ExecutionStarted", ""),
        (2, 1, "StepEntered", "P"),
        (3, 2, "StepStarted", "P"),
        (4, 2, "StepSucceeded", "P"),
        (5, 2, "StepExited", "P"),
        (6, 1, "ExecutionSucceeded", ""),
    ]
    assert json.loads(sim.history[0].detail) == {"Input": {"a": 1}}


def test_endless_loop_hits_the_event_limit() -> None:
    flow = flow_of("""
    - {Type: Pass, Name: A, Next: B}
    - Type: Choice
      Name: B
      Branches:
        - Condition: 'true'
          Next: A
      Default: A
    """)
    sim = run(flow, {}, max_events=200)
    assert sim.execution.error_code == "FnF.EventLimitExceeded"
    assert sim.history[-1].event_id == 201


def test_callback_never_answered_times_out_the_execution() -> None:
    sim = run(flow_of(CALLBACK), {}, lambda c, now: None, max_duration_seconds=3600)
    assert sim.execution.status is ExecutionStatus.TIMED_OUT and sim.duration_seconds == 3600
