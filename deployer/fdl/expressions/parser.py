"""Parser of the CloudFlow expression language (an expr-lang/expr compatible subset).

Pipeline: :func:`parse_expression` lexes the text (:mod:`deployer.fdl.expressions.lexer`), parses
it by precedence climbing into frozen AST nodes (each with its character ``offset``), then checks
the limits. The result is cached, so parsing the same text twice costs a dictionary lookup.

Precedence, loosest first (reference §4.3)::

    ||  or            left
    &&  and           left
    in  not in        left
    == != < <= > >=   left
    + -               left
    * / %             left
    ! not - +         prefix
    .name [index] f() postfix

Checks done here (definition time): grammar, unknown function names, built-in arities, more than
:data:`MAX_CALL_NESTING` nested built-in calls, unknown ``$`` variables, and an overall nesting
limit that keeps the evaluator far from Python's recursion limit.
"""

from __future__ import annotations

import functools
from typing import Any, NoReturn

from deployer.fdl.expressions import nodes
from deployer.fdl.expressions.builtins import BUILTINS
from deployer.fdl.expressions.errors import ExpressionSyntaxError, SyntaxCode
from deployer.fdl.expressions.lexer import Token, TokenKind, tokenize
from deployer.fdl.expressions.nodes import *  # noqa: F403 (the nodes are re-exported from here)
from deployer.fdl.expressions.values import INT64_MAX, INT64_MIN

__all__ = [
    *nodes.__all__,
    "MAX_CALL_NESTING",
    "MAX_DEPTH",
    "ExpressionSyntaxError",
    "parse_expression",
]

#: At most this many nested built-in calls (reference §4.4).
MAX_CALL_NESTING = 10
#: At most this many levels in the syntax tree (brackets, operators, calls together).
MAX_DEPTH = 100


_BINARY_LEVELS: tuple[frozenset[str], ...] = (
    frozenset({"||"}),
    frozenset({"&&"}),
    frozenset({"in", "not in"}),
    frozenset({"==", "!=", "<", "<=", ">", ">="}),
    frozenset({"+", "-"}),
    frozenset({"*", "/", "%"}),
)
_WORD_OPERATORS = {"or": "||", "and": "&&", "in": "in"}
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None, "nil": None}


