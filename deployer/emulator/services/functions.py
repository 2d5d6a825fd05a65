"""Function Compute 3.0 domain logic: functions, their code, and invocations.

No HTTP here: the API layer passes typed values and gets :class:`Function` /
:class:`Invocation` back. Time comes from the injected clock; handlers run in the injected
:class:`FunctionRuntime`. Async invocations run on a bounded worker pool.
"""

from __future__ import annotations

import builtins
import dataclasses
import logging
import re
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for_futures
from dataclasses import dataclass, field
from typing import Any

from deployer.checksums import crc64_decimal
from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PayloadTooLarge,
)
from deployer.emulator.services.function_rules import (
    check_config_values,
    check_function_name,
    check_zip,
    runtime_warning,
)
from deployer.emulator.services.function_versions import FunctionReleases
from deployer.emulator.services.invocation_watch import InvocationWatch
from deployer.emulator.services.ports import (
    Credentials,
    FunctionRuntime,
    FunctionSpec,
    InvocationResult,
    RuntimeUnavailableError,
)
from deployer.emulator.services.security_tokens import (
    FC_SERVICE,
    AssumeRoleRefused,
    SecurityTokenService,
)
from deployer.emulator.store.repos import (
    CodeStore,
    FunctionRecord,
    FunctionRepo,
    InvocationRecord,
    InvocationRepo,
)

__all__ = ["Function", "FunctionConfig", "FunctionService", "Invocation"]

log = logging.getLogger("deployer.emulator")

SYNC_PAYLOAD_LIMIT = 32 * 1024 * 1024
ASYNC_PAYLOAD_LIMIT = 128 * 1024
ASYNC_WORKERS = 4
ASYNC_QUEUE = 256


