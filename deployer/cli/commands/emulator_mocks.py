"""``deploy emulator mocks load|list|clear``: mocked task results on the local emulator."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from deployer.cli.commands.emulator import _state_dir, state_dir_option
from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import output_option
from deployer.cli.render import view
from deployer.core.emulator_mocks import MocksResult, clear_mocks, list_mocks, load_mock_file


@view(MocksResult)
def _mocks_view(result: MocksResult) -> Table | str:
    head = f"{result.changed[:1].upper()}{result.changed[1:]}. " if result.changed else ""
    if not result.cases and not result.responses:
        return f"{head}No mocks loaded."
    table = Table(title=f"{head}{len(result.responses)} mocked responses.",
                  title_justify="left", box=None)
    table.add_column("flow")
    table.add_column("test cases")
    for flow, cases in sorted(result.cases.items()):
        table.add_row(flow or "(any flow)", ", ".join(cases))
    return table


MOCKS_EPILOG = """\b
Examples:
  deploy emulator mocks load mocks.yaml
  deploy emulator mocks list
  deploy emulator mocks clear
\b
Tasks are answered from the loaded mocks when an execution chooses a test case
(`deploy execute --target local --mock-case HappyPath`, or an ExecutionName ending in
#HappyPath); the format is `deploy flow test --mocks`'s. The mocks stay loaded across
restarts of the emulator.
"""

MOCKS_LOAD_EPILOG = """\b
Examples:
  deploy emulator mocks load mocks.yaml
  deploy emulator mocks load mocks.yaml --output json | jq .cases
"""

MOCKS_LIST_EPILOG = """\b
Examples:
  deploy emulator mocks list
  deploy emulator mocks list --output json | jq .sources
"""

MOCKS_CLEAR_EPILOG = """\b
Examples:
  deploy emulator mocks clear
"""


@click.group("mocks", epilog=MOCKS_EPILOG)
def mocks() -> None:
    """Answer the running emulator's flow tasks from mocked results (test cases)."""


@mocks.command("load", epilog=MOCKS_LOAD_EPILOG)
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@state_dir_option
@output_option
@pass_app
def mocks_load(app: AppContext, file: Path, state_dir: Path | None, output: str) -> None:
    """Load the mock file FILE (YAML or JSON); a case or response of a name already loaded is
    replaced."""
    app.render(load_mock_file(_state_dir(app, state_dir), app.resolve(file)), output)


@mocks.command("list", epilog=MOCKS_LIST_EPILOG)
@state_dir_option
@output_option
@pass_app
def mocks_list(app: AppContext, state_dir: Path | None, output: str) -> None:
    """Show the loaded test cases by flow, and the files they came from."""
    app.render(list_mocks(_state_dir(app, state_dir)), output)


@mocks.command("clear", epilog=MOCKS_CLEAR_EPILOG)
@state_dir_option
@output_option
@pass_app
def mocks_clear(app: AppContext, state_dir: Path | None, output: str) -> None:
    """Forget every loaded mock."""
    app.render(clear_mocks(_state_dir(app, state_dir)), output)
