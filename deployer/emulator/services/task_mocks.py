"""Mocked task results on a running emulator (the format: :mod:`deployer.fdl.interpreter.mocks`).

The emulator holds one mock document: what ``deploy emulator start --mocks FILE``,
``deploy emulator mocks load`` and ``mock_cloud(mocks=...)`` loaded, merged (a later load's
cases and responses replace earlier ones of the same name). It is kept in the state
directory (``mocks.json``), so a restarted daemon answers as before; ``clear`` forgets it.
An emulator reset keeps it: mocks are the emulator's configuration, like ``--mocks``.

An execution started with a test case (``deploy execute --mock-case NAME``, or an
``ExecutionName`` ending in ``#NAME`` as LocalStack's mocked executions do with the state
machine ARN) answers each Task that its case maps from the mocked responses, counting each
state's invocations from 0 within the execution (durably: the count is read from the
execution's history, so a restart does not start again at 0).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from deployer.emulator.ports import TaskOutcome
from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.numbers import parse_number
from deployer.emulator.store.link_repos import LinkRepo
from deployer.fdl.interpreter import InvokeTask
from deployer.fdl.interpreter.mocks import (
    MockDocument,
    MockFormatError,
    mocked_output,
    parse_mocks,
)

__all__ = ["CASE_SEPARATOR", "MOCKS_FILE", "MockListing", "TaskMocks", "split_case",
           "task_event_id"]

MOCKS_FILE = "mocks.json"
#: ``ExecutionName#Case`` picks the mock test case ``Case`` (LocalStack's separator).
CASE_SEPARATOR = "#"


def split_case(name: str) -> tuple[str, str]:
    """``"run-1#HappyPath"`` -> ``("run-1", "HappyPath")``; a name without ``#`` has no case."""
    base, sep, case = name.partition(CASE_SEPARATOR)
    return (base, case) if sep else (name, "")


def task_event_id(task_id: str) -> int:
    """The TaskScheduled event id in an interpreter task id (``<execution>:task:<event>``)."""
    tail = task_id.rpartition(":")[2]
    return parse_number(tail) or 0


@dataclass(frozen=True, slots=True)
class MockListing:
    """What is loaded: test cases per flow ('' = any flow) and the response names."""

    cases: dict[str, list[str]]
    responses: list[str]
    sources: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "responses": self.responses, "sources": self.sources}


class TaskMocks:
    """The loaded mock document and the answers it gives (thread-safe)."""

    def __init__(self, links: LinkRepo, state_dir: Path | None = None) -> None:
        self._links = links
        self._path = None if state_dir is None else state_dir / MOCKS_FILE
        self._lock = threading.Lock()
        self._document = MockDocument()
        self._sources: list[str] = []
        self._restore()

    @property
    def document(self) -> MockDocument:
        return self._document

    def _restore(self) -> None:
        if self._path is None or not self._path.exists():
            return
        try:
            saved = json.loads(self._path.read_text(encoding="utf-8"))
            self._document = parse_mocks(saved["document"], "mocks.json")
            self._sources = [str(s) for s in saved.get("sources", [])]
        except (OSError, ValueError, KeyError, TypeError):
            self._document, self._sources = MockDocument(), []  # unreadable: start empty

    def _save(self) -> None:
        if self._path is None:
            return
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"document": self._document.to_json(),
                                   "sources": self._sources}), encoding="utf-8")
        tmp.replace(self._path)

    def load(self, data: Any, source: str) -> MockListing:
        """Add a mock document (plain data, either layout); InvalidValue names what is
        wrong. Returns what is loaded now."""
        try:
            document = parse_mocks(data, source)
        except MockFormatError as exc:
            raise InvalidValue(str(exc), field="Mocks") from None
        return self._add(document, source)

    def _add(self, document: MockDocument, source: str) -> MockListing:
        with self._lock:
            self._document = self._document.merged(document)
            self._sources = [*[s for s in self._sources if s != source], source]
            self._save()
            return self._listing()

    def load_file(self, path: Path) -> MockListing:
        """Add the mock file at ``path`` (YAML or JSON); InvalidValue names
        ``file:line`` and what is wrong."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidValue(f"cannot read mock file {path}: {exc}",
                                  field="Mocks") from None
        try:
            data = YAML(typ="rt").load(text)
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            raise InvalidValue(f"{path}{line}: invalid YAML: "
                                  f"{getattr(exc, 'problem', exc)}", field="Mocks") from None
        try:
            document = parse_mocks(data, str(path), _line_of)
        except MockFormatError as exc:
            raise InvalidValue(str(exc), field="Mocks") from None
        return self._add(document, str(path))

    def clear(self) -> None:
        """Forget every loaded mock."""
        with self._lock:
            self._document, self._sources = MockDocument(), []
            if self._path is not None:
                self._path.unlink(missing_ok=True)

    def listing(self) -> MockListing:
        with self._lock:
            return self._listing()

    def _listing(self) -> MockListing:
        cases: dict[str, list[str]] = {}
        for flow, case in sorted(self._document.cases):
            cases.setdefault(flow, []).append(case)
        return MockListing(cases, sorted(self._document.responses), list(self._sources))

    def has_case(self, flow: str, case: str) -> bool:
        return case in self._document.case_names(flow)

    def check_case(self, flow: str, case: str) -> None:
        """InvalidValue unless ``case`` is a loaded test case for ``flow``."""
        if not self.has_case(flow, case):
            names = ", ".join(self._document.case_names(flow)) or "none"
            raise InvalidValue(f"no mock test case {case!r} is loaded for flow {flow!r} "
                                  f"(loaded: {names})", field="ExecutionName")

    def mapping(self, flow: str, case: str) -> Mapping[str, str]:
        return self._document.case(flow, case) or {}

    def answer(self, seq: int, flow: str, case: str, cmd: InvokeTask) -> TaskOutcome | None:
        """The mocked outcome of task ``cmd`` of execution ``seq`` under ``case``; None when
        the case does not map its state."""
        document = self._document
        state = cmd.state_path[-1]
        response = (document.case(flow, case) or {}).get(state)
        if response is None:
            return None
        index = self._links.scheduled_before(seq, state, task_event_id(cmd.task_id))
        entry = document.entry(response, index)
        if entry is None:
            return TaskOutcome.failed(MOCK_ERROR, (
                f"mocked response {response!r} has no entry for invocation {index} of state "
                f"{state!r}: add an index or range covering {index}"))
        if entry.throw is not None:
            return TaskOutcome.failed(*entry.throw)
        try:
            return TaskOutcome(mocked_output(cmd, entry))
        except MockFormatError as exc:
            return TaskOutcome.failed(MOCK_ERROR, f"mocked response {response!r}: {exc}")


def _line_of(node: Any, key: Any) -> int:
    try:
        return int(node.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError):
        return 0


#: The error of a task the loaded mocks cannot answer (catchable: it matches FnF.ALL).
MOCK_ERROR = "FnF.MockedResponseMissing"
