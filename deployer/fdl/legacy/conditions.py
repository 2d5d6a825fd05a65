"""The condition language of legacy choices: ``$.status == "ready"``, ``$.count > 3 && $.ok``,
``!($.a || $.b)``.

Grammar (loosest first)::

    or   := and ("||" and)*
    and  := not ("&&" not)*
    cmp  := not (("==" | "!=" | "<" | "<=" | ">" | ">=") not)?
    not  := "!" not | atom
    atom := path | number | string | true | false | null | "(" or ")"

Paths start with ``$`` and read the choice's input (:mod:`deployer.fdl.legacy.paths`); strings
are double- or single-quoted with JSON escapes. Evaluation (docs/fdl-semantics.md, "The legacy
dialect: conditions"): ``==``/``!=`` compare JSON values deeply (numbers by value, ``1 == 1.0``;
values of different kinds are unequal); ``< <= > >=`` compare two numbers or two strings (other
pairs fail); ``&&``, ``||`` and ``!`` take booleans, a null (a missing key) counting as false;
the condition holds when its value is true, a null is false, any other value fails.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

from deployer.fdl.legacy.errors import LegacyEvaluationError, PathSyntaxError
from deployer.fdl.legacy.paths import Path, evaluate_path, read_path

__all__ = ["Condition", "condition_holds", "parse_condition", "render_condition"]

#: Deeper nesting (brackets and operators) is refused when parsing.
MAX_CONDITION_DEPTH = 50
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_]\w*")
_OPERATORS = ("==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")")
_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True, slots=True)
class _Literal:
    value: Any


@dataclass(frozen=True, slots=True)
class _PathRef:
    path: Path


@dataclass(frozen=True, slots=True)
class _Not:
    operand: _Node


@dataclass(frozen=True, slots=True)
class _Binary:
    operator: str
    left: _Node
    right: _Node


_Node = Union[_Literal, _PathRef, _Not, _Binary]  # noqa: UP007


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed condition; :func:`condition_holds` evaluates it."""

    text: str
    node: _Node

    def paths(self) -> tuple[Path, ...]:
        """Every path the condition reads, in order."""
        found: list[Path] = []
        stack: list[_Node] = [self.node]
        while stack:
            node = stack.pop()
            if isinstance(node, _PathRef):
                found.append(node.path)
            elif isinstance(node, _Not):
                stack.append(node.operand)
            elif isinstance(node, _Binary):
                stack += [node.right, node.left]
        return tuple(found)


def parse_condition(text: str) -> Condition:
    """Parse a condition; :class:`PathSyntaxError` (with the offset) when it does not parse.
    Cached."""
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Condition:
    parser = _Parser(text)
    node = parser.disjunction(0)
    parser.skip()
    if parser.at < len(text):
        raise PathSyntaxError(f"unexpected {text[parser.at]!r}", text, parser.at)
    return Condition(text, node)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, message: str) -> PathSyntaxError:
        return PathSyntaxError(message, self.text, self.at)

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def take(self, *operators: str) -> str | None:
        self.skip()
        for operator in operators:
            if self.text.startswith(operator, self.at):
                # '<' must not eat the '<' of '<=', nor '!' the one of '!='
                longer = next((o for o in _OPERATORS if len(o) > len(operator)
                               and o.startswith(operator) and self.text.startswith(o, self.at)),
                              None)
                if longer is not None:
                    continue
                self.at += len(operator)
                return operator
        return None

    def disjunction(self, depth: int) -> _Node:
        node = self.conjunction(depth)
        while self.take("||"):
            node = _Binary("||", node, self.conjunction(depth))
        return node

    def conjunction(self, depth: int) -> _Node:
        node = self.comparison(depth)
        while self.take("&&"):
            node = _Binary("&&", node, self.comparison(depth))
        return node

    def comparison(self, depth: int) -> _Node:
        left = self.negation(depth)
        operator = self.take(*_COMPARISONS)
        if operator is None:
            return left
        return _Binary(operator, left, self.negation(depth))

    def negation(self, depth: int) -> _Node:
        if depth > MAX_CONDITION_DEPTH:
            raise self.fail(f"nested deeper than {MAX_CONDITION_DEPTH} levels")
        if self.take("!"):
            return _Not(self.negation(depth + 1))
        return self.atom(depth)

    def atom(self, depth: int) -> _Node:
        self.skip()
        text, at = self.text, self.at
        if at >= len(text):
            raise self.fail("the condition ends where a value is expected")
        char = text[at]
        if char == "(":
            self.at += 1
            node = self.disjunction(depth + 1)
            if not self.take(")"):
                raise self.fail("'(' is not closed")
            return node
        if char == "$":
            path, self.at = read_path(text, at, ("",))
            return _PathRef(path)
        if char in "\"'":
            return _Literal(self.string(char))
        number = _NUMBER.match(text, at)
        if number:
            self.at = number.end()
            return _Literal(json.loads(number.group()))
        word = _WORD.match(text, at)
        if word and word.group() in _WORDS:
            self.at = word.end()
            return _Literal(_WORDS[word.group()])
        raise self.fail("expected a path ($.key), a string, a number, true, false, null or (")

    def string(self, quote: str) -> str:
        text, start = self.text, self.at
        at = start + 1
        while at < len(text) and text[at] != quote:
            at += 2 if text[at] == "\\" else 1
        if at >= len(text):
            raise self.fail("the string is not closed")
        body = text[start + 1:at]
        self.at = at + 1
        if quote == "'":
            body = body.replace("\\'", "'").replace('"', '\\"')
        try:
            value = json.loads(f'"{body}"')
        except ValueError:
            raise PathSyntaxError("invalid escape in the string", text, start) from None
        return str(value)


