"""Scenarios whose every interpreter step is recorded in ``tests/fixtures/interpreter/golden.json``.

A trace is, per event fed to ``step``: the event, the compact JSON text of the execution it
returned (``Execution.to_json()``, so ``new_events`` with the exact ``EventDetail`` text the
emulator serves) and the commands. The fixture was recorded from the implementation before the
interpreter was optimised; ``test_interpreter_golden`` replays the scenarios and compares text.

Re-record (only when a behaviour change is intended): ``python -m tests.unit.golden_scenarios``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from deployer.fdl import check_flow
from deployer.fdl.interpreter import (
    Event,
    Execution,
    InvokeTask,
    StopRequested,
    TaskSucceeded,
    new_execution,
    step,
)
from deployer.fdl.interpreter.simulate import TaskAnswer, simulate
from deployer.fdl.syntax.ast import Flow

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "interpreter" / "golden.json"
ARN = "acs:fc:cn-hangzhou:123:functions/f/LATEST"
Answer = Callable[[InvokeTask, float], "TaskAnswer | None"]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A flow, its input and how its tasks answer (a function of the call, so deterministic)."""

    flow: Callable[[], Flow]
    input: Any
    answer: Answer
    options: dict[str, Any] = field(default_factory=dict)
    #: after this many steps, feed StopRequested instead of continuing (None: run to the end)
    stop_after: int | None = None


def seed_flow(max_polls: int = 3) -> Flow:
    text = (
        jinja2.Environment(undefined=jinja2.StrictUndefined)
        .from_string((ROOT / "templates" / "flow.yaml.j2").read_text())
        .render(region="cn-hangzhou", account_id="1234567890123456",
                start_job_function="StartJob", get_job_status_function="GetJobStatus",
                max_polls=max_polls)
    )
    return _checked(text)


def flow_text(states: str, start_at: str) -> Flow:
    return _checked(
        f"Type: StateMachine\nName: golden\nSpecVersion: v1\nStartAt: {start_at}\nStates:\n"
        + states
    )


def _checked(text: str) -> Flow:
    check = check_flow(text, source="golden.yaml")
    assert check.ok, [str(d) for d in check.errors]
    assert check.flow is not None
    return check.flow


def seed_answer(success_at: int | None, job_id: Any = "j-1", extra: Any = None) -> Answer:
    def answer(command: InvokeTask, now: float) -> TaskAnswer:
        if command.state_path == ("StartJob",):
            return TaskAnswer(json.dumps({"job_id": job_id}), after=0.25)
        body = command.parameters["body"]
        count = body["try_count"] + 1
        done = success_at is not None and count >= success_at
        reply = {"job_id": body["job_id"], "job_status": "success" if done else "running",
                 "try_count": count}
        if extra is not None:
            reply["extra"] = extra
        return TaskAnswer(json.dumps(reply, ensure_ascii=count % 2 == 0), after=1.5)

    return answer


def _throttled(command: InvokeTask, now: float) -> TaskAnswer:
    return TaskAnswer.failure("FC.ResourceThrottled", "too many requests")


PARALLEL = f"""
  - Type: Pass
    Name: Prepare
    InputConstructor:
      xs.$: $Input.xs
      id.$: uuid()
      n.$: randomInt(0, 1000)
      label.$: format("run-{{}}", $Context.Execution.Name)
    GlobalConstructor:
      first.$: $Input.xs[0]
    Next: Fan
  - Type: Parallel
    Name: Fan
    Branches:
      - StartAt: Call
        States:
          - Type: Task
            Name: Call
            Action: FC:InvokeFunction
            TaskMode: RequestComplete
            Parameters:
              resourceArn: {ARN}
              invocationType: Sync
              body:
                xs.$: $Input.xs
                token.$: $Context.Current.TaskToken
                g.$: $Global.first
            Retry:
              - Errors: [FC.ResourceThrottled]
                MaxAttempts: 2
                IntervalSeconds: 1
                BackoffRate: 1.5
            End: true
      - StartAt: Nap
        States:
          - {{Type: Wait, Name: Nap, Seconds: 3, Next: Echo}}
          - Type: Pass
            Name: Echo
            OutputConstructor:
              label.$: $Input.label
              retry.$: $Context.Current.RetryCount
            End: true
      - StartAt: Each
        States:
          - Type: Map
            Name: Each
            ItemsPath: $Input.xs
            MaxConcurrency: 2
            Processor:
              StartAt: Square
              States:
                - Type: Choice
                  Name: Square
                  Branches:
                    - Condition: $Input > 2
                      Next: Big
                  Default: Small
                - Type: Task
                  Name: Big
                  Action: FC:InvokeFunction
                  Parameters: {{resourceArn: {ARN}, invocationType: Sync, body: {{v.$: $Input}}}}
                  Timeout: 30
                  End: true
                - {{Type: Pass, Name: Small, InputConstructor: {{v.$: $Input, s: "é\\u2028"}},
                    End: true}}
            End: true
    OutputConstructor:
      call.$: $Output.Branch0
      echo.$: $Output.Branch1
      items.$: $Output.Branch2.Items
    Next: Done
  - Type: Succeed
    Name: Done
"""


