"""Shared option decorators, so every command spells them the same way."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from deployer.cli.render import OUTPUT_FORMATS
from deployer.config.settings import Target

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


def yes_option(help_text: str) -> Callable[[F], F]:
    """``-y``/``--yes``: the same spelling on every command that asks for confirmation."""
    return click.option("-y", "--yes", is_flag=True, help=help_text)


def force_option(help_text: str) -> Callable[[F], F]:
    """``--force``: do what a safety check refuses by default."""
    return click.option("--force", is_flag=True, help=help_text)


def strict_option(fn: F) -> F:
    """``--strict`` (env ``DEPLOY_STRICT``): a resource of s.yaml that is not deployed (another
    component, a prop not deployed yet) is an error, for CI."""
    return click.option(
        "--strict", is_flag=True, envvar="DEPLOY_STRICT", show_envvar=True,
        help="Fail (exit 3) when s.yaml holds resources this toolkit does not deploy.")(fn)


@dataclass(frozen=True, slots=True)
class TargetOptions:
    """Where a cloud command goes, as given on the command line (region may be unset)."""

    target: Target
    region: str | None
    profile: str | None
    account_id: str | None


def target_options(fn: F) -> F:
    """``--target``, ``--region``, ``--profile``, ``--account-id`` packed into one
    :class:`TargetOptions` passed as the ``target`` argument."""

    @functools.wraps(fn)
    def wrapper(*args: Any, target: str, region: str | None, profile: str | None,
                account_id: str | None, **kwargs: Any) -> Any:
        options = TargetOptions(Target(target), region, profile, account_id)
        return fn(*args, target=options, **kwargs)

    decorated: Any = wrapper
    decorated = account_id_option(decorated)
    decorated = click.option(
        "--profile", envvar="ALIBABA_CLOUD_PROFILE", show_envvar=True,
        help="Alibaba Cloud CLI profile (~/.aliyun/config.json) to take credentials from "
        "(aliyun target).")(decorated)
    decorated = region_option(decorated)
    decorated = click.option(
        "--target", type=click.Choice([t.value for t in Target]), default=Target.LOCAL.value,
        envvar="DEPLOY_TARGET", show_envvar=True, show_default=True,
        help="local: the emulator (started in the background when needed); aliyun: Alibaba "
        "Cloud.")(decorated)
    return decorated  # type: ignore[no-any-return]