class _Parser:
    """Precedence-climbing parser over a token list; one instance per parse."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0
        self.depth = 0
        self.calls = 0

    # -- token helpers -------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def is_op(self, value: str) -> bool:
        token = self.tokens[self.pos]
        return token.kind is TokenKind.OP and token.value == value

    def expect(self, value: str, what: str) -> Token:
        if not self.is_op(value):
            self.fail(f"expected '{value}' {what}, found {self.describe(self.peek())}")
        return self.advance()

    def describe(self, token: Token) -> str:
        if token.kind is TokenKind.EOF:
            return "end of expression"
        return f"'{self.text[token.offset : token.end]}'"

    def fail(
        self, message: str, offset: int | None = None, code: SyntaxCode = SyntaxCode.SYNTAX
    ) -> NoReturn:
        raise ExpressionSyntaxError(message, self.peek().offset if offset is None else offset, code)

    def enter(self, offset: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(
                f"expression is nested too deeply (more than {MAX_DEPTH} levels)",
                offset,
                SyntaxCode.NESTING,
            )

    # -- grammar -------------------------------------------------------------------------

    def parse(self) -> nodes.Node:
        if self.peek().kind is TokenKind.EOF:
            self.fail("empty expression")
        node = self.binary(0)
        token = self.peek()
        if token.kind is not TokenKind.EOF:
            self.fail(f"unexpected {self.describe(token)} after a complete expression")
        return node

    def binary_operator(self, level: int) -> str | None:
        token = self.peek()
        if token.kind is TokenKind.OP:
            op = str(token.value)
        elif token.kind is TokenKind.NAME and token.value in _WORD_OPERATORS:
            op = _WORD_OPERATORS[str(token.value)]
        elif token.kind is TokenKind.NAME and token.value == "not":
            following = self.peek(1)
            op = "not in" if following.kind is TokenKind.NAME and following.value == "in" else ""
        else:
            return None
        return op if op in _BINARY_LEVELS[level] else None

    def binary(self, level: int) -> nodes.Node:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        chain = 0
        while (op := self.binary_operator(level)) is not None:
            token = self.advance()
            if op == "not in":
                self.advance()
            self.enter(token.offset)
            chain += 1
            right = self.binary(level + 1)
            left = nodes.Binary(token.offset, op, left, right)
        self.depth -= chain
        return left

    def unary(self) -> nodes.Node:
        token = self.peek()
        op = None
        if token.kind is TokenKind.OP and token.value in ("!", "-", "+"):
            op = str(token.value)
        elif token.kind is TokenKind.NAME and token.value == "not":
            op = "!"
        if op is None:
            return self.postfix(self.primary())
        self.advance()
        following = self.peek()
        if op == "-" and following.kind is TokenKind.NUMBER and following.value == INT64_MAX + 1:
            self.advance()  # the one literal that only fits negated: -9223372036854775808
            return self.postfix(nodes.Literal(token.offset, INT64_MIN))
        self.enter(token.offset)
        operand = self.unary()
        self.depth -= 1
        if op == "-" and type(operand) is nodes.Literal and type(operand.value) in (int, float):
            return nodes.Literal(token.offset, -operand.value)
        return nodes.Unary(token.offset, op, operand)

    def postfix(self, node: nodes.Node) -> nodes.Node:
        chain = 0
        while True:
            token = self.peek()
            if token.kind is not TokenKind.OP or token.value not in (".", "["):
                self.depth -= chain
                return node
            self.advance()
            self.enter(token.offset)
            chain += 1
            if token.value == ".":
                name = self.peek()
                if name.kind is not TokenKind.NAME:
                    self.fail(f"expected a member name after '.', found {self.describe(name)}")
                self.advance()
                if self.is_op("("):
                    self.fail("methods are not supported; call built-ins by bare name")
                node = nodes.Member(token.offset, node, str(name.value))
            else:
                index = self.binary(0)
                self.expect("]", "to close the index")
                if type(index) is nodes.Literal and type(index.value) is str:
                    node = nodes.Member(token.offset, node, index.value)
                else:
                    node = nodes.Index(token.offset, node, index)

    def primary(self) -> nodes.Node:
        token = self.peek()
        kind = token.kind
        if kind is TokenKind.NUMBER or kind is TokenKind.STRING:
            self.advance()
            if token.value == INT64_MAX + 1 and type(token.value) is int:
                self.fail(f"integer {token.value} does not fit in 64 bits", token.offset)
            return nodes.Literal(token.offset, token.value)
        if kind is TokenKind.VARIABLE:
            self.advance()
            if token.value not in nodes.VARIABLES:
                known = ", ".join(sorted(nodes.VARIABLES))
                self.fail(
                    f"unknown variable '{token.value}'; expected one of {known}",
                    token.offset,
                    SyntaxCode.UNKNOWN_VARIABLE,
                )
            return nodes.Variable(token.offset, str(token.value))
        if kind is TokenKind.NAME:
            return self.name(token)
        if kind is TokenKind.OP and token.value == "(":
            self.advance()
            self.enter(token.offset)
            node = self.binary(0)
            self.expect(")", "to close the parenthesis")
            self.depth -= 1
            return node
        if kind is TokenKind.OP and token.value == "[":
            return nodes.ArrayLiteral(token.offset, self.sequence(token, "]", "array"))
        if kind is TokenKind.OP and token.value == "{":
            return self.map_literal(token)
        self.fail(f"expected a value, found {self.describe(token)}")

    def name(self, token: Token) -> nodes.Node:
        word = str(token.value)
        self.advance()
        if word in _CONSTANTS:
            return nodes.Literal(token.offset, _CONSTANTS[word])
        if self.is_op("("):
            return self.call(token, word)
        if word in BUILTINS:
            self.fail(f"built-in '{word}' must be called: {word}(...)", token.offset)
        self.fail(
            f"unknown name '{word}'; variables start with '$' (e.g. $Input.{word})",
            token.offset,
            SyntaxCode.UNKNOWN_VARIABLE,
        )

    def call(self, token: Token, word: str) -> nodes.Node:
        builtin = BUILTINS.get(word)
        if builtin is None:
            self.fail(f"unknown function '{word}'", token.offset, SyntaxCode.UNKNOWN_FUNCTION)
        self.calls += 1
        if self.calls > MAX_CALL_NESTING:
            self.fail(
                f"more than {MAX_CALL_NESTING} nested built-in function calls",
                token.offset,
                SyntaxCode.NESTING,
            )
        args = self.sequence(self.peek(), ")", "argument list")
        self.calls -= 1
        count = len(args)
        if count < builtin.min_args or (builtin.max_args is not None and count > builtin.max_args):
            self.fail(
                f"{word}() takes {builtin.arity_text()}, got {count}",
                token.offset,
                SyntaxCode.ARITY,
            )
        return nodes.Call(token.offset, word, args)

    def sequence(self, opener: Token, closer: str, what: str) -> tuple[nodes.Node, ...]:
        self.advance()
        self.enter(opener.offset)
        items: list[nodes.Node] = []
        while not self.is_op(closer):
            items.append(self.binary(0))
            if not self.is_op(","):
                break
            self.advance()
        self.expect(closer, f"to close the {what}")
        self.depth -= 1
        return tuple(items)

    def map_literal(self, opener: Token) -> nodes.Node:
        self.advance()
        self.enter(opener.offset)
        entries: list[tuple[str, nodes.Node]] = []
        while not self.is_op("}"):
            key = self.peek()
            if key.kind not in (TokenKind.STRING, TokenKind.NAME):
                self.fail(f"expected a map key (string or name), found {self.describe(key)}")
            self.advance()
            self.expect(":", "after the map key")
            entries.append((str(key.value), self.binary(0)))
            if not self.is_op(","):
                break
            self.advance()
        self.expect("}", "to close the map")
        self.depth -= 1
        return nodes.MapLiteral(opener.offset, tuple(entries))


@functools.lru_cache(maxsize=4096)
def parse_expression(text: str) -> nodes.Expression:
    """Parse ``text`` into an :class:`Expression`.

    Pure and cached (the same text returns the same object). Raises
    :class:`ExpressionSyntaxError` with a 0-based ``offset`` and a stable ``code`` for any
    invalid text, including texts too deeply nested to handle; never raises anything else.
    """
    if not isinstance(text, str):
        raise ExpressionSyntaxError(f"expression must be a string, got {type(text).__name__}", 0)
    try:
        return nodes.Expression(text, _Parser(text).parse())
    except RecursionError:
        raise ExpressionSyntaxError(
            "expression is nested too deeply", 0, SyntaxCode.NESTING
        ) from None
