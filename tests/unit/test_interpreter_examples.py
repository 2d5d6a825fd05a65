"""Worked examples of reference §10 and the seed flow, run through the interpreter."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from deployer.fdl import check_flow
from deployer.fdl.interpreter import ExecutionStatus, InvokeTask
from deployer.fdl.interpreter.simulate import TaskAnswer, simulate
from tests.unit.interp_helpers import entered, flow_of, returns, run, types

ROOT = Path(__file__).resolve().parents[2]


def test_10_1_linear_flow_with_constructors() -> None:
    flow = flow_of("""
        - Type: Pass
          Name: Shape
          InputConstructor:
            user.$: $Input.name
            greeting.$: format("hello {}", $Input.name)
            fixed: $Input.name
          Next: Done
        - Type: Pass
          Name: Done
          OutputConstructor:
            msg.$: $Input.greeting
            n.$: length($Input.user)
          End: true
    """)
    sim = run(flow, {"name": "Ann"})
    shape_out = next(json.loads(e.detail) for e in sim.history if e.type.value == "StepSucceeded")
    assert shape_out == {"Output": {"user": "Ann", "greeting": "hello Ann", "fixed": "$Input.name"}}
    assert sim.execution.status is ExecutionStatus.SUCCEEDED
    assert sim.execution.output == {"msg": "hello Ann", "n": 3}


TASK_10_2 = """
    - Type: Task
      Name: Call
      Action: FC:InvokeFunction
      TaskMode: RequestComplete
      Parameters:
        resourceArn: acs:fc:cn-hangzhou:123456789:functions/echo/LATEST
        invocationType: Sync
        body:
          id.$: $Input.id
          source: flow
      {oc}
      End: true
"""


def test_10_2_task_with_output_constructor() -> None:
    seen: list[InvokeTask] = []

    def answer(command: InvokeTask, now: float) -> TaskAnswer:
        seen.append(command)
        return returns({"value": command.parameters["body"]["id"] ** 2})

    oc = "OutputConstructor: {result.$: $Output.Body.value, trace.$: $Context.Current.Name}"
    sim = run(flow_of(TASK_10_2.replace("{oc}", oc)), {"id": 7}, answer)
    assert seen[0].parameters["body"] == {"id": 7, "source": "flow"}
    assert seen[0].action == "FC:InvokeFunction" and seen[0].state_path == ("Call",)
    assert sim.execution.output == {"result": 49, "trace": "Call"}
    plain = run(flow_of(TASK_10_2.replace("{oc}", "")), {"id": 7}, answer)
    assert plain.execution.output == {"Body": {"value": 49}}


CHOICE_10_3 = """
    - Type: Choice
      Name: Route
      Branches:
        - Condition: $Input.size >= 1024 && !$Input.dryRun
          Next: Big
        - Condition: '"vip" in $Input.tags'
          Next: Vip
      Default: Small
    - {Type: Pass, Name: Big, End: true}
    - {Type: Pass, Name: Vip, End: true}
    - {Type: Pass, Name: Small, End: true}
"""


@pytest.mark.parametrize(
    ("data", "target"),
    [
        ({"size": 2048, "dryRun": False, "tags": []}, "Big"),
        ({"size": 10, "tags": ["vip"]}, "Vip"),
        ({"size": 10, "tags": []}, "Small"),
    ],
)
def test_10_3_choice(data: dict[str, object], target: str) -> None:
    sim = run(flow_of(CHOICE_10_3), data)
    assert entered(sim) == ["Route", target]
    assert sim.execution.output == data


def test_10_3_not_null_fails_the_choice() -> None:
    sim = run(flow_of(CHOICE_10_3), {"size": 2048, "tags": []})
    assert sim.execution.status is ExecutionStatus.FAILED
    assert sim.execution.error_code == "FnF.RuntimeError"
    assert types(sim)[-3:] == ["StepFailed", "StepExited", "ExecutionFailed"]


FLAKY = """
    - Type: Task
      Name: Flaky
      Action: FC:InvokeFunction
      Parameters: {resourceArn: "acs:fc:::services/s.LATEST/functions/f", invocationType: Sync}
      Retry:
        - Errors: [FC.ResourceThrottled]
          Description: throttle
          MaxAttempts: 2
          IntervalSeconds: 1
          BackoffRate: 2
      Catch:
        - Errors: [FnF.ALL]
          Description: any
          OutputConstructor:
            failedCode.$: $Context.Current.Error.Code
            failedDetail.$: $Context.Current.Error.Detail
          Next: Recover
      Next: Ok
    - {Type: Pass, Name: Recover, End: true}
    - {Type: Pass, Name: Ok, End: true}
