"""A provisioned instance made ready ahead of any request (``ProcessRuntime.keep_warm``): its
initializer runs (a ``HookRun`` of kind ``Initializer`` for the function's logs) and, for a
custom runtime, its health check passes, so its first request is warm."""

from __future__ import annotations

from deployer.emulator.clock import Clock
from deployer.emulator.runtime.custom_runs import initialize_custom
from deployer.emulator.runtime.frame_runs import initialize_frames
from deployer.emulator.runtime.model import HookRun, InstanceSpec
from deployer.emulator.runtime.pool import Instance
from deployer.emulator.runtime.worker import RunOutcome

__all__ = ["initialize_ahead"]


def initialize_ahead(slot: Instance, spec: InstanceSpec, request_id: str,
                     clock: Clock) -> tuple[str, HookRun | None]:
    """Initialize a started instance: ("" or why it failed, the initializer's run)."""
    if spec.custom is not None:
        answer, text = initialize_custom(slot, spec, request_id)
    elif spec.initializer_handler:
        answer, text = initialize_frames(slot, spec, request_id, clock)
    else:
        return "", None
    ok = answer.outcome is RunOutcome.OK
    run = HookRun(spec.account_id, spec.region, spec.function_name, spec.qualifier,
                  "Initializer", request_id, slot.instance_id, clock.now(), ok,
                  None if ok else "InitializationError", round(answer.duration_ms, 3),
                  text.decode("utf-8", "replace")) if spec.initializer_handler else None
    why = "" if ok else (answer.body.decode("utf-8", "replace")
                         or f"the instance failed to initialize ({answer.outcome.value})")
    return why, run
