"""``deploy execute``, ``deploy status`` and ``deploy history``."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from deployer.cli.context import AppContext, CloudSession, pass_app
from deployer.cli.live import ExecutionMonitor, path_text
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import view
from deployer.cloud.cloudflow import HistoryEvent
from deployer.cloud.errors import CloudConnectionError
from deployer.core import executions
from deployer.core.console_links import execution_url
from deployer.core.executions import ExecutionResult
from deployer.errors import ExitCode
from deployer.fdl.progress import fold

EXECUTE_EPILOG = """\b
Examples:
  deploy execute --delay 20                    input {"delay": 20}; watch until it ends
  deploy execute --input @event.json --name run-42
  deploy execute --delay 30 --no-wait          start it and return
  deploy execute --delay 20 --output json | jq .status
\b
Exit 0 when the execution succeeds, 5 when it ends Failed, TimedOut or Stopped. Ctrl-C stops
watching, not the execution: re-attach with `deploy status NAME --wait`.
"""


def flow_option(fn: Any) -> Any:
    return click.option("--flow", "flow_name",
                        help="Flow name (default: the flow in s.yaml).")(fn)


@dataclass(frozen=True, slots=True)
class Started:
    """``deploy execute --no-wait``."""

    flow: str
    name: str
    status: str
    started_time: str
    console_url: str = ""


@dataclass(frozen=True, slots=True)
class History:
    flow: str
    name: str
    events: tuple[HistoryEvent, ...]
    console_url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "name": self.name, "console_url": self.console_url or None,
                "events": [
            {"EventId": e.event_id, "ScheduleEventId": e.schedule_event_id,
             "StepName": e.step_name, "Type": e.type, "Time": e.time, "EventDetail": e.detail}
            for e in self.events]}


@view(ExecutionResult)
def _result_view(result: ExecutionResult) -> Text:
    style = {"Succeeded": "green", "Running": "yellow"}.get(result.status, "red")
    text = Text(f"Execution {result.name} of {result.flow}: ")
    text.append(result.status, style=f"bold {style}")
    if result.duration_seconds is not None:
        text.append(f" in {result.duration_seconds:g} s")
    if result.status == "Succeeded" or result.output is not None:
        text.append(f"\nOutput: {json.dumps(result.output, ensure_ascii=False)}")
    if result.path:
        text.append(f"\nPath: {result.path}")
    if result.error_code is not None:
        text.append(f"\nError: {result.error_code or '(no code)'}", style="red")
        if result.error_detail:
            text.append(f"\nDetail: {result.error_detail}")
    if not result.finished:
        text.append(f"\nStill running; follow it with `deploy status {result.name} --wait`.")
    return text


@view(Started)
def _started_view(started: Started) -> Text:
    return Text(f"Started execution {started.name} of {started.flow} ({started.status}).\n"
                f"Follow it: deploy status {started.name} --wait")


@view(History)
def _history_view(history: History) -> Table:
    table = Table(title=f"{history.flow} / {history.name}", box=None, header_style="bold")
    for column in ("Id", "Time", "Step", "Type"):  # short fields never wrap
        table.add_column(column, no_wrap=True)
    table.add_column("Detail", overflow="fold", ratio=1)
    for e in history.events:
        detail = json.dumps(e.detail, separators=(",", ":"), ensure_ascii=False) \
            if e.detail not in ({}, "", None) else ""
        table.add_row(str(e.event_id), e.time, e.step_name, e.type,
                      detail if len(detail) <= 120 else detail[:117] + "...")
    return table


def _flow(app: AppContext, flow_name: str | None) -> str:
    return flow_name or app.manifest().flow(None).name


def _console_url(app: AppContext, session: CloudSession, flow: str, name: str) -> str:
    """The execution's console page, printed on stderr (JSON: ``console_url``)."""
    url = execution_url(session.connection.endpoints, session.settings.region, flow, name)
    app.renderer.progress(f"Console: {url}")
    return url


