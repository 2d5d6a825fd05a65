"""``deploy emulator start|status|stop|reset|credentials``: the local cloud's lifecycle."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from rich.table import Table

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import output_option
from deployer.cli.render import view
from deployer.config.settings import DEFAULT_EMULATOR_PORT, EMULATOR_PORT_ENV, emulator_port
from deployer.core.flow_mocks import checked_mock_file as checked_mocks
from deployer.emulator import daemon
from deployer.emulator.daemon import DaemonCredentials, EmulatorStatus
from deployer.emulator.latency import CLOUD_COLD_START, CLOUD_STEP_LATENCY
from deployer.errors import ExitCode, OperationError

DEFAULT_STATE_DIR = Path(".deploy/emulator")


def _state_dir(app: AppContext, state_dir: Path | None) -> Path:
    """The emulator's state directory; refused inside ``mock_cloud()``, where every command
    uses the in-process cloud (``--help`` still works: it never gets here)."""
    mock = app.in_process
    if mock is not None:
        raise OperationError(
            "`deploy emulator` manages background emulators; inside mock_cloud() every command "
            f"uses the in-process cloud at {mock.endpoint}",
            hint="run `deploy emulator` outside the mock_cloud() block (or the local_cloud "
            "fixture); inside it, inject faults with cloud.faults")
    return app.resolve(state_dir or DEFAULT_STATE_DIR)


state_dir_option = click.option(
    "--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Emulator state directory (default: .deploy/emulator/ in the project).")


@view(EmulatorStatus)
def _status_view(st: EmulatorStatus) -> str:
    if not st.running:
        return f"Emulator {st.message} (state {st.state_dir})."
    model = st.latency_model
    latency = f"\nLatency: {model.describe()}" if model is not None else ""
    return (f"Emulator {st.message}: http://{st.endpoint} (pid {st.pid}, account {st.account_id},"
            f" {st.clock} clock, state {st.state_dir})\nConsole: {st.console_url}{latency}")


@view(DaemonCredentials)
def _credentials_view(c: DaemonCredentials) -> Table:
    table = Table(show_header=False, box=None)
    for key, value in (("endpoint", c.endpoint), ("region", c.region),
                       ("account id", c.account_id), ("access key id", c.access_key_id),
                       ("access key secret", c.access_key_secret)):
        table.add_row(key, value)
    return table


EMULATOR_EPILOG = """\b
Examples:
  deploy emulator start --clock virtual         Waits cost no wall time
  deploy emulator status --output json
  eval "$(deploy emulator credentials --format env)"   point the SDKs / aliyun CLI at it
  deploy emulator faults add --service fc --function GetJobStatus --error ResourceThrottled
  deploy emulator reset --yes && deploy emulator stop
"""

START_EPILOG = f"""\b
Examples:
  deploy emulator start                           real clock, cloud-like latency, port 9125
  DEPLOY_EMULATOR_PORT=19305 deploy emulator start    the port `deploy up` then looks for
  deploy emulator start --clock virtual --port 9200
  deploy emulator start --cold-start 0 --step-latency 0   the real clock, exact
  deploy emulator start --clock virtual --cold-start 1    virtual, 1 s per new instance
  deploy emulator start --throttle cloud          apply the cloud's API quotas
  deploy emulator stop && deploy emulator start --mocks mocks.yaml   tasks from mocks
  deploy emulator start --execution-retention 7d --log-retention 12h
  deploy emulator start --foreground              serve here until Ctrl-C
\b
Latency model (docs/runtime.md): on the real clock a new function instance spends
{CLOUD_COLD_START:g} s between loading its code and its first call, and each CloudFlow step
(a task result, a due timer) arrives {CLOUD_STEP_LATENCY:g} s late, as on the cloud; the
virtual clock adds nothing unless asked. `deploy emulator status` shows the model in force.
"""

EMULATOR_STATUS_EPILOG = """\b
Examples:
  deploy emulator status
  deploy emulator status --output json | jq -r .endpoint
"""

STOP_EPILOG = """\b
Examples:
  deploy emulator stop
  deploy emulator stop --state-dir /tmp/emu
"""

RESET_EPILOG = """\b
Examples:
  deploy emulator reset                           asks first
  deploy emulator reset --yes && deploy up --yes   a fresh start (fresh function instances)
"""

CREDENTIALS_EPILOG = """\b
Examples:
  deploy emulator credentials
  eval "$(deploy emulator credentials --format env)"
  deploy emulator credentials --format json | jq -r .endpoint
\b
Prints the emulator's local access key secret on purpose: it only opens this emulator.
"""


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A retention duration as written (checked here: 30d, 12h, 90s, a number of days)."""
    if value is None:
        return None
    from deployer.emulator.retention import parse_duration

    try:
        parse_duration(value, f"--{param.name.replace('_', '-') if param.name else ''}")
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.group("emulator", epilog=EMULATOR_EPILOG)
def emulator() -> None:
    """Run the local cloud (Function Compute 3.0, CloudFlow, RAM, STS) in the background."""


@emulator.command("start", epilog=START_EPILOG)
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help=f"Port to listen on [default: ${EMULATOR_PORT_ENV}, else "
                   f"{DEFAULT_EMULATOR_PORT}, the port `deploy up` looks for].")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind; anything but loopback exposes the emulator.")
@click.option("--clock", type=click.Choice(("real", "virtual")), default="real",
              show_default=True)
