"""``deploy invoke`` and ``deploy logs``."""

from __future__ import annotations

import json

import click
from rich.text import Text

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import view
from deployer.core.functions import (
    AsyncInvokeResult,
    AsyncTaskResult,
    InvocationLog,
    InvokeRequest,
    InvokeResult,
    LogsResult,
    async_task,
    follow_logs,
    invoke_function,
    parse_event,
    recent_logs,
    template_event,
)
from deployer.errors import ExitCode


@view(InvokeResult)
def _invoke_view(result: InvokeResult) -> Text:
    if result.error_type:
        text = Text(f"{result.function} raised ({result.error_type}): ", style="red")
        text.append(result.error_message or "")
        return text
    if isinstance(result.response, (dict, list)):
        return Text(json.dumps(result.response, indent=2, ensure_ascii=False))
    return Text("" if result.response is None else str(result.response))


def _invocation_text(inv: InvocationLog) -> Text:
    text = Text()
    when = inv.invoked_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    if inv.continued:
        text.append(f"{when} {inv.request_id} (continued)\n", style="dim")
    else:
        duration = f" {inv.duration_ms:.0f} ms" if inv.duration_ms is not None else ""
        style = "green" if inv.status == "Succeeded" else "red" if inv.status else "dim"
        text.append(f"{when} {inv.request_id} {inv.invocation_type or '-'} ".replace("  ", " "))
        text.append((inv.status or "(status unknown)")
                    + (f" ({inv.error_type})" if inv.error_type else ""), style=style)
        text.append(f"{duration}\n")
    for line in inv.log.rstrip("\n").splitlines():
        text.append(f"  {line}\n", style="dim")
    return text


@view(AsyncInvokeResult)
def _async_view(result: AsyncInvokeResult) -> Text:
    return Text(f"{result.task_id}\n", style="bold").append(
        f"queued {result.function} ({result.qualifier or 'LATEST'}); "
        f"`deploy invoke {result.function} --task {result.task_id}` shows it", style="dim")


@view(AsyncTaskResult)
def _task_view(result: AsyncTaskResult) -> Text:
    task = result.task
    text = Text(f"{task.get('taskId', '')} {result.status}\n")
    for key in ("qualifier", "requestId", "startedTime", "endTime", "durationMs",
                "alreadyRetriedTimes", "returnPayload", "taskErrorMessage"):
        if task.get(key) not in (None, ""):
            text.append(f"  {key}: {task[key]}\n", style="dim")
    text.rstrip()
    return text


@view(InvocationLog)
def _invocation_view(inv: InvocationLog) -> Text:
    text = _invocation_text(inv)
    text.rstrip()
    return text


@view(LogsResult)
def _logs_view(result: LogsResult) -> Text:
    if not result.invocations:
        return Text(f"No invocations of {result.function} yet."
                    + (" Waiting for new ones (Ctrl-C stops)." if result.following else ""))
    text = Text()
    for inv in reversed(result.invocations):  # oldest first, like a log
        text.append_text(_invocation_text(inv))
    if result.following:
        text.append("Waiting for new invocations (Ctrl-C stops).", style="dim")
    text.rstrip()
    return text


INVOKE_EPILOG = """\b
Examples:
  deploy invoke StartJob                           the event {}
  deploy invoke GetJobStatus --event '{"job_id": "j-1", "delay": 20}'
  deploy invoke GetJobStatus --event @event.json --output json | jq .response
  deploy invoke StartJob --qualifier LATEST        or a version number, or an alias
  deploy invoke StartJob --async                   queue it; prints the task id
  deploy invoke StartJob --event-template oss:ObjectCreated:PutObject
\b
--task ID shows what became of a task --async queued (GetAsyncTask).
--event-template sends the event the named trigger would send, built for the function's own
trigger in s.yaml (bucket, key prefix and suffix, payload, ...): http[:METHOD], timer,
oss:<event> (oss:ObjectCreated:PutObject, oss:ObjectRemoved:DeleteObject, ...), log,
mns_topic, cdn_events:<event>, tablestore, eventbridge.
The response goes to stdout, the function's log tail to stderr. Exit 1 when the function
raised (or its task failed), 4 when it (or the task) does not exist.
"""

