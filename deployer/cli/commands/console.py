"""``deploy console [EXECUTION]``: open the web console (local emulator) or CloudFlow's."""

from __future__ import annotations

from dataclasses import dataclass

import click

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import view
from deployer.core import executions
from deployer.core.console_links import console_root, execution_url

CONSOLE_EPILOG = """\b
Examples:
  deploy console                               the flows of the region, in a browser
  deploy console exec-20260101T120000-1a2b3c   that execution's live graph
  deploy console --latest --print              print the latest execution's URL (headless)
  deploy console --target aliyun --print       the CloudFlow console of the region
"""


@dataclass(frozen=True, slots=True)
class ConsoleLink:
    url: str
    opened: bool


@view(ConsoleLink)
def _link_view(link: ConsoleLink) -> str:
    return f"Opened {link.url}" if link.opened else link.url


@click.command("console", epilog=CONSOLE_EPILOG)
@target_options
@click.option("--flow", "flow_name", help="Flow name (default: the flow in s.yaml).")
@click.argument("execution", required=False)
@click.option("--latest", is_flag=True, help="The latest execution of the flow.")
@click.option("--print", "print_only", is_flag=True,
              help="Print the URL instead of opening a browser (headless machines, scripts).")
@output_option
@pass_app
def console(app: AppContext, target: TargetOptions, flow_name: str | None,
            execution: str | None, latest: bool, print_only: bool, output: str) -> None:
    """Open the console: the emulator's web console, or CloudFlow's on Alibaba Cloud."""
    app.use_output(output)
    session = app.cloud(target)
    endpoints, region = session.connection.endpoints, session.settings.region
    if execution or latest:
        flow = flow_name or app.manifest().flow(None).name
        name = execution or executions.latest_execution(session.clients.flows, flow)
        url = execution_url(endpoints, region, flow, name)
    else:
        url = console_root(endpoints, region)
    opened = False
    if not print_only and not app.renderer.is_json:
        import webbrowser

        opened = webbrowser.open(url)
    app.render(ConsoleLink(url, opened))
