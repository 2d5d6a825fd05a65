"""Properties: no accepted flow makes ``step`` raise or hit an internal error; replaying the
recorded events into a fresh execution reproduces it exactly; JSON round trips."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deployer.fdl import check_flow
from deployer.fdl.interpreter import (
    Execution,
    InvokeTask,
    command_from_json,
    event_from_json,
    new_execution,
    step,
)
from deployer.fdl.interpreter.simulate import Simulation, TaskAnswer, simulate
from deployer.fdl.syntax.ast import Flow

TASK = (
    "Type: Task\nName: {name}\nAction: FC:InvokeFunction\n"
    "Parameters: {{resourceArn: 'acs:fc:::services/s.LATEST/functions/f', invocationType: Sync,"
    " body: {{n.$: $Input.n}}}}\n"
)
PASSES = [
    "Type: Pass\nName: {name}\n",
    "Type: Pass\nName: {name}\nInputConstructor: {{n.$: intAdd($Input.n, 1), xs.$: $Input.xs}}\n",
    "Type: Pass\nName: {name}\nOutputConstructor: {{n.$: $Input.missing.deeper, xs: [1]}}\n",
    "Type: Pass\nName: {name}\nGlobalConstructor: {{last.$: $Input.n}}\n",
    "Type: Wait\nName: {name}\nSeconds: 3\n",
    "Type: Wait\nName: {name}\nSeconds.$: $Input.n\n",
    TASK,
    TASK + "Timeout: 5\n",
    TASK + "Retry: [{{Errors: [FnF.ALL], MaxAttempts: 2, IntervalSeconds: 1, BackoffRate: 2}}]\n",
]


def _indent(text: str, pad: int) -> str:
    lines = text.rstrip("\n").split("\n")
    return "\n".join(("- " if i == 0 else "  ") + line for i, line in enumerate(lines)).replace(
        "\n", "\n" + " " * pad
    )


@st.composite
def scopes(draw: st.DrawFn, prefix: str, depth: int) -> str:
    count = draw(st.integers(1, 4))
    names = [f"{prefix}{i}" for i in range(count)]
    states: list[str] = []
    for i, name in enumerate(names):
        last = i == count - 1
        kind = draw(st.integers(0, 9 if depth < 1 else 6))
        nxt = "End: true\n" if last else f"Next: {names[i + 1]}\n"
        if kind <= 3:
            body = draw(st.sampled_from(PASSES)).format(name=name) + nxt
            if "Type: Task" in body and draw(st.booleans()):
                target = draw(st.sampled_from(names[i + 1 :] or [name]))
                if target != name:
                    body += f"Catch: [{{Errors: [FnF.ALL], Next: {target}}}]\n"
        elif kind == 4:
            target = draw(st.sampled_from(names))
            other = names[i + 1] if not last else names[0]
            body = (
                f"Type: Choice\nName: {name}\nBranches:\n  - Condition: $Input.n > "
                f"{draw(st.integers(0, 3))}\n    Next: {target}\nDefault: {other}\n"
            )
        elif kind == 5:
            body = f"Type: Fail\nName: {name}\nCode: C{i}\nDetail: d\n"
        elif kind == 6:
            body = f"Type: Succeed\nName: {name}\n"
        elif kind in (7, 8):
            branches = [
                draw(scopes(f"{name}b{b}x", depth + 1)) for b in range(draw(st.integers(1, 2)))
            ]
            blocks = "".join(
                f"  - StartAt: {name}b{b}x0\n    States:\n      " + _indent(text, 6) + "\n"
                for b, text in enumerate(branches)
            )
            body = f"Type: Parallel\nName: {name}\nBranches:\n{blocks}" + nxt
        else:
            inner = draw(scopes(f"{name}m", depth + 1))
            body = (
                f"Type: Map\nName: {name}\nItemsPath: $Input.xs\nMaxConcurrency: "
                f"{draw(st.integers(0, 2))}\nProcessor:\n  StartAt: {name}m0\n  States:\n    "
                + _indent(inner, 4)
                + "\n"
                + nxt
            )
        states.append(body)
    return "\n".join(_indent(s, 0) for s in states)


@st.composite
def flows(draw: st.DrawFn) -> Flow:
    text = draw(scopes("S", 0))
    source = (
        f"Type: StateMachine\nName: g\nSpecVersion: v1\nStartAt: S0\nStates:\n{_indent_all(text)}\n"
    )
    check = check_flow(source, source="gen.yaml")
    assume(check.ok)
    assert check.flow is not None
    return check.flow


def _indent_all(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))


inputs = st.fixed_dictionaries(
    {
        "n": st.one_of(st.integers(-1, 4), st.none(), st.text(max_size=2)),
        "xs": st.one_of(st.lists(st.integers(0, 3), max_size=3), st.none()),
    }
)
answers = st.lists(
    st.one_of(
        st.builds(lambda n: TaskAnswer(json.dumps({"n": n}), after=1), st.integers(0, 4)),
        st.just(TaskAnswer("not json")),
        st.just(TaskAnswer.failure("FC.ResourceThrottled", "t")),
        st.just(None),
    ),
    min_size=1,
    max_size=6,
)


def _run(flow: Flow, data: Any, script: list[TaskAnswer | None]) -> Simulation:
    calls = iter(range(10_000))

    def answer(command: InvokeTask, now: float) -> TaskAnswer | None:
        return script[next(calls) % len(script)]

    return simulate(
        flow, answer, input=data, execution_name="prop", max_events=600, max_duration_seconds=10_000
    )


SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SETTINGS
@given(flows(), inputs, answers)
def test_accepted_flows_never_raise_and_always_end(flow: Flow, data: Any, script: Any) -> None:
    sim = _run(flow, data, script)
    assert sim.execution.status.is_terminal
    assert sim.execution.error_code != "FnF.InternalError", sim.execution.error_detail
    terminal = [e for e in sim.history if e.type.value.startswith("Execution") and e.event_id > 1]
    assert len(terminal) == 1 and terminal[0] is sim.history[-1]
    assert [e.event_id for e in sim.history] == list(range(1, len(sim.history) + 1))
    assert not sim.execution.tasks and not sim.execution.timers and not sim.execution.runs


@SETTINGS
@given(flows(), inputs, answers)
def test_replaying_events_reproduces_the_execution(flow: Flow, data: Any, script: Any) -> None:
    sim = _run(flow, data, script)
    fresh: Execution = new_execution(
        flow,
        input=data,
        execution_name="prop",
        now=0.0,
        max_events=600,
        max_duration_seconds=10_000,
    )
    commands: list[Any] = []
    history: list[Any] = []
    for event in sim.events:
        replayed = event_from_json(json.loads(json.dumps(event.to_json())))
        assert replayed == event
        fresh, produced = step(flow, fresh, replayed)
        restored = Execution.from_json(json.loads(json.dumps(fresh.to_json())))
        assert restored == fresh
        fresh = restored
        commands.extend(produced)
        history.extend(fresh.new_events)
    assert fresh == sim.execution
    assert commands == sim.commands and history == sim.history
    assert [command_from_json(json.loads(json.dumps(c.to_json()))) for c in commands] == commands