LOGS_EPILOG = """\b
Examples:
  deploy logs GetJobStatus                         the last 10 invocations and their logs
  deploy logs StartJob --limit 50 --output json | jq '.invocations[].status'
  deploy logs GetJobStatus --follow                then each new one as it happens (Ctrl-C)
\b
The logs come from the Log Service logstore of the function's logConfig (s.yaml:
logConfig: {project, logstore}), on Alibaba Cloud and on the local emulator alike; locally a
function without logConfig still shows its logs. --follow asks Log Service every second; the
local emulator pushes each invocation the moment it is recorded. With --follow and --output
json, every new invocation is one JSON object on its own line (JSON Lines).
"""


@click.command("invoke", epilog=INVOKE_EPILOG)
@target_options
@click.argument("function")
@click.option("--event", "event_text", metavar="JSON|@FILE", help="The event (default {}).")
@click.option("--event-template", "template", metavar="NAME",
              help="Send the event a trigger would send (see below).")
@click.option("--qualifier", metavar="VERSION|ALIAS", help="Invoke a version or alias "
              "(default LATEST).")
@click.option("--async", "asynchronous", is_flag=True,
              help="Invoke asynchronously: print the task id and return at once.")
@click.option("--task", "task_id", metavar="ID", help="Show the asynchronous task ID "
              "instead of invoking.")
@output_option
@pass_app
def invoke(app: AppContext, target: TargetOptions, function: str, event_text: str | None,
           template: str | None, qualifier: str | None, asynchronous: bool,
           task_id: str | None, output: str) -> None:
    """Invoke a deployed function and print its response (exit 1 if it raised)."""
    app.use_output(output)
    if event_text is not None and template is not None:
        raise click.UsageError("give --event or --event-template, not both")
    if task_id is not None and (asynchronous or event_text or template):
        raise click.UsageError("--task shows a task: it takes no event and no --async")
    given = None if template is not None or task_id is not None else parse_event(
        event_text, app.project_dir)  # bad input is refused before any cloud is reached
    session = app.cloud(target)
    if task_id is not None:
        app.render(async_task(session.clients.fc, function, task_id, qualifier))
        return
    region = session.settings.region
    event = given if template is None else template_event(
        template, _declared(app, region, function), session.account_id, region)
    result = invoke_function(session.clients.fc, InvokeRequest(
        function, event, qualifier=qualifier, asynchronous=asynchronous))
    if isinstance(result, InvokeResult) and result.log and not app.renderer.is_json:
        app.renderer.progress(result.log.rstrip("\n"))
    app.render(result)


def _declared(app: AppContext, region: str, function: str) -> object | None:
    """The function's spec in s.yaml (None without s.yaml or when s.yaml does not deploy it)."""
    if not app.manifest_file.is_file():
        return None
    return app.manifest().function_by_name(region, function)


@click.command("logs", epilog=LOGS_EPILOG)
@target_options
@click.argument("function")
@click.option("--limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many recent invocations.")
@click.option("-f", "--follow", is_flag=True,
              help="Keep running and show new invocations as they happen.")
@output_option
@pass_app
def logs(app: AppContext, target: TargetOptions, function: str, limit: int, follow: bool,
         output: str) -> None:
    """Recent invocations of a function and their logs (from Log Service, on every target)."""
    renderer = app.use_output(output)
    session = app.cloud(target)
    if not follow:
        app.render(recent_logs(session.clients.fc, session.logs, function, limit))
        return
    try:
        new = follow_logs(session.clients.fc, session.logs, function)
        recent = recent_logs(session.clients.fc, session.logs, function, limit)
        if renderer.is_json:
            for invocation in reversed(recent.invocations):
                renderer.stream(invocation)
        else:
            renderer.result(LogsResult(recent.function, recent.invocations, following=True))
        for invocation in new:
            renderer.stream(invocation)
    except KeyboardInterrupt:
        renderer.progress(f"Stopped following the logs of {function}.")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
