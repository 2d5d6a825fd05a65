"""The engine fires two kinds of scheduled instants: CloudFlow schedules and Function Compute
timer triggers. :class:`ScheduleSources` is the one ``ScheduleSource`` the engine is given;
it routes each key to its owner by the key's third part (a timer trigger's is
``"fc:" + function``, which no flow name can be: ``:`` is not allowed in one).
"""

from __future__ import annotations

from typing import Protocol

from deployer.emulator.services.triggers import FC_KEY_PREFIX

__all__ = ["ScheduleSources"]

Key = tuple[str, str, str, str]


class _Source(Protocol):
    def pending(self, *, after_downtime: bool) -> list[tuple[Key, float]]: ...

    def fire(self, key: Key, fire_at: float) -> float | None: ...


class ScheduleSources:
    """Flow schedules and timer triggers behind one ``ScheduleSource``."""

    def __init__(self, schedules: _Source, timers: _Source) -> None:
        self._schedules = schedules
        self._timers = timers

    def pending(self, *, after_downtime: bool) -> list[tuple[Key, float]]:
        return [*self._schedules.pending(after_downtime=after_downtime),
                *self._timers.pending(after_downtime=after_downtime)]

    def fire(self, key: Key, fire_at: float) -> float | None:
        owner = self._timers if key[2].startswith(FC_KEY_PREFIX) else self._schedules
        return owner.fire(key, fire_at)
