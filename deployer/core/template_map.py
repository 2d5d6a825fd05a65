"""Which template line produced each rendered line: diagnostics on the lines the user edits.

A flow template is rendered twice. The second time its Jinja2 syntax tree is instrumented
before compiling: every piece of literal template text gets an invisible marker at its start
and after each of its newlines (naming its template line and column), and every ``{{ ... }}``
output gets one naming where the expression is written. Whitespace control (``{%-``, ``-%}``)
is applied by Jinja's lexer before the tree exists, so markers never change what is stripped,
and loops, conditionals, macros and ``{% set %}`` blocks carry their markers to wherever their
text ends up. The markers are then read out of the second rendering into a
:class:`TemplateLineMap` from rendered ``(line, column)`` to template ``(line, column)``.

Columns are exact inside literal text; inside the value of an expression they point at the
expression. If the instrumented rendering, markers removed, is not exactly the plain rendering
(a filter that rewrote marked text, say), there is no map and positions stay rendered ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes

__all__ = ["TemplateLineMap", "build_line_map"]

_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKER = re.compile(f"{_OPEN}(\\d+),(\\d+),([af]){_CLOSE}")


@dataclass(frozen=True, slots=True)
class _Segment:
    """From rendered column ``rcol`` on, text comes from template ``(tline, tcol)``; literal
    text advances column by column (``fixed`` False), an expression's value does not."""

    rcol: int
    tline: int
    tcol: int
    fixed: bool


class TemplateLineMap:
    """Rendered ``(line, column)`` -> template ``(line, column)``, both 1-based."""

    def __init__(self, lines: list[list[_Segment]]) -> None:
        self._lines = lines

    def lookup(self, line: int, column: int) -> tuple[int, int] | None:
        """The template position of a rendered one; None when the line is unknown."""
        if not 1 <= line <= len(self._lines) or not self._lines[line - 1]:
            return None
        column = max(column, 1)
        segment = self._lines[line - 1][0]
        for candidate in self._lines[line - 1]:
            if candidate.rcol > column:
                break
            segment = candidate
        if segment.fixed:
            return segment.tline, segment.tcol
        return segment.tline, segment.tcol + max(column - segment.rcol, 0)


def build_line_map(env: jinja2.Environment, source: str, context: Mapping[str, Any],
                   plain: str) -> TemplateLineMap | None:
    """Render ``source`` instrumented and map it (see the module docstring); None when the
    instrumented rendering does not reproduce ``plain`` exactly."""
    try:
        tree = env.parse(source)
        _instrument(tree, source.splitlines())
        marked = env.from_string(tree).render(context)
    except Exception:  # the plain rendering succeeded; without a map positions stay rendered
        return None
    if _MARKER.sub("", marked) != plain:
        return None
    return TemplateLineMap(_read(marked))


def _marker(line: int, column: int, fixed: bool) -> str:
    return f"{_OPEN}{line},{column},{'f' if fixed else 'a'}{_CLOSE}"


def _instrument(tree: nodes.Template, source_lines: list[str]) -> None:
    expressions_seen: dict[int, int] = {}
    for output in tree.find_all(nodes.Output):
        children: list[nodes.Expr] = []
        for child in output.nodes:
            if isinstance(child, nodes.TemplateData):
                column = _data_column(source_lines, child.lineno, child.data)
                child.data = _mark_data(child.data, child.lineno, column)
            else:
                nth = expressions_seen.get(child.lineno, 0)
                expressions_seen[child.lineno] = nth + 1
                column = _expression_column(source_lines, child.lineno, nth)
                children.append(nodes.TemplateData(_marker(child.lineno, column, True),
                                                   lineno=child.lineno))
            children.append(child)
        output.nodes = children


def _mark_data(data: str, line: int, column: int) -> str:
    parts = data.split("\n")
    marked = [_marker(line, column, False) + parts[0] if parts[0] else ""]
    marked += [_marker(line + i, 1, False) + part for i, part in enumerate(parts[1:], start=1)]
    return "\n".join(marked)


def _data_column(source_lines: list[str], line: int, data: str) -> int:
    """Where on template line ``line`` the literal text ``data`` starts (1-based)."""
    first = data.split("\n", 1)[0]
    if not first or not 1 <= line <= len(source_lines):
        return 1
    raw = source_lines[line - 1]
    at = [m.start() for m in re.finditer(re.escape(first), raw)]
    after_tag = [p for p in at if p == 0 or raw[p - 1] == "}" or raw[p - 2:p] == "}-"]
    return (after_tag or at or [0])[0] + 1


def _expression_column(source_lines: list[str], line: int, nth: int) -> int:
    """The column of the ``nth`` ``{{`` on template line ``line`` (its first character)."""
    if not 1 <= line <= len(source_lines):
        return 1
    starts = [m.start() for m in re.finditer(r"\{\{", source_lines[line - 1])]
    if not starts:
        return 1
    return starts[min(nth, len(starts) - 1)] + 1


def _read(marked: str) -> list[list[_Segment]]:
    """Split the marked rendering into rendered lines of segments."""
    lines: list[list[_Segment]] = [[]]
    current: _Segment | None = None
    column = 1
    position = 0
    for match in _MARKER.finditer(marked):
        column, current = _advance(marked[position:match.start()], lines, column, current)
        current = _Segment(column, int(match[1]), int(match[2]), match[3] == "f")
        lines[-1].append(current)
        position = match.end()
    _advance(marked[position:], lines, column, current)
    return lines


def _advance(text: str, lines: list[list[_Segment]], column: int,
             current: _Segment | None) -> tuple[int, _Segment | None]:
    """Consume unmarked ``text``: a newline starts a rendered line that continues the current
    segment (an expression value spanning lines; literal text re-marks each line itself)."""
    for piece_index, piece in enumerate(text.split("\n")):
        if piece_index:
            lines.append([])
            column = 1
            if current is not None:
                line = current.tline if current.fixed else current.tline + 1
                current = _Segment(1, line, current.tcol if current.fixed else 1, current.fixed)
                lines[-1].append(current)
        column += len(piece)
    return column, current
