"""Instants written as text the way Function Compute 3.0, RAM and STS print them: ISO-8601 UTC to
the second (``2026-12-01T07:22:58Z``). CloudFlow prints milliseconds
(:func:`deployer.fdl.interpreter.history.format_time`)."""

from __future__ import annotations

import time

__all__ = ["iso_seconds"]


def iso_seconds(epoch: float) -> str:
    """Epoch seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC); an instant outside years 1970-9999
    (only a state saved past the virtual clock's horizon holds one) prints as the nearest end
    of that range instead of failing."""
    epoch = min(max(epoch, 0.0), 253402300799.0) if epoch == epoch else 0.0
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
