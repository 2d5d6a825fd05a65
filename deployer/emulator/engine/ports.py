"""What the engine needs from the outside, as ports (``Protocol``): it imports no service.

``emulator/app.py`` plugs the services in: ``services.fc_tasks.FunctionInvoker`` is the
:class:`TaskRunner` that carries out ``FC:InvokeFunction`` tasks on the emulator's Function
Compute.
"""

from __future__ import annotations

from typing import Protocol

from deployer.fdl.interpreter import InvokeTask

__all__ = ["Outcome", "TaskRunner"]

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
