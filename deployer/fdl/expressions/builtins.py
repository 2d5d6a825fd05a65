"""The built-in functions of the expression language (reference §4.5) and their registry.

:data:`BUILTINS` maps each function name to a :class:`Builtin` (arity and implementation); each
implementation registers itself with ``@_builtin(name, min_args, max_args)`` right above its
definition. The parser checks names and arities against it; the evaluator calls the
implementations from it.
Every implementation takes the evaluation's :class:`~deployer.fdl.expressions.budget.Meter`, then
(``uses_entropy``) the :class:`Entropy`, then the already evaluated JSON values, and returns a JSON
value, raising :class:`EvaluationError` (naming the function) for arguments of the wrong kind.
Each charges the meter for the work that grows with its data before doing it (strings it builds
are capped), so no call runs long (docs/fdl-semantics.md, "Bounds"). ``regexMatchString`` runs
on RE2 (:mod:`deployer.fdl.expressions.regex`): linear time, Go's syntax.

Randomness (``uuid``, ``randomInt``) comes from an :class:`Entropy` passed by the evaluator from
``ExpressionScope.entropy``: :class:`SystemEntropy` by default, :class:`SeededEntropy` for
replayable runs. No function reads the clock or does I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, TypeVar, runtime_checkable

from deployer.fdl.expressions.budget import Meter, charge_embedded, charge_size, check_length
from deployer.fdl.expressions.errors import EvaluationError, EvaluationReason
from deployer.fdl.expressions.regex import regex_search
from deployer.fdl.expressions.values import (
    INT64_MAX,
    INT64_MIN,
    canonical_key,
    decode_json,
    json_equal,
    kind_name,
    render_text,
    to_json_text,
)

__all__ = [
    "BUILTINS",
    "Builtin",
    "Entropy",
    "SeededEntropy",
    "SystemEntropy",
]


@runtime_checkable
class Entropy(Protocol):
    """Source of randomness for ``uuid()`` and ``randomInt()``."""

    def random_int(self, low: int, high: int) -> int:
        """An integer in ``[low, high)``; the caller guarantees ``low < high``."""
        ...

    def uuid4(self) -> str:
        """A version-4 UUID in canonical lowercase hyphenated form."""
        ...


class SystemEntropy:
    """The operating system's randomness (the default)."""

    def random_int(self, low: int, high: int) -> int:
        return low + random.SystemRandom().randrange(high - low)

    def uuid4(self) -> str:
        return str(uuid.uuid4())


class SeededEntropy:
    """Deterministic randomness from a seed: the same seed gives the same sequence.

    The interpreter can seed one per execution (e.g. from the execution name) so a replay of the
    history reproduces every ``uuid()`` and ``randomInt()`` result.
    """

    def __init__(self, seed: int | str | bytes) -> None:
        self._random = random.Random(seed)

    def random_int(self, low: int, high: int) -> int:
        return low + self._random.randrange(high - low)

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self._random.getrandbits(128), version=4))


@dataclass(frozen=True, slots=True)
class Builtin:
    """A built-in function: ``min_args``..``max_args`` arguments (``None`` = variadic)."""

    name: str
    min_args: int
    max_args: int | None
    impl: Callable[..., Any]
    uses_entropy: bool = False

    def arity_text(self) -> str:
        """Human description of the accepted argument count."""
        if self.max_args is None:
            return f"at least {self.min_args} argument{'s' if self.min_args != 1 else ''}"
        if self.min_args == self.max_args:
            return f"{self.min_args} argument{'s' if self.min_args != 1 else ''}"
        return f"{self.min_args} to {self.max_args} arguments"


BUILTINS: dict[str, Builtin] = {}
_F = TypeVar("_F", bound=Callable[..., Any])


def _builtin(
    name: str, min_args: int, max_args: int | None, *, uses_entropy: bool = False
) -> Callable[[_F], _F]:
    """Register the decorated implementation in :data:`BUILTINS` as ``name``."""

    def register(impl: _F) -> _F:
        BUILTINS[name] = Builtin(name, min_args, max_args, impl, uses_entropy)
        return impl

    return register


def _fail(
    function: str, message: str, reason: EvaluationReason = EvaluationReason.TYPE
) -> NoReturn:
    raise EvaluationError(f"{function}(): {message}", reason)


