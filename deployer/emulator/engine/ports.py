"""What the engine needs from the outside, as ports (``Protocol``): it imports no service.

``emulator/app.py`` plugs the services in: ``services.fc_tasks.FunctionInvoker`` is the
:class:`TaskRunner` that carries out ``FC:InvokeFunction`` tasks on the emulator's Function
Compute; ``services.schedules.ScheduleService`` is the :class:`ScheduleSource` whose
schedules the scheduler fires.
"""

from __future__ import annotations

from typing import Protocol

from deployer.fdl.interpreter import InvokeTask

__all__ = ["Outcome", "ScheduleKey", "ScheduleSource", "TaskRunner"]

Outcome = tuple[str, str, str]
"""``(output_text, "", "")`` on success, ``("", error_code, detail)`` on failure."""


class TaskRunner(Protocol):
    """Carries out an interpreter :class:`InvokeTask` (blocking; called from engine workers)."""

    def handles(self, cmd: InvokeTask) -> bool:
        """True when this runner carries out the task's action itself."""
        ...

    def run(self, cmd: InvokeTask, account_id: str, region: str,
            role_arn: str = "") -> Outcome | None:
        """Carry out ``cmd`` with the execution's role (``role_arn``, "" for none); None when
        the task now waits for a callback (ReportTask*)."""
        ...


ScheduleKey = tuple[str, str, str, str]
"""(account_id, region, flow_name, schedule name)."""


class ScheduleSource(Protocol):
    """The time-based schedules the engine fires (``services.schedules.ScheduleService``)."""

    def pending(self, *, after_downtime: bool) -> list[tuple[ScheduleKey, float]]:
        """Every enabled schedule and its next fire instant. ``after_downtime`` (the emulator
        starts again): fires missed while it was down are handled as documented first."""
        ...

    def fire(self, key: ScheduleKey, fire_at: float) -> float | None:
        """Start the execution due at ``fire_at``; return the schedule's next fire instant
        (None when it no longer fires: disabled, deleted, changed meanwhile)."""
        ...
