"""AppContext: the typed object on ``click.Context.obj``, built once by the root group.

It holds the global settings and builds services lazily, so a command that needs no cloud never
imports an SDK. Tests can build their own AppContext.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from deployer.cli.render import Renderer


@dataclasses.dataclass
class AppContext:
    """Global settings of one CLI invocation."""

    project_dir: Path
    manifest_file: Path
    debug: bool = False
    renderer: Renderer = dataclasses.field(default_factory=Renderer)

    def use_output(self, output: str) -> Renderer:
        """Switch the renderer to the command's ``--output`` format and return it."""
        if output != self.renderer.output:
            self.renderer = Renderer(output)
        return self.renderer

    def render(self, result: object, output: str | None = None) -> None:
        """Print ``result``; exit with ``result.exit_code`` when it is non-zero."""
        renderer = self.use_output(output) if output else self.renderer
        renderer.result(result)
        code = int(getattr(result, "exit_code", 0) or 0)
        if code:
            raise SystemExit(code)

    def resolve(self, path: str | Path) -> Path:
        """A user-given path, relative to the project directory."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.project_dir / p


pass_app = click.make_pass_decorator(AppContext)
