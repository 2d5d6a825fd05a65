"""Helpers for interpreter tests: build a flow from YAML states, run it on a virtual clock."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from typing import Any

from deployer.fdl import check_flow
from deployer.fdl.interpreter.commands import InvokeTask
from deployer.fdl.interpreter.history import HistoryEventType
from deployer.fdl.interpreter.simulate import Simulation, TaskAnswer, simulate
from deployer.fdl.syntax.ast import Flow


def flow_of(states_yaml: str, start_at: str | None = None) -> Flow:
    """A validated flow whose ``States`` list is ``states_yaml``."""
    body = textwrap.dedent(states_yaml).strip("\n")
    first = start_at or re.search(r"Name: ([^,}\n]+)", body).group(1).strip()  # type: ignore[union-attr]
    text = (
        f"Type: StateMachine\nName: t\nSpecVersion: v1\nStartAt: {first}\nStates:\n"
        + textwrap.indent(body, "  ")
        + "\n"
    )
    check = check_flow(text, source="t.yaml")
    assert check.ok, [str(d) for d in check.errors]
    assert check.flow is not None
    return check.flow


def returns(value: Any) -> TaskAnswer:
    return TaskAnswer(json.dumps(value))


def run(
    flow: Flow, input: Any = None, answer: Callable[[InvokeTask, float], Any] | None = None,
    **kwargs: Any,
) -> Simulation:
    def no_tasks(command: InvokeTask, now: float) -> TaskAnswer:
        raise AssertionError(f"unexpected task {command.state_path}")

    return simulate(flow, answer or no_tasks, input={} if input is None else input, **kwargs)


def entered(sim: Simulation) -> list[str]:
    return [e.step_name for e in sim.history if e.type is HistoryEventType.STEP_ENTERED]


def types(sim: Simulation) -> list[str]:
    return [e.type.value for e in sim.history]
