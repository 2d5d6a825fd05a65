"""What the console reads: the emulator's services, read in-process (never over the wire)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.records import HistoryRow
from deployer.emulator.services.executions import ExecutionService
from deployer.emulator.services.flows import FlowService
from deployer.emulator.services.functions import FunctionService
from deployer.fdl import AnyFlow

__all__ = ["HISTORY_PAGE", "Sources"]

HISTORY_PAGE = 1000  # GetExecutionHistory's largest page


def _never(generation: int, wake: Callable[[], None]) -> Callable[[], None]:
    return lambda: None


@dataclass(frozen=True)
class Sources:
    """The services of one emulator, its identity and where it listens."""

    flows: FlowService
    executions: ExecutionService
    functions: FunctionService
    clock: Clock
    account_id: str
    default_region: str
    endpoint: Callable[[], str]
    stats: Callable[[], dict[str, Any]]
    parse: Callable[[str], AnyFlow]
    facts_generation: Callable[[], int] = lambda: 0
    """Moves on whenever ``stats()`` or the clock may read differently."""
    watch_facts: Callable[[int, Callable[[], None]], Callable[[], None]] = _never
    """``watch_facts(generation, wake)``: call ``wake()`` once ``facts_generation()`` is
    above ``generation``; returns the unsubscribe function."""

    def history(self, region: str, flow: str, name: str) -> list[HistoryRow]:
        """Every history event of the execution, in event id order."""
        events: list[HistoryRow] = []
        token = ""
        while True:
            page, token = self.executions.history(self.account_id, region, flow, name,
                                                  limit=HISTORY_PAGE, next_token=token)
            events += page
            if not token:
                return events