def _parallel_answer(command: InvokeTask, now: float) -> TaskAnswer:
    if command.state_path[-1] == "Call":
        if now < 1:
            return TaskAnswer.failure("FC.ResourceThrottled", "slow down")
        return TaskAnswer(json.dumps({"ok": True, "pi": 3.14159, "big": 10**20, "f": 1e-7,
                                      "u": "ünï\u2603", "esc": "\"\\/\n\t</x>"}), after=2)
    value = command.parameters["body"]["v"]
    return TaskAnswer(json.dumps({"sq": value * value, "at": now}), after=value)


CATCHING = f"""
  - Type: Parallel
    Name: Par
    Branches:
      - StartAt: Slow
        States:
          - {{Type: Wait, Name: Slow, Seconds: 100, End: true}}
      - StartAt: Boom
        States:
          - Type: Task
            Name: Boom
            Action: FC:InvokeFunction
            Parameters: {{resourceArn: "{ARN}", invocationType: Sync}}
            End: true
      - StartAt: M
        States:
          - Type: Map
            Name: M
            ItemsPath: $Input.xs
            MaxConcurrency: 5
            Processor:
              StartAt: Hang
              States:
                - Type: Task
                  Name: Hang
                  Action: FC:InvokeFunction
                  TaskMode: WaitForCustomCallback
                  Parameters: {{resourceArn: "{ARN}", invocationType: Async}}
                  Timeout: 50
                  End: true
            End: true
    Catch:
      - Errors: [FC.Unknown]
        OutputConstructor:
          code.$: $Context.Current.Error.Code
          detail.$: $Context.Current.Error.Detail
        Next: Handled
    End: true
  - {{Type: Pass, Name: Handled, End: true}}
"""


def _catching_answer(command: InvokeTask, now: float) -> TaskAnswer | None:
    if command.state_path[-1] == "Boom":
        return TaskAnswer.failure("FC.Unknown", '{"errorMessage":"x","errorType":"E"}', after=2)
    return None


FAILING_MAP = """
  - Type: Parallel
    Name: Par
    Branches:
      - StartAt: M
        States:
          - Type: Map
            Name: M
            ItemsPath: $Input.xs
            Processor:
              StartAt: Check
              States:
                - Type: Choice
                  Name: Check
                  Branches:
                    - Condition: $Input > 2
                      Next: Bad
                  Default: Ok
                - {Type: Fail, Name: Bad, Code: TooBig, Detail: over two}
                - {Type: Pass, Name: Ok, End: true}
            End: true
    End: true
"""

TIMEOUTS = f"""
  - Type: Task
    Name: Slow
    Action: FC:InvokeFunction
    Parameters: {{resourceArn: "{ARN}", invocationType: Sync}}
    Timeout: 5
    Catch:
      - Errors: [FnF.Timeout]
        Next: Loop
    Next: Loop
  - Type: Pass
    Name: Loop
    GlobalConstructor:
      n.$: length($Context.Current.Name)
    OutputConstructor:
      at.$: format("{{}}@{{}}", $Context.Current.Name, $Context.Current.RetryCount)
    Next: Loop
"""


FLOW_TIMEOUT = f"""Type: StateMachine
Name: golden
SpecVersion: v1
Timeout: 12
StartAt: Pause
States:
  - Type: Wait
    Name: Pause
    Seconds: 5
    Next: Call
  - Type: Task
    Name: Call
    Action: FC:InvokeFunction
    Parameters: {{resourceArn: "{ARN}", invocationType: Sync}}
    End: true
"""

