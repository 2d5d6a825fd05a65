"""``deploy init``: a new project from a template (seed or blank)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import output_option
from deployer.cli.render import view
from deployer.core.scaffold import TEMPLATES, ScaffoldResult, create_project

INIT_EPILOG = """\b
Examples:
  deploy init my-app                       the seed app (my-app-start-job, my-app-flow, ...)
  deploy init my-blank --template blank    one function and a flow that calls it
  cd my-app && deploy validate && deploy up && pytest -q
  mkdir other && cd other && deploy init   into the current (empty) directory
\b
The project passes `deploy validate`, deploys with `deploy up` and brings its own tests
(tests/test_app.py, on the in-process emulator) and a GitHub Actions workflow
(.github/workflows/deploy.yml: tests, then `deploy up --target aliyun` with OIDC). Functions,
flow and role are named after the project. requirements-dev.txt installs this deployer from
where it came from: its package index (name==version), its git URL and commit, or — when it
runs from a local checkout — a wheel `deploy init` writes into wheels/ (commit it). Existing
files are never overwritten: if one is in the way, nothing is written (exit 1).
"""


def _shown(directory: Path) -> str:
    """The directory as typed: relative to the current directory when inside it."""
    try:
        return str(directory.relative_to(Path.cwd()))
    except ValueError:
        return str(directory)


@view(ScaffoldResult)
def _result_view(result: ScaffoldResult) -> Text:
    text = Text(f"Created {result.name} ({result.template} template) in {result.directory}:\n")
    for name in result.files:
        text.append(f"  {name}\n")
    text.append("Next:\n", style="bold")
    cd = f"cd {_shown(result.directory)} && " if result.directory != Path.cwd() else ""
    text.append(f"  {cd}{' && '.join(result.next_steps)}", style="dim")
    return text


@click.command("init", epilog=INIT_EPILOG)
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".",
                required=False)
@click.option("--template", type=click.Choice(TEMPLATES), default="seed", show_default=True,
              help="seed: the job-polling app; blank: one function and a flow calling it.")
@click.option("--name", help="Project name (default: from the directory name).")
@output_option
@pass_app
def init(app: AppContext, directory: Path, template: str, name: str | None,
         output: str) -> None:
    """Create a new project: s.yaml, functions, a flow template, tests and a CI workflow."""
    app.use_output(output)
    app.render(create_project(app.resolve(directory), template=template, name=name))
