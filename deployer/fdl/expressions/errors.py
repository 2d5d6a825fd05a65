"""Errors of the expression language: one for bad text, one for failed evaluation.

:class:`ExpressionSyntaxError` is raised by :func:`deployer.fdl.expressions.parser.parse_expression`
(definition time: the validator turns it into a diagnostic). :class:`EvaluationError` is raised by
:func:`deployer.fdl.expressions.evaluator.evaluate`, the built-ins and the constructor walker (run
time: the interpreter fails the state with ``error.code``, which ``FnF.ALL`` matches in ``Catch``).
Neither is a :class:`deployer.errors.DeployerError`: ``fdl`` imports nothing else of ours, and the
layers above decide how to present them.
"""

from __future__ import annotations

from enum import Enum

__all__ = [
    "RUNTIME_ERROR_CODE",
    "EvaluationError",
    "EvaluationReason",
    "ExpressionSyntaxError",
    "SyntaxCode",
]

#: The state error code of every expression evaluation failure (docs/fdl-semantics.md).
RUNTIME_ERROR_CODE = "FnF.RuntimeError"


class SyntaxCode(str, Enum):
    """Stable diagnostic codes of :class:`ExpressionSyntaxError`."""

    SYNTAX = "EXPR_SYNTAX"
    UNKNOWN_FUNCTION = "EXPR_UNKNOWN_FUNCTION"
    UNKNOWN_VARIABLE = "EXPR_UNKNOWN_VARIABLE"
    ARITY = "EXPR_ARITY"
    NESTING = "EXPR_NESTING"


class EvaluationReason(str, Enum):
    """Why an evaluation failed; finer than the state error code, stable for tests and logs."""

    TYPE = "EXPR_TYPE"  # an operator or function got a value of the wrong kind
    NULL = "EXPR_NULL"  # null where a value is needed (member access on null, !null, ...)
    INDEX = "EXPR_INDEX"  # array index out of range
    ARITHMETIC = "EXPR_ARITHMETIC"  # division by zero, integer or float overflow
    UNAVAILABLE = "EXPR_UNAVAILABLE"  # a variable that does not exist here ($Output in Input...)
    FUNCTION = "EXPR_FUNCTION"  # a built-in rejected its arguments (bad JSON, bad base64, ...)
    SYNTAX = "EXPR_SYNTAX"  # a constructor expression does not parse (run-time use only)
    CONSTRUCTOR = "EXPR_CONSTRUCTOR"  # a constructor template is malformed
    LIMIT = "EXPR_LIMIT"  # nesting too deep for the evaluator
    BUDGET = "EXPR_BUDGET"  # the evaluation ran out of steps (budget.py)
    SIZE = "EXPR_SIZE"  # a built string over the size cap (code FnF.DataLimitExceeded)


class ExpressionSyntaxError(Exception):
    """An expression text is not valid.

    ``message`` is one line without the position; ``offset`` is the 0-based character offset
    into the expression text; ``code`` is a :class:`SyntaxCode` value (a ``str``).
    """

    def __init__(self, message: str, offset: int, code: SyntaxCode = SyntaxCode.SYNTAX) -> None:
        super().__init__(f"{message} (at offset {offset})")
        self.message = message
        self.offset = offset
        self.code: str = code.value


class EvaluationError(Exception):
    """Evaluating an expression failed.

    ``code`` is the state error code (always :data:`RUNTIME_ERROR_CODE` for expression
    failures); ``detail`` is one human line naming the expression text (and the constructor key path
    when raised by :mod:`deployer.fdl.expressions.constructors`); ``reason`` says why;
    ``expression`` and ``offset`` locate the failing sub-expression when known.
    """

    def __init__(
        self,
        detail: str,
        reason: EvaluationReason = EvaluationReason.TYPE,
        *,
        code: str = RUNTIME_ERROR_CODE,
        expression: str | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.reason = reason
        self.expression = expression
        self.offset = offset

    def in_expression(self, text: str) -> EvaluationError:
        """Return a copy whose detail names ``text`` (and the offset of the failing node)."""
        where = f" at offset {self.offset}" if self.offset is not None else ""
        return EvaluationError(
            f"{self.detail} (in expression `{text}`{where})",
            self.reason,
            code=self.code,
            expression=text,
            offset=self.offset,
        )

    def at_path(self, path: str) -> EvaluationError:
        """Return a copy whose detail starts with the constructor key ``path``."""
        return EvaluationError(
            f"{path}: {self.detail}",
            self.reason,
            code=self.code,
            expression=self.expression,
            offset=self.offset,
        )
