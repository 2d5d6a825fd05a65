"""The only writer to stdout.

``Renderer.result(obj)`` prints a result either as human text (through the view registered for
its type with :func:`view`) or as exactly one JSON document (``--output json``): stable keys,
no colour, ISO-8601 UTC timestamps. Progress, warnings and logs go to stderr, so
``deploy ... --output json | jq`` always works.

A result dataclass may define ``to_json(self) -> object`` to choose its JSON shape; otherwise
its fields are converted recursively.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import re
import sys
from collections.abc import Callable, Mapping
from datetime import date, datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # rich is imported when text is first printed through it
    from rich.console import Console, RenderableType

OUTPUT_FORMATS = ("text", "json")

T = TypeVar("T")
ViewFn = Callable[[T], "RenderableType | str"]
_VIEWS: dict[type, Callable[[Any], RenderableType | str]] = {}


def view(result_type: type[T]) -> Callable[[ViewFn[T]], ViewFn[T]]:
    """Register the human-text view of ``result_type`` (used when output is ``text``)."""

    def register(fn: ViewFn[T]) -> ViewFn[T]:
        _VIEWS[result_type] = fn
        return fn

    return register


def jsonable(value: Any) -> Any:
    """Convert a result (dataclasses, enums, datetimes, paths, bytes) into JSON-ready data."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and not isinstance(value, type):
        return jsonable(to_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        text = value.astimezone(timezone.utc).isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    return value


#: Width of tables written to a pipe or file (CI logs): wide enough that timestamps, names and
#: ARNs stay on one line; a terminal uses its own width.
PIPE_WIDTH = 200


def _pipe_width(stream: IO[str]) -> int | None:
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return None
    return PIPE_WIDTH


#: What Rich would change in a plain progress line (an emoji code such as ``:fire:``); such
#: lines, and those with tabs or control characters, are printed through Rich.
_RICH_SENSITIVE = re.compile(r":\S*?:")


class Renderer:
    """Writes results to stdout and progress/warnings to stderr.

    Rich (for views, styles and live displays) is imported when first needed: JSON results
    and plain progress lines are written directly, so ``--output json`` never loads it."""

    def __init__(
        self,
        output: str = "text",
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        color: bool | None = None,
    ) -> None:
        if output not in OUTPUT_FORMATS:
            raise ValueError(f"unknown output format {output!r}")
        self.output = output
        self._stdout: IO[str] = stdout if stdout is not None else sys.stdout
        self._stderr: IO[str] = stderr if stderr is not None else sys.stderr
        self._no_color = None if color is None else not color
        self._out: Console | None = None
        self._err: Console | None = None

    @property
    def out(self) -> Console:
        """The Rich console on stdout (colour only for text output)."""
        if self._out is None:
            from rich.console import Console

            self._out = Console(
                file=self._stdout,
                no_color=self._no_color if self.output == "text" else True,
                highlight=False,
                soft_wrap=True,
                width=_pipe_width(self._stdout),
            )
        return self._out

    @property
    def err(self) -> Console:
        """The Rich console on stderr (progress, warnings, live views beside JSON)."""
        if self._err is None:
            from rich.console import Console

            self._err = Console(file=self._stderr, no_color=self._no_color, highlight=False,
                                soft_wrap=True)
        return self._err

    @property
    def is_json(self) -> bool:
        return self.output == "json"

    def result(self, result: object) -> None:
        """Print ``result``: its registered view as text, or one JSON document."""
        if self.is_json:
            self._stdout.write(json.dumps(jsonable(result), indent=2, ensure_ascii=False) + "\n")
            self._stdout.flush()
            return
        fn = _VIEWS.get(type(result))
        if fn is None:
            for klass in type(result).__mro__[1:]:
                if klass in _VIEWS:
                    fn = _VIEWS[klass]
                    break
        rendered: RenderableType | str = (
            fn(result) if fn else json.dumps(jsonable(result), indent=2, ensure_ascii=False)
        )
        self.out.print(rendered)

    def stream(self, result: object) -> None:
        """One item of a stream (``deploy dev``, ``deploy logs --follow``): its text view, or one
        compact JSON document on a line of its own (JSON Lines), flushed at once."""
        if not self.is_json:
            self.result(result)
            return
        line = json.dumps(jsonable(result), ensure_ascii=False, separators=(",", ":"))
        self._stdout.write(line + "\n")
        self._stdout.flush()

    def progress(self, message: str) -> None:
        """A progress line on stderr (never on stdout)."""
        if self._err is None and message.isprintable() and not _RICH_SENSITIVE.search(message):
            self._stderr.write(message + "\n")  # what Rich would write for it, without Rich
            self._stderr.flush()
            return
        self.err.print(message, markup=False)

    def warn(self, message: str) -> None:
        self.err.print(f"Warning: {message}", style="yellow", markup=False)
