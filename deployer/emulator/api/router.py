"""Dispatch of every request (:meth:`Router.dispatch`, request in, answer out): the local
surfaces (admin, console), the ROA products (FC 3.0, Log Service), the RPC products (CloudFlow,
RAM, STS).

A cloud request: text that is not valid UTF-8 is refused (:mod:`.strict`) → the product (ROA by
path prefix; RPC by ``Version``) → its signature (ACS3 ``Authorization``, else RPC v1
``Signature``; the product's :class:`AuthScheme` words a failure) → who calls and may they (the
access hook) → injected faults → the product's route table (:mod:`.contract`) → its answer. A
domain error becomes the product's wire error through its error table; nothing escapes as a
traceback (too deep a nesting is ``400``, a state directory that cannot be written a ``5xx``
naming the cause, anything else a logged ``500 InternalServerError`` in JSON).
"""

from __future__ import annotations

import logging
import os
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import ErrorTable, ParamErrors, RequestContext, RpcCall
from deployer.emulator.api.errors import ApiError, Style, error_response, storage_error
from deployer.emulator.api.http import (
    Answer,
    DeferredResponse,
    HttpRequest,
    HttpResponse,
    Subscribe,
    hostname,
    json_response,
)
from deployer.emulator.api.signing import (
    BoundedMemo,
    SecretLookup,
    SignatureError,
    SignatureFailure,
    signed_header_names,
    verify_acs3,
    verify_rpc_v1,
)
from deployer.emulator.api.strict import check_json_params, check_request
from deployer.emulator.clock import Clock
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import ServiceError

__all__ = ["REGION_HEADER", "UNMAPPED", "AuthScheme", "LocalApi", "LongPoll", "RequestContext",
           "RoaApi", "Router", "RpcApi", "RpcCall"]

log = logging.getLogger("deployer.emulator")

_REGION_HOSTS = (
    re.compile(r"^fcv3\.([a-z0-9-]+)\.aliyuncs\.com$"),
    re.compile(r"^\d+\.([a-z0-9-]+?)(?:-internal)?\.fc\.aliyuncs\.com$"),
    re.compile(r"^([a-z0-9-]+)\.fc\.aliyuncs\.com$"),
    re.compile(r"^([a-z0-9-]+)\.fnf\.aliyuncs\.com$"),
    re.compile(r"^fnf\.([a-z0-9-]+)\.aliyuncs\.com$"),
)


REGION_HEADER = "x-deployer-region"
"""Names the region of a request sent to ``127.0.0.1:port`` (cloud hosts carry it in the name).
Honoured only when signed (ACS3 ``SignedHeaders``); RPC v1 signs no header, so its clients name
the region with the signed ``RegionId`` parameter instead."""
_REGION_RE = re.compile(r"^[a-z]{2}-[a-z0-9-]{1,40}$")


@dataclass(frozen=True, slots=True)
class AuthScheme:
    """How one product names authentication failures."""

    style: Style
    failures: Mapping[SignatureFailure, type[ApiError]]

    @classmethod
    def words(cls, style: Style, *, missing: type[ApiError], malformed: type[ApiError],
              unknown_key: type[ApiError], mismatch: type[ApiError],
              time_missing: type[ApiError], time_format: type[ApiError],
              expired: type[ApiError], nonce_used: type[ApiError]) -> AuthScheme:
        """The scheme of a product naming each kind of failure (a bad payload hash is a
        mismatch, an unsupported algorithm a malformed signature)."""
        f = SignatureFailure
        return cls(style, {
            f.MISSING: missing, f.MALFORMED: malformed, f.UNSUPPORTED: malformed,
            f.UNKNOWN_KEY: unknown_key, f.PAYLOAD_HASH: mismatch, f.MISMATCH: mismatch,
            f.TIME_MISSING: time_missing, f.TIME_FORMAT: time_format, f.EXPIRED: expired,
            f.NONCE_USED: nonce_used})

    def error(self, exc: SignatureError) -> ApiError:
        cls = self.failures[exc.reason]
        if exc.reason is SignatureFailure.UNKNOWN_KEY:
            text = (f"invalid access key ID '{exc.access_key_id}'" if self.style is Style.ROA
                    else f"Specified access key is not found: {exc.access_key_id}")
        elif exc.reason in (SignatureFailure.MISMATCH, SignatureFailure.PAYLOAD_HASH):
            text = ("The request signature we calculated does not match the signature you "
                    f"provided. Check your access key and signing method ({exc.detail})")
        elif exc.reason is SignatureFailure.MISSING and cls is e.MissingRequiredHeader:
            text = "required HTTP header Authorization was not specified"
        elif exc.reason in _FRESHNESS:
            text = exc.detail
        else:
            text = f"the request signature is incomplete or malformed: {exc.detail}"
        return cls(text)


