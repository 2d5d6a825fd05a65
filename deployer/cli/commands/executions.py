"""``deploy execute``, ``deploy status``, ``deploy history`` and ``deploy executions``."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from deployer.cli.context import AppContext, CloudSession, pass_app
from deployer.cli.live import ExecutionMonitor, path_text
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import view
from deployer.config.settings import Target
from deployer.core import execution_start, executions
from deployer.core.console_links import execution_url
from deployer.core.execution_start import StartedExecution
from deployer.core.executions import STATUSES, ExecutionList, ExecutionResult, History
from deployer.errors import DeployerError, ExitCode
from deployer.fdl.progress import fold

EXECUTE_EPILOG = """\b
Examples:
  deploy execute                               the flow's executionInput (s.yaml), or {}
  deploy execute --input @input.json           any JSON object the flow takes
  deploy execute --delay 20                    shortcut for the input {"delay": 20}
  deploy execute --input '{"delay": 5}' --name run-42
  deploy execute --delay 5 --no-wait           start it and return
  deploy execute --delay 5 --output json | jq .status
\b
Exit 0 when the execution succeeds, 5 when it ends Failed, TimedOut or Stopped. Ctrl-C stops
watching, not the execution: re-attach with `deploy status NAME --wait`. A --name that is
still running is not started again: the command says so and attaches to it; a name that has
already run is refused by CloudFlow (exit 1).
"""


def flow_option(fn: Any) -> Any:
    return click.option("--flow", "flow_name",
                        help="Flow name (default: the flow in s.yaml).")(fn)


def _name_option(fn: Any) -> Any:
    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return execution_start.check_execution_name(value)
        except DeployerError as exc:
            raise click.BadParameter(f"{exc.message}; {exc.hint}") from None

    return click.option("--name", callback=check,
                        help="Execution name (default: exec-<time>-<random>).")(fn)


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


@view(StartedExecution)
def _started_view(started: StartedExecution) -> Text:
    verb = "Attached to the running execution" if started.attached else "Started execution"
    return Text(f"{verb} {started.name} of {started.flow} ({started.status}).\n"
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


@view(ExecutionList)
def _executions_view(listing: ExecutionList) -> Table | Text:
    if not listing.executions:
        which = f" with status {listing.status}" if listing.status else ""
        return Text(f"No executions of {listing.flow}{which}.")
    table = Table(title=f"Executions of {listing.flow} (newest first)", box=None,
                  header_style="bold")
    for column in ("Name", "Status", "Started", "Stopped", "Duration"):
        table.add_column(column, no_wrap=True)
    for e in listing.executions:
        style = {"Succeeded": "green", "Running": "yellow"}.get(e.status, "red")
        duration = f"{e.duration_seconds:g} s" if e.duration_seconds is not None else ""
        table.add_row(e.name, Text(e.status, style=style), e.started_time, e.stopped_time,
                      duration)
    return table


def _execution_input(app: AppContext, flow_name: str | None) -> Any:
    """The flow's ``executionInput`` from s.yaml (None without one, or without s.yaml)."""
    try:
        return app.manifest().flow(flow_name).execution_input
    except DeployerError:
        return None


def _flow(app: AppContext, flow_name: str | None) -> str:
    return flow_name or app.manifest().flow(None).name


def _console_url(app: AppContext, session: CloudSession, flow: str, name: str) -> str:
    """The execution's console page, printed on stderr (JSON: ``console_url``)."""
    url = execution_url(session.connection.endpoints, session.settings.region, flow, name)
    app.renderer.progress(f"Console: {url}")
    return url


def _follow(app: AppContext, session: CloudSession, flow: str, name: str) -> ExecutionResult:
    """Watch ``name`` to its end with the live view; Ctrl-C says how to re-attach."""
    renderer = app.renderer
    console = renderer.err if renderer.is_json else renderer.out
    live = console.is_terminal and not renderer.is_json
    definition = executions.execution_flow(session.clients.flows, flow)

    def instances(function: str, scheduled: int) -> str | None:
        return executions.task_instance(session.logs, function, name, scheduled)

    ended: dict[tuple[str, str], str] = {}  # children seen ended are not asked again

    def children(resource: str, parameters: Any, output: Any) -> str | None:
        child = executions.subflow_of(resource, parameters, output)
        if child is None:
            return None
        status = ended.get(child) or executions.child_status(session.clients.flows, *child)
        if status not in (None, "Running", "Starting"):
            ended[child] = str(status)
        return f"{child[0]}/{child[1]}: {status or 'not started yet'}"

    try:
        with ExecutionMonitor(console, definition, live=live, instances=instances,
                              children=children) as monitor:
            return executions.follow(session.clients.flows, flow, name, monitor.on_event,
                                     on_tick=monitor.tick)
    except KeyboardInterrupt:
        renderer.progress(f"Stopped watching; execution {name} keeps running: re-attach with "
                          f"`deploy status {name} --wait`.")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None


