"""Tokenizer of the expression language.

Operators need no surrounding whitespace (``$Input.job_status== "success"``). Strings are
double- or single-quoted with Go/expr-lang escapes (``\\n``, ``\\"``, ``\\u00e9``, ``\\x41``,
``\\101``...) or back-ticked raw text. Numbers are decimal integers (``1_000`` allowed),
hexadecimal integers (``0x1f``) and decimal floats (``12.5``, ``1e3``); integers must fit in a
signed 64-bit integer and floats must be finite. Words (``true``, ``in``, names of built-ins...)
are ``NAME`` tokens; the parser gives them meaning, so ``$Input.in`` is a valid member access.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum

from deployer.fdl.expressions.errors import ExpressionSyntaxError
from deployer.fdl.expressions.values import INT64_MAX

__all__ = ["Token", "TokenKind", "tokenize"]


class TokenKind(Enum):
    NUMBER = "number"
    STRING = "string"
    NAME = "name"
    VARIABLE = "variable"
    OP = "operator"
    EOF = "end"


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``value`` is the decoded literal, the word, or the operator text."""

    kind: TokenKind
    value: object
    offset: int
    end: int


_WHITESPACE = re.compile(r"[ \t\r\n]+")
_NAME = re.compile(r"[^\W\d]\w*")
_VARIABLE = re.compile(r"\$\w*")
_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*"
    r"|(?P<int>\d+(?:_\d+)*)(?P<frac>\.\d+(?:_\d+)*)?(?P<exp>[eE][+-]?\d+)?"
)
_WORD_CHAR = re.compile(r"\w")
_TWO_CHAR_OPS = frozenset({"==", "!=", "<=", ">=", "&&", "||"})
_ONE_CHAR_OPS = frozenset("<>!+-*/%()[]{},:.")
_MISTAKES = {
    "=": "'=' is not an operator; use '==' to compare",
    "&": "'&' is not an operator; use '&&' (or 'and')",
    "|": "'|' is not an operator; use '||' (or 'or')",
}
_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "/": "/",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens ending with an ``EOF`` token; raise
    :class:`ExpressionSyntaxError` at the offset of the first invalid character."""
    tokens: list[Token] = []
    pos, size = 0, len(text)
    while True:
        space = _WHITESPACE.match(text, pos)
        if space:
            pos = space.end()
        if pos >= size:
            tokens.append(Token(TokenKind.EOF, None, size, size))
            return tokens
        token = _next_token(text, pos)
        tokens.append(token)
        pos = token.end


def _next_token(text: str, pos: int) -> Token:
    char = text[pos]
    if char in "\"'":
        return _quoted(text, pos)
    if char == "`":
        end = text.find("`", pos + 1)
        if end < 0:
            raise ExpressionSyntaxError("unterminated back-tick string", pos)
        return Token(TokenKind.STRING, text[pos + 1 : end], pos, end + 1)
    if char == "$":
        match = _VARIABLE.match(text, pos)
        assert match is not None
        return Token(TokenKind.VARIABLE, match.group(), pos, match.end())
    if char.isdigit():
        return _number(text, pos)
    match = _NAME.match(text, pos)
    if match:
        return Token(TokenKind.NAME, match.group(), pos, match.end())
    pair = text[pos : pos + 2]
    if pair in _TWO_CHAR_OPS:
        return Token(TokenKind.OP, pair, pos, pos + 2)
    if char in _ONE_CHAR_OPS:
        return Token(TokenKind.OP, char, pos, pos + 1)
    message = _MISTAKES.get(char, f"unexpected character {char!r}")
    raise ExpressionSyntaxError(message, pos)


def _number(text: str, pos: int) -> Token:
    match = _NUMBER.match(text, pos)
    if match is None or not match.group().isascii():
        raise ExpressionSyntaxError("invalid number", pos)
    end = match.end()
    if end < len(text) and (_WORD_CHAR.match(text, end) or text[end] == "$"):
        raise ExpressionSyntaxError(f"invalid number {text[pos : end + 1]!r}", pos)
    literal = match.group()
    value: int | float
    if match.group("frac") or match.group("exp"):
        value = float(literal)
        if not math.isfinite(value):
            raise ExpressionSyntaxError(f"number {literal} is out of range", pos)
    else:
        value = int(literal, 16) if literal[1:2] in ("x", "X") else int(literal)
        if value > INT64_MAX + 1:  # INT64_MAX + 1 is allowed only after '-' (parser checks)
            raise ExpressionSyntaxError(f"integer {literal} does not fit in 64 bits", pos)
    return Token(TokenKind.NUMBER, value, pos, end)


def _quoted(text: str, start: int) -> Token:
    quote = text[start]
    out: list[str] = []
    pos, size = start + 1, len(text)
    while pos < size:
        char = text[pos]
        if char == quote:
            return Token(TokenKind.STRING, "".join(out), start, pos + 1)
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        decoded, pos = _escape(text, pos)
        out.append(decoded)
    raise ExpressionSyntaxError("unterminated string", start)


def _escape(text: str, pos: int) -> tuple[str, int]:
    """Decode the escape sequence at ``text[pos] == '\\'``; return it and the next offset."""
    kind = text[pos + 1 : pos + 2]
    if kind in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[kind], pos + 2
    if kind in _HEX_ESCAPES:
        value, end = _hex(text, pos, kind)
        if 0xD800 <= value <= 0xDBFF and text[end : end + 2] == "\\u":
            low, after = _hex(text, end, "u")
            if 0xDC00 <= low <= 0xDFFF:  # a UTF-16 surrogate pair, as JSON writes it
                return chr(0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)), after
        return _code_point(value, pos), end
    digits = text[pos + 1 : pos + 4]
    if len(digits) == 3 and all(c in "01234567" for c in digits):
        return _code_point(int(digits, 8), pos), pos + 4
    if not kind:
        raise ExpressionSyntaxError("unterminated escape sequence", pos)
    raise ExpressionSyntaxError(f"unknown escape sequence \\{kind}", pos)


def _hex(text: str, pos: int, kind: str) -> tuple[int, int]:
    digits = text[pos + 2 : pos + 2 + _HEX_ESCAPES[kind]]
    if len(digits) != _HEX_ESCAPES[kind] or not all(c in _HEX_DIGITS for c in digits):
        raise ExpressionSyntaxError(f"invalid \\{kind} escape", pos)
    return int(digits, 16), pos + 2 + len(digits)


def _code_point(value: int, pos: int) -> str:
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise ExpressionSyntaxError(f"escape U+{value:04X} is not a valid character", pos)
    return chr(value)
