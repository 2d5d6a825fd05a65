"""``deploy roles init``: the documented default roles a project names, created once."""

from __future__ import annotations

import click
from rich.text import Text

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import view
from deployer.core.service_roles import (
    DEFAULT_ROLES,
    RolesInitResult,
    init_default_roles,
    referenced_default_roles,
)
from deployer.errors import InvalidInputError

ROLES_INIT_EPILOG = f"""\b
Examples:
  deploy roles init AliyunFCDefaultRole fnf-execution-default-role
  deploy roles init aliyunfcdefaultrole --output json     the same role (names ignore case)
  deploy roles init AliyunFCDefaultRole --target aliyun --region cn-hangzhou
\b
Without NAME: the default roles s.yaml names (role: auto, or a role ARN naming one).
Known roles: {', '.join(sorted(r.name for r in DEFAULT_ROLES.values()))}. Each is created with
its documented trust and system policies, as the consoles' one-click authorization does;
an existing one only gets the policies it lacks. `deploy down` never deletes them.
"""


@view(RolesInitResult)
def _roles_view(result: RolesInitResult) -> Text:
    text = Text()
    for name, arn, outcome in result.roles:
        style = "green" if outcome != "exists" else "dim"
        text.append(f"  {outcome:<8}", style=style)
        text.append(f"{name:<32}{arn}\n")
    text.append(f"{len(result.roles)} role(s), {result.write_calls} write calls.")
    return text


ROLES_EPILOG = """\b
Examples:
  deploy roles init AliyunFCDefaultRole        FC's default role (role: auto uses it)
  deploy roles init fnf-execution-default-role --output json
"""


@click.group("roles", epilog=ROLES_EPILOG)
def roles() -> None:
    """Create the documented default roles (AliyunFCDefaultRole, ...) a project names."""


@roles.command("init", epilog=ROLES_INIT_EPILOG)
@click.argument("names", nargs=-1)
@target_options
@output_option
@pass_app
def roles_init(app: AppContext, names: tuple[str, ...], target: TargetOptions, output: str) -> None:
    """Create the default roles NAMES (default: those s.yaml names) on the target."""
    app.use_output(output)
    wanted = list(names) or referenced_default_roles(app.manifest())
    if not wanted:
        raise InvalidInputError("s.yaml names no default role; name the roles to create",
                                hint="e.g. deploy roles init AliyunFCDefaultRole")
    session = app.cloud(target)
    app.render(init_default_roles(wanted, session.clients, session.account_id,
                                  progress=app.renderer.progress))