_FRESHNESS = frozenset({SignatureFailure.TIME_MISSING, SignatureFailure.TIME_FORMAT,
                        SignatureFailure.EXPIRED, SignatureFailure.NONCE_USED})


UNMAPPED = ErrorTable({svc.ResourceNotFound: e.NotFound, svc.InvalidValue: e.InvalidArgument},
                      e.InternalServerError)
"""The error table of a surface that declares none (a test's surface): not found, invalid,
else an internal error."""


@dataclass(frozen=True, slots=True)
class LongPoll:
    """An RPC action's "answer later": the response body ``then()`` returns once ``subscribe``'s
    wake-up comes or ``timeout`` seconds pass (see :class:`DeferredResponse`)."""

    subscribe: Subscribe
    timeout: float
    then: Callable[[], dict[str, Any]]


class RoaApi(Protocol):
    """A path-based product: ``handle`` answers every request under ``prefix``; domain errors
    it raises become its ``errors`` table's wire errors (optional: :data:`UNMAPPED`)."""

    prefix: str
    auth: AuthScheme | None  # None: the API checks its own signature scheme (Log Service)

    def handle(self, ctx: RequestContext) -> Answer: ...


RpcHandler = Callable[[Any, RpcCall], "dict[str, Any] | LongPoll | None"]


class RpcApi(Protocol):
    """An RPC product: the handlers of its action table (``actions``, from its
    :class:`~.contract.Routes`) are called with the product object and the :class:`RpcCall`
    (read with the product's ``params`` wording, which words an unknown action and version
    too); domain errors become its ``errors`` table's wire errors."""

    version: str
    auth: AuthScheme
    actions: Mapping[str, RpcHandler]
    params: ParamErrors
    errors: ErrorTable


class LocalApi(Protocol):
    """A local surface (``/_emulator/``, ``/_console/``): unsigned, it guards itself; domain
    errors become its ``errors`` table's wire errors."""

    prefix: str
    errors: ErrorTable

    def handle(self, request: HttpRequest) -> Answer: ...


def _local(api: LocalApi, request: HttpRequest, rid: str) -> Answer:
    return api.handle(request)


_IDS = random.Random()
"""Request ids are unique, not secret: drawn from a generator seeded from the system's
randomness (again in a forked child), as ``os.urandom`` would release the interpreter lock on
every request and hand it to another thread mid-request."""
os.register_at_fork(after_in_child=_IDS.seed)


def fc_request_id(now: float) -> str:
    return f"1-{int(now):08x}-{_IDS.getrandbits(96):024x}"


_QUICK_ADMIN = frozenset({"/_emulator/health", "/_emulator/clock"})
def region_from_host(host: str, default: str) -> str:
    return _HOST_REGIONS[host] or default


def _region_of_host(host: str) -> str:
    name = hostname(host)
    for pattern in _REGION_HOSTS:
        m = pattern.match(name)
        if m:
            return m.group(1)
    return ""


_HOST_REGIONS = BoundedMemo(_region_of_host, 256)  # recent Host headers -> region ("": none)


def rpc_request_id() -> str:
    """A random (version 4) UUID in capitals, as the RPC products' request ids; the form
    ``str(uuid.uuid4()).upper()`` gives, without building a UUID object (bits from
    :data:`_IDS`)."""
    bits = _IDS.getrandbits(128) & _UUID_KEEP | _UUID_SET
    h = f"{bits:032X}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_UUID_KEEP = ~((0xF000 << 64) | (0xC000 << 48))  # the version and variant bits
_UUID_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


