"""The latency model: how much platform time the emulator adds to what the cloud would take.

Two costs, both in seconds (docs/runtime.md "Latency model" for the values and their sources):

* ``cold_start`` — Function Compute's initialisation of a **new instance**, spent between
  importing the handler's module and calling it for the first time. Module-level code (the
  seed's ``start_time = int(time.time())``) therefore runs that long before the first request
  is answered. Warm instances do not pay it.
* ``step_latency`` — CloudFlow's per-transition overhead: every task result and every due
  timer reaches the interpreter that much later (``engine/stepping.py``).

The real clock models the cloud by default (:data:`CLOUD`); the virtual clock is exact by
default (:data:`EXACT`), so virtual-time tests stay deterministic. Explicit values win on
either clock, and 0 turns a cost off.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLOUD", "CLOUD_COLD_START", "CLOUD_STEP_LATENCY", "EXACT", "LatencyModel",
           "latency_model"]

CLOUD_COLD_START = 1.0
"""Seconds a new FC Python instance spends after loading its code, before the first call."""

CLOUD_STEP_LATENCY = 0.1
"""Seconds of CloudFlow overhead per delivered step (a task result, a due timer)."""


@dataclass(frozen=True, slots=True)
class LatencyModel:
    """The platform time the emulator adds (see the module docstring)."""

    cold_start: float = 0.0
    step_latency: float = 0.0

    def __post_init__(self) -> None:
        for name in ("cold_start", "step_latency"):
            value = getattr(self, name)
            if not value >= 0:  # also refuses NaN
                raise ValueError(f"{name} must be a number of seconds >= 0, not {value!r}")

    @property
    def kind(self) -> str:
        """``exact`` (nothing added), ``cloud`` (the documented defaults) or ``custom``."""
        if self == EXACT:
            return "exact"
        return "cloud" if self == CLOUD else "custom"

    def describe(self) -> str:
        """One line for people: what is added, and whose values they are."""
        if self.kind == "exact":
            return "exact (no cold start, no per-step overhead)"
        label = "cloud-like defaults" if self.kind == "cloud" else "custom"
        return (f"{label}: cold start {self.cold_start:g} s per new function instance, "
                f"{self.step_latency:g} s per CloudFlow step")

    def to_wire(self) -> dict[str, object]:
        """The health document's ``latency`` object."""
        return {"model": self.kind, "coldStart": self.cold_start,
                "stepLatency": self.step_latency}


EXACT = LatencyModel(0.0, 0.0)
CLOUD = LatencyModel(CLOUD_COLD_START, CLOUD_STEP_LATENCY)


def latency_model(*, virtual: bool, cold_start: float | None = None,
                  step_latency: float | None = None) -> LatencyModel:
    """The model in force: the clock's default (:data:`CLOUD` on the real clock, :data:`EXACT`
    on the virtual one) with each explicitly given value (not None) put in its place.

    Raises ValueError for a negative or NaN value."""
    base = EXACT if virtual else CLOUD
    return LatencyModel(base.cold_start if cold_start is None else float(cold_start),
                        base.step_latency if step_latency is None else float(step_latency))
