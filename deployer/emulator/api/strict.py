"""Strict checks of what a request carries: UTF-8 everywhere, JSON within fixed limits.

The HTTP parser (llhttp, in the server) already refuses malformed framing: bad or duplicate
``Content-Length``, bad chunk sizes, control characters, unknown methods. What it lets through
as text is checked here, before any API module sees it, so that no input can reach a service,
the database or a response as something that cannot be encoded:

* :func:`check_request`: the request target (path and query, after percent-decoding), every
  header and a form-encoded body must be valid UTF-8 (no lone surrogates). The server decodes
  bytes with ``surrogateescape``, so invalid bytes arrive as surrogates and are caught.
* :func:`loads` parses JSON refusing ``NaN``/``Infinity``, nesting deeper than
  :data:`MAX_JSON_DEPTH`, number literals longer than :data:`MAX_NUMBER_LENGTH` characters,
  floats that overflow a double and strings holding lone surrogates (``"\\ud800"``).
* :func:`check_json_params` applies those limits to RPC parameters that hold JSON.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from deployer.emulator.api import errors as e
from deployer.emulator.api.http import HttpRequest

__all__ = ["MAX_JSON_DEPTH", "MAX_NUMBER_LENGTH", "JsonLimitError", "check_json_params",
           "check_request", "loads"]

MAX_JSON_DEPTH = 128
"""Arrays and objects nested deeper than this are refused."""
MAX_NUMBER_LENGTH = 1000
"""Number literals longer than this many characters are refused."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH_ESCAPE = re.compile("%[89a-fA-F]")


class JsonLimitError(ValueError):
    """Valid JSON syntax, but beyond what the emulator accepts (the message says which limit)."""


def has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _valid_encoded(text: str, *, plus_is_space: bool) -> bool:
    """Whether percent-encoded ``text`` decodes to valid UTF-8."""
    if text.isascii() and _HIGH_ESCAPE.search(text) is None:
        return True  # every escape is below %80: the decoded bytes are ASCII
    try:
        unquote_to_bytes(text.replace("+", " ") if plus_is_space else text).decode("utf-8")
    except UnicodeError:
        return False
    return True


def check_request(request: HttpRequest) -> None:
    """Refuse (``400 InvalidArgument``) a request whose target, headers or form body is not
    valid UTF-8."""
    path, _, query = request.raw_target.partition("?")
    if not _valid_encoded(path, plus_is_space=False):
        raise e.InvalidArgument("the request path is not valid UTF-8 (after percent-decoding)")
    if not _valid_encoded(query, plus_is_space=True):
        raise e.InvalidArgument("the query string is not valid UTF-8 (after percent-decoding)")
    for name, value in request.headers.items:
        if not (name.isascii() and value.isascii()) and (has_surrogate(name)
                                                         or has_surrogate(value)):
            raise e.InvalidArgument(f"header {_printable(name)!r} is not valid UTF-8")
    ctype = (request.headers.get("content-type") or "").lower()
    if request.body and ctype.startswith("application/x-www-form-urlencoded"):
        try:
            text = request.body.decode("utf-8")
        except UnicodeDecodeError:
            raise e.InvalidArgument("the form-encoded body is not valid UTF-8") from None
        if not _valid_encoded(text, plus_is_space=True):
            raise e.InvalidArgument(
                "the form-encoded body is not valid UTF-8 (after percent-decoding)")


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("ascii", "replace")


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_LENGTH:
        raise JsonLimitError(f"a number has {len(text)} digits; at most {MAX_NUMBER_LENGTH} "
                             "are accepted")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_LENGTH:
        raise JsonLimitError(f"a number has {len(text)} characters; at most "
                             f"{MAX_NUMBER_LENGTH} are accepted")
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"the number {text[:40]} is out of range")
    return value


def _constant(name: str) -> Any:
    raise JsonLimitError(f"{name} is not a JSON value")


def loads(data: bytes | str) -> Any:
    """``json.loads`` within the limits above. Raises :class:`JsonLimitError` for a limit,
    ``json.JSONDecodeError`` for bad syntax and ``UnicodeDecodeError`` for bad UTF-8."""
    try:
        value = json.loads(data, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except RecursionError:
        raise JsonLimitError(f"JSON is nested deeper than {MAX_JSON_DEPTH} levels") from None
    _check_value(value)
    return value


def _check_value(value: Any) -> None:
    """Depth and lone surrogates, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if has_surrogate(item):
                raise JsonLimitError("a JSON string holds a lone surrogate (\\ud800-\\udfff)")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_JSON_DEPTH:
            raise JsonLimitError(f"JSON is nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                if has_surrogate(key):
                    raise JsonLimitError("a JSON key holds a lone surrogate (\\ud800-\\udfff)")
                stack.append((child, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in item)


def check_json_params(params: Mapping[str, str], names: Iterable[str]) -> None:
    """Refuse (``400 InvalidArgument``) a parameter among ``names`` that is JSON beyond the
    limits; a value that is not JSON at all is left to the API, which names its own error."""
    pairs = (params.items() if names is params
             else ((name, params.get(name)) for name in names))
    for name, value in pairs:
        if not value or (value[0] not in "{[" and (not value[0].isspace()
                                                  or value.lstrip()[:1] not in ("{", "["))):
            continue
        try:
            loads(value)
        except JsonLimitError as exc:
            raise e.InvalidArgument(f"{name}: {exc}") from None
        except ValueError:
            continue
