"""The comments of a legacy flow, by the step they belong to, so the migration keeps them.

A comment belongs to a step when it sits in the block of comment lines right above the step,
or on any line of the step that is not part of a step nested in it (a comment at the end of a
line keeps the key it follows: ``retry: <comment>``). Comments above the first key of the
document are the header; the others (between top-level keys, say) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deployer.fdl.legacy.ast import LegacyFlow, StepList, nested_lists

__all__ = ["FlowComments", "step_comments"]


@dataclass(slots=True)
class FlowComments:
    """``header`` lines, and the comment lines of each step by ``id(step)``."""

    header: list[str] = field(default_factory=list)
    by_step: dict[int, list[str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Span:
    first: int  # 1-based, the step's first line (its comment block above not included)
    last: int
    depth: int
    key: int  # id(step)


def step_comments(flow: LegacyFlow, text: str) -> FlowComments:
    """Assign every comment of ``text`` (a legacy flow's source) to a step or the header."""
    lines = text.splitlines()
    spans: list[_Span] = []
    _spans(flow.steps, len(lines), 0, spans)
    found = FlowComments()
    first_key = min((e.key_position.line for e in flow.raw.values()), default=1)
    starts = {span.first: span for span in spans}
    owner_above: dict[int, int] = {}
    for span in spans:  # the comment block right above each step
        line = span.first - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            owner_above[line] = span.key
            line -= 1
    for number, raw in enumerate(lines, start=1):
        comment, before = _comment(raw)
        if comment is None:
            continue
        if number < first_key and not before:
            found.header.append(comment)
            continue
        key = owner_above.get(number) if not before else None
        if key is None:
            inner = [s for s in spans if s.first <= number <= s.last]
            if not inner:
                continue
            key = max(inner, key=lambda s: s.depth).key
        if before and number not in starts:
            name = before.split(":", 1)[0].strip().lstrip("- ").strip()
            comment = f"{name}: {comment}" if name else comment
        found.by_step.setdefault(key, []).append(comment)
    return found


def _spans(steps: StepList, end: int, depth: int, out: list[_Span]) -> None:
    items = steps.steps
    for index, step in enumerate(items):
        last = items[index + 1].position.line - 1 if index + 1 < len(items) else end
        out.append(_Span(step.position.line, last, depth, id(step)))
        for _, child in nested_lists(step):
            _spans(child, last, depth + 1, out)


def _comment(line: str) -> tuple[str | None, str]:
    """The comment text of a line (None when it has none) and the code before it."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[index + 1:].strip(), line[:index].rstrip()
    return None, line
