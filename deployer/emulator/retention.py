"""How long the emulator keeps what is over: ended executions and invocation logs.

* **Executions** (an ended execution, its history, its callback tokens): CloudFlow documents no
  retention period for ended executions (its limits page, the execution and API pages list
  none; CONFIRMED absent as of this writing), so the emulator keeps them **30 days** after they
  ended (INFERRED: the same window as Log Service's default below, where FC and CloudFlow
  users look for what happened). Running executions are never deleted.
* **Logs** (the invocation records Function Compute writes to Log Service, which ``deploy logs``
  and GetLogs read): Log Service deletes data older than its logstore's ``ttl``, 30 days by
  default (CONFIRMED: the logstore's ``ttl`` is 1-3650 days, "Logs are deleted after their
  retention period expires", CreateLogStore; ROS ``Aliyun::Serverless::Log::Logstore`` TTL
  default 30).

Both count on the emulator's clock (the virtual one in ``mock_cloud()``), and both are
settings: ``python -m deployer.emulator --execution-retention 7d --log-retention 12h``,
``mock_cloud(retention=Retention(...))``. docs/emulator.md, "Retention".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["DAY", "DEFAULT", "Retention", "parse_duration"]

DAY = 86_400.0
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY}
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([smhd]?)\s*$")
MAX_SECONDS = 3650 * DAY  # Log Service's longest ttl (ten years)


@dataclass(frozen=True, slots=True)
class Retention:
    """Seconds (of the emulator's clock) an ended execution and an invocation log are kept."""

    executions: float = 30 * DAY
    logs: float = 30 * DAY

    def __post_init__(self) -> None:
        for name in ("executions", "logs"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value)
                    and 0 < value <= MAX_SECONDS):
                raise ValueError(f"{name} retention must be more than 0 seconds and at most "
                                 f"3650 days; got {value!r}")

    @property
    def sweep_every(self) -> float:
        """Real seconds between sweeps: a tenth of the shorter period, from 1 s to 60 s."""
        return min(60.0, max(1.0, min(self.executions, self.logs) / 10))


DEFAULT = Retention()


def parse_duration(text: str, what: str) -> float:
    """Seconds of a duration written ``<number>[s|m|h|d]`` (days without a unit), e.g.
    ``30d``, ``12h``, ``90s``, ``0.5``. ValueError naming ``what`` otherwise."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"{what} {text!r} is not a duration: write a number of days, or a "
                         "number with s, m, h or d (e.g. 30d, 12h, 90s)")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "d"]
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"{what} {text!r} must be more than 0 and at most 3650 days")
    return seconds
