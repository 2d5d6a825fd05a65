"""``deploy emulator faults list|add|clear|throttle``: fault injection on the local emulator."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from deployer.cli.commands.emulator import _state_dir, state_dir_option
from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import output_option
from deployer.cli.render import view
from deployer.core.emulator_faults import (
    FaultRequest,
    FaultsResult,
    add_fault,
    clear_faults,
    list_faults,
    set_throttle,
)


def _effect(fault: dict[str, object]) -> str:
    kind = fault.get("kind")
    if kind == "error":
        retry = (f", retry after {fault['retry_after_ms']} ms"
                 if fault.get("retry_after_ms") else "")
        return f"error {fault.get('error')} ({fault.get('status')}{retry})"
    if kind == "latency":
        return f"+{fault.get('seconds')} s"
    if kind == "function_error":
        return f"function error {fault.get('error_type')}: {fault.get('message')}"
    return "function timeout"


@view(FaultsResult)
def _faults_view(result: FaultsResult) -> Table | str:
    head = f"{result.changed[:1].upper()}{result.changed[1:]}. " if result.changed else ""
    if not result.faults:
        return f"{head}No faults injected (throttle {result.throttle})."
    table = Table(title=f"{head}Throttle {result.throttle}.", title_justify="left", box=None)
    for column in ("id", "service", "calls", "effect", "times", "probability", "fired"):
        table.add_column(column)
    for f in result.faults:
        calls = " ".join(str(f[k]) for k in ("action", "function", "flow") if f.get(k)) or "*"
        times = "always" if f.get("times") is None else f"{f.get('remaining')}/{f.get('times')}"
        table.add_row(str(f["id"]), str(f["service"]), calls, _effect(dict(f)), times,
                      f"{f.get('probability')}", str(f.get("fired")))
    return table


FAULTS_EPILOG = """\b
Examples:
  deploy emulator faults add --service fc --function GetJobStatus --error ResourceThrottled
  deploy emulator faults list
  deploy emulator faults clear
\b
Faults make chosen calls fail as the cloud would (status, headers, body), or run slower; a
flow's Tasks meet the Function Compute faults of the functions they invoke.
"""

ADD_EPILOG = """\b
Examples:
  deploy emulator faults add --service fc --function StartJob --error ResourceThrottled --times 2
  deploy emulator faults add --service cloudflow --error Throttling --probability 0.3 --seed 7
  deploy emulator faults add --service fc --action InvokeFunction --function StartJob --timeout
  deploy emulator faults add --service fc --function GetJobStatus --function-error "disk full"
  deploy emulator faults add --service cloudflow --action StartExecution --latency 1.5 --output json
  deploy emulator faults add --service ram --error Busy.Backend --status 502 --times 1
\b
Named errors: fc ResourceThrottled (503), ResourceExhausted (429), Throttling (429),
InternalServerError (500), ServiceUnavailable (503), ConcurrentUpdateError (409); cloudflow
Throttling (429), InternalServerError, ServiceUnavailable, ConcurrentUpdateError; ram/sts
Throttling, Throttling.User, Throttling.Api (400), InternalError (500), ServiceUnavailable
(503). Any other code needs --status.
"""

LIST_EPILOG = """\b
Examples:
  deploy emulator faults list
  deploy emulator faults list --output json | jq '.faults[] | {id, fired}'
"""

CLEAR_EPILOG = """\b
Examples:
  deploy emulator faults add --service sts --error Throttling --output json | jq -r .changed
  deploy emulator faults clear fault-1           the fault just added
  deploy emulator faults clear                   every fault
"""

THROTTLE_EPILOG = """\b
Examples:
  deploy emulator faults throttle cloud          CloudFlow's API rates, FC's instance limit
  deploy emulator faults throttle off --output json
"""


@click.group("faults", epilog=FAULTS_EPILOG)
def faults() -> None:
    """Inject faults into the running emulator: errors, function errors, timeouts, latency."""


@faults.command("list", epilog=LIST_EPILOG)
@state_dir_option
@output_option
@pass_app
def list_command(app: AppContext, state_dir: Path | None, output: str) -> None:
    """Show the injected faults (and how often each fired) and the throttle mode."""
    app.render(list_faults(_state_dir(app, state_dir)), output)


@faults.command("add", epilog=ADD_EPILOG)
@click.option("--service", required=True,
              type=click.Choice(("fc", "cloudflow", "fnf", "ram", "sts")),
              help="The service whose calls fail.")
@click.option("--action", help="Only this API action (InvokeFunction, DescribeExecution, ...).")
@click.option("--function", "function", help="Only calls about this FC function (Tasks too).")
@click.option("--flow", help="Only CloudFlow calls about this flow.")
@click.option("--error", metavar="CODE", help="Refuse the call with this cloud error code.")
@click.option("--status", type=click.IntRange(400, 599), help="HTTP status of --error.")
@click.option("--retry-after-ms", type=click.IntRange(1, 3_600_000),
              help="Send x-acs-retry-after with --error (the SDKs raise ThrottlingException).")
@click.option("--function-error", metavar="MESSAGE",
              help="Answer FC invocations as if the handler raised MESSAGE.")
@click.option("--error-type", help="errorType of --function-error (default Exception).")
@click.option("--timeout", is_flag=True, help="Answer FC invocations as a function timeout.")
@click.option("--latency", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Delay matching calls by SECONDS of real time.")
@click.option("--message", help="The error message to answer with.")
@click.option("--times", type=click.IntRange(1, 1_000_000),
              help="Only the next N matching calls (default: every one).")
@click.option("--probability", type=click.FloatRange(0, 1, min_open=True),
              help="Fire on this share of matching calls, at random.")
@click.option("--seed", type=int, help="Seed of --probability's draws (repeatable runs).")
@state_dir_option
@output_option
@pass_app
def add_command(app: AppContext, service: str, action: str | None, function: str | None,
                flow: str | None, error: str | None, status: int | None,
                retry_after_ms: int | None, function_error: str | None,
                error_type: str | None, timeout: bool, latency: float | None,
                message: str | None, times: int | None, probability: float | None,
                seed: int | None, state_dir: Path | None, output: str) -> None:
    """Make chosen calls fail (a cloud error, a function error or timeout) or run slower.

    Give exactly one of --error, --function-error, --timeout, --latency.
    """
    given = [name for name, value in (("--error", error), ("--function-error", function_error),
                                      ("--timeout", timeout), ("--latency", latency)) if value]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --error, --function-error, --timeout, "
                               f"--latency{' (got ' + ', '.join(given) + ')' if given else ''}")
    request = FaultRequest(service, action, function, flow, error, status, message,
                           retry_after_ms, function_error, error_type, timeout, latency,
                           times, probability, seed)
    app.render(add_fault(_state_dir(app, state_dir), request), output)


@faults.command("clear", epilog=CLEAR_EPILOG)
@click.argument("fault_id", required=False)
@state_dir_option
@output_option
@pass_app
def clear_command(app: AppContext, fault_id: str | None, state_dir: Path | None,
                  output: str) -> None:
    """Remove one fault (FAULT_ID, as `faults list` shows it) or every fault."""
    app.render(clear_faults(_state_dir(app, state_dir), fault_id), output)


@faults.command("throttle", epilog=THROTTLE_EPILOG)
@click.argument("mode", type=click.Choice(("cloud", "off")))
@state_dir_option
@output_option
@pass_app
def throttle_command(app: AppContext, mode: str, state_dir: Path | None, output: str) -> None:
    """Apply the cloud's documented API quotas (cloud) or none (off)."""
    app.render(set_throttle(_state_dir(app, state_dir), mode), output)
