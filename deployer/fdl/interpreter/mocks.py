"""Mocked task results: one format for ``deploy flow test`` and the emulator.

Two layouts are read, and may be mixed in one document:

```yaml
# the flat layout: a test case applies to any flow
TestCases:
  HappyPath: {StartJob: Started}            # state name -> response name
# the Step Functions Local / LocalStack layout: test cases per flow
StateMachines:
  my-flow:
    TestCases:
      HappyPath: {StartJob: Started}
MockedResponses:
  Started:
    "0": {Return: {Body: {job_id: j-1}}}                             # invocation index
    "1-2": {Throw: {Error: FC.ResourceThrottled, Cause: "..."}}      # inclusive range
```

``Return`` is the task's ``$Output`` as the flow sees it (an ``FC:InvokeFunction`` task in
``RequestComplete``/``WaitForSystemCallback`` mode returns ``{Body: ...}``; an ``HTTP:Request``
task ``{Header, Code, Body}``). ``Throw`` fails the task with ``Error``/``Cause`` (``Code``/
``Detail``, the names of the first layout's earlier versions, are read too). Invocations of a
state are counted from 0 within one execution.

Parsing works on plain data (what a YAML or JSON loader returns); ``line_of(node, key)`` gives
the source line of a key when the loader kept positions. Errors are :class:`MockFormatError`
naming ``source:line``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deployer.fdl.interpreter.commands import InvokeTask
from deployer.fdl.interpreter.fc import FC_ACTION_PREFIX
from deployer.fdl.syntax.ast import TaskMode

__all__ = [
    "ANY_FLOW",
    "MockDocument",
    "MockFormatError",
    "MockedResponse",
    "mocked_output",
    "parse_mocks",
]

#: The flow key of a flat-layout test case (it applies to every flow).
ANY_FLOW = ""

LineOf = Callable[[Any, Any], int]


class MockFormatError(ValueError):
    """A mock document that cannot be read (the message names ``source:line``)."""


@dataclass(frozen=True, slots=True)
class MockedResponse:
    """One entry: the inclusive invocation range, then the ``Return`` value or the ``Throw``
    error and cause."""

    first: int
    last: int
    returns: Any = None
    throw: tuple[str, str] | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class MockDocument:
    """Test cases by ``(flow, case)`` (``flow`` is :data:`ANY_FLOW` for the flat layout),
    each mapping state names to response names; the responses by name."""

    source: str = ""
    cases: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    responses: Mapping[str, tuple[MockedResponse, ...]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.cases and not self.responses

    def case_names(self, flow: str) -> list[str]:
        """The cases that apply to ``flow`` (its own, then the flow-agnostic ones), sorted."""
        return sorted({case for owner, case in self.cases if owner in (flow, ANY_FLOW)})

    def case(self, flow: str, case: str) -> Mapping[str, str] | None:
        """State name -> response name of ``case`` for ``flow`` (its own case first)."""
        found = self.cases.get((flow, case))
        return found if found is not None else self.cases.get((ANY_FLOW, case))

    def entry(self, response: str, index: int) -> MockedResponse | None:
        """The entry of ``response`` covering invocation ``index``."""
        return next((r for r in self.responses.get(response, ())
                     if r.first <= index <= r.last), None)

    def merged(self, other: MockDocument) -> MockDocument:
        """This document with ``other``'s cases and responses added (``other`` wins)."""
        return MockDocument(other.source or self.source, {**self.cases, **other.cases},
                            {**self.responses, **other.responses})

    def to_json(self) -> dict[str, Any]:
        """The document in the LocalStack layout (flat cases under ``TestCases``), plain
        JSON: :func:`parse_mocks` reads it back."""
        flat = {case: dict(m) for (flow, case), m in self.cases.items() if flow == ANY_FLOW}
        machines: dict[str, Any] = {}
        for (flow, case), mapping in self.cases.items():
            if flow != ANY_FLOW:
                machines.setdefault(flow, {"TestCases": {}})["TestCases"][case] = dict(mapping)
        responses = {name: {_range(r): _entry_json(r) for r in entries}
                     for name, entries in self.responses.items()}
        data: dict[str, Any] = {"MockedResponses": responses}
        if flat:
            data["TestCases"] = flat
        if machines:
            data["StateMachines"] = machines
        return data


def _range(entry: MockedResponse) -> str:
    return str(entry.first) if entry.first == entry.last else f"{entry.first}-{entry.last}"


def _entry_json(entry: MockedResponse) -> dict[str, Any]:
    if entry.throw is not None:
        return {"Throw": {"Error": entry.throw[0], "Cause": entry.throw[1]}}
    return {"Return": entry.returns}


def mocked_output(command: InvokeTask, entry: MockedResponse) -> str:
    """The raw result text a task gets from a ``Return`` entry (the inverse of the
    interpreter's output shaping: an FC task's ``{Body: ...}`` gives the body).
    MockFormatError when an FC task's ``Return`` is not ``{Body: ...}``."""
    value = entry.returns
    fc_shaped = command.action.startswith(FC_ACTION_PREFIX) and (
        command.task_mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK)
    if not fc_shaped:
        return json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict) or set(value) != {"Body"}:
        raise MockFormatError(f"the Return of FC task {command.state_path[-1]!r} must be "
                              "{Body: ...} (the task's $Output)")
    body = value["Body"]
    return body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)


