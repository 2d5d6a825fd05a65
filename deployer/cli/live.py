"""The live view of a running execution, folded from its history by ``deployer.fdl.progress``.

On a terminal a rich ``Live`` table shows every top-level state with its status (icon and
word), visit count (``×4``) and what it is doing: a Wait says when it fires on the emulator's
clock ("fires in 7 s": from the history's own times), a task its answer and, when a warm
function instance served it, that instance's id and age. The state being run shows the moment
it is entered. Anywhere else (CI logs, pipes) it prints one plain line per state change and a
heartbeat line at most every ``heartbeat`` seconds during long waits. A line of a state inside
a Map iteration or a Parallel branch names it (``Map[3] › Embedding``). A failed attempt says
``↻ retrying (attempt N)`` only once the retry is scheduled (attempt N is the one now run),
so the last failure of a Task with ``MaxAttempts: 3`` reads ``✕ failed``, never "attempt 5".
In JSON mode the same plain lines go to stderr so stdout keeps its one JSON document. At the
end, the states never reached are listed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deployer.fdl import AnyFlow
from deployer.fdl.progress import (
    HistoryRecord,
    ProgressFold,
    Status,
    Visit,
    parse_time,
)

__all__ = ["ICONS", "ExecutionMonitor", "path_text", "summarize_output"]

ICONS = {"running": "▶", "waiting": "◷", "retrying": "↻", "succeeded": "✓", "failed": "✕",
         "caught": "⚠", "stopped": "■", "timed-out": "■", "not-reached": "—"}
STYLES = {"running": "bold yellow", "waiting": "bold cyan", "retrying": "bold magenta",
          "succeeded": "green", "failed": "red", "caught": "dark_orange", "stopped": "dim",
          "timed-out": "dim", "not-reached": "dim"}
#: who served a task: (function name, TaskScheduled event id) -> "warm instance c-… (age 20 s)"
InstanceInfo = Callable[[str, int], "str | None"]


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


def path_text(states: dict[str, Any]) -> str:
    """The path in text: ``StartJob ✓, Pass ✓, Wait ✓ ×4, …, FailJobFailed — not reached``."""
    parts = []
    for name, st in states.items():
        status = st.status.value
        count = f" ×{len(st.visits)}" if len(st.visits) > 1 else ""
        word = " not reached" if status == "not-reached" else ""
        parts.append(f"{name} {ICONS[status]}{count}{word}")
    return ", ".join(parts)


def _function_of(visit: Visit) -> str:
    task = visit.task
    arn = task.parameters.get("resourceArn") if task and isinstance(task.parameters, dict) \
        else None
    if not isinstance(arn, str) or "functions/" not in arn:
        return ""
    return arn.split("functions/", 1)[1].split("/")[0]


#: (resource, parameters, output) of a Task -> "<flow>/<name>: <status>" of the sub-flow
#: execution it started, or None.
ChildInfo = Callable[[str, Any, Any], "str | None"]


class ExecutionMonitor:
    """Receives history events (``on_event``) and shows them; a context manager.

    ``flow`` (the execution's definition) gives the states never reached and Wait timing;
    ``instances`` names the function instance that served a task (None: unknown).
    ``monotonic`` is the wall clock for heartbeats only.
    """

    def __init__(self, console: Console, flow: AnyFlow | None, *, live: bool,
                 instances: InstanceInfo | None = None, heartbeat: float = 30.0,
                 monotonic: Callable[[], float] = time.monotonic,
                 children: ChildInfo | None = None) -> None:
        self.console = console
        self._children = children
        self.fold = ProgressFold(flow)
        self._instances = instances
        self._heartbeat = heartbeat
        self._monotonic = monotonic
        self._last_line = monotonic()
        self._notes: dict[tuple[str, int], str] = {}
        self._shown: dict[int, Status] = {}  # id(visit) -> the status last shown
        self._start: float | None = None
        self._now: float | None = None  # the emulator's clock, from the latest event
        self.lines: list[str] = []
        self._live: Live | None = (
            Live(self._render(), console=console, refresh_per_second=8, transient=False)
            if live else None)

    @property
    def states(self) -> dict[str, str]:
        """State name → status word, for every top-level state known so far."""
        return {n: s.status.value for n, s in self.fold.progress.root.states.items()}

    def __enter__(self) -> ExecutionMonitor:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.stop()
        progress = self.fold.progress
        unreached = [n for n, s in progress.root.states.items()
                     if s.status is Status.NOT_REACHED]
        if progress.finished:
            self._print(f"Path: {path_text(progress.root.states)}")
            if unreached:
                self._print(f"Not reached: {', '.join(unreached)}")

    def _offset(self, when: str) -> str:
        moment = parse_time(when)
        if moment is None:
            return "      "
        if self._start is None:
            self._start = moment
        self._now = moment
        return f"+{moment - self._start:5.1f}s"

    def on_event(self, event: HistoryRecord) -> None:
        """Fold one event; print a line when a state changed (piped) or redraw (terminal)."""
        visit = self.fold.add(event)
        offset = self._offset(event.time)
        line: str | None = None
        if visit is not None and visit.status is Status.RETRYING \
                and event.type != "TaskScheduled":
            pass  # a failed attempt: a retry, or the step's failure, follows; say which then
        elif visit is not None and self._shown.get(id(visit)) is not visit.status:
            self._shown[id(visit)] = visit.status
            line = self._visit_line(offset, visit)
        elif event.type.startswith("Execution") and event.type != "ExecutionStarted":
            line = f"{offset}  {event.type}"
            progress = self.fold.progress
            if progress.error:
                line += f"  {progress.error}: {progress.cause or ''}".rstrip(": ")
        if line is None:
            return
        self.lines.append(line)
        if self._live is not None:
            self._live.update(self._render())
        else:
            self._print(line)

    def tick(self) -> None:
        """Called between reads: a heartbeat line when nothing was printed for a while."""
        if self._live is not None:
            self._live.update(self._render())
            return
        if self._monotonic() - self._last_line < self._heartbeat:
            return
        current = self.fold.progress.current()
        if current:
            self._print("  ... still " + "; ".join(self._doing(v) for v in current))

    def _print(self, line: str) -> None:
        self._last_line = self._monotonic()
        self.console.print(line, markup=False, highlight=False)

    def _doing(self, visit: Visit) -> str:
        text = f"{visit.status.value}: {visit.state} (visit {visit.number})"
        if visit.fires_at is not None and self._now is not None:
            text += f", fires in {max(0.0, visit.fires_at - self._now):g} s"
        return text

    def _note(self, visit: Visit) -> str:
        """What served the visit's task (asked once per visit)."""
        key = (visit.state, visit.number)
        if key not in self._notes and self._instances is not None and visit.task is not None:
            function = _function_of(visit)
            found = self._instances(function, visit.task.scheduled_event_id) if function \
                else None
            self._notes[key] = found or ""
        return self._notes.get(key, "")

    def _child(self, visit: Visit) -> str:
        """``sub-flow <flow>/<name>: <status>`` for a sub-flow Task's visit ("" otherwise)."""
        task = visit.task
        if self._children is None or task is None:
            return ""
        found = self._children(task.resource, task.parameters, task.output)
        return f"sub-flow {found}" if found else ""

    def _where(self, visit: Visit) -> str:
        """``Map[3] › `` for a visit inside iteration 3 of state Map (nested: each level)."""

        def search(scope: Any, prefix: str) -> str | None:
            for state in scope.states.values():
                for candidate in state.visits:
                    if candidate is visit:
                        return prefix
                    for child in candidate.scopes:
                        found = search(child, f"{prefix}{state.name}[{child.index}] › ")
                        if found is not None:
                            return found
            return None

        return search(self.fold.progress.root, "") or ""

    def _visit_line(self, offset: str, visit: Visit) -> str:
        status = visit.status.value
        name = self._where(visit) + visit.state
        head = f"{offset}  {name:<18} {ICONS[status]} {status}"
        if visit.number > 1:
            head += f" (visit {visit.number})"
        if visit.status is Status.WAITING and visit.fires_at is not None:
            entered = parse_time(visit.entered_at) or visit.fires_at
            head += f", fires in {visit.fires_at - entered:g} s"
        elif visit.status is Status.RETRYING and visit.task is not None:
            head += f" (attempt {visit.task.number})"
            failed = visit.attempts[-2] if len(visit.attempts) > 1 else None
            if failed is not None and failed.error:
                head += f" after {failed.error}"
        elif visit.status is Status.SUCCEEDED and visit.task is not None:
            head += f"  {summarize_output(visit.task.output)}"
            note = self._note(visit)
            if note:
                head += f"  [{note}]"
        child = self._child(visit)
        if child:
            head += f"  [{child}]"
        elif visit.status in (Status.FAILED, Status.CAUGHT) and visit.error:
            head += f"  {visit.error}: {visit.cause or ''}".rstrip(": ")
        return head[:240]

    def _render(self) -> Group:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("State")
        table.add_column("Status")
        table.add_column("Visits", justify="right")
        table.add_column("Now / last")
        for name, st in self.fold.progress.root.states.items():
            status = st.status.value
            visit = st.latest
            detail = ""
            if visit is not None and visit.status.active:
                detail = self._doing(visit).split(": ", 1)[1]
            elif visit is not None and visit.task is not None and visit.task.output is not None:
                detail = summarize_output(visit.task.output, 70)
                note = self._note(visit)
                detail += f"  [{note}]" if note else ""
            elif visit is not None and visit.error:
                detail = visit.error
            child = self._child(visit) if visit is not None else ""
            detail += f"  [{child}]" if child else ""
            table.add_row(name, Text(f"{ICONS[status]} {status}", style=STYLES[status]),
                          f"×{len(st.visits)}" if st.visits else "", detail)
        recent = Text("\n".join(self.lines[-6:]), style="cyan")
        return Group(table, recent) if self.lines else Group(table)