@dataclass(frozen=True, slots=True)
class FunctionConfig:
    """Settings of a function. ``opaque`` holds settings stored and echoed verbatim."""

    runtime: str
    handler: str
    memory_size: int = 512
    cpu: float = 0.35
    disk_size: int = 512
    timeout: int = 3
    instance_concurrency: int = 1
    environment: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    role: str = ""
    internet_access: bool = True
    layers: tuple[str, ...] = ()
    initializer_handler: str | None = None
    initializer_timeout: int | None = None
    opaque: Mapping[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["layers"] = list(self.layers)
        return data

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> FunctionConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["layers"] = tuple(values.get("layers", ()))
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Function:
    account_id: str
    region: str
    name: str
    function_id: str
    config: FunctionConfig
    tags: tuple[tuple[str, str], ...]
    code_checksum: str
    code_size: int
    created_at: float
    modified_at: float
    state: str = "Active"
    last_update_status: str = "Successful"
    warnings: tuple[str, ...] = ()  # said once, by the Create/UpdateFunction that caused them

    @property
    def arn(self) -> str:
        return f"acs:fc:{self.region}:{self.account_id}:functions/{self.name}"


@dataclass(frozen=True, slots=True)
class Invocation:
    """Outcome of an invocation; ``result`` is None for an accepted async invocation."""

    request_id: str
    asynchronous: bool
    result: InvocationResult | None
    version_id: str = "LATEST"  # the version that ran (or will run)


def _to_function(rec: FunctionRecord) -> Function:
    return Function(rec.account_id, rec.region, rec.name, rec.function_id,
                    FunctionConfig.from_record(rec.config), rec.tags, rec.code_checksum,
                    rec.code_size, rec.created_at, rec.modified_at)


class RoleCredentials:
    """The temporary keys of a function's role, obtained from STS as FC does (valid 36 hours)
    and renewed when less than the function's timeout plus ten minutes remain, so a request
    never runs with keys that expire before it ends. Thread-safe."""

    def __init__(self, tokens: SecurityTokenService, clock: Clock, account_id: str,
                 role_arn: str, function_name: str, timeout: int) -> None:
        self._tokens = tokens
        self._clock = clock
        self._account_id = account_id
        self._role_arn = role_arn
        self._session = re.sub(r"[^A-Za-z0-9.@_-]", "-", f"fc-{function_name}")[:64]
        self._margin = timeout + 600
        self._lock = threading.Lock()
        self._current: Credentials | None = None

    def __call__(self) -> Credentials | None:
        with self._lock:
            now = self._clock.now()
            if self._current is None or self._current.expiration - now < self._margin:
                try:
                    creds = self._tokens.for_service(self._account_id, self._role_arn,
                                                     FC_SERVICE, self._session)
                except (NotFound, AssumeRoleRefused) as exc:
                    log.warning("no credentials for role %s: %s", self._role_arn, exc.message)
                    return None
                self._current = creds
            return self._current


class FunctionService:
    """Create, read, update, delete, list and invoke functions of one emulator.

    With ``tokens``, a function's ``role`` must exist and trust ``fc.aliyuncs.com``, and its
    instances get the role's credentials. ``cloud_endpoint`` (``host:port``) is where SDK calls
    made by handlers are routed; the server sets it once it listens.
    """

    def __init__(self, functions: FunctionRepo, invocations: InvocationRepo, code: CodeStore,
                 runtime: FunctionRuntime, clock: Clock, *,
                 tokens: SecurityTokenService | None = None) -> None:
        self._tokens = tokens
        self.cloud_endpoint = ""
        self._functions = functions
        self._invocations = invocations
        self._code = code
        self._runtime = runtime
        self._clock = clock
        self._pool = ThreadPoolExecutor(ASYNC_WORKERS, thread_name_prefix="fc-async")
        self._slots = threading.BoundedSemaphore(ASYNC_QUEUE)
        self._pending: set[Future[InvocationResult]] = set()  # async invocations not done
        self.invocation_watch = InvocationWatch()  # readers following invocations
        self._lock = threading.Lock()
        # record (as cached by the repository) -> its Function and FunctionSpec
        self._resolved: dict[tuple[str, str, str], tuple[FunctionRecord, Function,
                                                         FunctionSpec]] = {}
        # (function key, qualifier, version) -> (snapshot identity, Function, FunctionSpec)
        self._versioned: dict[tuple[str, ...], tuple[tuple[Any, ...], Function,
                                                     FunctionSpec]] = {}
        self.versions: FunctionReleases | None = None  # published versions and aliases

    # --- management ---------------------------------------------------------------------------

    def create(self, account_id: str, region: str, name: str, config: FunctionConfig,
               code: bytes, *, checksum: str | None = None,
               tags: tuple[tuple[str, str], ...] = ()) -> Function:
        """Create a function; raises InvalidArgument, PayloadTooLarge or AlreadyExists."""
        check_function_name(name)
        check_config_values(dataclasses.asdict(config))
        self._check_role(account_id, config.role)
        code_checksum = self._store_code(code, checksum)
        now = self._clock.now()
        rec = FunctionRecord(account_id, region, name, str(uuid.uuid4()), config.to_record(),
                             tags, code_checksum, len(code), now, now)
        if not self._functions.insert(rec):
            raise AlreadyExists(f"function '{name}' already exists", kind="function", name=name)
        return self._warned(_to_function(rec), None)

    def _check_role(self, account_id: str, role: str) -> None:
        """FC assumes the role through STS: it must exist and trust fc.aliyuncs.com."""
        if not role or self._tokens is None:
            return
        try:
            self._tokens.check_service_role(account_id, role, FC_SERVICE)
        except NotFound:
            raise InvalidArgument(
                f"role '{role}' cannot be assumed by Function Compute: the role does not exist "
                f"in account {account_id}", field="role") from None
        except AssumeRoleRefused as exc:
            raise InvalidArgument(f"role '{role}' cannot be assumed by Function Compute: "
                                  f"{exc.message}", field="role") from None

    @staticmethod
    def _warned(fn: Function, previous_runtime: str | None) -> Function:
        """Attach the host-Python warning when the runtime is new to this function."""
        warning = runtime_warning(fn.config.runtime)
        if warning is None or previous_runtime == fn.config.runtime:
            return fn
        log.warning("function %s: %s", fn.name, warning)
        return dataclasses.replace(fn, warnings=(warning,))

    def get(self, account_id: str, region: str, name: str,
            qualifier: str | None = None) -> Function:
        """The function's settings: current ones for ``LATEST`` (or no qualifier), those a
        published version froze for a version id or an alias (its main version)."""
        return self._resolve(account_id, region, name, qualifier, weighted=False)[0]

    def _resolve(self, account_id: str, region: str, name: str, qualifier: str | None, *,
                 weighted: bool = True) -> tuple[Function, FunctionSpec]:
        rec = self._functions.get(account_id, region, name)
        if rec is None:
            raise NotFound(f"function '{name}' does not exist", kind="function", name=name)
        if qualifier not in (None, "", "LATEST"):
            return self._resolve_published(account_id, region, name, str(qualifier),
                                           weighted)
        key = (account_id, region, name)
        cached = self._resolved.get(key)
        if cached is not None and cached[0] is rec:
            return cached[1], cached[2]
        fn = _to_function(rec)
        spec = self._spec(fn)
        self._resolved[key] = (rec, fn, spec)
        return fn, spec

    def _resolve_published(self, account_id: str, region: str, name: str, qualifier: str,
                           weighted: bool) -> tuple[Function, FunctionSpec]:
        """A version id or an alias: the frozen snapshot it runs (cached per version)."""
        if self.versions is None:
            kind = "version" if qualifier.isdigit() else "alias"
            raise NotFound(f"{kind} '{qualifier}' of function '{name}' does not exist",
                           kind=kind, name=qualifier)
        found = self.versions.resolve(account_id, region, name, qualifier, weighted=weighted)
        snap = found.record
        identity = (snap.function_id, snap.code_checksum, snap.modified_at)
        key = (account_id, region, name, qualifier, found.version_id)
        cached = self._versioned.get(key)
        if cached is not None and cached[0] == identity:
            return cached[1], cached[2]
        fn = _to_function(snap)
        spec = dataclasses.replace(self._spec(fn), qualifier=qualifier,
                                   version_id=found.version_id)
        self._versioned[key] = (identity, fn, spec)
        return fn, spec

    def update(self, account_id: str, region: str, name: str, changes: Mapping[str, Any],
               *, code: bytes | None = None, checksum: str | None = None) -> Function:
        """Apply a partial update (snake_case field -> value); retires running instances."""
        with self._lock:
            current = self.get(account_id, region, name)
            opaque = {**current.config.opaque, **changes.get("opaque", {})}
            config = dataclasses.replace(current.config, **{**changes, "opaque": opaque})
            check_config_values(dataclasses.asdict(config))
            if config.role != current.config.role:
                self._check_role(account_id, config.role)
            code_checksum, code_size = current.code_checksum, current.code_size
            if code is not None:
                code_checksum, code_size = self._store_code(code, checksum), len(code)
            rec = FunctionRecord(account_id, region, name, current.function_id,
                                 config.to_record(), current.tags, code_checksum, code_size,
                                 current.created_at, max(self._clock.now(), current.modified_at))
            self._functions.update(rec)
        self._runtime.retire(account_id, region, name, qualifier="LATEST")
        return self._warned(_to_function(rec), current.config.runtime)

    def delete(self, account_id: str, region: str, name: str) -> None:
        if not self._functions.delete(account_id, region, name):
            raise NotFound(f"function '{name}' does not exist", kind="function", name=name)
        if self.versions is not None:
            self.versions.forget(account_id, region, name)
        self._runtime.retire(account_id, region, name)
        self.invocation_watch.changed((account_id, region, name))

    def list(self, account_id: str, region: str, *, prefix: str = "", next_token: str = "",
             limit: int = 20) -> tuple[list[Function], str | None]:
        """A page of functions ascending by name; the token is the next page's first name."""
        if not 1 <= limit <= 100:
            raise InvalidArgument(f"limit must be between 1 and 100, got {limit}", field="limit")
        recs = self._functions.list(account_id, region, prefix=prefix, start=next_token,
                                    limit=limit + 1)
        token = recs[limit].name if len(recs) > limit else None
        return [_to_function(r) for r in recs[:limit]], token

    def code_path(self, checksum: str) -> Any:
        return self._code.path(checksum)

    def _store_code(self, code: bytes, checksum: str | None) -> str:
        check_zip(code)
        actual = crc64_decimal(code)
        if checksum and checksum != actual:
            raise InvalidArgument(f"code.checksum '{checksum}' does not match the package "
                                  f"(CRC-64 {actual})", field="code.checksum")
        return self._code.put(code)

    # --- invocation ---------------------------------------------------------------------------

    def invoke(self, account_id: str, region: str, name: str, event: bytes, *, request_id: str,
               asynchronous: bool = False, tail_logs: bool = False,
               qualifier: str | None = None) -> Invocation:
        """Run the function: synchronously (blocks) or queued on the async pool.

        Raises NotFound (function, or a ``qualifier`` other than LATEST), PayloadTooLarge
        (32 MB sync, 128 KB async), or InvalidArgument when the async queue is full. Function
        errors are results, not exceptions.
        """
        limit = ASYNC_PAYLOAD_LIMIT if asynchronous else SYNC_PAYLOAD_LIMIT
        if len(event) > limit:
            raise PayloadTooLarge(f"payload size exceeds maximum allowed size ({limit} bytes)",
                                  limit=limit)
        _fn, spec = self._resolve(account_id, region, name, qualifier)
        if not asynchronous:
            return Invocation(request_id, False,
                              self._run(spec, event, request_id, "Sync", tail_logs),
                              spec.version_id)
        if not self._slots.acquire(blocking=False):
            raise InvalidArgument("too many queued asynchronous invocations", field="body")
        future: Future[InvocationResult] = self._pool.submit(
            self._run, spec, event, request_id, "Async")
        self._pending.add(future)
        future.add_done_callback(self._async_done)
        return Invocation(request_id, True, None, spec.version_id)

    def _async_done(self, future: Future[InvocationResult]) -> None:
        self._pending.discard(future)
        self._slots.release()
        exc = future.exception() if not future.cancelled() else None
        if exc is not None and not isinstance(exc, InvalidArgument):
            log.error("asynchronous invocation failed", exc_info=exc)

    def _spec(self, fn: Function) -> FunctionSpec:
        c = fn.config
        source = None
        if c.role and self._tokens is not None:
            source = RoleCredentials(self._tokens, self._clock, fn.account_id, c.role, fn.name,
                                     c.timeout)
        return FunctionSpec(fn.account_id, fn.region, fn.name, c.handler, c.runtime, c.timeout,
                            c.memory_size, dict(c.environment), fn.code_checksum,
                            self._code.path(fn.code_checksum), c.initializer_handler,
                            c.initializer_timeout, role=c.role,
                            disable_inject_credentials=str(
                                c.opaque.get("disableInjectCredentials") or "None"),
                            disk_size=c.disk_size, internet_access=c.internet_access,
                            cloud_endpoint=self.cloud_endpoint, credentials=source)

    def _run(self, spec: FunctionSpec, event: bytes, request_id: str, kind: str,
             tail: bool = False) -> InvocationResult:
        started = self._clock.now()
        try:
            result = self._runtime.invoke(spec, event, request_id=request_id, tail_logs=tail)
        except RuntimeUnavailableError as exc:
            self._record(InvocationRecord(
                spec.account_id, spec.region, spec.function_name, request_id, started, kind,
                "Failed", "RuntimeUnavailable", None, exc.message))
            raise InvalidArgument(f"the emulator cannot run function '{spec.function_name}': "
                                  f"{exc.message}", field="runtime") from None
        self._record(InvocationRecord(
            spec.account_id, spec.region, spec.function_name, request_id, started, kind,
            "Failed" if result.error_type else "Succeeded", result.error_type,
            result.duration_ms, result.log_text, result.instance_id, result.cold_start))
        return result

    def _record(self, rec: InvocationRecord) -> None:
        self._invocations.record(rec)
        self.invocation_watch.changed((rec.account_id, rec.region, rec.function_name))

    def invocations_after(self, account_id: str, region: str, name: str, after_seq: int,
                          limit: int = 100) -> builtins.list[InvocationRecord]:
        """Up to ``limit`` invocation records of a function after ``after_seq`` (a record's
        ``seq``), oldest first."""
        return self._invocations.invocations_after(account_id, region, name, after_seq, limit)

    def recent_invocations(self, account_id: str, region: str, name: str,
                           limit: int = 20) -> builtins.list[InvocationRecord]:
        """The most recent invocation records of a function, newest first."""
        return self._invocations.recent_invocations(account_id, region, name, limit)

    def wait_async(self, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until every asynchronous invocation accepted
        so far has finished; True when they have."""
        return not wait_for_futures(list(self._pending), timeout=timeout).not_done

    def invocation(self, account_id: str, region: str,
                   request_id: str) -> InvocationRecord | None:
        """The invocation record with ``request_id`` (None when there is none)."""
        return self._invocations.by_request_id(account_id, region, request_id)

    def instance_started(self, instance_id: str) -> float | None:
        """When an instance served its first invocation (None when unknown)."""
        return self._invocations.instance_first_seen(instance_id)

    def close(self, wait: bool = True) -> None:
        """Stop the async pool (waiting for running invocations when ``wait``)."""
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