def condition_holds(condition: Condition, value: Any) -> bool:
    """Whether ``condition`` holds for the choice input ``value`` (see the module docstring);
    :class:`LegacyEvaluationError` when it cannot be decided."""
    result = _evaluate(condition.node, {"": value})
    if result is None or result is False:
        return False
    if result is True:
        return True
    raise LegacyEvaluationError(
        f"condition `{condition.text}` gave {_kind(result)}, not a boolean")


def _evaluate(node: _Node, roots: dict[str, Any]) -> Any:
    if isinstance(node, _Literal):
        return node.value
    if isinstance(node, _PathRef):
        return evaluate_path(node.path, roots)
    if isinstance(node, _Not):
        return not _truth(_evaluate(node.operand, roots), "!")
    operator = node.operator
    if operator == "&&":
        return _truth(_evaluate(node.left, roots), "&&") and \
            _truth(_evaluate(node.right, roots), "&&")
    if operator == "||":
        return _truth(_evaluate(node.left, roots), "||") or \
            _truth(_evaluate(node.right, roots), "||")
    left, right = _evaluate(node.left, roots), _evaluate(node.right, roots)
    if operator == "==":
        return _equal(left, right)
    if operator == "!=":
        return not _equal(left, right)
    return _ORDER[operator](*_comparable(left, right, operator))


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: bool(a < b), "<=": lambda a, b: bool(a <= b),
    ">": lambda a, b: bool(a > b), ">=": lambda a, b: bool(a >= b),
}


def _truth(value: Any, operator: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise LegacyEvaluationError(f"'{operator}' takes booleans, got {_kind(value)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _comparable(left: Any, right: Any, operator: str) -> tuple[Any, Any]:
    if (_is_number(left) and _is_number(right)) or (
            isinstance(left, str) and isinstance(right, str)):
        return left, right
    raise LegacyEvaluationError(
        f"'{operator}' compares two numbers or two strings, got {_kind(left)} and "
        f"{_kind(right)}")


def _equal(left: Any, right: Any) -> bool:
    if _is_number(left) and _is_number(right):
        return bool(left == right)
    if type(left) is not type(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_equal, left, right))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    return bool(left == right)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if _is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def render_condition(condition: Condition, path: Callable[[Path], str],
                     literal: Callable[[Any], str], truth: Callable[[str], str]) -> str:
    """The condition written again, each path by ``path``, each literal by ``literal``, and
    each operand taken as a boolean (of ``&&``, ``||``, ``!`` and the whole condition) by
    ``truth``; every operation is bracketed. For rewriting a condition in another language
    (``deploy flow migrate``)."""
    return _render(condition.node, path, literal, truth, boolean=True)


def _render(node: _Node, path: Callable[[Path], str], literal: Callable[[Any], str],
            truth: Callable[[str], str], *, boolean: bool) -> str:
    if isinstance(node, (_Literal, _PathRef)):
        text = literal(node.value) if isinstance(node, _Literal) else path(node.path)
        return truth(text) if boolean and not isinstance(getattr(node, "value", None), bool) \
            else text
    if isinstance(node, _Not):
        return f"!({_render(node.operand, path, literal, truth, boolean=True)})"
    logical = node.operator in ("&&", "||")
    left = _render(node.left, path, literal, truth, boolean=logical)
    right = _render(node.right, path, literal, truth, boolean=logical)
    return f"({left} {node.operator} {right})"
