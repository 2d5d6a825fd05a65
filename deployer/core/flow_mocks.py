"""Mock files for ``deploy flow test`` and the emulator: reading one from disk (YAML or JSON,
with line numbers in errors) into the shared format of
:mod:`deployer.fdl.interpreter.mocks`, and answering a simulated run's tasks from it.

```yaml
TestCases:                    # or StateMachines: {<flow>: {TestCases: ...}} (LocalStack)
  HappyPath:
    StartJob: Started
MockedResponses:
  Started:
    "0": {Return: {Body: {job_id: j-1}}}          # invocation index
    "1-2": {Throw: {Error: FC.ResourceThrottled, Cause: "..."}}   # inclusive range
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from deployer.errors import InvalidInputError
from deployer.fdl.interpreter.commands import InvokeTask
from deployer.fdl.interpreter.mocks import (
    ANY_FLOW,
    MockDocument,
    MockFormatError,
    mocked_output,
    parse_mocks,
)
from deployer.fdl.interpreter.simulate import TaskAnswer

__all__ = ["MockError", "MockFile", "checked_mock_file", "load_mock_document", "load_mocks"]


class MockError(InvalidInputError):
    """The mock file cannot answer a task (no response, index past the last one, bad shape)."""


@dataclass(frozen=True, slots=True)
class MockFile:
    """A loaded mock file (``given=False``: the run has no ``--mocks`` at all)."""

    source: str
    document: MockDocument = field(default_factory=MockDocument)
    given: bool = True

    def case_names(self, flow: str) -> list[str]:
        return self.document.case_names(flow)

    def missing_hint(self, state: str, case: str | None) -> str:
        """What to do about a Task state the mocks do not answer."""
        if not self.given:
            return (f"pass --mocks FILE whose test case maps {state!r} to a mocked response "
                    "(TestCases + MockedResponses; `deploy flow test --help` has an example)")
        where = f"test case {case!r}" if case else "a test case (then pass --case)"
        return f"map {state!r} to a mocked response in {where} of {self.source}"

    def pick_case(self, flow: str, name: str | None) -> str | None:
        """The case to use for ``flow``: ``name``, the only case when ``name`` is None, or
        None when the file has no case for the flow."""
        names = self.case_names(flow)
        if name is not None:
            if name not in names:
                raise MockError(f"{self.source}: no test case {name!r} for flow {flow!r}",
                                hint=f"cases: {', '.join(names) or '(none)'}")
            return name
        if len(names) <= 1:
            return names[0] if names else None
        raise MockError(f"{self.source}: {len(names)} test cases; choose one with --case",
                        hint=f"cases: {', '.join(names)}")

    def answerer(self, case: str | None, flow: str = ANY_FLOW) -> Any:
        """A task-answering callback for :func:`simulate` using ``case`` of ``flow`` (the
        flow's own test cases, then those for any flow)."""
        counts: dict[str, int] = {}
        mapping = (self.document.case(flow, case) or {}) if case is not None else {}

        def answer(command: InvokeTask, now: float) -> TaskAnswer:
            state = command.state_path[-1]
            index = counts.get(state, 0)
            counts[state] = index + 1
            where = f"state {state!r}, test case {case or '(none)'!r}, invocation index {index}"
            response_name = mapping.get(state)
            if response_name is None:
                raise MockError(f"no mocked response for {where}",
                                hint=self.missing_hint(state, case))
            entry = self.document.entry(response_name, index)
            if entry is None:
                raise MockError(f"mocked response {response_name!r} has no entry for {where}",
                                hint=f"add an index or range covering {index} in {self.source}")
            if entry.throw is not None:
                return TaskAnswer.failure(*entry.throw)
            try:
                return TaskAnswer(mocked_output(command, entry))
            except MockFormatError as exc:
                raise MockError(f"{self.source}:{entry.line}: {response_name}: {exc}") from None

        return answer


def load_mock_document(path: Path) -> MockDocument:
    """Read and check a mock file (YAML or JSON); ``MockError`` (exit 3) names ``file:line``."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MockError(f"cannot read mock file {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise MockError(f"{source}: a mock file is UTF-8 text") from None
    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise MockError(f"{source}{line}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    try:
        return parse_mocks(data, source, _line)
    except MockFormatError as exc:
        raise MockError(str(exc)) from None


def checked_mock_file(path: Path) -> Path:
    """``path`` made absolute once it reads as a mock file (MockError, exit 3, otherwise):
    what ``deploy emulator start --mocks`` hands the daemon."""
    load_mock_document(path)
    return path.resolve()


def load_mocks(path: Path) -> MockFile:
    """:func:`load_mock_document` as a :class:`MockFile`."""
    return MockFile(str(path), load_mock_document(path))


def _line(node: Any, key: Any) -> int:
    try:
        return int(node.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError):
        return 0
