"""The ``Next:`` line ``deploy up`` ends with: how to run this project's flows.

For each flow (``--flow`` when there are several): its ``executionInput`` when s.yaml gives
one (``--delay N`` when it is exactly ``{"delay": N}``, the shortcut ``deploy execute``
keeps), otherwise the input keys its definition reads (``$Context.Execution.Input.<key>``,
and ``$Input.<key>`` in its first state), to fill in; plain ``deploy execute`` when it reads
none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["next_commands"]

_CONTEXT_INPUT = re.compile(r"\$Context\.Execution\.Input\.([A-Za-z_][A-Za-z0-9_]*)")
_INPUT = re.compile(r"\$Input\.([A-Za-z_][A-Za-z0-9_]*)")
_STATE = re.compile(r"^\s*- Type:", re.MULTILINE)
MAX_FLOWS = 3


def _input_keys(definition: str) -> list[str]:
    keys = _CONTEXT_INPUT.findall(definition)
    states = _STATE.split(definition)
    if len(states) > 1:  # the first state's own input
        keys += _INPUT.findall(states[1])
    return list(dict.fromkeys(keys))


def _command(flow: str | None, example: Any, definition: str) -> str:
    base = "deploy execute" + (f" --flow {flow}" if flow else "")
    if isinstance(example, Mapping):
        if set(example) == {"delay"} and isinstance(example["delay"], int) \
                and not isinstance(example["delay"], bool):
            return f"{base} --delay {example['delay']}"
        return f"{base} --input '{json.dumps(dict(example), ensure_ascii=False)}'"
    keys = _input_keys(definition)
    if not keys:
        return base
    shown = ", ".join(f'"{k}": ...' for k in keys)
    return f"{base} --input '{{{shown}}}'   (fill in the values)"


def next_commands(flows: Sequence[tuple[str, Any, str]]) -> tuple[str, ...]:
    """The commands to suggest for ``(flow name, executionInput, rendered definition)``."""
    several = len(flows) > 1
    return tuple(_command(name if several else None, example, definition)
                 for name, example, definition in flows[:MAX_FLOWS])
