"""The language inside Serverless Devs' magic variables: ``${...}`` in s.yaml.

Grammar (docs/manifest.md, "Magic variables")::

    expression := primary ( "." key | "[" (integer | string) "]" )*
    primary    := call | name
    call       := name "(" [ argument ( "," argument )* ] ")"
    argument   := string | expression
    string     := '...' | "..."        (a backslash escapes the next character)
    name       := [A-Za-z_][A-Za-z0-9_-]*
    key        := [A-Za-z0-9_][A-Za-z0-9_-]*    (digits alone index a list: vars.list.0)

So ``vars.region``, ``env.HOME``, ``env('X', 'default')``, ``config('AccountID')``,
``resources.db.output.host``, ``json(file('./a.json')).name`` and ``this.props.code`` all
parse. :func:`parse_magic` builds a frozen tree or raises :class:`MagicSyntaxError`
with the column of the problem; :func:`find_magic` splits a string into its literal
text and its ``${...}`` parts. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "MagicCall",
    "MagicExpression",
    "MagicMember",
    "MagicName",
    "MagicString",
    "MagicSyntaxError",
    "Segment",
    "find_magic",
    "parse_magic",
    "reference_path",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_INT = re.compile(r"-?[0-9]+")


class MagicSyntaxError(ValueError):
    """A ``${...}`` that is not an expression; ``column`` is 1-based inside the braces."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


@dataclass(frozen=True, slots=True)
class MagicName:
    """A bare name: ``vars``, ``env``, ``resources``, ``this``."""

    name: str


@dataclass(frozen=True, slots=True)
class MagicString:
    value: str


@dataclass(frozen=True, slots=True)
class MagicCall:
    """``function(arguments...)``."""

    function: str
    arguments: tuple[MagicExpression, ...]


@dataclass(frozen=True, slots=True)
class MagicMember:
    """``target.key`` or ``target[key]`` (an int key indexes a list)."""

    target: MagicExpression
    key: str | int


MagicExpression = MagicName | MagicString | MagicCall | MagicMember


def reference_path(expr: MagicExpression) -> tuple[str | int, ...] | None:
    """``vars.a.b`` -> ``('vars', 'a', 'b')``; None when the expression holds a call."""
    if isinstance(expr, MagicName):
        return (expr.name,)
    if isinstance(expr, MagicMember):
        base = reference_path(expr.target)
        return None if base is None else (*base, expr.key)
    return None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> MagicSyntaxError:
        return MagicSyntaxError(message, self.pos + 1)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def match(self, pattern: re.Pattern[str]) -> str | None:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(0)

    def expression(self) -> MagicExpression:
        expr = self.primary()
        while True:
            nxt = self.peek()
            if nxt == ".":
                self.pos += 1
                key = self.match(_KEY)
                if key is None:
                    raise self.fail("expected a key after '.'")
                expr = MagicMember(expr, int(key) if key.isdigit() and key.isascii() else key)
            elif nxt == "[":
                self.pos += 1
                expr = MagicMember(expr, self.index())
                if self.peek() != "]":
                    raise self.fail("expected ']'")
                self.pos += 1
            else:
                return expr

    def index(self) -> str | int:
        if self.peek() in ("'", '"'):
            return self.string().value
        number = self.match(_INT)
        if number is None:
            raise self.fail("expected a number or a quoted key inside [...]")
        return int(number)

    def primary(self) -> MagicExpression:
        if self.peek() in ("'", '"'):
            raise self.fail("a string is only allowed as a function argument")
        name = self.match(_NAME)
        if name is None:
            raise self.fail("expected a name such as vars, env, resources or a function "
                            "such as env(...)")
        if self.peek() != "(":
            return MagicName(name)
        self.pos += 1
        arguments: list[MagicExpression] = []
        if self.peek() == ")":
            self.pos += 1
            return MagicCall(name, ())
        while True:
            arguments.append(self.string() if self.peek() in ("'", '"') else self.expression())
            nxt = self.peek()
            self.pos += 1
            if nxt == ")":
                return MagicCall(name, tuple(arguments))
            if nxt != ",":
                self.pos -= 1
                raise self.fail(f"expected ',' or ')' in the arguments of {name}()")

    def string(self) -> MagicString:
        quote = self.peek()
        self.pos += 1
        chars: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                chars.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            self.pos += 1
            if ch == quote:
                return MagicString("".join(chars))
            chars.append(ch)
        raise self.fail(f"unterminated string (missing {quote})")


def parse_magic(text: str) -> MagicExpression:
    """The tree of the expression ``text`` (what is between ``${`` and ``}``)."""
    parser = _Parser(text)
    expr = parser.expression()
    if parser.peek():
        raise parser.fail(f"unexpected {parser.text[parser.pos]!r}")
    return expr


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of a string: literal ``text``, or (``expression`` set) the source of one
    ``${...}``, starting at ``offset`` in the string."""

    text: str
    offset: int
    expression: str | None = None

    @property
    def shown(self) -> str:
        return "${" + (self.expression or "") + "}" if self.expression is not None else self.text


def find_magic(text: str) -> Iterator[Segment]:
    """Split ``text`` into literal segments and ``${...}`` segments. A ``}`` inside a quoted
    argument does not close the expression. An unterminated ``${`` raises
    :class:`MagicSyntaxError` (column: where it starts)."""
    pos = 0
    while True:
        start = text.find("${", pos)
        if start < 0:
            if pos < len(text):
                yield Segment(text[pos:], pos)
            return
        if start > pos:
            yield Segment(text[pos:start], pos)
        end = _closing_brace(text, start + 2)
        if end < 0:
            raise MagicSyntaxError(f"unterminated magic variable in {text!r}", start + 1)
        yield Segment("", start, text[start + 2:end].strip())
        pos = end + 1


def _closing_brace(text: str, pos: int) -> int:
    quote = ""
    while pos < len(text):
        ch = text[pos]
        if quote:
            if ch == "\\":
                pos += 1
            elif ch == quote:
                quote = ""
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "}":
            return pos
        pos += 1
    return -1
