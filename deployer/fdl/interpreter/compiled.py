"""Expression fields and templates compiled once per flow, and the variables they read.

:class:`CompiledExpression` (Choice conditions, ``Seconds.$``, ``ItemsPath``, ``Timeout.$``) and
:class:`CompiledTemplate` (constructors, ``Parameters``) are built by ``compile_flow``; at run
time their failures become :class:`~deployer.fdl.interpreter.runtime.StateFailure` with the same
messages ``evaluate`` / ``build_value`` give. Each knows whether it ``draws`` random numbers
(calls ``uuid()`` or ``randomInt()``), so only the evaluations that do get a generator.
:func:`expression_scope` builds the variables of one evaluation (reference §3.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from deployer.fdl.expressions.builtins import BUILTINS, SeededEntropy
from deployer.fdl.expressions.constructors import (
    TemplateBuilder,
    compile_template,
    iter_expressions,
)
from deployer.fdl.expressions.errors import EvaluationError, ExpressionSyntaxError
from deployer.fdl.expressions.evaluator import (
    UNAVAILABLE,
    ExpressionScope,
    NullMode,
    compile_expression,
    expression_cost,
    too_deep,
)
from deployer.fdl.expressions.nodes import Call, Expression, Node, children
from deployer.fdl.expressions.parser import parse_expression
from deployer.fdl.interpreter.runtime import RUNTIME_ERROR_CODE, Ctx, StateFailure
from deployer.fdl.syntax.ast import Expr, Template

__all__ = ["MISSING", "NO_ENTROPY", "CompiledExpression", "CompiledTemplate", "compiled",
           "draws", "expression_scope"]

MISSING: Any = object()
_STRICT = NullMode.STRICT


@dataclass(frozen=True, slots=True)
class CompiledExpression:
    """An expression field; ``run`` is None when its text does not parse (``syntax_error``
    then says why, and evaluating fails the state)."""

    text: str
    run: Callable[[ExpressionScope], Any] | None
    draws: bool = False
    syntax_error: str = ""
    cost: int = 0  # the steps charged up front (expression_cost)

    @classmethod
    def of(cls, expr: Expr) -> CompiledExpression:
        try:
            parsed = parse_expression(expr.text)
        except ExpressionSyntaxError as exc:
            return cls(expr.text, None, syntax_error=str(exc))
        return cls(expr.text, compile_expression(parsed), _draws(parsed),
                   cost=expression_cost(parsed))

    def evaluate(self, scope: ExpressionScope, where: str) -> Any:
        """The value of the expression, one evaluation for ``scope.meter``; failures become
        ``StateFailure`` naming ``where``."""
        run = self.run
        if run is None:
            raise StateFailure(RUNTIME_ERROR_CODE, f"{where}: {self.syntax_error}")
        try:
            scope.meter.begin(self.cost)
            return run(scope)
        except EvaluationError as exc:
            error = exc.in_expression(self.text)
        except RecursionError:
            error = too_deep().in_expression(self.text)
        raise StateFailure(error.code, f"{where}: {error.detail}") from None


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A constructor or ``Parameters`` template."""

    template: TemplateBuilder
    draws: bool

    @classmethod
    def of(cls, template: Template) -> CompiledTemplate:
        plain = template.to_plain()
        return cls(compile_template(plain), any(
            isinstance(text, str) and _draws_text(text) for _, text in iter_expressions(plain)))

    def build(self, scope: ExpressionScope, where: str) -> Any:
        """The value the template describes; failures become ``StateFailure``."""
        try:
            return self.template.build(scope)
        except EvaluationError as exc:
            raise StateFailure(exc.code, f"{where}: {exc.detail}") from None
        except RecursionError:
            raise StateFailure(RUNTIME_ERROR_CODE, f"{where}: value nested too deeply") from None


def compiled(template: Template | None) -> CompiledTemplate | None:
    """:meth:`CompiledTemplate.of`, or None for an absent field."""
    return None if template is None else CompiledTemplate.of(template)


def draws(*fields: CompiledExpression | CompiledTemplate | None) -> bool:
    """Whether any of the (present) ``fields`` draws random numbers."""
    return any(field is not None and field.draws for field in fields)


def _draws(expr: Expression) -> bool:
    stack: list[Node] = [expr.node]
    while stack:
        node = stack.pop()
        if isinstance(node, Call) and node.name in BUILTINS and BUILTINS[node.name].uses_entropy:
            return True
        stack.extend(children(node))
    return False


def _draws_text(text: str) -> bool:
    try:
        return _draws(parse_expression(text))
    except ExpressionSyntaxError:  # it fails when evaluated, before drawing anything
        return False



def expression_scope(
    ctx: Ctx, name: str, input_value: Any, retry_count: int, token: str, *, draws: bool,
    output: Any = MISSING, error: tuple[str, str] | None = None,
) -> ExpressionScope:
    """The variables of an expression of state ``name``: ``$Input``, ``$Output`` when given,
    ``$Global``, and ``$Context`` (the execution; the state's name, input, retry count, task
    token, output and error), metered by the step's meter. When the expressions evaluated with
    it ``draws`` random numbers,
    ``uuid()``/``randomInt()`` draw from a generator seeded with the execution name, the next
    event id and the retry count (the same every time the same history is replayed)."""
    ex = ctx.ex
    current: dict[str, Any] = {
        "Name": name, "Input": input_value, "RetryCount": retry_count, "TaskToken": token,
    }
    if output is not MISSING:
        current["Output"] = output
    if error is not None:
        current["Error"] = {"Code": error[0], "Detail": error[1]}
    execution = ctx.execution_context
    if execution is None:
        execution = ctx.execution_context = {
            "Name": ex.name, "Input": ex.input, "RoleArn": ex.role_arn,
        }
    entropy = (
        SeededEntropy(f"{ex.name}\0{ex.next_event_id}\0{retry_count}") if draws else NO_ENTROPY
    )
    return ExpressionScope(
        input_value, UNAVAILABLE if output is MISSING else output,
        {"Execution": execution, "Current": current}, ex.global_vars, UNAVAILABLE, _STRICT,
        entropy, ctx.meter or ctx.step_meter(),
    )


class _NoEntropy:
    """The entropy of evaluations that draw no random numbers (never asked for one)."""

    def random_int(self, low: int, high: int) -> int:
        raise AssertionError("an expression drew a random number it was not compiled for")

    def uuid4(self) -> str:
        raise AssertionError("an expression drew a random number it was not compiled for")


NO_ENTROPY = _NoEntropy()
