"""Legacy values, paths and conditions written as SpecVersion v1 expressions.

In a migrated flow every state's ``$Input`` is the *frame* of its steps list (see
:mod:`deployer.fdl.migration`): ``$Input.input`` is the parent step's input, ``$Input.local`` the
list's local. So ``$input.a.b`` becomes ``get($Input.input.a, "b")`` (``get`` gives null for a
missing key or a null container, as a legacy path does), ``$local.a`` ``$Input.local.a``, and a
step's own input (``$.key`` in conditions, ``serviceParams``, ``duration``, ``collection``) the
expression of that input. Wildcards (``[*]``) have no v1 counterpart but over a list of known
length (a parallel's branches): :class:`Roots` says what each root is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deployer.fdl.legacy.ast import DataMapping
from deployer.fdl.legacy.conditions import parse_condition, render_condition
from deployer.fdl.legacy.errors import PathSyntaxError
from deployer.fdl.legacy.paths import MAPPING_ROOTS, Path, parse_path

__all__ = [
    "CONTEXT",
    "Base",
    "NoCounterpart",
    "Roots",
    "condition_expr",
    "literal",
    "map_literal",
    "mappings_expr",
    "path_expr",
]

_IDENTIFIER = re.compile(r"[^\W\d]\w*")
#: ``$context`` fields and their v1 expression (``flow.name`` is the migrated flow's name).
CONTEXT = {
    ("task", "token"): "$Context.Current.TaskToken",
    ("execution", "name"): "$Context.Execution.Name",
    ("step", "name"): "$Context.Current.Name",
}


class NoCounterpart(Exception):
    """A legacy path or value with no v1 expression; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def literal(value: Any) -> str:
    """A JSON value as a v1 expression literal."""
    if isinstance(value, Mapping):
        return map_literal({str(k): literal(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def map_literal(entries: Mapping[str, str]) -> str:
    """``{"key": <expression>, ...}`` of already written expressions."""
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {v}"
                           for k, v in entries.items()) + "}"


def member(base: str, key: str | int, *, certain: bool) -> str:
    """``base.key`` when ``base`` is surely an object, else ``get(base, key)``."""
    if certain and isinstance(key, str):
        return f"{base}.{key}" if _IDENTIFIER.fullmatch(key) else f"{base}[{literal(key)}]"
    return f"get({base}, {literal(key)})"


@dataclass(frozen=True, slots=True)
class Base:
    """One legacy root in v1: its expression, whether it is surely an object, the
    expressions of its keys when it is an object built here (a step's mapped input), and the
    expressions of its elements when it is a list of known length (a parallel's locals)."""

    expr: str
    certain: bool = False
    fields: Mapping[str, str] | None = None
    elements: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Roots:
    """What ``$input``, ``$local`` and the step's own input (``$``) are, and the flow name."""

    bases: Mapping[str, Base] = field(default_factory=dict)
    flow_name: str = ""


def path_expr(path: Path, roots: Roots) -> str:
    """``path`` as a v1 expression; :class:`NoCounterpart` when it has none."""
    keys = path.keys()
    if path.root == "context":
        found = CONTEXT.get((str(keys[0]), str(keys[1]))) if len(keys) == 2 else None
        if keys == ("flow", "name"):
            found = literal(roots.flow_name)
        if found is None:
            raise NoCounterpart(f"`{path.text}` has no v1 counterpart in $Context")
        return found
    base = roots.bases.get(path.root)
    if base is None:
        raise NoCounterpart(f"`{path.text}` reads ${path.root}, which this place does not have")
    if not keys:
        if base.fields is not None:
            return map_literal(base.fields)
        if base.elements is not None:
            return "[" + ", ".join(base.elements) + "]"
        return base.expr
    first, rest = keys[0], keys[1:]
    if base.elements is not None:
        if first is None:
            return "[" + ", ".join(_chain(e, rest, path) for e in base.elements) + "]"
        if isinstance(first, int) and -len(base.elements) <= first < len(base.elements):
            return _chain(base.elements[first], rest, path)
        return "null" if isinstance(first, int) else _chain("null", rest, path)
    if base.fields is not None and isinstance(first, str):
        return _chain(base.fields.get(first, "null"), rest, path)
    if first is None:
        raise NoCounterpart(f"`{path.text}` reads every element ([*]) of a list of unknown "
                          "length; v1 expressions cannot collect them")
    return _chain(member(base.expr, first, certain=base.certain), rest, path)


def _chain(text: str, keys: tuple[str | int | None, ...], path: Path) -> str:
    for key in keys:
        if key is None:
            raise NoCounterpart(f"`{path.text}` reads every element ([*]) of a nested list; v1 "
                              "expressions cannot collect them")
        text = member(text, key, certain=False)
    return text


def mappings_expr(mappings: tuple[DataMapping, ...], roots: Roots,
                  unsupported: Callable[[DataMapping, str], None]) -> dict[str, str]:
    """Each target's v1 expression (a path's, or its constant's literal); a path with no v1
    expression is reported through ``unsupported`` and becomes ``null``."""
    found: dict[str, str] = {}
    for mapping in mappings:
        source = mapping.source
        if source is None:
            continue
        if source.path is None:
            found[mapping.target] = literal(_plain(source.constant))
            continue
        try:
            found[mapping.target] = path_expr(parse_path(source.path.text, roots=MAPPING_ROOTS),
                                              roots)
        except NoCounterpart as exc:
            unsupported(mapping, exc.reason)
            found[mapping.target] = "null"
        except PathSyntaxError as exc:
            unsupported(mapping, str(exc))
            found[mapping.target] = "null"
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def condition_expr(text: str, roots: Roots) -> str:
    """A legacy condition as a v1 one: a path read as a boolean compares with ``true`` (a
    missing key is false, as in the legacy dialect)."""
    condition = parse_condition(text)
    return render_condition(condition, lambda path: path_expr(path, roots), literal,
                            lambda operand: f"({operand} == true)")
