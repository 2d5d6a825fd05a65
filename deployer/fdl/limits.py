"""CloudFlow's documented limits (cloudflow-fdl.md §9.5), shared by the validator (literal
values, at definition time) and the interpreter (dynamic values, at run time)."""

from __future__ import annotations

__all__ = ["DATA_LIMIT_BYTES", "MAX_TIMEOUT_SECONDS", "WAIT_LIMITS"]

#: Wait ``Seconds`` per execution mode: (lowest, highest).
WAIT_LIMITS: dict[str, tuple[int, int]] = {"Standard": (1, 300), "Express": (1, 20)}

#: Task ``Timeout``: 0 (no timeout) to 7 days.
MAX_TIMEOUT_SECONDS = 604_800

#: State input and output, execution input (compact JSON, UTF-8): 64 KiB.
DATA_LIMIT_BYTES = 64 * 1024
