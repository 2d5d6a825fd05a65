"""How a surface of the emulator declares its wire contract: one route table, parameter readers,
an error table. Every surface uses them: the cloud products (FC 3.0, CloudFlow, RAM, STS, Log
Service) and the local ones (``/_emulator/``, ``/_console/``).

A surface's module holds, in this order:

* its **table**, a :class:`Routes`: each entry says how a request reaches a handler, by an HTTP
  method and a path template (``"GET", "/2023-03-30/functions/{name}"``) or, for an RPC
  product, by its action name (``Routes.action("StartExecution")``). Entries are declared on
  the handlers, so an entry and its service call sit together;
* its **readers**: RPC parameters through :class:`RpcCall` (``call.required("FlowName")``,
  ``call.integer("Limit", 60, 1, 999)``), worded with the product's :class:`ParamErrors`;
* its **shapes**: one function per wire object, from a service value to the JSON the SDKs
  read, used by every answer (and by ``deployer.testing`` and the console) that sends it;
* its **error table**, an :class:`ErrorTable`: each domain error of
  :mod:`deployer.emulator.services.errors` to the product's wire error.

Adding an action is one entry and its service call.

Path templates: literal segments and ``{name}`` segments, each one non-empty segment of the raw
path (``%2F`` stays inside it), handed to the handler percent-decoded. A trailing slash is
tolerated and ``HEAD`` is answered as ``GET``, on every surface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast
from urllib.parse import unquote

from deployer.emulator.api.errors import ApiError
from deployer.emulator.api.http import HttpRequest
from deployer.emulator.services.errors import ServiceError

__all__ = ["ANY", "ErrorTable", "ParamErrors", "RequestContext", "Routes", "RpcCall"]

H = TypeVar("H")
ANY = "*"
"""An entry's method for "any method" (RPC actions are sent with GET or POST)."""

_SEGMENT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Entry(Generic[H]):
    """One route: the methods it answers, its template and its handler."""

    methods: frozenset[str]
    template: str
    handler: H
    quick: bool = False


def _pattern(template: str) -> re.Pattern[str]:
    parts, last = [], 0
    for m in _SEGMENT.finditer(template):
        parts.append(re.escape(template[last:m.start()]))
        parts.append(f"(?P<{m.group(1)}>[^/]+)")
        last = m.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts) + "/?")


class Routes(Generic[H]):
    """A surface's route table, the one dispatch mechanism of the emulator's wire edge."""

    def __init__(self) -> None:
        self._exact: dict[str, list[Entry[H]]] = {}
        self._patterns: list[tuple[re.Pattern[str], Entry[H]]] = []
        self._entries: list[Entry[H]] = []

    def route(self, methods: str, template: str, *, quick: bool = False) -> Callable[[H], H]:
        """Decorator: answer ``methods`` (space-separated, or :data:`ANY`) on ``template``
        with the decorated handler. ``quick``: answered by a few quick database calls (the
        server may run it on its event loop)."""
        def register(handler: H) -> H:
            entry = Entry(frozenset(methods.split()), template, handler, quick)
            self._entries.append(entry)
            if _SEGMENT.search(template):
                self._patterns.append((_pattern(template), entry))
            else:
                self._exact.setdefault(template, []).append(entry)
            return handler
        return register

    def action(self, name: str, *, quick: bool = False) -> Callable[[H], H]:
        """Decorator: the handler of RPC action ``name``."""
        return self.route(ANY, name, quick=quick)

    def __iter__(self) -> Iterator[Entry[H]]:
        return iter(self._entries)

    def quick(self) -> frozenset[str]:
        """The templates (action names) of the entries marked quick."""
        return frozenset(entry.template for entry in self._entries if entry.quick)

    def find(self, action: str) -> H | None:
        """The handler of an RPC action (an exact name: no template, no trailing slash)."""
        entries = self._exact.get(action)
        return entries[0].handler if entries else None

    def match(self, method: str, path: str) -> tuple[H, dict[str, str]] | None:
        """The handler for ``method`` on the raw ``path`` and its decoded template values;
        None when no entry takes them."""
        if method == "HEAD":
            method = "GET"
        entries = self._exact.get(path)
        if entries is None and path.endswith("/"):
            entries = self._exact.get(path[:-1])
        if entries is not None:  # a literal path wins over the templates
            for entry in entries:
                if method in entry.methods or ANY in entry.methods:
                    return entry.handler, {}
            return None
        for pattern, entry in self._patterns:
            m = pattern.fullmatch(path)
            if m is not None and (method in entry.methods or ANY in entry.methods):
                return entry.handler, {k: unquote(v) for k, v in m.groupdict().items()}
        return None


