"""``deploy invoke`` and ``deploy logs``."""

from __future__ import annotations

import json

import click
from rich.text import Text

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import view
from deployer.core.functions import (
    InvokeResult,
    LogsResult,
    invoke_function,
    parse_event,
    recent_logs,
)


@view(InvokeResult)
def _invoke_view(result: InvokeResult) -> Text:
    if result.error_type:
        text = Text(f"{result.function} raised ({result.error_type}): ", style="red")
        text.append(result.error_message or "")
        return text
    if isinstance(result.response, (dict, list)):
        return Text(json.dumps(result.response, indent=2, ensure_ascii=False))
    return Text("" if result.response is None else str(result.response))


@view(LogsResult)
def _logs_view(result: LogsResult) -> Text:
    if not result.invocations:
        return Text(f"No invocations of {result.function} yet.")
    text = Text()
    for inv in reversed(result.invocations):  # oldest first, like a log
        when = inv.invoked_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        duration = f" {inv.duration_ms:.0f} ms" if inv.duration_ms is not None else ""
        style = "green" if inv.status == "Succeeded" else "red"
        text.append(f"{when} {inv.request_id} {inv.invocation_type} ")
        text.append(inv.status + (f" ({inv.error_type})" if inv.error_type else ""), style=style)
        text.append(f"{duration}\n")
        for line in inv.log.rstrip("\n").splitlines():
            text.append(f"  {line}\n", style="dim")
    return text


INVOKE_EPILOG = """\b
Examples:
  deploy invoke StartJob                           the event {}
  deploy invoke GetJobStatus --event '{"job_id": "j-1", "delay": 20}'
  deploy invoke GetJobStatus --event @event.json --output json | jq .response
\b
The response goes to stdout, the function's log tail to stderr. Exit 1 when the function
raised, 4 when it does not exist.
"""

LOGS_EPILOG = """\b
Examples:
  deploy logs GetJobStatus                         the last 10 invocations and their logs
  deploy logs StartJob --limit 50 --output json | jq '.invocations[].status'
"""


@click.command("invoke", epilog=INVOKE_EPILOG)
@target_options
@click.argument("function")
@click.option("--event", "event_text", metavar="JSON|@FILE", help="The event (default {}).")
@output_option
@pass_app
def invoke(app: AppContext, target: TargetOptions, function: str, event_text: str | None,
           output: str) -> None:
    """Invoke a deployed function synchronously and print its response (exit 1 if it raised)."""
    app.use_output(output)
    event = parse_event(event_text, app.project_dir)
    session = app.cloud(target)
    result = invoke_function(session.clients.fc, function, event)
    if result.log and not app.renderer.is_json:
        app.renderer.progress(result.log.rstrip("\n"))
    app.render(result)


@click.command("logs", epilog=LOGS_EPILOG)
@target_options
@click.argument("function")
@click.option("--limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many recent invocations.")
@output_option
@pass_app
def logs(app: AppContext, target: TargetOptions, function: str, limit: int,
         output: str) -> None:
    """Recent invocations of a function and their logs (local emulator; on Alibaba Cloud they
    live in Log Service)."""
    app.use_output(output)
    session = app.cloud(target)
    app.render(recent_logs(session.clients.fc, session.logs, function, limit))
