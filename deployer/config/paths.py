"""Where a value sits in s.yaml (or in a file it loads), and the problem type the resolver
reports there."""

from __future__ import annotations

__all__ = ["BROKEN", "DOC", "Path_", "VariableProblem", "format_path"]

Path_ = tuple[str | int, ...]

#: The first element of the path of a value inside a document loaded by ``${yaml(file())}``
#: or ``${json(file())}``: ``(DOC, <document number>, key, ...)``.
DOC = "@doc"


def format_path(path: Path_) -> str:
    """``('resources', 'a', 'props', 'tags', 0)`` -> ``resources.a.props.tags[0]``; a path in
    a loaded document starts at that document's root."""
    if path[:1] == (DOC,):
        path = path[2:]
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class VariableProblem(Exception):
    """A magic variable that cannot be resolved; ``path`` is where it was written."""

    def __init__(self, path: Path_, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class _Broken:
    """The value of a leaf whose magic variable could not be resolved (already reported)."""

    def __repr__(self) -> str:
        return "BROKEN"


BROKEN = _Broken()