BOUNDED = f"""
  - Type: Pass
    Name: Match
    OutputConstructor:
      s.$: $Input.s
      matched.$: "regexMatchString('(a+)+$', $Input.s)"
    Next: Heavy
  - Type: Task
    Name: Heavy
    Action: FC:InvokeFunction
    Parameters:
      resourceArn: "{ARN}"
      invocationType: Sync
      body: {{n.$: "regexMatchString('[ab]*a[ab]{{1000}}c', $Input.s)"}}
    Catch:
      - Errors: [FnF.RuntimeError]
        OutputConstructor:
          code.$: $Context.Current.Error.Code
          detail.$: $Context.Current.Error.Detail
        Next: Done
    End: true
  - Type: Pass
    Name: Done
    End: true
"""


SCENARIOS: dict[str, Scenario] = {
    "seed-success-second-poll": Scenario(
        lambda: seed_flow(), {"delay": 15}, seed_answer(2)),
    "seed-fails-after-polls": Scenario(
        lambda: seed_flow(), {}, seed_answer(None, job_id="jöb-\u00e9\U0001f600")),
    "seed-many-polls-unicode": Scenario(
        lambda: seed_flow(max_polls=30), {"delay": 2.5, "note": "naïve \"q\" \\ \u2028"},
        seed_answer(12, extra={"nested": [1, 2.0, None, True, {"k": "v"}], "big": 2**70})),
    "seed-throttled": Scenario(lambda: seed_flow(), {"delay": 1}, _throttled),
    "seed-stopped-while-waiting": Scenario(
        lambda: seed_flow(), {"delay": 3}, seed_answer(None), stop_after=3),
    "parallel-map-retry-globals": Scenario(
        lambda: flow_text(PARALLEL, "Prepare"), {"xs": [1, 3, 2, 5, 4]}, _parallel_answer,
        options={"role_arn": "acs:ram::123:role/flow", "start_time": 1_700_000_000.123}),
    "parallel-catch-cancels-siblings": Scenario(
        lambda: flow_text(CATCHING, "Par"), {"xs": [1, 2]}, _catching_answer),
    "parallel-map-failing-iteration": Scenario(
        lambda: flow_text(FAILING_MAP, "Par"), {"xs": [1, 3, 2]}, lambda c, n: None),
    "timeout-then-event-limit": Scenario(
        lambda: flow_text(TIMEOUTS, "Slow"), {}, lambda c, n: None,
        options={"max_events": 60}),
    "execution-timeout": Scenario(
        lambda: seed_flow(), {"delay": 1}, seed_answer(None),
        options={"execution_mode": "Express", "max_duration_seconds": 25}),
    "input-too-large": Scenario(
        lambda: seed_flow(), {"blob": "x" * 70_000}, seed_answer(1)),
    "flow-timeout": Scenario(lambda: _checked(FLOW_TIMEOUT), {}, lambda c, n: None),
    "bounded-expressions": Scenario(
        lambda: flow_text(BOUNDED, "Match"), {"s": "ab" * 10_000}, lambda c, n: None),
}


def events_of(scenario: Scenario) -> list[Event]:
    """The events the simulator feeds (its agenda only depends on the commands)."""
    flow = scenario.flow()
    sim = simulate(flow, scenario.answer, input=scenario.input, execution_name="golden",
                   **scenario.options)
    events = list(sim.events)
    if scenario.stop_after is not None:
        stop = StopRequested(events[scenario.stop_after].now, "Stopped.ByUser", "operator ✓")
        events = [*events[: scenario.stop_after], stop]
    # an event after the end and an unknown task id change nothing: keep them in the trace
    last = events[-1].now
    events.append(TaskSucceeded(last + 1, "golden:task:999", "{}"))
    return events


def trace(scenario: Scenario) -> list[dict[str, Any]]:
    """Per event: the event, the returned execution as compact JSON text, the commands."""
    flow = scenario.flow()
    options = {k: v for k, v in scenario.options.items() if k != "start_time"}
    execution: Execution = new_execution(
        flow, input=scenario.input, execution_name="golden",
        now=scenario.options.get("start_time", 0.0), **options,
    )
    steps = []
    for event in events_of(scenario):
        execution, commands = step(flow, execution, event)
        steps.append({
            "event": event.to_json(),
            "execution": dump(execution.to_json()),
            "commands": dump([command.to_json() for command in commands]),
        })
    return steps


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def record() -> None:
    """Write the fixture from the current implementation."""
    data = {name: trace(scenario) for name, scenario in SCENARIOS.items()}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record()
