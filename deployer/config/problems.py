"""Problems found in an s.yaml file, each with file:line:column and the field path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from deployer.config.loaded import LoadedDocuments
from deployer.config.paths import DOC, Path_, format_path
from deployer.errors import InvalidInputError

__all__ = ["ManifestError", "ManifestProblem", "ProblemLog", "ProblemSeverity", "SourcePosition"]


class ProblemSeverity(str, Enum):
    """An error makes the manifest unusable; a warning is printed and the load goes on."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """A 1-based line and column in a named file."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class ManifestProblem:
    """One finding: where (file:line:column, field path), what, and how bad."""

    position: SourcePosition
    path: str
    message: str
    severity: ProblemSeverity = ProblemSeverity.ERROR

    def format(self) -> str:
        """``s.yaml:14:7: resources.start_job.props.memorySize: must be ...``."""
        where = f"{self.path}: " if self.path else ""
        prefix = "warning: " if self.severity is ProblemSeverity.WARNING else ""
        return f"{self.position}: {prefix}{where}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.position.file,
            "line": self.position.line,
            "column": self.position.column,
            "path": self.path,
            "message": self.message,
            "severity": self.severity.value,
        }


class ManifestError(InvalidInputError):
    """The manifest is invalid; ``problems`` lists every error found (not just the first)."""

    def __init__(self, problems: Sequence[ManifestProblem]) -> None:
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0].format()
        else:
            file = self.problems[0].position.file if self.problems else "s.yaml"
            message = f"{file}: {len(self.problems)} problems"
        super().__init__(message, hint="see docs/manifest.md for the accepted s.yaml format")

    def details(self) -> list[str]:
        return [p.format() for p in self.problems] if len(self.problems) > 1 else []


@dataclass(slots=True)
class ProblemLog:
    """Collects problems against a parsed ruamel document, positioned by field path.

    A path inside a document loaded by ``${yaml(file())}`` is positioned in that file
    (``loaded``); ``aliases`` maps a logical path prefix to where it is written (a prop a
    resource inherits with ``extend`` is written under ``template``)."""

    file: str
    document: Any
    problems: list[ManifestProblem] = field(default_factory=list)
    loaded: LoadedDocuments = field(default_factory=LoadedDocuments)
    aliases: dict[Path_, Path_] = field(default_factory=dict)

    def position(self, path: Path_) -> SourcePosition:
        """The key position of ``path``, or of its deepest existing ancestor."""
        if path[:1] == (DOC,):
            loaded = self.loaded.get(int(path[1]))
            if loaded is not None:
                line, column = _walk(loaded.tree, path[2:])
                return SourcePosition(loaded.label, line, column)
            path = ()
        for length in range(len(path), 0, -1):
            physical = self.aliases.get(path[:length])
            if physical is not None:
                path = (*physical, *path[length:])
                break
        line, column = _walk(self.document, path)
        return SourcePosition(self.file, line, column)

    def error(self, path: Path_, message: str) -> None:
        self._add(path, message, ProblemSeverity.ERROR)

    def warning(self, path: Path_, message: str) -> None:
        self._add(path, message, ProblemSeverity.WARNING)

    def _add(self, path: Path_, message: str, severity: ProblemSeverity) -> None:
        self.problems.append(
            ManifestProblem(self.position(path), format_path(path), message, severity)
        )

    @property
    def errors(self) -> list[ManifestProblem]:
        return [p for p in self.problems if p.severity is ProblemSeverity.ERROR]

    @property
    def warnings(self) -> list[ManifestProblem]:
        return [p for p in self.problems if p.severity is ProblemSeverity.WARNING]


def _walk(node: Any, path: Path_) -> tuple[int, int]:
    """The 1-based line and column of the key (or item) ``path`` names, or of its deepest
    existing ancestor; (1, 1) without positions."""
    line, column = 0, 0
    for key in path:
        lc = getattr(node, "lc", None)
        if isinstance(node, Mapping) and key in node:
            if lc is not None:
                line, column = lc.key(key)
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            if lc is not None:
                line, column = lc.item(key)
            node = node[key]
        else:
            break
    return line + 1, column + 1
