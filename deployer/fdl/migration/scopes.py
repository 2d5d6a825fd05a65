"""What the migration's pieces share: how one steps list migrates (:class:`StepsList`), the shape
of a v1 state being built, and small helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deployer.fdl.legacy.ast import Step, StepList, walk_steps
from deployer.fdl.migration.expressions import Base, map_literal, member

__all__ = ["Finish", "StateDoc", "StepsList", "all_steps", "expr_of", "keys_chain",
           "local_result"]

#: A v1 state as plain data, written out as YAML in the end.
StateDoc = dict[str, Any]
#: (frame expression, the scope's new local) -> the scope's result.
Finish = Callable[[str, str], str]


@dataclass(slots=True)
class StepsList:
    """How one steps list migrates: its v1 names and entry states, how it ends (``finish``
    for a scope of its own, ``after`` for inline steps joined to their parent's scope) and
    whether its frames carry their parent's (``outer``)."""

    steps: StepList
    prefix: str
    finish: Finish | None
    after: str | None = None
    outer: bool = False
    names: dict[str, str] = field(default_factory=dict)
    entry: dict[str, str] = field(default_factory=dict)



def local_result(frame: str, local: str) -> str:
    """A branch's or an iteration's result: its local."""
    return local


def expr_of(base: Base) -> str:
    """The expression of a step's input (its mapped fields as one object literal)."""
    return map_literal(base.fields) if base.fields is not None else base.expr


def all_steps(steps: StepList | None) -> list[Step]:
    """Every step of ``steps`` and the lists nested in it."""
    return [] if steps is None else [step for _, step in walk_steps(steps)]


def keys_chain(base: str, keys: tuple[str | int, ...]) -> str:
    """``get(get(base, k1), k2)...``: a definite path below an expression."""
    text = base
    for key in keys:
        text = member(text, key, certain=False)
    return text
