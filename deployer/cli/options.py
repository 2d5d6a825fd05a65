"""Shared option decorators, so every command spells them the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from deployer.cli.render import OUTPUT_FORMATS

F = TypeVar("F", bound=Callable[..., Any])


def output_option(fn: F) -> F:
    """``--output text|json`` (env ``DEPLOY_OUTPUT``): human text or one JSON document on stdout."""
    return click.option(
        "--output",
        "output",
        type=click.Choice(OUTPUT_FORMATS),
        default="text",
        envvar="DEPLOY_OUTPUT",
        show_default=True,
        show_envvar=True,
        help="Human text, or exactly one JSON document on stdout (progress stays on stderr).",
    )(fn)


def region_option(fn: F) -> F:
    """``--region`` (env ``ALIBABA_CLOUD_REGION``), defaulting to the manifest's region."""
    return click.option(
        "--region",
        envvar="ALIBABA_CLOUD_REGION",
        show_envvar=True,
        help="Region id, e.g. cn-hangzhou (default: the region in s.yaml).",
    )(fn)


def account_id_option(fn: F) -> F:
    """``--account-id``: the Alibaba Cloud account id used in ARNs."""
    return click.option(
        "--account-id",
        envvar="ALIBABA_CLOUD_ACCOUNT_ID",
        show_envvar=True,
        help="16-digit Alibaba Cloud account id used in ARNs.",
    )(fn)
