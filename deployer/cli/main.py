"""The ``deploy`` command: root group, global options, and error -> message + exit code."""

from __future__ import annotations

import importlib
import traceback
from pathlib import Path
from typing import Any

import click

from deployer import __version__
from deployer.cli import in_process
from deployer.cli.context import AppContext
from deployer.errors import DeployerError, ExitCode, redact

# command name -> "module:attribute"; modules are imported only when their command runs.
COMMANDS: dict[str, str] = {
    "render": "deployer.cli.commands.validate:render",
    "validate": "deployer.cli.commands.validate:validate",
    "package": "deployer.cli.commands.package:package",
    "flow": "deployer.cli.commands.flow:flow",
    "emulator": "deployer.cli.commands.emulator:emulator",
    "up": "deployer.cli.commands.deploy:up",
    "plan": "deployer.cli.commands.deploy:plan",
    "down": "deployer.cli.commands.deploy:down",
    "execute": "deployer.cli.commands.executions:execute",
    "status": "deployer.cli.commands.executions:status_command",
    "history": "deployer.cli.commands.executions:history_command",
    "executions": "deployer.cli.commands.executions:executions_command",
    "invoke": "deployer.cli.commands.functions:invoke",
    "logs": "deployer.cli.commands.functions:logs",
    "console": "deployer.cli.commands.console:console",
    "completion": "deployer.cli.commands.completion:completion",
    "init": "deployer.cli.commands.init:init",
    "dev": "deployer.cli.commands.dev:dev",
    "roles": "deployer.cli.commands.roles:roles",
}

# What `deploy --help` lists, so that it imports no command module (tests keep these equal to
# each command's own short help).
SUMMARIES: dict[str, str] = {
    "console": "Open the console: the emulator's web console, or CloudFlow's on Alibaba Cloud.",
    "dev": "Deploy, then redeploy what changed on every save (Ctrl-C stops; all stays deployed).",
    "completion": "Print the shell completion script for bash, zsh, fish or PowerShell.",
    "down": "Remove the flows, functions, policies and roles that `deploy up` created (nothing "
            "else).",
    "emulator": (
        "Run the local cloud (Function Compute 3.0, CloudFlow, RAM, STS) in the background."
    ),
    "execute": "Start an execution of the flow and watch it to its end.",
    "flow": "Run and inspect CloudFlow flow definitions locally.",
    "init": "Create a new project: s.yaml, functions, a flow template, tests and a CI workflow.",
    "executions": "List the flow's executions, newest first.",
    "history": "List an execution's history events (default: the latest execution).",
    "invoke": (
        "Invoke a deployed function and print its response (exit 1 if it raised)."
    ),
    "logs": "Recent invocations of a function and their logs (from Log Service, on every "
            "target).",
    "package": "Write one deterministic zip per function and print its size and checksums.",
    "plan": "Show what `deploy up` would change, changing nothing (exit 0 either way).",
    "render": "Print the flow definition rendered from its Jinja2 template.",
    "status": "Show an execution (default: the latest), or re-attach to it with --wait.",
    "roles": "Create the documented default roles (AliyunFCDefaultRole, ...) a project names.",
    "up": "Package, plan and deploy the project's functions and flows (with their roles).",
    "validate": "Check s.yaml, the rendered flow definitions and their function references.",
}

ROOT_EPILOG = """\b
Examples:
  deploy init my-app                      a new project (tests and CI workflow included)
  deploy validate                         check s.yaml and the rendered flow
  deploy render --region cn-hangzhou --account-id 1234567890123456
  deploy package --out build/             write the function zips
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case HappyPath   mocked tasks
  deploy emulator start                   run the local cloud in the background
  deploy up                               deploy to the local emulator (--target aliyun: the cloud)
  deploy execute --delay 20               run the flow and watch it
  deploy dev --execute '{"delay": 5}'     redeploy on every save, then run the flow again
  eval "$(deploy completion bash)"        complete commands and options in bash
  deploy executions                       the flow's newest executions
  deploy logs GetJobStatus                a function's recent invocation logs
"""