"""


def test_10_4_retry_then_catch_with_exact_timings() -> None:
    calls: list[tuple[float, int]] = []

    def answer(command: InvokeTask, now: float) -> TaskAnswer:
        calls.append((now, len(calls)))
        return TaskAnswer.failure("FC.ResourceThrottled", "throttled")

    sim = run(flow_of(FLAKY), {}, answer)
    assert [t for t, _ in calls] == [0.0, 1.0, 3.0]
    assert entered(sim) == ["Flaky", "Recover"]
    assert sim.execution.output == {
        "failedCode": "FC.ResourceThrottled",
        "failedDetail": "throttled",
    }
    assert types(sim).count("TaskScheduled") == 3 and types(sim).count("StepFailed") == 1


def test_retry_count_visible_and_success_after_retry() -> None:
    flow = flow_of(
        FLAKY.replace(
            "Next: Ok\n", "OutputConstructor: {n.$: $Context.Current.RetryCount}\n      Next: Ok\n"
        )
    )
    answers = iter([TaskAnswer.failure("FC.ResourceThrottled"), returns({"ok": 1})])
    sim = run(flow, {}, lambda c, now: next(answers))
    assert sim.execution.output == {"n": 1}
    assert entered(sim) == ["Flaky", "Ok"] and sim.duration_seconds == 1.0


def test_unmatched_error_skips_retry_and_catch_without_constructor_passes_input() -> None:
    text = "\n".join(
        line
        for line in FLAKY.splitlines()
        if "OutputConstructor" not in line and "failed" not in line
    )
    flow = flow_of(text)
    sim = run(flow, {"keep": True}, lambda c, now: TaskAnswer.failure("FC.Unknown", "boom"))
    assert sim.duration_seconds == 0.0
    assert entered(sim) == ["Flaky", "Recover"] and sim.execution.output == {"keep": True}


PARALLEL_10_5 = """
    - Type: Parallel
      Name: Par
      Branches:
        - StartAt: A
          States:
            - {Type: Pass, Name: A, InputConstructor: {a: 1}, End: true}
        - StartAt: B
          States:
            - {Type: Pass, Name: B, InputConstructor: {b: 2}, End: true}
      Next: Sum
    - Type: Pass
      Name: Sum
      InputConstructor:
        sum.$: intAdd($Input.Branch0.a, $Input.Branch1.b)
      End: true
