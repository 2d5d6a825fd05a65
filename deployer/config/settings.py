"""Where a command deploys to: target, region, profile. Flags > environment > s.yaml.

Only two things differ between targets — endpoints and credentials — and both are resolved in
the CLI's AppContext from these settings; nothing in ``deployer.core`` looks at the target.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from deployer.config.schema import CLOUDFLOW_REGIONS
from deployer.errors import InvalidInputError

__all__ = ["CLOUDFLOW_REGIONS", "Target", "TargetSettings", "check_region"]



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


def check_region(region: str) -> str:
    """``region`` if CloudFlow is offered there; otherwise an InvalidInputError listing where."""
    if region not in CLOUDFLOW_REGIONS:
        raise InvalidInputError(
            f"region {region!r} does not offer CloudFlow",
            hint="use one of: " + ", ".join(CLOUDFLOW_REGIONS),
        )
    return region
