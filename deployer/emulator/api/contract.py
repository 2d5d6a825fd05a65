"""How each surface of the emulator declares its wire contract, and the one way requests reach it.

Every surface (FC 3.0, CloudFlow, RAM, STS, Log Service, ``/_emulator/``, ``/_console/``) has
one module holding its **route table** (:class:`Routes`; entries sit on the handlers: an HTTP
method and a path template such as ``/2023-03-30/functions/{name}``, or an RPC action name),
its **readers** (RPC parameters through :class:`RpcCall`, worded by the product's
:class:`ParamErrors`; JSON bodies through :func:`json_object`), its **shapes** (one function
per wire object, used by every answer that sends it) and its **error table**
(:class:`ErrorTable`: each domain error to the product's wire error). Adding an action is one
entry and its service call.

A ``{name}`` template segment is one non-empty segment of the raw path (``%2F`` stays in it),
handed over percent-decoded; a trailing slash is tolerated and ``HEAD`` is answered as ``GET``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast, overload
from urllib.parse import unquote

from deployer.emulator.api import errors as e
from deployer.emulator.api import strict
from deployer.emulator.api.errors import ApiError
from deployer.emulator.api.http import HttpRequest
from deployer.emulator.services.errors import ServiceError

__all__ = ["ANY", "Body", "ErrorTable", "ParamErrors", "RequestContext", "Routes", "RpcCall",
           "cases", "json_object", "page"]

H = TypeVar("H")
Body = dict[str, Any]
"""A JSON object answer (an RPC action's, before the router adds ``RequestId``)."""
ANY = "*"
"""An entry's method for "any method" (RPC actions are sent with GET or POST)."""

_SEGMENT = re.compile(r"\{\w+\}")
_NO_VALUES: dict[str, str] = {}  # a literal path's template values (never changed)


@dataclass(frozen=True, slots=True)
class RouteEntry(Generic[H]):
    """One route: the methods it answers, its template and its handler."""

    methods: frozenset[str]
    template: str
    handler: H
    quick: bool = False


def _pattern(template: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "/?")


class Routes(Generic[H]):
    """A surface's route table, the one dispatch mechanism of the emulator's wire edge."""

    def __init__(self) -> None:
        self._exact: dict[str, dict[str, H]] = {}  # literal path -> method (or ANY) -> handler
        self._patterns: list[tuple[re.Pattern[str], RouteEntry[H]]] = []
        self._entries: list[RouteEntry[H]] = []

    def route(self, methods: str, template: str, *, quick: bool = False) -> Callable[[H], H]:
        """Decorator: answer ``methods`` (space-separated, or :data:`ANY`) on ``template``
        with the decorated handler. ``quick``: answered by a few quick database calls (the
        server may run it on its event loop)."""
        def register(handler: H) -> H:
            entry = RouteEntry(frozenset(methods.split()), template, handler, quick)
            self._entries.append(entry)
            if _SEGMENT.search(template):
                self._patterns.append((_pattern(template), entry))
            else:
                self._exact.setdefault(template, {}).update(
                    dict.fromkeys(entry.methods, handler))
            return handler
        return register

    def action(self, name: str, *, quick: bool = False) -> Callable[[H], H]:
        """Decorator: the handler of RPC action ``name``."""
        return self.route(ANY, name, quick=quick)

    def quick(self) -> frozenset[str]:
        """The templates (action names) of the entries marked quick."""
        return frozenset(entry.template for entry in self._entries if entry.quick)

    def actions(self) -> dict[str, H]:
        """The RPC actions: each action name to its handler."""
        return {name: methods[ANY] for name, methods in self._exact.items() if ANY in methods}

    def match(self, method: str, path: str) -> tuple[H, dict[str, str]] | None:
        """The handler for ``method`` on the raw ``path`` and its decoded template values;
        None when no entry takes them."""
        if method == "HEAD":
            method = "GET"
        methods = self._exact.get(path)
        if methods is None and path.endswith("/"):
            methods = self._exact.get(path[:-1])
        if methods is not None:  # a literal path wins over the templates
            handler = methods.get(method) or methods.get(ANY)
            return None if handler is None else (handler, _NO_VALUES)
        for pattern, entry in self._patterns:
            m = pattern.fullmatch(path)
            if m is not None and (method in entry.methods or ANY in entry.methods):
                return entry.handler, {k: unquote(v) for k, v in m.groupdict().items()}
        return None

    def find(self, method: str, path: str, what: str = "") -> tuple[H, dict[str, str]]:
        """:meth:`match`, or ``PathNotSupported`` naming the request (``what``: after
        "not supported")."""
        found = self.match(method, path)
        if found is None:
            raise e.PathNotSupported(f"'{method}' against '{path}' is not supported{what}")
        return found


@dataclass(frozen=True, slots=True)
class RequestContext:
    """A verified request: who (account), where (region from the Host), and its id."""

    request: HttpRequest
    request_id: str
    account_id: str
    region: str
    public_url: str
    caller: Any = None  # the verified role session (services.security_tokens), None: account

    @overload
    def key(self) -> tuple[str, str]: ...
    @overload
    def key(self, name: str, /) -> tuple[str, str, str]: ...
    @overload
    def key(self, name: str, other: str, /) -> tuple[str, str, str, str]: ...

    def key(self, *names: str) -> tuple[str, ...]:
        """``(account_id, region, *names)``: how the services name a resource."""
        return (self.account_id, self.region, *names)

    @property
    def query(self) -> dict[str, str]:
        """The request's query parameters."""
        return self.request.query_params()


@dataclass(frozen=True, slots=True)
class ParamErrors:
    """How one RPC product words a missing or a malformed parameter, an action it does not
    have and a ``Version`` it does not serve."""

    missing: Callable[[str], ApiError]
    invalid: type[ApiError]
    unknown_action: Callable[[str], ApiError]
    unsupported_version: Callable[[str], ApiError]
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

    @overload
    def key(self) -> tuple[str, str]: ...
    @overload
    def key(self, name: str, /) -> tuple[str, str, str]: ...
    @overload
    def key(self, name: str, other: str, /) -> tuple[str, str, str, str]: ...

    def key(self, *names: str) -> tuple[str, ...]:
        """``(account_id, region, <each named parameter, required>)``: how the services name
        a resource."""
        context = self.context
        key: tuple[str, ...] = (context.account_id, context.region)
        for name in names:
            value = self.params.get(name)
            if not value:
                raise self.errors.missing(name)
            key += (value,)
        return key

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

    def paging(self, high: int) -> dict[str, Any]:
        """A List action's ``Limit`` (1 to ``high``, 60 when absent) and ``NextToken``, as
        the services take them."""
        return {"limit": self.integer("Limit", 60, 1, high), "next_token": self.text("NextToken")}

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


def json_object(body: bytes, invalid: type[ApiError] = e.InvalidArgument) -> dict[str, Any]:
    """A request body holding a JSON object (``{}`` when empty), held to the JSON limits of
    :mod:`.strict`; ``invalid`` (the surface's code) otherwise."""
    if not body.strip():
        return {}
    try:
        value = strict.loads(body)
    except strict.JsonLimitError as exc:
        raise invalid(f"the request body is refused: {exc}") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise invalid(f"the request body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise invalid("the request body must be a JSON object")
    return value


def page(key: str, items: list[Any], token: str | None, token_key: str = "NextToken",
         **more: Any) -> dict[str, Any]:
    """A list answer: ``{key: items}`` after ``more``, with the next page's token when there
    is one."""
    body: dict[str, Any] = {**more, key: items}
    if token:
        body[token_key] = token
    return body


WireError = type[ApiError] | Callable[[Any], ApiError]
"""An error table's answer: a wire error class (built with the domain error's message) or a
function building the wire error from the domain error."""


def cases(cls: type[ServiceError], wire: Mapping[Any, WireError]) -> dict[Any, WireError]:
    """Error-table rows for the cases of ``cls`` (``{Resource.FLOW: e.FlowNotExists}``)."""
    return {(cls, about): target for about, target in wire.items()}


class ErrorTable:
    """One product's map from domain errors (:mod:`deployer.emulator.services.errors`) to its
    wire errors.

    Keys are a domain error class, or a class and the case it is about
    (``(NotFound, Resource.FUNCTION)``, see :func:`cases`); the most specific key wins, then
    the error's base classes, then ``default``."""

    def __init__(self, entries: Mapping[Any, WireError], default: WireError) -> None:
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
        return _build(self._default, exc)

    def code(self, exc: ServiceError) -> str:
        """The wire error code for ``exc``."""
        return self.wire(exc).code


def _build(target: WireError, exc: ServiceError) -> ApiError:
    if isinstance(target, type) and issubclass(target, ApiError):
        return target(exc.message)
    return cast(Callable[[Any], ApiError], target)(exc)
