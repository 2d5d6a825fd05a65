"""The plain (piped) lines of the live view: retries said only when they happen, and states
inside a Map iteration named with their item."""

from __future__ import annotations

import io
import re

from rich.console import Console

from deployer.cli.live import ExecutionMonitor
from tests.unit.test_progress import History


def lines(history: History) -> list[str]:
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    with ExecutionMonitor(console, None, live=False) as monitor:
        for event in history.events:
            monitor.on_event(event)
    return [re.sub(r"^\+\s*[\d.]+s\s+", "", line) for line in monitor.lines]


def test_the_last_failed_attempt_reads_failed_not_retrying() -> None:
    h = History()
    call = h.enter("Call")
    for _ in range(4):  # MaxAttempts: 3 -> four attempts
        h.task("Call", call, error="FC.Unknown")
    h.fail("Call", call, "FC.Unknown")
    h.end("ExecutionFailed", {"Error": "FC.Unknown"})
    shown = lines(h)
    retries = [line for line in shown if "retrying" in line]
    assert retries == [f"Call               ↻ retrying (attempt {n}) after FC.Unknown"
                       for n in (2, 3, 4)]
    assert not any("attempt 5" in line for line in shown)
    assert any(line.startswith("Call") and "✕ failed" in line for line in shown)


def test_a_state_inside_a_map_iteration_names_its_item() -> None:
    h = History()
    each = h.enter("Each")
    for index in range(2):
        it = h.add("IterationEntered", "Each", each, {"Index": index, "Input": index})
        item = h.enter("Item", it, index)
        h.succeed("Item", item, index)
        h.add("IterationExited", "Each", it, {"Index": index, "Output": index})
    h.succeed("Each", each, [0, 1])
    shown = lines(h)
    assert any(line.startswith("Each[0] › Item") and "succeeded" in line for line in shown)
    assert any(line.startswith("Each[1] › Item") and "succeeded" in line for line in shown)