def _no_line(node: Any, key: Any) -> int:
    return 0


def parse_mocks(data: Any, source: str = "", line_of: LineOf = _no_line) -> MockDocument:
    """Read a mock document from plain data (see the module docstring)."""
    parser = _Parser(source, line_of)
    return parser.document(data)


@dataclass(slots=True)
class _Parser:
    source: str
    line_of: LineOf

    def at(self, node: Any, key: Any) -> str:
        line = self.line_of(node, key) if node is not None else 0
        return f"{self.source}:{line}" if line else (self.source or "mocks")

    def fail(self, node: Any, key: Any, message: str) -> MockFormatError:
        return MockFormatError(f"{self.at(node, key)}: {message}")

    def document(self, data: Any) -> MockDocument:
        if not isinstance(data, Mapping):
            raise self.fail(None, None, "a mock file is a mapping with TestCases or "
                            "StateMachines, and MockedResponses")
        for key in data:
            if key not in ("TestCases", "StateMachines", "MockedResponses"):
                raise self.fail(data, key, f"unknown key {key!r} (expected TestCases, "
                                "StateMachines or MockedResponses)")
        cases: dict[tuple[str, str], Mapping[str, str]] = {}
        if data.get("TestCases") is not None:
            self.test_cases(data, "TestCases", ANY_FLOW, cases)
        machines = data.get("StateMachines")
        if machines is not None:
            if not isinstance(machines, Mapping):
                raise self.fail(data, "StateMachines", "StateMachines must map flow names to "
                                "{TestCases: ...}")
            for flow, spec in machines.items():
                if not isinstance(spec, Mapping) or set(spec) - {"TestCases"}:
                    raise self.fail(machines, flow, f"flow {flow!r} must hold only TestCases")
                self.test_cases(spec, "TestCases", str(flow), cases)
        responses = self.responses(data)
        for (flow, case), states in cases.items():
            for state, response in states.items():
                if response not in responses:
                    raise self.fail(None, None, f"test case {case!r}"
                                    f"{f' of flow {flow!r}' if flow else ''}, state {state!r}: "
                                    f"no MockedResponses entry {response!r}")
        return MockDocument(self.source, cases, responses)

    def test_cases(self, parent: Mapping[str, Any], key: str, flow: str,
                   into: dict[tuple[str, str], Mapping[str, str]]) -> None:
        node = parent.get(key)
        if node is None:
            return
        if not isinstance(node, Mapping):
            raise self.fail(parent, key, "TestCases must map case names to mappings")
        for case, states in node.items():
            if not isinstance(states, Mapping) or not all(
                    isinstance(v, str) for v in states.values()):
                raise self.fail(node, case, f"test case {case!r} must map state names to "
                                "response names")
            into[(flow, str(case))] = {str(k): str(v) for k, v in states.items()}

    def responses(self, data: Mapping[str, Any]) -> dict[str, tuple[MockedResponse, ...]]:
        node = data.get("MockedResponses")
        if node is None:
            return {}
        if not isinstance(node, Mapping):
            raise self.fail(data, "MockedResponses", "MockedResponses must map names to "
                            "responses")
        result: dict[str, tuple[MockedResponse, ...]] = {}
        for name, entries in node.items():
            if not isinstance(entries, Mapping):
                raise self.fail(node, name, f"response {name!r} must map invocation indexes "
                                "(\"0\", \"1-2\") to {Return: ...} or {Throw: ...}")
            result[str(name)] = tuple(self.entry(str(name), entries, key)
                                      for key in entries)
        return result

    def entry(self, name: str, entries: Mapping[str, Any], key: Any) -> MockedResponse:
        where = f"response {name!r}, key {key!r}"
        low, _, high = str(key).strip().partition("-")
        if not _index(low) or (high and not _index(high)):
            raise self.fail(entries, key, f"{where}: keys are invocation indexes like \"0\" "
                            "or ranges like \"0-2\"")
        first, last = int(low), int(high or low)
        line = self.line_of(entries, key)
        if last < first:
            raise self.fail(entries, key, f"{where}: the range ends before it starts")
        value = entries[key]
        if not isinstance(value, Mapping) or len(value) != 1 or (
                "Return" not in value and "Throw" not in value):
            raise self.fail(entries, key, f"{where}: give exactly one of Return or Throw")
        if "Return" in value:
            return MockedResponse(first, last, returns=_plain(value["Return"]), line=line)
        throw = value["Throw"]
        error = throw.get("Error", throw.get("Code")) if isinstance(throw, Mapping) else None
        if not isinstance(error, str) or not error:
            raise self.fail(entries, key, f"{where}: Throw needs a string Error (and "
                            "optionally Cause)")
        cause = throw.get("Cause", throw.get("Detail", ""))
        return MockedResponse(first, last, throw=(error, "" if cause is None else str(cause)),
                              line=line)


def _index(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _plain(value: Any) -> Any:
    """YAML loader values as plain JSON values (mappings and sequences copied)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)
