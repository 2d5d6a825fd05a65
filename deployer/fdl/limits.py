"""CloudFlow's documented limits (cloudflow-fdl.md §9.5), shared by the validator (literal
values, at definition time) and the interpreter (dynamic values, at run time), and the bounds
the expression language keeps (docs/fdl-semantics.md, "Bounds"): every evaluation is counted in
steps, never timed, so the same flow and input always fail (or not) at the same place."""

from __future__ import annotations

__all__ = [
    "DATA_LIMIT_BYTES",
    "DEFINITION_BYTES",
    "EVALUATION_STEPS",
    "GLOBAL_KEY_BYTES",
    "GLOBAL_VALUE_BYTES",
    "LEGACY_BRANCHES",
    "LEGACY_FOREACH_CONCURRENCY",
    "LEGACY_WAIT_SECONDS",
    "MAX_DURATION_SECONDS",
    "MAX_STRING_CHARS",
    "MAX_TIMEOUT_SECONDS",
    "STEP_EVALUATION_STEPS",
    "WAIT_LIMITS",
]

#: Wait ``Seconds`` per execution mode: (lowest, highest).
WAIT_LIMITS: dict[str, tuple[int, int]] = {"Standard": (1, 300), "Express": (1, 20)}

#: Task ``Timeout``: 0 (no timeout) to 7 days.
MAX_TIMEOUT_SECONDS = 604_800

#: The longest execution per mode (reference §9.1): 1 year Standard, 5 minutes Express; the
#: flow-level ``Timeout`` may only shorten it.
MAX_DURATION_SECONDS: dict[str, int] = {"Standard": 365 * 86_400, "Express": 300}

#: A flow definition (UTF-8): 128 KiB, what CreateFlow and UpdateFlow accept.
DEFINITION_BYTES = 128 * 1024

#: State input and output, execution input, Task parameters (compact JSON, UTF-8): 64 KiB.
DATA_LIMIT_BYTES = 64 * 1024

#: ``$Global``: a key is at most 128 bytes, a value at most 256 KiB (compact JSON, UTF-8).
GLOBAL_KEY_BYTES = 128
GLOBAL_VALUE_BYTES = 256 * 1024

#: The steps one evaluation (an expression field, or one whole constructor or Parameters
#: template) may take, and all the evaluations of one interpreter step together.
EVALUATION_STEPS = 1_000_000
STEP_EVALUATION_STEPS = 8_000_000

#: The longest string an expression may build (``+``, ``format``, ``toBase64``,
#: ``jsonToString``...): 1 Mi characters, the size of a CloudFlow API request.
MAX_STRING_CHARS = 1024 * 1024

#: The legacy dialect (docs/fdl-semantics.md, "The legacy dialect"): a wait lasts at most two
#: days, a parallel step has at most 100 branches, a foreach runs at most 100 iterations at once.
LEGACY_WAIT_SECONDS = 2 * 86_400
LEGACY_BRANCHES = 100
LEGACY_FOREACH_CONCURRENCY = 100
