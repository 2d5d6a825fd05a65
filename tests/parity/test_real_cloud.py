"""``pytest tests/parity --real-cloud``: every scenario runs against Alibaba Cloud and its
recording is rewritten from the answers (docs/parity.md). Skipped without the option,
without credentials, and always when CI is set; ``DEPLOYER_PARITY_TARGET=emulator`` puts
``mock_cloud()`` in the cloud's place (how CI tests this path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parity.recording import RECORDINGS_DIR
from tests.parity.runner import record
from tests.parity.schema import (
    SharedRules,
    label,
    load_recording,
    recording_paths,
    write_recording,
)
from tests.parity.targets import Target


@pytest.mark.parametrize("path", recording_paths(), ids=label)
def test_record_the_cloud_answers(path: Path, record_dir: Path, real_cloud: Target,
                                  shared_rules: SharedRules) -> None:
    rec = load_recording(path)
    out = record(rec, real_cloud, shared_rules)
    if out.recording is not rec:
        write_recording(out.recording, record_dir / path.relative_to(RECORDINGS_DIR))
    assert not out.leftovers, ("the scenario could not delete these resources; delete them "
                               "by hand:\n  " + "\n  ".join(out.leftovers))
    assert not out.problems, (f"{label(path)} against the {real_cloud.against}:\n  "
                              + "\n  ".join(out.problems))