def _shown(input_json: str) -> str:
    if len(input_json) <= 200:
        return input_json
    return f"{input_json[:197]}... ({len(input_json.encode()):,} bytes)"


@click.command("execute", epilog=EXECUTE_EPILOG)
@target_options
@flow_option
@click.option("--delay", type=click.IntRange(min=0), metavar="SECONDS",
              help='Shorthand for the input {"delay": N}.')
@click.option("--input", "input_text", metavar="JSON|@FILE",
              help="Execution input object [default: the flow's executionInput in s.yaml, "
                   "else {}].")
@_name_option
@click.option("--no-wait", is_flag=True, help="Start the execution and return at once.")
@click.option("--mock-case", metavar="NAME", default="",
              help="The emulator only: answer the tasks from this test case of the mocks "
                   "loaded with `deploy emulator start --mocks` / `deploy emulator mocks "
                   "load`.")
@output_option
@pass_app
def execute(app: AppContext, target: TargetOptions, flow_name: str | None, delay: int | None,
            input_text: str | None, name: str | None, no_wait: bool, mock_case: str,
            output: str) -> None:
    """Start an execution of the flow and watch it to its end."""
    app.use_output(output)
    input_json = executions.parse_input(input_text, delay=delay, base=app.project_dir)
    if input_text is None and delay is None:
        example = _execution_input(app, flow_name)
        input_json = json.dumps(example) if example is not None else input_json
    session = app.cloud(target)
    if mock_case and session.settings.target is not Target.LOCAL and app.in_process is None:
        raise click.UsageError("--mock-case needs the local emulator (--target local): "
                               "Alibaba Cloud calls the real services")
    flow = _flow(app, flow_name)
    started = execution_start.start_execution(session.clients.flows, flow, input_json, name,
                                              mock_case=mock_case)
    if started.attached:
        app.renderer.warn(f"execution {started.name} is already running (started "
                          f"{started.started_time}, input {_shown(json.dumps(started.input))})"
                          "; nothing new was started, attaching to it")
    else:
        app.renderer.progress(f"Started execution {started.name} of {flow} with input "
                              f"{_shown(input_json)}")
    url = _console_url(app, session, flow, started.name)
    if no_wait:
        app.render(replace(started, console_url=url))
        return
    app.render(replace(_follow(app, session, flow, started.name), console_url=url))


STATUS_EPILOG = """\b
Examples:
  deploy status                                the latest execution of the flow in s.yaml
  deploy status --wait                         follow the latest to its end (exit 0/5)
  deploy status --flow MyWorkFlow --output json | jq .status
\b
Exit 0 whatever the status without --wait; 4 when the flow or execution does not exist.
"""

HISTORY_EPILOG = """\b
Examples:
  deploy history                               the latest execution's events
  deploy history --output json | jq '.events[] | .Type'
  deploy history --flow MyWorkFlow
"""

EXECUTIONS_EPILOG = """\b
Examples:
  deploy executions                            the 20 newest executions
  deploy executions --status Failed --limit 5
  deploy executions --output json | jq -r '.executions[].name'
"""


@click.command("status", epilog=STATUS_EPILOG)
@target_options
@flow_option
@click.argument("name", required=False)
@click.option("--wait", is_flag=True, help="Follow the execution until it ends (exit 5 if it "
              "does not succeed).")
@output_option
@pass_app
def status_command(app: AppContext, target: TargetOptions, flow_name: str | None,
                   name: str | None, wait: bool, output: str) -> None:
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
@click.argument("name", required=False)
@output_option
@pass_app
def history_command(app: AppContext, target: TargetOptions, flow_name: str | None,
                    name: str | None, output: str) -> None:
    """List an execution's history events (default: the latest execution)."""
    app.use_output(output)
    session = app.cloud(target)
    found = executions.history(session.clients.flows, _flow(app, flow_name), name)
    app.render(replace(found, console_url=_console_url(app, session, found.flow, found.name)))


@click.command("executions", epilog=EXECUTIONS_EPILOG)
@target_options
@flow_option
@click.option("--status", "status_filter", type=click.Choice(STATUSES, case_sensitive=False),
              help="Only executions with this status.")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="How many executions (newest first).")
@output_option
@pass_app
def executions_command(app: AppContext, target: TargetOptions, flow_name: str | None,
                       status_filter: str | None, limit: int, output: str) -> None:
    """List the flow's executions, newest first."""
    app.use_output(output)
    session = app.cloud(target)
    app.render(executions.list_executions(session.clients.flows, _flow(app, flow_name),
                                          status=status_filter, limit=limit))
