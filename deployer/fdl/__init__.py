"""The CloudFlow flow definition language (FDL, ``Type: StateMachine`` / ``SpecVersion: v1``).

Pipeline (pure Python: no I/O, no clock)::

    text --parse_flow--> ParseResult(flow, diagnostics)        parser.py (+ _yaml.py)
              ruamel.yaml composes the document with line/column on every node; one pass
              builds complete frozen AST nodes (ast.py). Only YAML-level problems are reported
              here: syntax (FDL001), duplicate keys, non-mapping states...
    flow --validate_flow--> diagnostics                         validator.py (+ _schema, _checks)
              a separate pass: fields and types, names, transitions and scopes, reachability,
              expressions (expressions.py parses them), limits, Task actions.
    text --check_flow--> FlowCheck(flow, diagnostics)           both, the entry point for tools

Every :class:`Diagnostic` has a stable code (docs/fdl-diagnostics.md), a message, a severity,
a 1-based line:column and a path such as ``States[3](GetJobStatus).Parameters.body``. A flow is
fit to run when :attr:`FlowCheck.ok` is true; the interpreter only runs such flows.
"""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.ast import (
    CatchRule,
    ChoiceBranch,
    ChoiceState,
    Expr,
    FailState,
    Flow,
    MapState,
    ParallelState,
    PassState,
    Position,
    RawField,
    RetryRule,
    Scope,
    State,
    StateType,
    SucceedState,
    TaskMode,
    TaskState,
    Template,
    TemplateField,
    TemplateList,
    TemplateValue,
    WaitState,
    walk_states,
)
from deployer.fdl.diagnostics import Code, Diagnostic, Severity
from deployer.fdl.parser import ParseResult, parse_flow
from deployer.fdl.validator import EXECUTION_MODES, validate_flow

__all__ = [
    "EXECUTION_MODES",
    "CatchRule",
    "ChoiceBranch",
    "ChoiceState",
    "Code",
    "Diagnostic",
    "Expr",
    "FailState",
    "Flow",
    "FlowCheck",
    "MapState",
    "ParallelState",
    "ParseResult",
    "PassState",
    "Position",
    "RawField",
    "RetryRule",
    "Scope",
    "Severity",
    "State",
    "StateType",
    "SucceedState",
    "TaskMode",
    "TaskState",
    "Template",
    "TemplateField",
    "TemplateList",
    "TemplateValue",
    "WaitState",
    "check_flow",
    "parse_flow",
    "validate_flow",
    "walk_states",
]


@dataclass(frozen=True, slots=True)
class FlowCheck:
    """Result of :func:`check_flow`: the flow (None if the text is not a YAML mapping) and all
    diagnostics, parser's and validator's together, sorted by position."""

    flow: Flow | None
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
    """Parse and validate a flow definition.

    ``source`` names the file in every diagnostic; ``execution_mode`` is ``Standard`` or
    ``Express`` (Wait limits, callback task modes). Never raises on bad input, whatever the
    text: every problem is a diagnostic. Pure; no I/O.
    """
    parsed = parse_flow(text, source=source)
    if parsed.flow is None:
        return FlowCheck(None, parsed.diagnostics)
    found = validate_flow(parsed.flow, execution_mode=execution_mode)
    merged = {(d.code, d.line, d.column, d.path): d for d in parsed.diagnostics}
    for diagnostic in found:
        merged.setdefault(
            (diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.path),
            diagnostic.with_source(source),
        )
    ordered = sorted(merged.values(), key=lambda d: (d.line, d.column, d.code))
    return FlowCheck(parsed.flow, tuple(ordered))
