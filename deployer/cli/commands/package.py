"""``deploy package``."""

from __future__ import annotations

import click

from deployer.errors import OperationError


@click.command("package")
def package() -> None:
    """Write one deterministic zip per function."""
    raise OperationError("package is not available yet")