def _need(function: str, position: int, value: Any, *kinds: type) -> None:
    if type(value) not in kinds:
        expected = " or ".join(kind_name(k()) for k in kinds)
        _fail(function, f"argument {position} must be {expected}, got {kind_name(value)}")


def _int_arg(function: str, position: int, value: Any) -> int:
    if type(value) is int:
        return int(value)
    if type(value) is float and value.is_integer():
        return int(value)
    _fail(function,
          f"argument {position} must be an integer, got {kind_name(value)} {value!r:.100}")


@_builtin("format", 1, None)
def _format(meter: Meter, template: Any, *args: Any) -> str:
    _need("format", 1, template, str)
    meter.charge_text(len(template))
    pieces = template.split("{}")
    meter.charge(len(pieces))
    out = [pieces[0]]
    length = len(pieces[0])
    for index, piece in enumerate(pieces[1:]):
        text = _text(meter, "format", args[index]) if index < len(args) else "{}"
        length += len(text) + len(piece)
        check_length("format()", length)
        out += (text, piece)
    meter.charge_text(length)
    return "".join(out)


def _text(meter: Meter, function: str, value: Any) -> str:
    if type(value) is str:
        return str(value)
    charge_size(meter, value)
    try:
        return render_text(value)
    except (ValueError, RecursionError) as exc:
        _fail(function, f"cannot render value: {exc}", EvaluationReason.FUNCTION)


@_builtin("length", 1, 1)
def _length(meter: Meter, value: Any) -> int:
    _need("length", 1, value, list, dict, str)
    return len(value)


@_builtin("regexMatchString", 2, 2)
def _regex_match_string(meter: Meter, pattern: Any, subject: Any) -> bool:
    _need("regexMatchString", 1, pattern, str)
    _need("regexMatchString", 2, subject, str)
    try:
        return regex_search(meter, pattern, subject)
    except ValueError as exc:
        _fail("regexMatchString", str(exc), EvaluationReason.FUNCTION)


@_builtin("split", 2, 2)
def _split(meter: Meter, text: Any, separator: Any) -> list[str]:
    _need("split", 1, text, str)
    _need("split", 2, separator, str)
    meter.charge_text(len(text))
    if separator == "":
        meter.charge(len(text))
        return list(text)
    meter.charge(text.count(separator) + 1)
    return list(text.split(separator))


@_builtin("get", 2, 2)
def _get(meter: Meter, container: Any, key: Any) -> Any:
    if container is None:
        return None
    if type(container) is dict:
        _need("get", 2, key, str)
        return container.get(key)
    if type(container) is list:
        index = _int_arg("get", 2, key)
        if index < 0:
            index += len(container)
        return container[index] if 0 <= index < len(container) else None
    _fail("get", f"argument 1 must be array or map, got {kind_name(container)}")


@_builtin("intAdd", 2, 2)
def _int_add(meter: Meter, left: Any, right: Any) -> int:
    total = _int_arg("intAdd", 1, left) + _int_arg("intAdd", 2, right)
    if not INT64_MIN <= total <= INT64_MAX:
        _fail("intAdd", "integer overflow", EvaluationReason.ARITHMETIC)
    return total


@_builtin("randomInt", 2, 2, uses_entropy=True)
def _random_int(meter: Meter, entropy: Entropy, low: Any, high: Any) -> int:
    lo, hi = _int_arg("randomInt", 1, low), _int_arg("randomInt", 2, high)
    if lo >= hi:
        _fail("randomInt", f"min ({lo}) must be less than max ({hi})", EvaluationReason.FUNCTION)
    return int(entropy.random_int(lo, hi))


@_builtin("arrayContains", 2, 2)
def _array_contains(meter: Meter, array: Any, value: Any) -> bool:
    _need("arrayContains", 1, array, list)
    charge_size(meter, array)  # each comparison walks at most its element
    charge_size(meter, value)
    return any(json_equal(item, value) for item in array)


@_builtin("arrayUnique", 1, 1)
def _array_unique(meter: Meter, array: Any) -> list[Any]:
    _need("arrayUnique", 1, array, list)
    charge_size(meter, array)  # canonical_key walks every element
    seen: set[Any] = set()
    unique = []
    for item in array:
        key = canonical_key(item)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


