"""Instants written as text the way Function Compute 3.0, RAM and STS print them: ISO-8601 UTC to
the second (``2026-12-01T07:22:58Z``). CloudFlow prints milliseconds
(:func:`deployer.fdl.interpreter.history.format_time`)."""

from __future__ import annotations

import time

__all__ = ["iso_seconds"]


def iso_seconds(epoch: float) -> str:
    """Epoch seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