"""


def test_10_5_parallel_output_and_downstream_access() -> None:
    sim = run(flow_of(PARALLEL_10_5), {})
    outputs = [
        json.loads(e.detail)["Output"]
        for e in sim.history
        if e.type.value == "StepSucceeded" and e.step_name == "Par"
    ]
    assert outputs == [{"Branch0": {"a": 1}, "Branch1": {"b": 2}}]
    assert sim.execution.output == {"sum": 3}
    assert types(sim).count("BranchEntered") == 2 and types(sim).count("BranchExited") == 2


def test_10_6_map() -> None:
    flow = flow_of("""
        - Type: Map
          Name: M
          ItemsPath: $Input.xs
          Processor:
            StartAt: P
            States:
              - Type: Pass
                Name: P
                OutputConstructor:
                  double.$: intAdd($Input.v, $Input.v)
                End: true
          End: true
    """)
    sim = run(flow, {"xs": [{"v": 1}, {"v": 5}]})
    assert sim.execution.output == {"Items": [{"double": 2}, {"double": 10}]}
    empty = run(flow, {"xs": []})
    assert empty.execution.output == {"Items": []}
    bad = run(flow, {"xs": {"v": 1}})
    assert (
        bad.execution.error_code == "FnF.RuntimeError"
        and "not an array" in bad.execution.error_detail
    )


def test_10_7_global_variables() -> None:
    flow = flow_of("""
        - Type: Task
          Name: A
          Action: FC:InvokeFunction
          Parameters: {resourceArn: "acs:fc:::services/s.LATEST/functions/f", invocationType: Sync}
          GlobalConstructor:
            orderId.$: $Output.Body.orderId
          OutputConstructor:
            seen.$: $Global
          Next: Z
        - Type: Pass
          Name: Z
          InputConstructor:
            orderId.$: $Global.orderId
          End: true
    """)
    sim = run(flow, {}, lambda c, now: returns({"orderId": "o-1"}))
    a_out = [
        json.loads(e.detail)["Output"]
        for e in sim.history
        if e.type.value == "StepSucceeded" and e.step_name == "A"
    ]
    assert a_out == [{"seen": {}}]
    assert sim.execution.global_vars == {"orderId": "o-1"}
    assert sim.execution.output == {"orderId": "o-1"}


def test_10_8_fail() -> None:
    sim = run(flow_of("- {Type: Fail, Name: F, Code: Bad, Detail: nope, End: true}"), {})
    assert sim.execution.status is ExecutionStatus.FAILED
    assert (sim.execution.error_code, sim.execution.error_detail) == ("Bad", "nope")
    assert types(sim)[-3:] == ["StepFailed", "StepExited", "ExecutionFailed"]
    assert json.loads(sim.history[-1].detail) == {"Error": "Bad", "Cause": "nope"}


def test_10_9_builtins_in_a_constructor() -> None:
    flow = flow_of("""
        - Type: Pass
          Name: B
          OutputConstructor:
            f.$: format("{}-{}", "a", 1)
            l.$: length({"k":1,"j":2})
            u.$: arrayUnique([1,1,2])
            h.$: hash("abc","MD5")
            m.$: jsonMerge({"a":1},{"b":2})
            s.$: 'stringToJson("{\\"a\\":1}").a'
            c.$: arrayContains($Input.tags, "vip")
          End: true
    """)
    out = run(flow, {"tags": ["vip"]}).execution.output
    assert out == {
        "f": "a-1",
        "l": 2,
        "u": [1, 2],
        "h": "900150983cd24fb0d6963f7d28e17f72",
        "m": {"a": 1, "b": 2},
        "s": 1,
        "c": True,
    }


def _seed_flow():  # type: ignore[no-untyped-def]
    text = (
        jinja2.Environment(undefined=jinja2.StrictUndefined)
        .from_string((ROOT / "templates" / "flow.yaml.j2").read_text())
        .render(
            region="cn-hangzhou",
            account_id="1234567890123456",
            start_job_function="StartJob",
            get_job_status_function="GetJobStatus",
        )
    )
    check = check_flow(text, source="flow.yaml")
    assert check.ok
    return check.flow


def _seed_answer(success_at_poll: int | None):  # type: ignore[no-untyped-def]
    polls: list[dict[str, object]] = []

    def answer(command: InvokeTask, now: float) -> TaskAnswer:
        if command.state_path == ("StartJob",):
            return returns({"job_id": "j-1"})
        body = command.parameters["body"]
        polls.append(body)
        done = success_at_poll is not None and len(polls) >= success_at_poll
        return returns(
            {
                "job_id": body["job_id"],
                "job_status": "success" if done else "running",
                "try_count": body["try_count"] + 1,
            }
        )

    return answer, polls


def test_seed_flow_succeeds_on_the_second_poll() -> None:
    answer, polls = _seed_answer(2)
    sim = simulate(_seed_flow(), answer, input={"delay": 15})
    assert sim.execution.status is ExecutionStatus.SUCCEEDED
    assert sim.execution.output == {"job_id": "j-1", "job_status": "success", "try_count": 2}
    assert polls[0] == {"job_id": "j-1", "try_count": 0, "delay": 15}
    assert sim.duration_seconds == 20.0


def test_seed_flow_fails_with_timeout_after_four_running_polls() -> None:
    answer, polls = _seed_answer(None)
    sim = simulate(_seed_flow(), answer, input={})
    assert sim.execution.status is ExecutionStatus.FAILED
    assert sim.execution.error_code == "timeout" and sim.execution.error_detail == ""
    assert len(polls) == 4 and polls[0]["delay"] is None
    assert entered(sim)[-2:] == ["CheckJobComplete", "FailJobFailed"]
    assert sim.duration_seconds == 40.0
