"""Mocked task results for ``deploy flow test``, modelled on Step Functions Local's mock file.

```yaml
TestCases:
  HappyPath:                  # a test case maps Task state names to mocked responses
    StartJob: Started
MockedResponses:
  Started:
    "0": {Return: {Body: {job_id: j-1}}}          # invocation index
    "1-2": {Throw: {Code: FC.ResourceThrottled, Detail: "..."}}   # inclusive range
```

``Return`` is the task's ``$Output`` as the flow sees it, so an ``FC:InvokeFunction`` task in
``RequestComplete``/``WaitForSystemCallback`` mode returns ``{Body: ...}``. ``Throw`` fails the
task with ``Code``/``Detail``. Invocations are counted per state name, from 0, within one run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from deployer.digits import is_decimal
from deployer.errors import InvalidInputError
from deployer.fdl.interpreter.commands import InvokeTask
from deployer.fdl.interpreter.fc import FC_ACTION_PREFIX
from deployer.fdl.interpreter.simulate import TaskAnswer
from deployer.fdl.syntax.ast import TaskMode

__all__ = ["MockError", "MockFile", "MockedResponse", "load_mocks"]


class MockError(InvalidInputError):
    """The mock file cannot answer a task (no response, index past the last one, bad shape)."""


@dataclass(frozen=True, slots=True)
class MockedResponse:
    """One entry: inclusive invocation range, then ``Return`` value or ``Throw`` code/detail."""

    first: int
    last: int
    returns: Any = None
    throw: tuple[str, str] | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class MockFile:
    """A loaded mock file: test case -> state name -> response name; responses by name."""

    source: str
    cases: dict[str, dict[str, str]] = field(default_factory=dict)
    responses: dict[str, tuple[MockedResponse, ...]] = field(default_factory=dict)
    given: bool = True  # False: the run has no --mocks at all

    def missing_hint(self, state: str, case: str | None) -> str:
        """What to do about a Task state the mocks do not answer."""
        if not self.given:
            return (f"pass --mocks FILE whose test case maps {state!r} to a mocked response "
                    "(TestCases + MockedResponses; `deploy flow test --help` has an example)")
        where = f"test case {case!r}" if case else "a test case (then pass --case)"
        return f"map {state!r} to a mocked response in {where} of {self.source}"

    def pick_case(self, name: str | None) -> str:
        """The case to use: ``name``, or the only case when ``name`` is None."""
        if name is not None:
            if name not in self.cases:
                raise MockError(
                    f"{self.source}: no test case {name!r}",
                    hint=f"cases: {', '.join(sorted(self.cases)) or '(none)'}",
                )
            return name
        if len(self.cases) == 1:
            return next(iter(self.cases))
        raise MockError(
            f"{self.source}: {len(self.cases)} test cases; choose one with --case",
            hint=f"cases: {', '.join(sorted(self.cases)) or '(none)'}",
        )

    def answerer(self, case: str | None) -> Any:
        """A task-answering callback for :func:`simulate` using ``case``."""
        counts: dict[str, int] = {}
        mapping = self.cases.get(case, {}) if case is not None else {}

        def answer(command: InvokeTask, now: float) -> TaskAnswer:
            state = command.state_path[-1]
            index = counts.get(state, 0)
            counts[state] = index + 1
            where = f"state {state!r}, test case {case or '(none)'!r}, invocation index {index}"
            response_name = mapping.get(state)
            if response_name is None:
                raise MockError(f"no mocked response for {where}",
                                hint=self.missing_hint(state, case))
            entry = next(
                (r for r in self.responses.get(response_name, ()) if r.first <= index <= r.last),
                None,
            )
            if entry is None:
                raise MockError(
                    f"mocked response {response_name!r} has no entry for {where}",
                    hint=f"add an index or range covering {index} in {self.source}",
                )
            if entry.throw is not None:
                return TaskAnswer.failure(*entry.throw)
            return TaskAnswer(_raw(command, entry, self.source, response_name))

        return answer


def _raw(command: InvokeTask, entry: MockedResponse, source: str, name: str) -> str:
    value = entry.returns
    fc_shaped = command.action.startswith(FC_ACTION_PREFIX) and (
        command.task_mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK
    )
    if not fc_shaped:
        return json.dumps(value)
    if not isinstance(value, dict) or set(value) != {"Body"}:
        raise MockError(
            f"{source}:{entry.line}: {name}: Return of FC task {command.state_path[-1]!r} "
            "must be {Body: ...}"
        )
    body = value["Body"]
    return body if isinstance(body, str) else json.dumps(body)


def load_mocks(path: Path) -> MockFile:
    """Read and check a mock file; ``MockError`` (exit 3) names ``file:line``."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MockError(f"cannot read mock file {source}: {exc.strerror or exc}") from None
    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise MockError(f"{source}{line}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, CommentedMap):
        raise MockError(f"{source}:1: a mock file is a mapping with TestCases and MockedResponses")
    for key in data:
        if key not in ("TestCases", "MockedResponses"):
            raise MockError(f"{source}:{_line(data, key)}: unknown key {key!r}")
    cases = _cases(data.get("TestCases"), source, _line(data, "TestCases"))
    responses = _responses(data.get("MockedResponses"), source, _line(data, "MockedResponses"))
    for case, states in cases.items():
        for state, response in states.items():
            if response not in responses:
                at = _line(data["TestCases"][case], state)
                raise MockError(
                    f"{source}:{at}: test case {case!r}, state {state!r}: "
                    f"no MockedResponses entry {response!r}"
                )
    return MockFile(source, cases, responses)


def _line(node: Any, key: Any) -> int:
    try:
        return int(node.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError):
        return 1


def _cases(node: Any, source: str, line: int) -> dict[str, dict[str, str]]:
    if node is None:
        return {}
    if not isinstance(node, CommentedMap):
        raise MockError(f"{source}:{line}: TestCases must map case names to mappings")
    cases: dict[str, dict[str, str]] = {}
    for case, states in node.items():
        if not isinstance(states, CommentedMap) or not all(
            isinstance(v, str) for v in states.values()
        ):
            raise MockError(
                f"{source}:{_line(node, case)}: test case {case!r} must map state names "
                "to response names"
            )
        cases[str(case)] = {str(k): str(v) for k, v in states.items()}
    return cases


def _responses(node: Any, source: str, line: int) -> dict[str, tuple[MockedResponse, ...]]:
    if node is None:
        return {}
    if not isinstance(node, CommentedMap):
        raise MockError(f"{source}:{line}: MockedResponses must map names to responses")
    result: dict[str, tuple[MockedResponse, ...]] = {}
    for name, entries in node.items():
        if not isinstance(entries, CommentedMap):
            raise MockError(
                f"{source}:{_line(node, name)}: response {name!r} must map invocation "
                "indexes (\"0\", \"1-2\") to {Return: ...} or {Throw: ...}"
            )
        result[str(name)] = tuple(
            _entry(str(name), key, value, source, _line(entries, key))
            for key, value in entries.items()
        )
    return result


def _entry(name: str, key: Any, value: Any, source: str, line: int) -> MockedResponse:
    where = f"{source}:{line}: response {name!r}, key {key!r}"
    text = str(key).strip()
    low, _, high = text.partition("-")
    if not is_decimal(low) or (high and not is_decimal(high)):
        raise MockError(f"{where}: keys are invocation indexes like \"0\" or ranges like \"0-2\"")
    first, last = int(low), int(high or low)
    if last < first:
        raise MockError(f"{where}: the range ends before it starts")
    if not isinstance(value, CommentedMap) or len(value) != 1 or (
        "Return" not in value and "Throw" not in value
    ):
        raise MockError(f"{where}: give exactly one of Return or Throw")
    if "Return" in value:
        return MockedResponse(first, last, returns=_plain(value["Return"]), line=line)
    throw = value["Throw"]
    if not isinstance(throw, CommentedMap) or not isinstance(throw.get("Code"), str):
        raise MockError(f"{where}: Throw needs a string Code (and optionally Detail)")
    detail = throw.get("Detail", "")
    return MockedResponse(first, last, throw=(throw["Code"], str(detail)), line=line)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)
