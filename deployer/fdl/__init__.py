"""The CloudFlow flow definition language (FDL): ``Type: StateMachine`` / ``SpecVersion: v1``, and
the legacy dialect CloudFlow still runs (``version`` / ``type: flow`` / ``steps``).

Pure Python (no I/O, no clock), in five parts, each a package that explains its own pipeline:

    syntax/        text --parse_flow--> frozen AST --validate_flow--> diagnostics
                   (YAML reading with positions, the AST, parsing, validation, diagnostics)
    legacy/        the legacy dialect: its AST, parser, validator, paths and conditions
    expressions/   text --parse_expression--> Expression --evaluate--> JSON value; constructor
                   templates (``.$`` keys); built-ins, bounds, the JSON value model
    interpreter/   the deterministic step(flow, execution, event) -> (execution, commands),
                   one evaluator module per state kind (interpreter/states/)
    progress/      execution history -> where the execution stands, state by state
    limits.py      CloudFlow's documented limits and the expression bounds, shared by all four

``syntax`` uses ``expressions`` (to check the expressions a flow holds); ``legacy`` uses
``syntax`` (positions, diagnostics, YAML reading); ``interpreter`` and ``progress`` use all three
and run or fold both dialects; nothing here imports anything else of ``deployer``.

:func:`check_flow` (here) is the entry point for tools: parse and validate together, in whichever
dialect the document is written; :func:`read_flow` only parses. Every
:class:`Diagnostic` has a stable code (docs/fdl-diagnostics.md), a message, a severity, a
1-based line:column and a path such as ``States[3](GetJobStatus).Parameters.body``. A flow is
fit to run when :attr:`FlowCheck.ok` is true; the interpreter (:mod:`deployer.fdl.interpreter`)
only runs such flows. ``Scope`` here is the AST's (a ``States`` list with its ``StartAt``); the
variables an expression reads are an :class:`ExpressionScope`.
"""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.expressions.builtins import Entropy, SeededEntropy, SystemEntropy
from deployer.fdl.expressions.constructors import build_value, compile_template
from deployer.fdl.expressions.errors import EvaluationError, ExpressionSyntaxError
from deployer.fdl.expressions.evaluator import UNAVAILABLE, ExpressionScope, NullMode, evaluate
from deployer.fdl.expressions.parser import Expression, parse_expression, variables_used
from deployer.fdl.legacy import (
    AnyFlow,
    LegacyFlow,
    build_legacy_flow,
    is_legacy_document,
    validate_legacy_flow,
)
from deployer.fdl.limits import DEFINITION_BYTES
from deployer.fdl.syntax import ast
from deployer.fdl.syntax.ast import *  # noqa: F403 (every AST node type is part of the package API)
from deployer.fdl.syntax.diagnostics import Code, Diagnostic, Severity, sort_diagnostics
from deployer.fdl.syntax.parser import ParseResult, build_state_machine, load_document, parse_flow
from deployer.fdl.syntax.validator import EXECUTION_MODES, validate_flow

__all__ = [
    # parse and validate flow definitions
    "EXECUTION_MODES",
    "Code",
    "Diagnostic",
    "FlowCheck",
    "ParseResult",
    "Severity",
    "check_flow",
    "parse_flow",
    "validate_flow",
    # either dialect
    "AnyFlow",
    "FlowRead",
    "LegacyFlow",
    "read_flow",
    # the AST (deployer.fdl.syntax.ast): Flow, Scope, the states, templates, positions...
    *ast.__all__,
    # expressions: parse once, evaluate against an ExpressionScope; build constructor values
    "UNAVAILABLE",
    "Entropy",
    "EvaluationError",
    "Expression",
    "ExpressionScope",
    "ExpressionSyntaxError",
    "NullMode",
    "SeededEntropy",
    "SystemEntropy",
    "build_value",
    "compile_template",
    "evaluate",
    "parse_expression",
    "variables_used",
]


@dataclass(frozen=True, slots=True)
class FlowRead:
    """Result of :func:`read_flow`: the flow in its dialect (None if the text is not a YAML
    mapping) and the parser's diagnostics."""

    flow: AnyFlow | None
    diagnostics: tuple[Diagnostic, ...]


def read_flow(text: str, *, source: str = "<flow>") -> FlowRead:
    """Parse a flow definition in either dialect without validating it: a SpecVersion v1
    :class:`Flow`, or a :class:`LegacyFlow` for a document written with ``version`` /
    ``type: flow`` / ``steps``. Never raises; pure."""
    document = load_document(text, source=source)
    if isinstance(document, tuple):
        return FlowRead(None, document)
    if is_legacy_document(key for key, _, _ in document.entries):
        flow, found = build_legacy_flow(document)
        return FlowRead(flow, tuple(d.with_source(source) for d in found))
    parsed = build_state_machine(document, source=source)
    return FlowRead(parsed.flow, parsed.diagnostics)


@dataclass(frozen=True, slots=True)
class FlowCheck:
    """Result of :func:`check_flow`: the flow in its dialect (None if the text is not a YAML
    mapping) and all diagnostics, parser's and validator's together, sorted by position."""

    flow: AnyFlow | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def ok(self) -> bool:
        """True when the flow parsed and no diagnostic is an error (warnings allowed)."""
        return self.flow is not None and not self.errors


def check_flow(text: str, *, source: str = "<flow>", execution_mode: str = "Standard") -> FlowCheck:
    """Parse and validate a flow definition, in either dialect (:func:`read_flow`).

    ``source`` names the file in every diagnostic; ``execution_mode`` is ``Standard`` or
    ``Express`` (Wait limits, callback task modes). Never raises on bad input, whatever the
    text: every problem is a diagnostic. Pure; no I/O.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > DEFINITION_BYTES:
        return FlowCheck(None, (Diagnostic(
            Code.TOO_LARGE.value, f"the definition is {size} bytes; CloudFlow accepts at most "
            f"{DEFINITION_BYTES}", Severity.ERROR, 1, 1, "",
            "split the flow, or move large constants into the execution input", source),))
    parsed = read_flow(text, source=source)
    if parsed.flow is None:
        return FlowCheck(None, parsed.diagnostics)
    if isinstance(parsed.flow, LegacyFlow):
        found = validate_legacy_flow(parsed.flow, execution_mode=execution_mode)
    else:
        found = validate_flow(parsed.flow, execution_mode=execution_mode)
    merged = {(d.code, d.line, d.column, d.path): d for d in parsed.diagnostics}
    for diagnostic in found:
        merged.setdefault(
            (diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.path),
            diagnostic.with_source(source),
        )
    return FlowCheck(parsed.flow, sort_diagnostics(merged.values()))
