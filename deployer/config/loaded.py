"""Files that s.yaml reads through its magic functions: ``file()``, ``json()``, ``yaml()``,
``path()``.

A document parsed by ``yaml()`` keeps its line and column on every map and list (ruamel.yaml's
round-trip loader), and is registered in :class:`LoadedDocuments` under a number, so a problem
found inside it — an unknown variable in a flow definition loaded with
``${yaml(file('flow.yaml'))}`` — names that file, line and column, not s.yaml's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

__all__ = ["MAX_FILE_BYTES", "LoadedDocument", "LoadedDocuments", "read_text_file"]

#: The largest file a magic function reads (a flow definition is at most 128 KiB).
MAX_FILE_BYTES = 1024 * 1024


class FileProblem(ValueError):
    """A file that cannot be read or parsed: the message names it (and the line, if known)."""


def read_text_file(base_dir: Path, name: str) -> tuple[Path, str]:
    """``(path, text)`` of ``name`` (relative to ``base_dir``); FileProblem otherwise."""
    path = (base_dir / name).expanduser()
    shown = name
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FileProblem(f"file {shown!r} does not exist (relative to "
                          f"{base_dir})") from None
    except IsADirectoryError:
        raise FileProblem(f"{shown!r} is a directory, not a file") from None
    except OSError as exc:
        raise FileProblem(f"cannot read {shown!r}: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileProblem(f"{shown!r} is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        return path, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileProblem(f"{shown}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
                          ) from None


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A parsed document: its tree, the file it came from (None for text that came from
    elsewhere) and the s.yaml path of the value that loaded it."""

    tree: Any
    label: str
    source: Path | None
    loader: tuple[str | int, ...]
    text: str = ""


@dataclass
class LoadedDocuments:
    """Every document the magic functions parsed, by number (see the module docstring)."""

    documents: list[LoadedDocument] = field(default_factory=list)

    def add(self, document: LoadedDocument) -> int:
        self.documents.append(document)
        return len(self.documents) - 1

    def get(self, number: int) -> LoadedDocument | None:
        return self.documents[number] if 0 <= number < len(self.documents) else None


def parse_yaml(text: str, label: str) -> Any:
    """The YAML document ``text`` (round-trip, with positions); FileProblem naming ``label``
    and the line for invalid YAML."""
    try:
        return YAML(typ="rt").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise FileProblem(f"{where}: invalid YAML: {message}") from None
    except (YAMLError, RecursionError, TypeError) as exc:
        raise FileProblem(f"{label}: invalid YAML: {exc}") from None


def parse_json(text: str, label: str) -> Any:
    """The JSON document ``text``; FileProblem naming ``label``, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileProblem(f"{label}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
                          ) from None
    except RecursionError:
        raise FileProblem(f"{label}: invalid JSON: nested too deeply") from None
