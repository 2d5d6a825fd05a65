"""JSON documents given on the command line: inline text, or ``@FILE`` (curl/HTTPie style).

One reader for every option that takes one (``deploy execute --input``, ``deploy invoke
--event``, ``deploy flow test --input``), so each bad input gets the same clear error naming
the option or file, with line and column: a missing file, a directory, an empty file, bytes
that are not UTF-8, JSON syntax. Never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.errors import InvalidInputError

__all__ = ["JsonDocument", "read_json_document"]


@dataclass(frozen=True, slots=True)
class JsonDocument:
    """A parsed JSON document, its text and where it came from (the option or the file)."""

    value: Any
    text: str
    source: str


def read_json_document(text: str, *, option: str, base: Path) -> JsonDocument:
    """Parse ``text``: a JSON document, or ``@FILE`` naming a UTF-8 file holding one.

    A relative FILE is taken from ``base`` (the project directory, as with ``git -C``). Raises
    InvalidInputError (exit 3) naming ``option`` or the file, with line:column for JSON and
    encoding errors. Reads the file once; no other I/O.
    """
    source = option
    if text.startswith("@"):
        if not text[1:].strip():
            raise InvalidInputError(f"{option} @: no file name after '@'",
                                    hint=f"pass {option} @event.json, or the JSON itself")
        path = Path(text[1:]).expanduser()
        path = path if path.is_absolute() else base / path
        source = str(path)
        text = _read_utf8(path, option)
        if not text.strip():
            raise InvalidInputError(f"{source} is empty; {option} needs a JSON document",
                                    hint='e.g. {"delay": 20}')
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}",
            hint=None if source != option else
            f"quote it for the shell: {option} '{{\"delay\": 20}}', or use {option} @file.json",
        ) from None
    return JsonDocument(value, text, source)


#: The largest document read from ``@FILE``: 32 MiB, FC's synchronous payload limit (the most any
#: call takes). Reading stops there, so ``@/dev/zero`` is an error rather than a hang.
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024


def _read_utf8(path: Path, option: str) -> str:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        raise InvalidInputError(f"{option}: file {path} does not exist",
                                hint="a relative path is taken from the project directory "
                                "(-C)") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{option}: {path} is a directory, not a file") from None
    except OSError as exc:
        raise InvalidInputError(f"{option}: cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InvalidInputError(f"{option}: {path} holds more than 32 MiB, more than any call "
                                "takes (Function Compute's payload limit)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InvalidInputError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{data[exc.start]:02x})",
            hint="save the file as UTF-8") from None
