"""The legacy dialect runs natively in the deterministic interpreter: data through frames and
$local, fall-through, ends, retry/catch with legacy names, foreach, waits, callbacks; every
execution survives being stored and read back between any two steps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deployer.fdl import LegacyFlow, check_flow
from deployer.fdl.interpreter import (
    Execution,
    InvokeTask,
    Started,
    StartTimer,
    TaskFailed,
    TaskSucceeded,
    TimerFired,
    compile_flow,
    step,
)
from deployer.fdl.interpreter.runtime import task_token
from deployer.fdl.interpreter.simulate import Simulation, TaskAnswer, simulate

HEAD = "version: v1\ntype: flow\n"
NEVER = object()  # a task never answered


def legacy(text: str) -> LegacyFlow:
    check = check_flow(HEAD + text)
    assert check.ok, [d.format() for d in check.errors]
    assert isinstance(check.flow, LegacyFlow)
    return check.flow


def run(text: str, answers: dict[str, Any] | None = None, given: Any = None,
        **options: Any) -> Simulation:
    """Run with tasks answered by state name: a value (returned as the response body), a
    list of values (one per call), or an exception-like ("!", code, detail)."""
    calls: dict[str, int] = {}
    table = answers or {}

    def answer(command: InvokeTask, now: float) -> TaskAnswer | None:
        name = command.state_path[-1]
        index = calls.get(name, 0)
        calls[name] = index + 1
        reply = table[name]
        if isinstance(reply, list):
            reply = reply[min(index, len(reply) - 1)]
        if callable(reply):
            reply = reply(command)
        if reply is NEVER:
            return None
        if isinstance(reply, tuple):
            return TaskAnswer.failure(reply[1], reply[2])
        return TaskAnswer(reply if isinstance(reply, str) else json.dumps(reply))

    return simulate(legacy(text), answer, input={} if given is None else given,
                    execution_name="run", **options)


def outcome(sim: Simulation) -> tuple[str, Any, str]:
    ex = sim.execution
    return ex.status.value, ex.output, ex.error_code


def events(sim: Simulation, kind: str) -> list[Any]:
    return [e for e in sim.history if e.type.value == kind]


def test_outputs_merge_into_local_and_the_next_step_reads_input_and_local() -> None:
    bodies: list[Any] = []

    def record(command: InvokeTask) -> Any:
        bodies.append(command.parameters["body"])
        return {"b": "from-task", "shared": "local wins"}

    sim = run("""steps:
  - type: pass
    name: First
    outputMappings:
      - {target: a, source: 1}
      - {target: shared, source: from-pass}
  - type: task
    name: Call
    resourceArn: acs:fc:::services/s/functions/f
  - type: task
    name: Mapped
    resourceArn: acs:fc:::services/s/functions/f
    inputMappings:
      - {target: from_input, source: $input.shared}
      - {target: from_local, source: $local.shared}
      - {target: run, source: $context.execution.name}
      - {target: step, source: $context.step.name}
      - {target: whole, source: $local}
""", {"Call": record, "Mapped": record}, {"shared": "input", "x": 0})
    assert outcome(sim) == ("Succeeded", {"a": 1, "shared": "local wins", "b": "from-task"}, "")
    assert bodies[0] == {"shared": "from-pass", "x": 0, "a": 1}  # input + local, local wins
    assert bodies[1] == {"from_input": "input", "from_local": "local wins", "run": "run",
                         "step": "Mapped",
                         "whole": {"a": 1, "shared": "local wins", "b": "from-task"}}
    entered = [json.loads(e.detail)["Input"] for e in events(sim, "StepEntered")]
    assert entered[1] == {"shared": "from-pass", "x": 0, "a": 1}


def test_a_step_falls_through_until_one_ends_its_list() -> None:
    sim = run("""steps:
  - {type: pass, name: A}
  - {type: pass, name: B, end: true}
  - {type: pass, name: Never}
""")
    assert [e.step_name for e in events(sim, "StepEntered")] == ["A", "B"]
    assert outcome(sim) == ("Succeeded", {}, "")


def test_a_succeed_in_inline_steps_ends_those_steps_then_the_choice_goes_on() -> None:
    sim = run("""steps:
  - type: choice
    name: C
    choices:
      - condition: $.go
        steps:
          - {type: pass, name: In, outputMappings: [{target: in, source: 1}]}
          - {type: succeed, name: Stop}
          - {type: pass, name: NotRun}
        goto: Last
  - {type: pass, name: Skipped}
  - {type: pass, name: Last, outputMappings: [{target: last, source: true}]}
