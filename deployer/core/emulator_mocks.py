"""Mocked task results on a running local emulator: what ``deploy emulator mocks`` does.

Each use case is one request to the daemon's admin endpoint ``/_emulator/mocks`` through its
admin client (:func:`deployer.emulator.daemon.admin_request`, which sends the daemon's token).
A file is read and checked here first (``file:line`` and what is wrong, exit 3, as ``deploy
flow test --mocks`` reports it), then sent as its document; the emulator checks it again and
answers what is loaded. Mock files and test cases: docs/emulator.md, "Mocked integrations".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deployer.emulator import daemon

__all__ = ["MocksResult", "clear_mocks", "list_mocks", "load_mock_file"]

MOCKS_PATH = "/_emulator/mocks"


@dataclass(frozen=True, slots=True)
class MocksResult:
    """What the emulator has loaded after a command (``changed``: what the command did):
    test cases by flow ('' for any flow), response names and the files they came from."""

    cases: dict[str, list[str]] = field(default_factory=dict)
    responses: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    changed: str = ""

    @classmethod
    def from_answer(cls, answer: dict[str, Any], changed: str) -> MocksResult:
        cases = answer.get("cases") or {}
        return cls({str(k): [str(c) for c in v] for k, v in cases.items()},
                   [str(r) for r in answer.get("responses") or ()],
                   [str(s) for s in answer.get("sources") or ()], changed)

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "responses": self.responses, "sources": self.sources,
                "changed": self.changed}


def list_mocks(state_dir: Path) -> MocksResult:
    """The mocks the emulator of ``state_dir`` has loaded."""
    return MocksResult.from_answer(daemon.admin_request(state_dir, MOCKS_PATH, method="GET"), "")


def load_mock_file(state_dir: Path, path: Path) -> MocksResult:
    """Add the mock file at ``path`` to what the emulator has loaded (a case of the same flow
    and name replaces the earlier one); MockError (exit 3) when the file is not a mock file."""
    # the flow language (about 0.4 s of imports) only for the command that reads a mock file:
    # every other `deploy emulator` command stays a light process
    from deployer.core.flow_mocks import load_mock_document

    document = load_mock_document(path)
    source = str(path.resolve())
    answer = daemon.admin_request(state_dir, MOCKS_PATH,
                                  {"document": document.to_json(), "source": source})
    return MocksResult.from_answer(answer, f"loaded {path}")


def clear_mocks(state_dir: Path) -> MocksResult:
    """Forget every loaded mock."""
    answer = daemon.admin_request(state_dir, MOCKS_PATH, method="DELETE")
    return MocksResult.from_answer(answer, "cleared the mocks")
