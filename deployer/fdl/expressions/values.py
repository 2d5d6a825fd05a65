"""Helpers over the JSON value model shared by the evaluator and the built-ins.

Values are plain JSON data: ``dict`` (string keys), ``list``, ``str``, ``int``, ``float``,
``bool`` and ``None``. ``bool`` is never a number here (Python's ``True == 1`` is not ours).
Integers are kept exact; an integral float such as ``3.0`` equals the integer ``3``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "canonical_key",
    "decode_json",
    "is_number",
    "json_equal",
    "kind_name",
    "render_text",
    "to_json_text",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_KIND_NAMES: dict[type, str] = {
    dict: "map",
    list: "array",
    str: "string",
    int: "int",
    float: "float",
    bool: "bool",
    type(None): "null",
}


def kind_name(value: Any) -> str:
    """The expression-language name of a value's kind (``map``, ``array``, ``null``...)."""
    return _KIND_NAMES.get(type(value), type(value).__name__)


def is_number(value: Any) -> bool:
    """True for ``int`` and ``float`` values, false for ``bool``."""
    kind = type(value)
    return kind is int or kind is float


def json_equal(left: Any, right: Any) -> bool:
    """Deep equality: numbers compare numerically, different kinds are unequal."""
    lk, rk = type(left), type(right)
    if lk is rk:
        if lk is dict:
            if len(left) != len(right):
                return False
            for key, value in left.items():
                if key not in right or not json_equal(value, right[key]):
                    return False
            return True
        if lk is list:
            return len(left) == len(right) and all(
                json_equal(a, b) for a, b in zip(left, right, strict=True)
            )
        return bool(left == right)
    if (lk is int or lk is float) and (rk is int or rk is float):
        return bool(left == right)
    return False


def canonical_key(value: Any) -> Any:
    """A hashable key: ``json_equal(a, b)`` iff ``canonical_key(a) == canonical_key(b)``."""
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int or kind is float:
        return ("n", value)  # hash(1) == hash(1.0) and 1 == 1.0
    if kind is list:
        return ("l", tuple(canonical_key(item) for item in value))
    if kind is dict:
        return ("d", frozenset((key, canonical_key(item)) for key, item in value.items()))
    return ("s" if kind is str else "z", value)


def _normalise_floats(value: Any) -> Any:
    kind = type(value)
    if kind is float and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if kind is list:
        return [_normalise_floats(item) for item in value]
    if kind is dict:
        return {key: _normalise_floats(item) for key, item in value.items()}
    return value


def to_json_text(value: Any) -> str:
    """Compact JSON with sorted keys (Go's ``json.Marshal`` order); ``3.0`` renders as ``3``.

    Raises ``ValueError`` for values that are not JSON (non-finite floats) and
    ``RecursionError`` for absurdly deep values; callers convert both.
    """
    return json.dumps(
        _normalise_floats(value),
        separators=(",", ":"),
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
    )


def render_text(value: Any) -> str:
    """How ``format`` renders an argument: strings as is, numbers in shortest form, ``true``,
    ``false``, ``null``; arrays and maps as compact JSON."""
    kind = type(value)
    if kind is str:
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is int:
        return str(value)
    if kind is float:
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return to_json_text(value)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
#: A ``\\uD800``-``\\uDFFF`` escape: the JSON text may decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def decode_json(text: str) -> Any:
    """Strict JSON ``text`` (no NaN/Infinity) as a value; ValueError or RecursionError when it
    is not JSON.

    A lone surrogate escape (``"\\ud800"``) decodes to U+FFFD, as CloudFlow's (Go's) JSON
    decoder reads it: every value must be valid Unicode to be stored, shown and sent on."""
    value = _DECODER.decode(text)
    if not _SURROGATE_ESCAPE.search(text):
        return value
    return _valid_unicode(value)


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_valid_unicode(item) for item in value]
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    return value