""", given={"go": True})
    names = [e.step_name for e in events(sim, "StepEntered")]
    assert names == ["C", "In", "Stop", "Last"]
    assert outcome(sim) == ("Succeeded", {"in": 1, "last": True}, "")
    entered = events(sim, "BranchEntered")
    assert [json.loads(e.detail)["Index"] for e in entered] == [0]


def test_a_choice_without_default_falls_through_when_nothing_holds() -> None:
    sim = run("""steps:
  - type: choice
    name: C
    choices:
      - {condition: $.n > 1, goto: Big}
  - {type: pass, name: Small, outputMappings: [{target: small, source: true}], end: true}
  - {type: pass, name: Big}
""", given={"n": 0})
    assert [e.step_name for e in events(sim, "StepEntered")] == ["C", "Small"]


def test_a_fail_in_a_branch_fails_the_flow_with_its_error() -> None:
    sim = run("""steps:
  - type: parallel
    name: P
    branches:
      - steps: [{type: fail, name: Boom, error: Broken, cause: it broke}]
      - steps: [{type: task, name: Slow, resourceArn: "acs:fc:::functions/f"}]
""", {"Slow": {"ok": True}})
    assert outcome(sim) == ("Failed", None, "Broken")
    assert sim.execution.error_detail == "it broke"


def test_retries_use_the_legacy_defaults_then_the_catch_and_error_mappings() -> None:
    sim = run("""steps:
  - type: task
    name: Flaky
    resourceArn: acs:fc:::functions/f
    retry:
      - errors: [FnF.ALL]
    errorMappings:
      - {target: why, source: $local.error}
      - {target: detail, source: $local.cause}
    catch:
      - {errors: [FnF.ALL], goto: Handle}
  - {type: pass, name: NotRun}
  - {type: pass, name: Handle}
""", {"Flaky": ("!", "FC.ResourceThrottled", "busy")})
    scheduled = [e.time for e in events(sim, "TaskScheduled")]
    assert scheduled == ["1970-01-01T00:00:00.000Z", "1970-01-01T00:00:01.000Z",
                         "1970-01-01T00:00:03.000Z", "1970-01-01T00:00:07.000Z"]
    assert outcome(sim) == ("Succeeded", {"why": "FC.ResourceThrottled", "detail": "busy"}, "")


def test_a_function_error_is_named_by_its_type_and_a_timeout_is_fnf_task_timeout() -> None:
    error = json.dumps({"errorMessage": "no seats", "errorType": "BookTrainError"})
    sim = run("""steps:
  - type: task
    name: Book
    resourceArn: acs:fc:::functions/f
    catch:
      - {errors: [BookTrainError], goto: Cancel}
  - {type: succeed, name: Booked}
  - {type: pass, name: Cancel, outputMappings: [{target: cancelled, source: true}]}
""", {"Book": ("!", "FC.Unknown", error)})
    assert outcome(sim) == ("Succeeded", {"cancelled": True}, "")
    slow = run("""steps:
  - type: task
    name: Slow
    resourceArn: acs:fc:::functions/f
    timeoutSeconds: 5
    retry: [{errors: [FnF.TaskTimeout], maxAttempts: 1}]
""", {"Slow": NEVER})
    assert outcome(slow) == ("Failed", None, "FnF.TaskTimeout")
    assert len(events(slow, "TaskTimedOut")) == 2 and slow.duration_seconds == 11


def test_a_result_that_is_not_an_object_needs_output_mappings() -> None:
    flow = """steps:
  - type: task
    name: List
    resourceArn: acs:fc:::functions/f
"""
    assert outcome(run(flow, {"List": [[1, 2]]}))[::2] == ("Failed", "FnF.InvalidLocal")
    mapped = run(flow + "    outputMappings: [{target: first, source: '$local[0]'}]\n",
                 {"List": [[1, 2]]})
    assert outcome(mapped) == ("Succeeded", {"first": 1}, "")
    assert outcome(run(flow, {"List": ""})) == ("Succeeded", {}, "")  # an empty response


FOREACH = """steps:
  - type: foreach
    name: Each
    iterationMapping: {collection: $.items, item: it, index: at}
    steps:
      - type: task
        name: Work
        resourceArn: acs:fc:::functions/f
    outputMappings:
      - {target: out, source: '$local[*].n'}
