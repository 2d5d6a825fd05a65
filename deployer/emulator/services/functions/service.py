"""The front of Function Compute's domain (:class:`FunctionService`): functions, their code, and
invocations, over the parts of this package (see its ``__init__``)."""

from __future__ import annotations

import builtins
import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from deployer.checksums import crc64_decimal
from deployer.emulator.clock import Clock
from deployer.emulator.records import InvocationRecord
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.services.functions.invocations import InvocationRunner
from deployer.emulator.services.functions.model import (
    Function,
    FunctionSettings,
    InvocationOutcome,
    function_from_record,
)
from deployer.emulator.services.functions.resolution import FunctionResolver, LayerLookup
from deployer.emulator.services.functions.roles import check_function_role
from deployer.emulator.services.functions.rules import (
    check_config_values,
    check_function_name,
    check_zip,
    runtime_warning,
)
from deployer.emulator.services.functions.versions import FunctionReleases
from deployer.emulator.services.invocation_watch import InvocationWatch
from deployer.emulator.services.ports import FunctionRuntime
from deployer.emulator.services.security_tokens import SecurityTokenService
from deployer.emulator.store.repos import CodeStore, FunctionRecord, FunctionRepo, InvocationRepo

__all__ = ["FunctionService"]

log = logging.getLogger("deployer.emulator")


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
        self._functions = functions
        self._invocations = invocations
        self._code = code
        self._runtime = runtime
        self._clock = clock
        self._lock = threading.Lock()
        self._resolver = FunctionResolver(functions, code, clock, tokens)
        self._runner = InvocationRunner(runtime, invocations, clock)
        #: told (account, region, name) after a function is deleted (its triggers go too)
        self.on_delete: builtins.list[Callable[[str, str, str], None]] = []
        #: runs asynchronous invocations as tasks (services.async_tasks); None: plain queue
        self.async_tasks: Any = None
        #: checks the layer version ARNs a function names (account, region, arns); raises
        self.layer_check: Callable[[str, str, tuple[str, ...]], None] | None = None
        if hasattr(runtime, "hook_sink"):  # the process runtime reports preStop hooks
            runtime.hook_sink = self._runner.record_hook

    @property
    def cloud_endpoint(self) -> str:
        """``host:port`` where SDK calls made by handlers are routed."""
        return self._resolver.cloud_endpoint

    @cloud_endpoint.setter
    def cloud_endpoint(self, endpoint: str) -> None:
        self._resolver.cloud_endpoint = endpoint

    @property
    def versions(self) -> FunctionReleases | None:
        """Published versions and aliases (None until wired)."""
        return self._resolver.versions

    @versions.setter
    def versions(self, releases: FunctionReleases | None) -> None:
        self._resolver.versions = releases

    @property
    def layer_source(self) -> LayerLookup | None:
        """Where a function's layer version ARNs find their content (None: no layer exists,
        and a function with layers cannot start an instance)."""
        return self._resolver.layer_source

    @layer_source.setter
    def layer_source(self, source: LayerLookup | None) -> None:
        self._resolver.layer_source = source

    @property
    def runner(self) -> InvocationRunner:
        """Runs and records invocations (the async pool included)."""
        return self._runner

    @property
    def admission(self) -> Any:
        """Admits each request (reserved concurrency); None: every request runs."""
        return self._runner.admission

    @admission.setter
    def admission(self, gate: Any) -> None:
        self._runner.admission = gate

    @property
    def invocation_watch(self) -> InvocationWatch:
        """Wake-ups for readers following a function's invocations."""
        return self._runner.watch

    # --- management ---------------------------------------------------------------------------

    def create(self, account_id: str, region: str, name: str, config: FunctionSettings,
               code: bytes, *, checksum: str | None = None,
               tags: tuple[tuple[str, str], ...] = ()) -> Function:
        """Create a function; raises InvalidValue, PayloadTooLarge or AlreadyExists."""
        check_function_name(name)
        check_config_values(dataclasses.asdict(config))
        self._check_role(account_id, config.role)
        self._check_layers(account_id, region, config.layers)
        code_checksum = self._store_code(code, checksum)
        now = self._clock.now()
        rec = FunctionRecord(account_id, region, name, str(uuid.uuid4()), config.to_record(),
                             tags, code_checksum, len(code), now, now)
        if not self._functions.insert(rec):
            raise AlreadyExists(f"function '{name}' already exists", Resource.FUNCTION, name=name)
        return self._warned(function_from_record(rec), None)

    def _check_layers(self, account_id: str, region: str, layers: tuple[str, ...]) -> None:
        if layers and self.layer_check is not None:
            self.layer_check(account_id, region, layers)

    def _check_role(self, account_id: str, role: str) -> None:
        if self._tokens is not None:
            check_function_role(self._tokens, account_id, role)

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
        return self._resolver.resolve(account_id, region, name, qualifier, weighted=False)[0]

    def instance_spec(self, account_id: str, region: str, name: str,
                      qualifier: str) -> Any:
        """The :class:`~.ports.InstanceSpec` a request to ``qualifier`` runs (an alias: its
        main version); ResourceNotFound."""
        return self._resolver.resolve(account_id, region, name, qualifier, weighted=False)[1]

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
            if config.layers != current.config.layers:
                self._check_layers(account_id, region, config.layers)
            code_checksum, code_size = current.code_checksum, current.code_size
            if code is not None:
                code_checksum, code_size = self._store_code(code, checksum), len(code)
            rec = FunctionRecord(account_id, region, name, current.function_id,
                                 config.to_record(), current.tags, code_checksum, code_size,
                                 current.created_at, max(self._clock.now(), current.modified_at))
            self._functions.update(rec)
        self._runtime.retire(account_id, region, name, qualifier="LATEST")
        return self._warned(function_from_record(rec), current.config.runtime)

    def delete(self, account_id: str, region: str, name: str) -> None:
        if not self._functions.delete(account_id, region, name):
            raise ResourceNotFound(f"function '{name}' does not exist",
                                   Resource.FUNCTION, name=name)
        if self.versions is not None:
            self.versions.forget(account_id, region, name)
        for forget in self.on_delete:
            forget(account_id, region, name)
        self._runtime.retire(account_id, region, name)
        self.invocation_watch.changed((account_id, region, name))

    def list(self, account_id: str, region: str, *, prefix: str = "", next_token: str = "",
             limit: int = 20) -> tuple[list[Function], str | None]:
        """A page of functions ascending by name; the token is the next page's first name."""
        if not 1 <= limit <= 100:
            raise InvalidValue(f"limit must be between 1 and 100, got {limit}", field="limit")
        recs = self._functions.list(account_id, region, prefix=prefix, start=next_token,
                                    limit=limit + 1)
        token = recs[limit].name if len(recs) > limit else None
        return [function_from_record(r) for r in recs[:limit]], token

    def code_path(self, checksum: str) -> Any:
        return self._code.path(checksum)

    def _store_code(self, code: bytes, checksum: str | None) -> str:
        check_zip(code)
        actual = crc64_decimal(code)
        if checksum and checksum != actual:
            raise InvalidValue(f"code.checksum '{checksum}' does not match the package "
                               f"(CRC-64 {actual})", field="code.checksum")
        return self._code.put(code)

    # --- invocation ---------------------------------------------------------------------------

    def invoke(self, account_id: str, region: str, name: str, event: bytes, *, request_id: str,
               asynchronous: bool = False, tail_logs: bool = False,
               qualifier: str | None = None, task_id: str | None = None) -> InvocationOutcome:
        """Run the function: synchronously (blocks) or queued on the async pool.

        Raises ResourceNotFound (function, or a ``qualifier`` other than LATEST), PayloadTooLarge
        (32 MB sync, 128 KB async), or InvalidValue when the async queue is full. Function
        errors are results, not exceptions.
        """
        self._runner.check_payload(event, asynchronous)
        _fn, spec = self._resolver.resolve(account_id, region, name, qualifier)
        if not asynchronous:
            return InvocationOutcome(request_id, False,
                              self._runner.run(spec, event, request_id, tail_logs),
                              spec.version_id)
        if self.async_tasks is not None:  # a task: retries, event age, destinations, stop
            self.async_tasks.submit(spec, event, request_id, task_id)
        else:
            self._runner.submit(spec, event, request_id)
        return InvocationOutcome(request_id, True, None, spec.version_id)

    def invoke_http(self, account_id: str, region: str, name: str, call: Any, *,
                    request_id: str, qualifier: str | None = None) -> InvocationOutcome | None:
        """Forward an HTTP request (a :class:`~.ports.HttpCall`) to the server of a custom
        runtime function and wait for its answer; None when the function's runtime is not a
        custom one (its HTTP trigger invokes the event handler instead)."""
        self._runner.check_payload(call.body, False)
        _fn, spec = self._resolver.resolve(account_id, region, name, qualifier)
        if spec.custom is None:
            return None
        return InvocationOutcome(request_id, False,
                                 self._runner.run(spec, b"", request_id, call=call),
                                 spec.version_id)

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
        return self._runner.wait_async(timeout)

    def invocation(self, account_id: str, region: str,
                   request_id: str) -> InvocationRecord | None:
        """The invocation record with ``request_id`` (None when there is none)."""
        return self._invocations.by_request_id(account_id, region, request_id)

    def instance_started(self, instance_id: str) -> float | None:
        """When an instance served its first invocation (None when unknown)."""
        return self._invocations.instance_first_seen(instance_id)

    def close(self, wait: bool = True) -> None:
        """Stop the async pool (waiting for running invocations when ``wait``)."""
        self._runner.close(wait)