@dataclass
class Router:
    """Holds the registered API modules; :meth:`dispatch` answers one request."""

    account_id: str
    secret_for: SecretLookup
    clock: Clock
    default_region: str = "cn-hangzhou"
    public_url: str = ""
    state_dir: str = "the state directory"
    roa: list[RoaApi] = field(default_factory=list)
    rpc: dict[str, RpcApi] = field(default_factory=dict)
    access: Any = None  # api.access.RequestAccess: STS keys, security tokens, RAM checks
    freshness: Any = None  # api.freshness.RequestFreshness: signed time window, nonces
    faults: Any = None  # api.faults.FaultInjector: injected faults, --throttle cloud
    local: list[LocalApi] = field(default_factory=list)  # the surfaces outside the cloud APIs
    hosts: Any = None  # api.http_trigger_serving.HttpTriggerApi: custom domains, by Host

    def add_local(self, api: LocalApi) -> None:
        """Serve ``api`` (the admin surface, the console) under its own ``prefix``."""
        self.local.append(api)

    def add_roa(self, api: RoaApi) -> None:
        self.roa.append(api)

    def add_rpc(self, api: RpcApi) -> None:
        self.rpc[api.version] = api

    def _version_error(self, version: str, action: str) -> ApiError:
        """An RPC request with a ``Version`` no product serves: the error of the product
        whose action it names (CloudFlow's ``APIVersionNotSupported``), else the POP
        gateway's ``InvalidVersion``."""
        for api in self.rpc.values():
            if action in api.actions:
                return api.params.unsupported_version(version)
        return e.InvalidVersion(f"Specified parameter Version is not valid: {version!r}")

    def dispatch(self, request: HttpRequest) -> Answer:
        """Answer ``request``; never raises."""
        path = request.raw_path
        if self.hosts is not None and self.hosts.serves_host(request.headers.get("host") or ""):
            return self._guard(request, Style.ROA, "", lambda _rid: self.hosts.handle_domain(
                request), errors=self.hosts.errors)
        if path == "/":  # every other surface has a longer prefix
            if (request.headers.get("authorization") or "").startswith("LOG "):
                for roa in self.roa:  # Log Service signs "LOG <id>:<sig>"; projects are at /
                    if getattr(roa, "serves_root", False):
                        return self._guard(request, Style.ROA, "",
                                           partial(self._roa, roa, request),
                                           errors=getattr(roa, "errors", UNMAPPED))
            return self._guard(request, Style.RPC, request.headers.get("host") or "",
                               lambda rid: self._rpc(request, rid))
        for local in self.local:
            if path.startswith(local.prefix):
                return self._guard(request, Style.ROA, "", partial(_local, local, request),
                                   errors=local.errors)
        for roa in self.roa:
            if path.startswith(roa.prefix):
                return self._guard(request, Style.ROA, "", partial(self._roa, roa, request),
                                   errors=getattr(roa, "errors", UNMAPPED))
        return self._guard(request, Style.ROA, "", lambda rid: self._unknown(request))

    def is_quick(self, request: HttpRequest) -> bool:
        """Whether ``request`` is answered by a few quick database calls, never waiting on
        anything else (a function run, a long upload, an Express execution): such a request
        may run on the server's event loop instead of a worker thread. RPC actions an API
        lists in ``quick_actions``, and the admin health and clock reads."""
        path = request.raw_path
        if path == "/":
            params = request.rpc_params()
            version = params.get("Version") or request.headers.get("x-acs-version") or ""
            action = params.get("Action") or request.headers.get("x-acs-action") or ""
            return action in getattr(self.rpc.get(version), "quick_actions", ())
        return request.method == "GET" and path in _QUICK_ADMIN

    def _guard(self, request: HttpRequest, style: Style, host: str,
               fn: Callable[[str], Answer], rid: str = "",
               errors: ErrorTable = UNMAPPED) -> Answer:
        rid = rid or (fc_request_id(self.clock.now()) if style is Style.ROA
                      else rpc_request_id())
        try:
            check_request(request)
            return fn(rid)
        except ApiError as exc:
            err = exc
        except ServiceError as exc:
            err = errors.wire(exc)
        except RecursionError:
            err = e.InvalidArgument("the request is nested too deeply to be processed")
        except Exception as exc:  # a bug or the state directory failing: log, answer JSON
            stored = storage_error(exc, self.state_dir)
            if stored is None:
                log.exception("internal error on %s %s", request.method, request.raw_target)
            else:
                log.error("cannot save state for %s %s: %s", request.method,
                          request.raw_path, exc)
            err = stored or e.InternalServerError("an internal error has occurred. Please retry.")
        return error_response(err, rid, style, host)

    def _context(self, request: HttpRequest, rid: str, params: Mapping[str, str],
                 access_key_id: str, api_key: str, *, authorize: bool = True) -> RequestContext:
        # The region comes from what the request signs: the host (ACS3 signs it; RPC v1 is
        # routed by it), a signed region header, or a signed RegionId parameter.
        region = region_from_host(request.headers.get("host") or "", "")
        if not region:  # a loopback endpoint
            wanted = (request.headers.get(REGION_HEADER)
                      if REGION_HEADER in request.headers
                      and REGION_HEADER in signed_header_names(request) else None)
            wanted = wanted or params.get("RegionId") or ""
            region = wanted if _REGION_RE.match(wanted) else self.default_region
        caller = None
        if self.access is not None and authorize:
            caller = self.access.caller(request, access_key_id, params)
            self.access.authorize(caller, api_key, request, params, region)
        return RequestContext(request, rid, self.account_id, region, self.public_url, caller)

    def authenticate(self, request: HttpRequest, scheme: AuthScheme) -> str:
        """The AccessKeyId that signed ``request`` (ACS3, or RPC v1 for an RPC scheme);
        ``scheme``'s wire error otherwise."""
        secret_for = self.access.secret_for if self.access is not None else self.secret_for
        fresh = self.freshness
        try:
            auth = request.headers.get("authorization") or ""
            if auth or scheme.style is Style.ROA:
                key = verify_acs3(request, secret_for)
                if fresh is not None:
                    fresh.check_acs3(request, key)
                return key
            key = verify_rpc_v1(request, secret_for)
            if fresh is not None:
                fresh.check_rpc_v1(request, key)
            return key
        except SignatureError as exc:
            raise scheme.error(exc) from None

    def _roa(self, api: RoaApi, request: HttpRequest, rid: str) -> Answer:
        if api.auth is None:  # the API checks its own signature (Log Service)
            return api.handle(self._context(request, rid, request.query_params(), "",
                                            api.prefix, authorize=False))
        key = self.authenticate(request, api.auth)
        ctx = self._context(request, rid, request.query_params(), key, api.prefix)
        return self._faulted(ctx, Style.ROA, api.prefix, {}, lambda: api.handle(ctx),
                             getattr(api, "errors", UNMAPPED))

    def _faulted(self, ctx: RequestContext, style: Style, product: str,
                 params: Mapping[str, str], proceed: Callable[[], Answer],
                 errors: ErrorTable) -> Answer:
        """``proceed()``, unless an injected fault or the cloud's quotas say otherwise."""
        if self.faults is None:
            return proceed()
        host = (ctx.request.headers.get("host") or "") if style is Style.RPC else ""

        def later(fn: Callable[[], Answer]) -> Answer:
            return self._guard(ctx.request, style, host, lambda _rid: fn(), ctx.request_id,
                               errors)

        answer: Answer = self.faults.around(ctx, product, params, proceed, later)
        return answer

    def _rpc(self, request: HttpRequest, rid: str) -> Answer:
        params = request.rpc_params()
        check_json_params(params, params)
        version = params.get("Version") or request.headers.get("x-acs-version") or ""
        action = params.get("Action") or request.headers.get("x-acs-action") or ""
        api = self.rpc.get(version)
        if api is None:
            raise self._version_error(version, action)
        try:
            key = self.authenticate(request, api.auth)
            handler = api.actions.get(action)
            if handler is None:
                raise api.params.unknown_action(action)
            call = RpcCall(self._context(request, rid, params, key, version), params,
                           api.params)

            def answer() -> Answer:
                body = handler(api, call)
                if isinstance(body, LongPoll):
                    return self._later(request, rid, body, api.errors)
                return json_response(200, {"RequestId": rid, **(body or {})},
                                     {"x-acs-request-id": rid})

            return self._faulted(call.context, Style.RPC, version, params, answer, api.errors)
        except ServiceError as exc:
            raise api.errors.wire(exc) from None

    def _later(self, request: HttpRequest, rid: str, poll: LongPoll,
               errors: ErrorTable) -> DeferredResponse:
        host = request.headers.get("host") or ""

        def then() -> HttpResponse:
            answer = self._guard(request, Style.RPC, host, lambda _rid: json_response(
                200, {"RequestId": rid, **poll.then()}, {"x-acs-request-id": rid}), rid,
                errors)
            assert isinstance(answer, HttpResponse)
            return answer

        return DeferredResponse(poll.subscribe, poll.timeout, then)

    @staticmethod
    def _unknown(request: HttpRequest) -> HttpResponse:
        raise e.PathNotSupported(
            f"'{request.method}' against '{request.raw_path}' is not supported")
