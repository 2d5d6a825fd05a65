"""A step the store cannot write for a reason of its own (not the database's) ends its
execution Failed with FnF.InternalError, as a step that cannot be computed does; it never
leaves the execution Running for ever, and other executions go on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deployer.emulator.store import steps
from deployer.testing.environment import LocalCloud
from tests.emulator.cloudflow_support import create, history, start

FLOW = """Type: StateMachine
SpecVersion: v1
Name: Two
StartAt: Pause
States:
  - Type: Wait
    Name: Pause
    Seconds: 5
    Next: Done
  - Type: Pass
    Name: Done
    End: true
"""


def test_an_unwritable_step_fails_its_execution_and_spares_the_others(
        cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch) -> None:
    write = steps.update_step

    def refuse_doomed(conn: Any, seq: int, version: int, **kw: Any) -> None:
        if kw["ex"].name == "doomed" and kw["ex"].status.is_terminal:
            raise ValueError("this step's record cannot be encoded")
        write(conn, seq, version, **kw)

    monkeypatch.setattr(steps, "update_step", refuse_doomed)
    client = cloud.fnf_client()
    create(client, "Two", FLOW)
    for name in ("doomed", "fine"):
        start(client, "Two", name)
    doomed = cloud.wait_for_execution("Two", "doomed")
    assert doomed["Status"] == "Failed"
    last = history(client, "Two", "doomed")[-1]
    assert last.type == "ExecutionFailed"
    detail = json.loads(last.event_detail)
    assert detail["Error"] == "FnF.InternalError"
    assert "ValueError: this step's record cannot be encoded" in detail["Cause"]
    assert cloud.wait_for_execution("Two", "fine")["Status"] == "Succeeded"
    assert cloud.health()["cloudflow"]["runningExecutions"] == 0