class DeployGroup(click.Group):
    """Lazy command loading plus the one place where errors become messages and exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUMMARIES.get(name) or self._summary(ctx, name)) for name in COMMANDS]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))

    def _summary(self, ctx: click.Context, name: str) -> str:
        command = self.get_command(ctx, name)
        return command.get_short_help_str(limit=80) if command else ""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except click.exceptions.Abort:
            raise
        except DeployerError as exc:
            _report_error(ctx, exc)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            command = f"deploy {ctx.invoked_subcommand}" if ctx.invoked_subcommand else "deploy"
            click.echo(f"Interrupted: `{command}` stopped before it finished (Ctrl-C).",
                       err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except Exception as exc:  # a bug: say so, show the traceback only with --debug
            if _debug(ctx):
                click.echo(redact(traceback.format_exc()), err=True, nl=False)
            click.echo(redact(f"Error: unexpected {type(exc).__name__}: {exc}"), err=True)
            click.echo(
                "This is a bug in cloudflow-deployer; please report it "
                "(rerun with --debug for the traceback).",
                err=True,
            )
            ctx.exit(int(ExitCode.INTERNAL))


def _debug(ctx: click.Context) -> bool:
    app = ctx.find_object(AppContext)
    return bool(app and app.debug)


def _report_error(ctx: click.Context, exc: DeployerError) -> None:
    """Print the error on stderr (stdout stays empty, also with ``--output json``); every line
    goes through :func:`redact`, so no secret reaches the terminal or a CI log."""
    if _debug(ctx):
        click.echo(redact(traceback.format_exc()), err=True, nl=False)
    click.echo(redact(f"Error: {exc.message}"), err=True)
    for line in exc.details():
        click.echo(redact(f"  {line}"), err=True)
    if exc.hint:
        click.echo(redact(f"Hint: {exc.hint}"), err=True)


@click.group(
    cls=DeployGroup, epilog=ROOT_EPILOG, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="deploy")
@click.option(
    "-C",
    "--project-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    envvar="DEPLOY_PROJECT_DIR",
    show_envvar=True,
    help="Project directory (holds s.yaml, functions/, templates/).",
)
@click.option(
    "-t",
    "--template",
    "manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    default="s.yaml",
    show_default=True,
    help="Project manifest, relative to the project directory (Serverless Devs v3 format).",
)
@click.option(
    "--values",
    "values_file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="DEPLOY_VALUES",
    show_envvar=True,
    help="YAML file with the outputs of resources this toolkit does not deploy "
         "(resources.<name>.output.<key>), relative to the project directory.",
)
@click.option(
    "--var",
    "variables",
    multiple=True,
    metavar="resources.NAME.output.KEY=VALUE",
    help="One such output (repeatable; wins over --values).",
)
@click.option("--debug", is_flag=True, envvar="DEPLOY_DEBUG", help="Show tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, project_dir: Path, manifest: Path, values_file: Path | None,
        variables: tuple[str, ...], debug: bool) -> None:
    """Deploy Serverless Devs projects (s.yaml: Function Compute 3.0 functions and CloudFlow
    flows) to Alibaba Cloud, or run them end to end on a faithful local emulator of both."""
    project_dir = project_dir.resolve()
    manifest_file = manifest if manifest.is_absolute() else project_dir / manifest
    ctx.obj = AppContext(project_dir=project_dir, manifest_file=manifest_file, debug=debug,
                         values_file=values_file, variables=variables,
                         in_process=in_process.innermost())


def main() -> None:
    """Console-script entry point (the garbage collector stays out of the command's start
    and exit: :mod:`deployer.cli.startup`)."""
    from deployer.cli.startup import collector_paused

    with collector_paused():
        cli.main(prog_name="deploy")