def _follow(app: AppContext, session: CloudSession, flow: str, name: str) -> ExecutionResult:
    """Watch ``name`` to its end with the live view; Ctrl-C / a lost connection say how to
    re-attach."""
    renderer = app.renderer
    console = renderer.err if renderer.is_json else renderer.out
    live = console.is_terminal and not renderer.is_json
    reattach = f"re-attach with `deploy status {name} --wait`"
    definition = executions.execution_flow(session.clients.flows, flow)

    def instances(function: str, scheduled: int) -> str | None:
        return executions.task_instance(session.logs, function, name, scheduled)

    try:
        with ExecutionMonitor(console, definition, live=live, instances=instances) as monitor:
            return executions.watch(session.clients.flows, flow, name,
                                    on_event=monitor.on_event, on_tick=monitor.tick)
    except KeyboardInterrupt:
        renderer.progress(f"Stopped watching; execution {name} keeps running: {reattach}.")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except CloudConnectionError as exc:
        exc.hint = f"the execution keeps running where it is; {reattach}"
        raise


@click.command("execute", epilog=EXECUTE_EPILOG)
@target_options
@flow_option
@click.option("--delay", type=click.IntRange(min=0), metavar="SECONDS",
              help='Shorthand for the input {"delay": N}.')
@click.option("--input", "input_text", metavar="JSON|@FILE", help="Execution input object.")
@click.option("--name", help="Execution name (default: generated by the service).")
@click.option("--no-wait", is_flag=True, help="Start the execution and return at once.")
@output_option
@pass_app
def execute(app: AppContext, target: TargetOptions, flow_name: str | None, delay: int | None,
            input_text: str | None, name: str | None, no_wait: bool, output: str) -> None:
    """Start an execution of the flow and watch it to its end."""
    app.use_output(output)
    input_json = executions.parse_input(input_text, delay=delay, base=app.project_dir)
    session = app.cloud(target)
    flow = _flow(app, flow_name)
    info = executions.start(session.clients.flows, flow, input_json, name)
    shown = input_json if len(input_json) <= 200 else f"{input_json[:197]}... " \
        f"({len(input_json.encode()):,} bytes)"
    app.renderer.progress(f"Started execution {info.name} of {flow} with input {shown}")
    url = _console_url(app, session, flow, info.name)
    if no_wait:
        app.render(Started(flow, info.name, info.status, info.started_time, url))
        return
    app.render(replace(_follow(app, session, flow, info.name), console_url=url))


STATUS_EPILOG = """\b
Examples:
  deploy status                                the latest execution of the flow in s.yaml
  deploy status exec-20260101T120000-1a2b3c --wait     follow it to its end (exit 0/5)
  deploy status --flow MyWorkFlow --output json | jq .status
\b
Exit 0 whatever the status without --wait; 4 when the flow or execution does not exist.
"""

HISTORY_EPILOG = """\b
Examples:
  deploy history exec-20260101T120000-1a2b3c
  deploy history exec-20260101T120000-1a2b3c --output json | jq '.events[] | .Type'
"""


@click.command("status", epilog=STATUS_EPILOG)
@target_options
@flow_option
@click.argument("name", required=False)
@click.option("--wait", is_flag=True, help="Follow the execution until it ends (exit 5 if it "
              "does not succeed).")
@output_option
@pass_app
def status(app: AppContext, target: TargetOptions, flow_name: str | None, name: str | None,
           wait: bool, output: str) -> None:
    """Show an execution (default: the latest), or re-attach to it with --wait."""
    app.use_output(output)
    session = app.cloud(target)
    flow = _flow(app, flow_name)
    name = name or executions.latest_execution(session.clients.flows, flow)
    if wait:
        url = _console_url(app, session, flow, name)
        app.render(replace(_follow(app, session, flow, name), console_url=url))
        return
    result = executions.watch(session.clients.flows, flow, name, follow=False)
    definition = executions.execution_flow(session.clients.flows, flow)
    path = path_text(fold(result.events, definition).root.states)
    app.renderer.result(replace(result, console_url=_console_url(app, session, flow, name),
                                path=path))


@click.command("history", epilog=HISTORY_EPILOG)
@target_options
@flow_option
@click.argument("name")
@output_option
@pass_app
def history(app: AppContext, target: TargetOptions, flow_name: str | None, name: str,
            output: str) -> None:
    """List an execution's history events."""
    app.use_output(output)
    session = app.cloud(target)
    flow = _flow(app, flow_name)
    events = tuple(executions.history(session.clients.flows, flow, name))
    app.render(History(flow, name, events, _console_url(app, session, flow, name)))
