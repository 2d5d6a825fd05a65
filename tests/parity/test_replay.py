"""Every recording replays against the emulator through the official SDKs: the answers
must match the recorded ones, modulo the rules for volatile fields (docs/parity.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parity.runner import replay
from tests.parity.schema import SharedRules, label, load_recording, recording_paths
from tests.parity.targets import LocalTarget


@pytest.mark.parametrize("path", recording_paths(), ids=label)
def test_the_emulator_answers_as_recorded(path: Path, parity_emulator: LocalTarget,
                                          shared_rules: SharedRules) -> None:
    rec = load_recording(path)
    problems = replay(rec, parity_emulator, shared_rules)
    assert not problems, (f"{label(path)} ({rec.source}): the emulator answers differently:\n  "
                          + "\n  ".join(problems))
