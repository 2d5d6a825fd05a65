"""Comparing an answer with a recorded one, modulo the rules for volatile fields.

Paths are dotted (``body.functions.0.functionName``, ``headers.x-fc-request-id``); a rule's
path may use ``*`` for one key or index and ``**`` for any number of them. The first rule
that matches a path decides how it is compared (the step's rules, then the file's, then the
product's in rules.yaml); a path no rule matches is compared ``equal``: the same JSON value
after the recording's variables are expanded, dictionaries with the same keys (``keys:
subset``: at least the recorded keys) and lists of the same length, item by item. Headers
are always compared as a subset: a header the recording does not name is not compared
unless a rule names it (``absent``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.parity.recording import Rule


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Mismatch:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Comparison:
    """What one comparison needs besides the two values."""

    rules: Sequence[Rule]
    exact_keys: bool
    regex: Any  # pattern name -> regular expression (SharedRules.regex)

    def rule_for(self, path: Sequence[str]) -> Rule | None:
        for rule in self.rules:
            if path_matches(rule.path.split("."), list(path)):
                return rule
        return None


def path_matches(pattern: list[str], path: list[str]) -> bool:
    """Whether dotted ``path`` (as parts) matches ``pattern`` (``*`` one part, ``**`` any)."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(path_matches(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatch.fnmatchcase(path[0], head) and path_matches(rest, path[1:])


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def compare_answer(recorded: Mapping[str, Any], actual: Mapping[str, Any],
                   how: Comparison) -> list[Mismatch]:
    """Every difference between a recorded response and an actual one (both dicts with
    ``status``, ``headers`` and ``body`` or ``body_text``)."""
    out = list(_compare(["status"], recorded["status"], actual["status"], how))
    out += _compare_mapping(["headers"], recorded.get("headers") or {},
                            actual.get("headers") or {}, how, exact=False)
    for part in ("body", "body_text"):
        out += _compare([part], recorded.get(part, MISSING), actual.get(part, MISSING), how)
    return out


def _compare(path: list[str], recorded: Any, actual: Any, how: Comparison) -> Iterator[Mismatch]:
    rule = how.rule_for(path)
    if rule is not None and rule.compare != "equal":
        yield from _apply(rule, path, recorded, actual, how)
        return
    yield from _equal(path, recorded, actual, how)


def _equal(path: list[str], recorded: Any, actual: Any, how: Comparison) -> Iterator[Mismatch]:
    where = ".".join(path)
    if recorded is MISSING and actual is MISSING:
        return
    if actual is MISSING:
        yield Mismatch(where, f"missing (recorded {_show(recorded)})")
    elif recorded is MISSING:
        yield Mismatch(where, f"not in the recording (got {_show(actual)})")
    elif isinstance(recorded, Mapping) and isinstance(actual, Mapping):
        yield from _compare_mapping(path, recorded, actual, how, exact=how.exact_keys)
    elif isinstance(recorded, list) and isinstance(actual, list):
        if len(recorded) != len(actual):
            yield Mismatch(where, f"{len(actual)} items, recorded {len(recorded)}: "
                                  f"got {_show(actual)}")
            return
        for i, (rec, act) in enumerate(zip(recorded, actual, strict=True)):
            yield from _compare([*path, str(i)], rec, act, how)
    elif json_type(recorded) != json_type(actual) or recorded != actual:
        yield Mismatch(where, f"got {_show(actual)}, recorded {_show(recorded)}")


def _compare_mapping(path: list[str], recorded: Mapping[str, Any], actual: Mapping[str, Any],
                     how: Comparison, *, exact: bool) -> Iterator[Mismatch]:
    for key, value in recorded.items():
        yield from _compare([*path, key], value, actual.get(key, MISSING), how)
    for key in actual:
        if key in recorded:
            continue
        rule = how.rule_for([*path, key])
        if rule is not None:
            yield from _apply(rule, [*path, key], MISSING, actual[key], how)
        elif exact:
            yield Mismatch(".".join([*path, key]),
                           f"not in the recording (got {_show(actual[key])})")


def _apply(rule: Rule, path: list[str], recorded: Any, actual: Any,
           how: Comparison) -> Iterator[Mismatch]:
    where = ".".join(path)
    mode = rule.compare
    if mode == "ignore":
        return
    if mode == "absent":
        if actual is not MISSING:
            yield Mismatch(where, f"must be absent, got {_show(actual)} ({rule.why})")
        return
    if actual is MISSING:
        if mode != "equal":
            yield Mismatch(where, f"missing ({mode}: {rule.why})")
        return
    if mode == "present":
        return
    if mode == "type":
        if recorded is not MISSING and json_type(recorded) != json_type(actual):
            yield Mismatch(where, f"a {json_type(actual)}, recorded a {json_type(recorded)}")
    elif mode == "pattern":
        regex = how.regex(rule.pattern)
        text = str(actual) if json_type(actual) == "number" else actual
        if not isinstance(text, str) or re.fullmatch(regex, text) is None:
            yield Mismatch(where, f"{_show(actual)} does not match {rule.pattern!r}")
    elif mode in ("contains", "prefix"):
        yield from _list_rule(rule, path, recorded, actual, how)
    else:  # equal, reached for keys only one side has
        yield from _equal(path, recorded, actual, how)


def _list_rule(rule: Rule, path: list[str], recorded: Any, actual: Any,
               how: Comparison) -> Iterator[Mismatch]:
    where = ".".join(path)
    if not isinstance(actual, list):
        yield Mismatch(where, f"a {json_type(actual)}, not a list")
        return
    items = recorded if isinstance(recorded, list) else []
    if rule.compare == "prefix":
        if len(actual) < len(items):
            yield Mismatch(where, f"{len(actual)} items, fewer than the {len(items)} recorded")
            return
        for i, item in enumerate(items):
            yield from _compare([*path, str(i)], item, actual[i], how)
        return
    for i, item in enumerate(items):
        wanted = item.get(rule.key) if isinstance(item, Mapping) else MISSING
        found = [j for j, got in enumerate(actual)
                 if isinstance(got, Mapping) and got.get(rule.key) == wanted]
        if not found:
            yield Mismatch(f"{where}.{i}", f"no item with {rule.key} = {_show(wanted)}")
        else:
            yield from _compare([*path, str(found[0])], item, actual[found[0]], how)


def _show(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
