"""Diagnostics: what the parser and the validator report about a flow definition.

A :class:`Diagnostic` is a value: a stable code (``FDL203``, see docs/fdl-diagnostics.md), a
one-line message, a severity, the 1-based line and column in the YAML document, the path of the
offending node (``States[3](GetJobStatus).Parameters.body``), an optional hint and the source
name. :meth:`Diagnostic.format` gives the compiler-style line
``flow.yaml:12:5: error FDL203: States[3](GetJobStatus).Parameters.body: message (hint)``.

The parser and the validator both report through a :class:`Collector` (one per pass), whose
:meth:`Collector.report` is the :class:`Reporter` every check function takes; :func:`state_path`
and :func:`join_path` spell the paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from deployer.fdl.syntax.positions import Position

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

__all__ = [
    "Code",
    "Collector",
    "Diagnostic",
    "ReportExtra",
    "Reporter",
    "Severity",
    "by_position",
    "join_path",
    "sort_diagnostics",
    "state_path",
]


class Severity(str, Enum):
    """How bad a diagnostic is: an error makes the flow invalid, a warning does not."""

    ERROR = "error"
    WARNING = "warning"


class Code(str, Enum):
    """Stable diagnostic codes; the table in docs/fdl-diagnostics.md explains each one."""

    # document / YAML (parser)
    YAML_SYNTAX = "FDL001"
    DUPLICATE_KEY = "FDL002"
    NOT_A_DOCUMENT = "FDL003"
    EXPECTED_MAPPING = "FDL004"
    BAD_KEY = "FDL005"
    TOO_DEEP = "FDL006"
    TOO_LARGE = "FDL007"
    # structure (validator)
    MISSING_FIELD = "FDL101"
    WRONG_TYPE = "FDL102"
    UNKNOWN_FIELD = "FDL103"
    FIELD_NOT_ALLOWED = "FDL104"
    UNSUPPORTED = "FDL105"
    INVALID_VALUE = "FDL106"
    CONFLICTING_FIELDS = "FDL107"
    EMPTY_LIST = "FDL108"
    CONSTANT_LIKE_PATH = "FDL109"
    # names and transitions
    NEXT_AND_END = "FDL201"
    NO_TRANSITION = "FDL202"
    UNKNOWN_TARGET = "FDL203"
    DUPLICATE_NAME = "FDL204"
    DUPLICATE_NAME_IN_FLOW = "FDL205"
    UNREACHABLE = "FDL206"
    # expressions
    EXPRESSION_SYNTAX = "FDL301"
    EXPRESSION_NOT_STRING = "FDL302"
    OUTPUT_OUT_OF_PLACE = "FDL303"
    ROOT_KEY_WITH_OTHERS = "FDL304"
    UNKNOWN_VARIABLE = "FDL305"
    # limits
    TOO_MANY_BRANCHES = "FDL401"
    WAIT_RANGE = "FDL402"
    TIMEOUT_RANGE = "FDL403"
    RETRY_INTERVAL_RANGE = "FDL404"
    MAX_ATTEMPTS_RANGE = "FDL405"
    BACKOFF_RATE_RANGE = "FDL406"
    CONCURRENCY_RANGE = "FDL407"
    FLOW_TIMEOUT_RANGE = "FDL408"
    # actions
    FC_MISSING_PARAMETER = "FDL501"
    FC_INVOCATION_TYPE = "FDL502"
    FC_BODY_TYPE = "FDL503"
    ACTION_NOT_EMULATED = "FDL504"
    ACTION_FORMAT = "FDL505"
    CALLBACK_IN_EXPRESS = "FDL506"
    FC_UNKNOWN_PARAMETER = "FDL507"


class ReportExtra(TypedDict, total=False):
    """The optional parts of a finding: a ``hint`` (default none) and a ``severity`` (default
    :attr:`Severity.ERROR`)."""

    hint: str | None
    severity: Severity


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about a flow definition; ``line``/``column`` are 1-based (0 = unknown)."""

    code: str
    message: str
    severity: Severity
    line: int
    column: int
    path: str
    hint: str | None = None
    source: str | None = None

    @classmethod
    def at(
        cls, code: Code, message: str, position: Position, path: str, **extra: Unpack[ReportExtra]
    ) -> Diagnostic:
        """Build a diagnostic at ``position`` (``hint=``, ``severity=``: see
        :class:`ReportExtra`)."""
        severity = extra.get("severity", Severity.ERROR)
        hint = extra.get("hint")
        return cls(code.value, message, severity, position.line, position.column, path, hint)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def with_source(self, source: str) -> Diagnostic:
        """A copy naming ``source`` (the file the flow came from)."""
        return replace(self, source=source)

    def format(self) -> str:
        """``source:line:col: severity CODE: path: message (hint)`` on one line."""
        where = f"{self.source or '<flow>'}:{self.line}:{self.column}"
        text = f"{where}: {self.severity.value} {self.code}: "
        if self.path:
            text += f"{self.path}: "
        text += self.message
        if self.hint:
            text += f" ({self.hint})"
        return text

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "hint": self.hint,
            "source": self.source,
        }

    def __str__(self) -> str:
        return self.format()


class Reporter(Protocol):
    """Where a check reports a finding: the signature of :meth:`Collector.report`."""

    def __call__(
        self, code: Code, message: str, position: Position, path: str, **extra: Unpack[ReportExtra]
    ) -> None: ...


class Collector:
    """The diagnostics of one pass. With ``once_per_place`` a second report of the same code at
    the same line and column is dropped (the parser visits shared YAML nodes more than once)."""

    def __init__(self, *, once_per_place: bool = False) -> None:
        self._diagnostics: list[Diagnostic] = []
        self._once_per_place = once_per_place
        self._seen: set[tuple[str, int, int]] = set()

    def report(
        self, code: Code, message: str, position: Position, path: str, **extra: Unpack[ReportExtra]
    ) -> None:
        """Record a finding at ``position`` (see :meth:`Diagnostic.at`)."""
        if self._once_per_place:
            place = (code.value, position.line, position.column)
            if place in self._seen:
                return
            self._seen.add(place)
        self._diagnostics.append(Diagnostic.at(code, message, position, path, **extra))

    def sorted(self) -> tuple[Diagnostic, ...]:
        """Everything reported, ordered by :func:`by_position`."""
        return sort_diagnostics(self._diagnostics)


def by_position(diagnostic: Diagnostic) -> tuple[int, int, str]:
    """The order diagnostics are shown in: line, column, then code."""
    return (diagnostic.line, diagnostic.column, diagnostic.code)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """``diagnostics`` ordered by :func:`by_position` (a stable sort)."""
    return tuple(sorted(diagnostics, key=by_position))


def join_path(prefix: str, key: str) -> str:
    """``prefix.key``, or ``key`` at the top level (empty prefix)."""
    return f"{prefix}.{key}" if prefix else key


def state_path(prefix: str, index: int, name: str) -> str:
    """``States[3](GetJobStatus)`` under ``prefix`` (empty at top level)."""
    label = f"States[{index}]({name})" if name else f"States[{index}]"
    return f"{prefix}.{label}" if prefix else label