@click.option("--step-latency", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="CloudFlow's overhead per step: each task result and due timer arrives that "
                   f"much later [default: {CLOUD_STEP_LATENCY:g} on the real clock, 0 on the "
                   "virtual one].")
@click.option("--cold-start", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="FC's initialisation of a new function instance, between loading its module "
                   f"and its first call [default: {CLOUD_COLD_START:g} on the real clock, 0 on "
                   "the virtual one].")
@click.option("--throttle", type=click.Choice(("off", "cloud")), default="off",
              show_default=True,
              help="cloud: refuse calls beyond the cloud's documented API quotas.")
@click.option("--mocks", "mocks", type=click.Path(path_type=Path, dir_okay=False),
              multiple=True, metavar="FILE",
              help="Mocked task results (TestCases or StateMachines, and MockedResponses; "
                   "repeatable); an execution uses one with `deploy execute --mock-case`.")
@click.option("--execution-retention", default=None, metavar="DURATION",
              callback=_duration,
              help="How long an ended execution and its history are kept, e.g. 30d, 12h, 90s "
                   "[default: 30d].")
@click.option("--log-retention", default=None, metavar="DURATION", callback=_duration,
              help="How long functions' invocation logs are kept [default: 30d, Log Service's "
                   "default].")
@click.option("--foreground", is_flag=True, help="Serve in this process until Ctrl-C.")
@state_dir_option
@output_option
@pass_app
def emulator_start(app: AppContext, port: int | None, host: str, clock: str,
                   step_latency: float | None, cold_start: float | None, throttle: str,
                   execution_retention: str | None, log_retention: str | None,
                   mocks: tuple[Path, ...], foreground: bool, state_dir: Path | None,
                   output: str) -> None:
    """Start the emulator; returns once it answers (harmless when already running)."""
    directory = _state_dir(app, state_dir)
    retention = {key: value for key, value in (("executions", execution_retention),
                                               ("logs", log_retention)) if value is not None}
    mock_args = [arg for path in mocks
                 for arg in ("--mocks", str(checked_mocks(app.resolve(path))))]
    if mocks and daemon.status(directory).running:
        raise OperationError("the emulator is already running: the mocks were not loaded",
                             hint="stop it first (deploy emulator stop), then start it "
                                  "with --mocks")
    port = emulator_port() if port is None else port
    if foreground:
        from deployer.emulator.__main__ import main as serve

        latency = [arg for flag, value in (("--step-latency", step_latency),
                                           ("--cold-start", cold_start))
                   if value is not None for arg in (flag, repr(value))]
        kept = [arg for key, value in retention.items()
                for arg in (f"--{'execution' if key == 'executions' else 'log'}-retention",
                            value)]
        raise SystemExit(serve(["--state-dir", str(directory), "--host", host,
                                "--port", str(port), "--clock", clock, *latency,
                                "--throttle", throttle, *kept, *mock_args]))
    app.render(daemon.start_daemon(directory, host=host, port=port, clock=clock,
                            step_latency=step_latency, cold_start=cold_start,
                            throttle=throttle, retention=retention,
                            mocks=[Path(a) for a in mock_args[1::2]]), output)


@emulator.command("status", epilog=EMULATOR_STATUS_EPILOG)
@state_dir_option
@output_option
@pass_app
def emulator_status(app: AppContext, state_dir: Path | None, output: str) -> None:
    """Show whether the emulator runs (exit 4 when it does not)."""
    result = daemon.status(_state_dir(app, state_dir))
    app.render(result, output)
    if not result.running:
        raise SystemExit(int(ExitCode.NOT_FOUND))


@emulator.command("stop", epilog=STOP_EPILOG)
@state_dir_option
@output_option
@pass_app
def emulator_stop(app: AppContext, state_dir: Path | None, output: str) -> None:
    """Stop the background emulator (state is kept)."""
    app.render(daemon.stop(_state_dir(app, state_dir)), output)


@emulator.command("reset", epilog=RESET_EPILOG)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@state_dir_option
@output_option
@pass_app
def emulator_reset(app: AppContext, yes: bool, state_dir: Path | None, output: str) -> None:
    """Delete every function, role and policy of the emulator (keys and account stay)."""
    directory = _state_dir(app, state_dir)
    if not yes:
        click.confirm(f"Delete all emulator resources in {directory}?", abort=True, err=True)
    app.render(daemon.reset(directory), output)


@emulator.command("credentials", epilog=CREDENTIALS_EPILOG)
@click.option("--format", "fmt", type=click.Choice(("text", "json", "env")), default=None,
              help="env: shell export lines, for eval in a shell.")
@state_dir_option
@output_option
@pass_app
def emulator_credentials(app: AppContext, fmt: str | None, state_dir: Path | None,
                         output: str) -> None:
    """Show the endpoint and the (local, fake) access keys the emulator accepts."""
    creds = daemon.credentials(_state_dir(app, state_dir))
    if fmt == "env":
        for key, value in creds.to_env().items():
            click.echo(f"export {key}={shlex.quote(value)}")
        return
    app.render(creds, "json" if fmt == "json" else output)


# registered last: the faults and mocks commands use this module's state-dir option
from deployer.cli.commands.emulator_faults import faults  # noqa: E402
from deployer.cli.commands.emulator_mocks import mocks  # noqa: E402

emulator.add_command(faults)
emulator.add_command(mocks)
