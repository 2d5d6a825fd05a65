"""``deploy render`` and ``deploy validate``."""

from __future__ import annotations

import click

from deployer.errors import OperationError


@click.command("render")
def render() -> None:
    """Print the flow definition rendered from its Jinja2 template."""
    raise OperationError("render is not available yet")


@click.command("validate")
def validate() -> None:
    """Check s.yaml and the rendered flow definition."""
    raise OperationError("validate is not available yet")