@_builtin("toArray", 0, None)
def _to_array(meter: Meter, *args: Any) -> list[Any]:
    for value in args:
        charge_embedded(meter, value)
    return list(args)


@_builtin("mapKeys", 1, 1)
def _map_keys(meter: Meter, mapping: Any) -> list[Any]:
    _need("mapKeys", 1, mapping, dict)
    _charge_keys(meter, mapping)
    return sorted(mapping)


@_builtin("mapValues", 1, 1)
def _map_values(meter: Meter, mapping: Any) -> list[Any]:
    _need("mapValues", 1, mapping, dict)
    _charge_keys(meter, mapping)
    return [mapping[key] for key in sorted(mapping)]


def _charge_keys(meter: Meter, mapping: dict[str, Any]) -> None:
    """Sorting the keys: one step per key and per 16 characters of them."""
    meter.charge(len(mapping))
    meter.charge_text(sum(map(len, mapping)))


@_builtin("toBase64", 1, 1)
def _to_base64(meter: Meter, text: Any) -> str:
    _need("toBase64", 1, text, str)
    meter.charge_text(len(text))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        _fail("toBase64", f"string is not valid Unicode: {exc}", EvaluationReason.FUNCTION)
    size = (len(data) + 2) // 3 * 4
    check_length("toBase64()", size)
    meter.charge_text(size)
    return base64.b64encode(data).decode("ascii")


@_builtin("fromBase64", 1, 1)
def _from_base64(meter: Meter, text: Any) -> str:
    _need("fromBase64", 1, text, str)
    meter.charge_text(len(text))
    try:
        return base64.b64decode(text.encode("ascii"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        _fail("fromBase64", f"invalid base64 text {text!r:.200}: {exc}", EvaluationReason.FUNCTION)


_HASHES = {"MD5": "md5", "SHA1": "sha1", "SHA256": "sha256", "SHA512": "sha512"}


@_builtin("hash", 2, 2)
def _hash(meter: Meter, text: Any, algorithm: Any) -> str:
    _need("hash", 1, text, str)
    _need("hash", 2, algorithm, str)
    meter.charge_text(len(text) + len(algorithm))
    name = _HASHES.get(algorithm.upper().replace("-", "").replace("_", ""))
    if name is None:
        _fail(
            "hash",
            f"unknown algorithm {algorithm!r:.100}; use MD5, SHA-1, SHA-256 or SHA-512",
            EvaluationReason.FUNCTION,
        )
    try:
        return hashlib.new(name, text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError as exc:
        _fail("hash", f"string is not valid Unicode: {exc}", EvaluationReason.FUNCTION)


@_builtin("uuid", 0, 0, uses_entropy=True)
def _uuid(meter: Meter, entropy: Entropy) -> str:
    return str(entropy.uuid4())


@_builtin("stringToJson", 1, 1)
def _string_to_json(meter: Meter, text: Any, function: str = "stringToJson") -> Any:
    _need(function, 1, text, str)
    meter.charge_text(len(text))
    meter.charge(text.count(",") + 1)  # elements and entries: the result's size is charged
    try:
        return decode_json(text)
    except (ValueError, RecursionError) as exc:
        _fail(function, f"invalid JSON text: {exc}", EvaluationReason.FUNCTION)


BUILTINS["fromJSON"] = Builtin(
    "fromJSON", 1, 1, lambda meter, text: _string_to_json(meter, text, "fromJSON"))


@_builtin("jsonToString", 1, 1)
def _json_to_string(meter: Meter, value: Any, function: str = "jsonToString") -> str:
    charge_size(meter, value)
    try:
        text = to_json_text(value)
    except (ValueError, TypeError, RecursionError) as exc:
        _fail(function, f"cannot serialise value: {exc}", EvaluationReason.FUNCTION)
    check_length(f"{function}()", len(text))
    meter.charge_text(len(text))
    return text


BUILTINS["toJSON"] = Builtin(
    "toJSON", 1, 1, lambda meter, value: _json_to_string(meter, value, "toJSON"))


@_builtin("jsonMerge", 2, 2)
def _json_merge(meter: Meter, left: Any, right: Any) -> dict[str, Any]:
    _need("jsonMerge", 1, left, dict)
    _need("jsonMerge", 2, right, dict)
    meter.charge(len(left) + len(right))
    return {**left, **right}
