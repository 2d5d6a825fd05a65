"""``deploy completion``: Click's shell completion script for bash, zsh, fish or PowerShell."""

from __future__ import annotations

import os
from pathlib import Path

import click

SHELLS = ("bash", "zsh", "fish", "powershell")
COMPLETE_VAR = "_DEPLOY_COMPLETE"  # Click's variable for the `deploy` program

COMPLETION_EPILOG = """\b
Examples:
  eval "$(deploy completion bash)"                 bash, now (add the line to ~/.bashrc)
  eval "$(deploy completion zsh)"                  zsh (in ~/.zshrc, after compinit)
  deploy completion fish > ~/.config/fish/completions/deploy.fish
  deploy completion                                the shell named by $SHELL
\b
Completes commands, options, choices (--target, --output, ...) and paths. The script calls
`deploy` with _DEPLOY_COMPLETE set (Click's mechanism), so it follows upgrades by itself.
"""


def _shell_from_env() -> str:
    name = Path(os.environ.get("SHELL", "")).name
    if name not in SHELLS:
        raise click.UsageError(
            f"cannot tell the shell from SHELL={os.environ.get('SHELL', '')!r}; name it: "
            "deploy completion bash|zsh|fish|powershell")
    return name


@click.command("completion", epilog=COMPLETION_EPILOG)
@click.argument("shell", type=click.Choice(SHELLS), required=False)
@click.pass_context
def completion(ctx: click.Context, shell: str | None) -> None:
    """Print the shell completion script for bash, zsh, fish or PowerShell."""
    from click.shell_completion import get_completion_class

    root = ctx.find_root().command
    complete_class = get_completion_class(shell or _shell_from_env())
    assert complete_class is not None  # every name in SHELLS is one of Click's shells
    click.echo(complete_class(root, {}, "deploy", COMPLETE_VAR).source())