@dataclass(frozen=True, slots=True)
class RequestContext:
    """A verified request: who (account), where (region from the Host), and its id."""

    request: HttpRequest
    request_id: str
    account_id: str
    region: str
    public_url: str
    caller: Any = None  # the verified role session (services.security_tokens), None: account


@dataclass(frozen=True, slots=True)
class ParamErrors:
    """How one RPC product words a missing or a malformed parameter."""

    missing: Callable[[str], ApiError]
    invalid: type[ApiError]
    prefix: str = ""  # before the parameter's name in a malformed-value message


_INTEGER = re.compile(r"-?[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class RpcCall:
    """One RPC action call: its verified context, its parameters and the product's readers."""

    context: RequestContext
    params: Mapping[str, str]
    errors: ParamErrors

    @property
    def account_id(self) -> str:
        return self.context.account_id

    @property
    def region(self) -> str:
        return self.context.region

    def text(self, name: str, default: str = "") -> str:
        """The parameter, or ``default`` when it is absent."""
        return self.params.get(name, default)

    def required(self, name: str) -> str:
        """The parameter; the product's missing-parameter error when absent or empty."""
        value = self.params.get(name)
        if value is None or value == "":
            raise self.errors.missing(name)
        return value

    def integer(self, name: str, default: int, low: int | None = None,
                high: int | None = None) -> int:
        """A decimal integer (of at most 18 digits) in ``low..high`` when they are given;
        ``default`` when absent or empty."""
        raw = self.params.get(name)
        if raw is None or raw == "":
            return default
        if not _INTEGER.fullmatch(raw):
            raise self.errors.invalid(
                f"{self.errors.prefix}{name} must be an integer, got {raw!r}.")
        value = int(raw)
        if low is not None and high is not None and not low <= value <= high:
            raise self.errors.invalid(
                f"{self.errors.prefix}{name} must be between {low} and {high}, got {value}.")
        return value

    def boolean(self, name: str, default: bool | None = False) -> bool | None:
        """``true``/``false`` (any case; ``1``/``0`` too); ``default`` when absent or empty."""
        raw = (self.params.get(name) or "").strip().lower()
        if raw == "":
            return default
        if raw in ("false", "0"):
            return False
        if raw in ("true", "1"):
            return True
        raise self.errors.invalid(
            f"{self.errors.prefix}{name} must be true or false, got {raw!r}.")


WireError = type[ApiError] | Callable[[Any], ApiError]
"""An error table's answer: a wire error class (built with the domain error's message) or a
function building the wire error from the domain error."""


class ErrorTable:
    """One product's map from domain errors (:mod:`deployer.emulator.services.errors`) to its
    wire errors.

    Keys are a domain error class, or a class and the member of its closed set it is about
    (``(NotFound, Resource.FUNCTION)``); the most specific key wins, then the error's base
    classes, then ``default``."""

    def __init__(self, entries: Mapping[Any, WireError],
                 default: WireError | None = None) -> None:
        self._entries = dict(entries)
        self._default = default

    def wire(self, exc: ServiceError) -> ApiError:
        """The wire error for ``exc``."""
        about = exc.about
        for cls in type(exc).__mro__:
            target = self._entries.get((cls, about)) if about is not None else None
            if target is None:
                target = self._entries.get(cls)
            if target is not None:
                return _build(target, exc)
            if cls is ServiceError:
                break
        if self._default is None:
            raise exc
        return _build(self._default, exc)

    def code(self, exc: ServiceError) -> str:
        """The wire error code for ``exc``."""
        return self.wire(exc).code


def _build(target: WireError, exc: ServiceError) -> ApiError:
    if isinstance(target, type) and issubclass(target, ApiError):
        return target(exc.message)
    return cast(Callable[[Any], ApiError], target)(exc)