"""


def test_foreach_runs_at_most_100_iterations_at_once_and_keeps_their_order() -> None:
    flow = legacy(FOREACH)
    program = compile_flow(flow)
    _execution, commands = step(program, Execution("run", "f", {"items": list(range(150))}),
                               Started(0.0))
    invokes = [c for c in commands if isinstance(c, InvokeTask)]
    assert len(invokes) == 100
    assert invokes[7].parameters["body"] == {"items": list(range(150)), "it": 7, "at": 7}
    sim = run(FOREACH, {"Work": lambda c: {"n": c.parameters["body"]["it"] * 2}},
              {"items": list(range(150))})
    assert outcome(sim) == ("Succeeded", {"out": [n * 2 for n in range(150)]}, "")


@pytest.mark.parametrize(("timestamp", "fires", "status"), [
    ("1970-01-01T00:00:30Z", 30.0, "Succeeded"),
    ("1970-01-01T08:00:30+08:00", 30.0, "Succeeded"),
    ("1969-12-31T00:00:00Z", None, "Succeeded"),  # already past: no wait
    ("1970-01-04T00:00:00Z", None, "Failed"),  # more than two days away
    ("soon", None, "Failed"),
])
def test_a_wait_until_a_timestamp(timestamp: str, fires: float | None, status: str) -> None:
    flow = legacy("steps:\n  - {type: wait, name: W, timestamp: $.t}\n")
    _, commands = step(compile_flow(flow), Execution("run", "f", {"t": timestamp}),
                       Started(0.0))
    timers = [c.fire_at for c in commands if isinstance(c, StartTimer)
              and c.purpose.value == "wait"]
    assert timers == ([fires] if fires is not None else [])
    sim = run("steps:\n  - {type: wait, name: W, timestamp: $.t}\n", given={"t": timestamp})
    assert sim.execution.status.value == status


def test_a_callback_token_is_the_visits_and_reaches_the_function() -> None:
    flow = legacy("""steps:
  - type: task
    name: Ask
    resourceArn: acs:fc:::functions/f
    pattern: waitForCallback
    retry: [{errors: [Nope], intervalSeconds: 1}]
    inputMappings:
      - {target: token, source: $context.task.token}
""")
    program = compile_flow(flow)
    execution, commands = step(program, Execution("run", "flow-a", {}), Started(0.0))
    (call,) = [c for c in commands if isinstance(c, InvokeTask)]
    token = call.parameters["body"]["token"]
    assert token == call.task_token == task_token("flow-a", "run", 2)  # StepEntered is event 2
    assert execution.task_for_token(token) == call.task_id
    done, _ = step(program, execution, TaskSucceeded(1.0, call.task_id, '{"answer": 42}'))
    assert (done.status.value, done.output) == ("Succeeded", {"answer": 42})


def test_a_flow_input_that_is_not_an_object_fails() -> None:
    sim = run("steps:\n  - {type: pass, name: P}\n", given=[1, 2])
    assert outcome(sim)[::2] == ("Failed", "FnF.RuntimeError")


SAGA = """steps:
  - type: task
    name: Start
    resourceArn: acs:fc:::functions/start
  - type: foreach
    name: Each
    iterationMapping: {collection: $.items, item: it}
    steps:
      - type: wait
        name: Nap
        duration: 2
      - type: task
        name: Work
        resourceArn: acs:fc:::functions/work
        retry: [{errors: [FC.ResourceThrottled], intervalSeconds: 3}]
      - type: choice
        name: Check
        choices:
          - condition: $.done
            steps: [{type: pass, name: Done, outputMappings: [{target: ok, source: true}]}]
  - type: parallel
    name: Both
    branches:
      - steps: [{type: task, name: Left, resourceArn: "acs:fc:::functions/l"}]
      - steps: [{type: pass, name: Right, outputMappings: [{target: r, source: 1}]}]
    outputMappings: [{target: both, source: '$local[*]'}]
"""


def test_stored_and_read_back_between_any_two_steps_the_run_is_the_same() -> None:
    """What the emulator does after a crash: the execution JSON of the last committed step,
    then the next event; frames (input and local) included."""
    flow = compile_flow(legacy(SAGA))
    answers = {"start": '{"items": [1, 2]}', "work": '{"done": true}', "l": '{"l": 1}'}
    throttled = {"done": False}

    def events_of(interrupted: bool) -> tuple[Any, list[str]]:
        execution = Execution("run", "f", {})
        pending: list[Any] = [Started(0.0)]
        seen: list[str] = []
        now = 0.0
        while pending and execution.status.value == "Running":
            event = pending.pop(0)
            execution, commands = step(flow, execution, event)
            seen += [f"{e.type.value}:{e.step_name}" for e in execution.new_events]
            if interrupted:
                execution = Execution.from_json(json.loads(json.dumps(execution.to_json())))
            now += 1
            for command in commands:
                if isinstance(command, InvokeTask):
                    function = command.parameters["resourceArn"].rsplit("/", 1)[1]
                    if function == "work" and not throttled["done"]:
                        throttled["done"] = True
                        pending.append(TaskFailed(now, command.task_id, "FC.ResourceThrottled"))
                        continue
                    pending.append(TaskSucceeded(now, command.task_id, answers[function]))
                elif isinstance(command, StartTimer):
                    pending.append(TimerFired(command.fire_at, command.timer_id))
        return (execution.status.value, execution.output), seen

    straight = events_of(False)
    throttled["done"] = False
    stored = events_of(True)
    assert straight == stored
    assert straight[0] == ("Succeeded", {"items": [1, 2], "both": [{"l": 1}, {"r": 1}]})
