"""A flow's ``definition`` prop, in each form Serverless Devs projects write it:

* a path (relative to s.yaml): a Jinja2 template (``*.j2``, rendered at deploy time with
  ``definitionVars``) or a definition file sent as it is;
* ``${yaml(file('flow.yaml'))}`` (or ``json``): the document, with the magic variables inside
  it resolved, as the flow component receives it;
* a map written inline under ``definition:``;
* text (``${file('flow.yaml')}``, or a ``|`` block): the definition itself.

A document (the last three) is deployed as YAML text; :class:`DocumentLineMap` maps each of
its lines back to the file and line it was written at, so ``deploy validate`` reports FDL
findings where the user edits them.
"""

from __future__ import annotations

import io
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from deployer.config.expressions import MagicCall, MagicString, find_magic, parse_magic
from deployer.config.loaded import LoadedDocuments
from deployer.config.paths import Path_

__all__ = ["Definition", "DocumentLineMap", "dump_document", "read_definition"]


class DocumentLineMap:
    """Lines of a dumped document -> ``(line, column)`` where each was written (1-based)."""

    def __init__(self, pairs: list[tuple[int, int, int, int]]) -> None:
        self._pairs = sorted(pairs)
        self._lines = [p[0] for p in self._pairs]

    def lookup(self, line: int, column: int) -> tuple[int, int] | None:
        index = bisect_right(self._lines, line) - 1
        if index < 0:
            return None
        dline, dcol, oline, ocol = self._pairs[index]
        if dline == line:
            return oline, max(ocol + (column - dcol), 1)
        return oline + (line - dline), column  # a continuation line (block scalar)


@dataclass(frozen=True, slots=True)
class Definition:
    """Where a flow's definition comes from: ``path`` is the file the user edits;
    ``document`` the definition text when it is not read from ``path`` at deploy time."""

    path: Path
    document: str | None = None
    line_map: DocumentLineMap | None = None


def _literal(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {k: _literal(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_literal(v) for v in node]
    if isinstance(node, str) and "\n" in node:
        return LiteralScalarString(node)
    return node


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def dump_document(tree: Any) -> str:
    """``tree`` as block-style YAML (multi-line strings as ``|`` blocks)."""
    stream = io.StringIO()
    _yaml().dump(_literal(tree), stream)
    return stream.getvalue()


def _pairs(dumped: Any, original: Any, out: list[tuple[int, int, int, int]]) -> None:
    olc, dlc = getattr(original, "lc", None), getattr(dumped, "lc", None)
    if isinstance(dumped, Mapping) and isinstance(original, Mapping):
        for key in dumped:
            if key not in original:
                continue
            if olc is not None and dlc is not None:
                (dl, dc), (ol, oc) = dlc.key(key), olc.key(key)
                out.append((dl + 1, dc + 1, ol + 1, oc + 1))
            _pairs(dumped[key], original[key], out)
    elif isinstance(dumped, list) and isinstance(original, list):
        for index, item in enumerate(dumped[:len(original)]):
            if olc is not None and dlc is not None:
                (dl, dc), (ol, oc) = dlc.item(index), olc.item(index)
                out.append((dl + 1, dc + 1, ol + 1, oc + 1))
            _pairs(item, original[index], out)


def line_map(text: str, original: Any) -> DocumentLineMap | None:
    """The map from ``text`` (a dump of a resolved ``original``) to ``original``'s lines."""
    try:
        dumped = _yaml().load(text)
    except Exception:  # a dump we made always parses; without a map positions stay dumped
        return None
    pairs: list[tuple[int, int, int, int]] = []
    _pairs(dumped, original, pairs)
    return DocumentLineMap(pairs) if pairs else None


def _file_argument(raw: Any) -> str | None:
    """``x`` when ``raw`` is exactly ``${file('x')}``."""
    if not isinstance(raw, str):
        return None
    try:
        (segment,) = list(find_magic(raw))
        expr = parse_magic(segment.expression or "")
    except Exception:
        return None
    if isinstance(expr, MagicCall) and expr.function == "file" and len(expr.arguments) == 1 \
            and isinstance(expr.arguments[0], MagicString):
        return expr.arguments[0].value
    return None


def read_definition(value: Any, raw: Any, where: Path_, *, base_dir: Path, manifest: Path,
                    loaded: LoadedDocuments) -> Definition | str:
    """The :class:`Definition` of a resolved ``definition`` prop (``raw``: as written, at
    ``where``), or the problem with it."""
    if isinstance(value, Mapping):
        for document in loaded.documents:
            if document.loader == where:
                text = dump_document(value)
                source = document.source or manifest
                return Definition(source, text, line_map(text, document.tree))
        text = dump_document(value)
        return Definition(manifest, text, line_map(text, raw))
    if not isinstance(value, str) or not value.strip():
        return "must be a path to a definition file, a map, or ${yaml(file('...'))}"
    if "\n" in value:
        name = _file_argument(raw)
        if name is None:
            return Definition(manifest, value)
        return Definition((base_dir / name).resolve(), value, DocumentLineMap([(1, 1, 1, 1)]))
    path = (base_dir / value).resolve()
    if not path.is_file():
        return f"definition file {value!r} does not exist"
    return Definition(path)
