"""Reading s.yaml: UTF-8 text -> a YAML map with line and column on every node, refusing
alias bombs and documents nested too deeply (every failure a positioned ManifestError)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from deployer.config.problems import ManifestError, ManifestProblem, SourcePosition

__all__ = ["MAX_EXPANDED_VALUES", "MAX_NESTING", "parse_manifest"]


def parse_manifest(path: Path) -> Any:
    """The parsed s.yaml at ``path`` (a YAML map); ManifestError or NotFoundError."""
    from deployer.errors import NotFoundError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(
            f"manifest {path} does not exist",
            hint="run in the project directory, or pass -C <dir> / -t <file>",
        ) from None
    except IsADirectoryError:
        raise ManifestError([_problem(path, 1, 1, "", "is a directory, not a file")]) from None
    except UnicodeDecodeError as exc:
        data = path.read_bytes()
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ManifestError([_problem(path, line, column, "",
                                      f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save "
                                      "the file as UTF-8")]) from None
    except OSError as exc:
        raise ManifestError([_problem(path, 1, 1, "", f"cannot read the file: {exc.strerror}")]
                            ) from None
    try:
        document = _yaml_document(text)
    except RecursionError:
        line, column = _deep_position(text)
        raise ManifestError([_problem(path, line, column, "",
                                      f"nests more than {MAX_NESTING} levels deep; s.yaml "
                                      "holds a few levels of maps and lists")]) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise ManifestError([_problem(path, line, column, "", f"invalid YAML: {message}")]) \
            from None
    except YAMLError as exc:
        raise ManifestError([_problem(path, 1, 1, "", f"invalid YAML: {exc}")]) from None
    if not isinstance(document, Mapping):
        raise ManifestError(
            [_problem(path, 1, 1, "", "must be a YAML map with edition, name and resources")]
        )
    _check_expansion(path, document)
    return document


@functools.lru_cache(maxsize=2)
def _yaml_document(text: str) -> Any:
    """The parsed YAML of ``text``; a command loads s.yaml once per account id, and the same
    text is parsed once (the loader only reads the document; a YAML error is not cached)."""
    return YAML(typ="rt").load(text)


#: The most values s.yaml may hold once its aliases are expanded (a real one has a few hundred).
MAX_EXPANDED_VALUES = 100_000

#: How deep s.yaml may nest when the YAML reader's own recursion gives up (reported where).
MAX_NESTING = 64


def _deep_position(text: str) -> tuple[int, int]:
    """Where ``text`` first nests deeper than :data:`MAX_NESTING` (read as a flat stream of
    YAML events, which needs no recursion); (1, 1) if it does not."""
    depth = 0
    try:
        for event in YAML(typ="rt").parse(text):
            kind = type(event).__name__
            if kind in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                if depth > MAX_NESTING:
                    mark = event.start_mark
                    return mark.line + 1, mark.column + 1
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
    except (YAMLError, RecursionError):
        pass
    return 1, 1


def _check_expansion(path: Path, document: Mapping[str, Any]) -> None:
    """Refuse a document whose aliases (``*name``) expand to more than
    :data:`MAX_EXPANDED_VALUES` values (an "alias bomb"), or refer to themselves.

    The parser shares an aliased node rather than copying it, so this counts each distinct node
    once (time linear in the file) while summing what an expansion would produce.
    """
    sizes: dict[int, int] = {}
    for key, value in document.items():
        size = _expanded_size(value, sizes, set())
        if size is None or size > MAX_EXPANDED_VALUES:
            line, column = _key_position(document, key)
            what = ("contains a YAML alias that refers to itself" if size is None else
                    f"expands its YAML aliases to more than {MAX_EXPANDED_VALUES:,} values")
            raise ManifestError([_problem(path, line, column, str(key),
                                          f"{what}; write the values out (or use fewer "
                                          "nested aliases)")])


def _expanded_size(node: Any, sizes: dict[int, int], open_nodes: set[int]) -> int | None:
    """How many values ``node`` holds with every alias expanded; None for a cycle. Stops
    counting once the limit is passed."""
    if not isinstance(node, (Mapping, list)):
        return 1
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        return None
    open_nodes.add(key)
    total = 1
    children = [*node.keys(), *node.values()] if isinstance(node, Mapping) else node
    for child in children:
        size = _expanded_size(child, sizes, open_nodes)
        if size is None:
            return None
        total += size
        if total > MAX_EXPANDED_VALUES:
            break
    open_nodes.discard(key)
    sizes[key] = total
    return total


def _key_position(document: Mapping[str, Any], key: Any) -> tuple[int, int]:
    try:
        line, column = document.lc.key(key)  # type: ignore[attr-defined]
        return int(line) + 1, int(column) + 1
    except (AttributeError, KeyError, TypeError):
        return 1, 1


def _problem(path: Path, line: int, column: int, field: str, message: str) -> ManifestProblem:
    return ManifestProblem(SourcePosition(path.name, line, column), field, message)


