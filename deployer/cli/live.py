"""The live view of a running execution: its states and each task's answer, as they happen.

On a terminal a rich ``Live`` table shows every top-level state of the flow (pending, active in
yellow, succeeded in green, failed in red) above the latest task answers. Anywhere else (CI
logs, pipes) it prints one plain line per finished state, without control codes. In JSON mode
the same plain lines go to stderr so stdout keeps its one JSON document.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deployer.cloud.cloudflow import HistoryEvent
from deployer.core.executions import parse_time

STYLES = {"pending": "dim", "active": "yellow", "succeeded": "green", "failed": "red"}


def _value(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def summarize_output(raw: Any, width: int = 100) -> str:
    """A task's answer in one line: ``key=value`` of the Body's scalars, else compact JSON."""
    value = _value(raw)
    if isinstance(value, dict) and "Body" in value:
        value = _value(value["Body"])
    if isinstance(value, dict) and value and all(
            not isinstance(v, (dict, list)) for v in value.values()):
        text = " ".join(f"{k}={v}" for k, v in value.items())
    else:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


class ExecutionMonitor:
    """Receives history events (``on_event``) and shows them; a context manager."""

    def __init__(self, console: Console, states: list[str], *, live: bool) -> None:
        self.console = console
        self.states: dict[str, str] = {name: "pending" for name in states}
        self.answers: list[str] = []
        self._task_output: dict[str, str] = {}
        self._start: datetime | None = None
        self._live: Live | None = (
            Live(self._render(), console=console, refresh_per_second=8, transient=False)
            if live else None)

    def __enter__(self) -> ExecutionMonitor:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.stop()

    def _offset(self, event: HistoryEvent) -> str:
        when = parse_time(event.time)
        if when is None:
            return "      "
        if self._start is None:
            self._start = when
        return f"+{(when - self._start).total_seconds():5.1f}s"

    def on_event(self, event: HistoryEvent) -> None:
        offset = self._offset(event)
        detail = event.detail if isinstance(event.detail, dict) else {}
        step = event.step_name
        line: str | None = None
        if event.type == "StepEntered":
            self.states[step] = "active"
        elif event.type == "TaskSucceeded":
            self._task_output[step] = summarize_output(detail.get("Output"))
        elif event.type == "StepSucceeded":
            self.states[step] = "succeeded"
            answer = self._task_output.pop(step, "")
            line = f"{offset}  {step:<18} succeeded" + (f"  {answer}" if answer else "")
            if answer:
                self.answers.append(f"{offset}  {step}: {answer}")
        elif event.type in ("StepFailed", "TaskFailed", "TaskTimedOut"):
            if event.type == "StepFailed":
                self.states[step] = "failed"
            error = f"{detail.get('Error', '')}: {detail.get('Cause', '')}".strip(": ")
            line = f"{offset}  {step:<18} {event.type[4:].lower()}  {error}"[:200]
        elif event.type.startswith("Execution") and event.type != "ExecutionStarted":
            line = f"{offset}  {event.type}"
        if line is None:
            return
        if self._live is not None:
            self._live.update(self._render())
        else:
            self.console.print(line, markup=False, highlight=False)

    def _render(self) -> Group:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("State")
        table.add_column("Status")
        for name, status in self.states.items():
            table.add_row(name, Text(status, style=STYLES.get(status, "")))
        answers = Text("\n".join(self.answers[-8:]), style="cyan")
        return Group(table, answers) if self.answers else Group(table)
