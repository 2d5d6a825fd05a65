"""Where a command deploys to: target, region, profile. Flags > environment > s.yaml.

Only two things differ between targets — endpoints and credentials — and both are resolved in
the CLI's AppContext from these settings; nothing in ``deployer.core`` looks at the target.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from deployer.config.schema import CLOUDFLOW_REGIONS
from deployer.digits import is_decimal
from deployer.errors import DeployerError, ExitCode, InvalidInputError

__all__ = [
    "CLOUDFLOW_REGIONS",
    "EMULATOR_PORT_ENV",
    "SettingError",
    "Target",
    "TargetSettings",
    "emulator_port",
    "require_cloudflow_region",
]

EMULATOR_PORT_ENV = "DEPLOY_EMULATOR_PORT"
DEFAULT_EMULATOR_PORT = 9125


class SettingError(DeployerError):
    """An environment variable holds a value the deployer cannot use (a bad command line, as
    Click reports a bad value of an option's environment variable: exit 2)."""

    exit_code = ExitCode.USAGE


def emulator_port(environ: Mapping[str, str] | None = None) -> int:
    """The local emulator's port: ``DEPLOY_EMULATOR_PORT`` (1-65535), default 9125.
    SettingError (exit 2) naming the variable for anything else."""
    text = (os.environ if environ is None else environ).get(EMULATOR_PORT_ENV, "").strip()
    if not text:
        return DEFAULT_EMULATOR_PORT
    if not is_decimal(text) or not 1 <= int(text) <= 65535:
        raise SettingError(f"{EMULATOR_PORT_ENV}={text!r} is not a TCP port",
                           hint=f"set it to a number from 1 to 65535 (default "
                           f"{DEFAULT_EMULATOR_PORT}), or unset it")
    return int(text)



class Target(str, enum.Enum):
    LOCAL = "local"  # the embedded emulator (started in the background when needed)
    ALIYUN = "aliyun"  # Alibaba Cloud's regional endpoints


@dataclass(frozen=True, slots=True)
class TargetSettings:
    target: Target
    region: str
    profile: str | None = None
    state_dir: Path | None = None  # the emulator's state directory (local target)

    def describe(self, account_id: str | None = None) -> str:
        """The first line every cloud command prints: target, region, account."""
        where = "local emulator" if self.target is Target.LOCAL else "Alibaba Cloud"
        account = f", account {account_id}" if account_id else ""
        return f"Target: {self.target.value} ({where}), region {self.region}{account}"


def require_cloudflow_region(region: str) -> str:
    """``region`` if CloudFlow is offered there; otherwise an InvalidInputError listing where."""
    if region not in CLOUDFLOW_REGIONS:
        raise InvalidInputError(
            f"region {region!r} does not offer CloudFlow",
            hint="use one of: " + ", ".join(CLOUDFLOW_REGIONS),
        )
    return region
