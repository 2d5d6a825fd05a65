"""Which function an invocation runs: a name and a qualifier (none or ``LATEST``, a version
id, an alias) resolved to the :class:`Function` and the :class:`InstanceSpec` the runtime is
given. Specs are cached per stored record (or per published snapshot), so a hot function is
resolved without rebuilding its spec or its role credentials.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from deployer.digits import is_decimal
from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import Resource, ResourceNotFound
from deployer.emulator.services.functions.model import Function, function_from_record
from deployer.emulator.services.functions.mounts import function_mounts
from deployer.emulator.services.functions.roles import RoleCredentials
from deployer.emulator.services.functions.versions import FunctionReleases
from deployer.emulator.services.ports import (
    CustomRuntimeSettings,
    HealthCheck,
    InstanceSpec,
    LayerSource,
    missing_layer,
)
from deployer.emulator.services.security_tokens import SecurityTokenService
from deployer.emulator.store.repos import CodeStore, FunctionRecord, FunctionRepo
from deployer.emulator.services.numbers import names_version

__all__ = ["FunctionResolver", "LayerLookup", "custom_settings"]

LayerLookup = Callable[[str, str, str], "LayerSource | None"]
"""(account, region, layer version ARN) -> its content, None when there is no such version."""


def custom_settings(runtime: str, config: Any) -> CustomRuntimeSettings | None:
    """``customRuntimeConfig`` of a custom runtime (FC's defaults: port 9000, the code's
    ``bootstrap``); None for other runtimes."""
    if not runtime.startswith("custom") or runtime == "custom-container":
        return None
    config = config if isinstance(config, dict) else {}
    health = config.get("healthCheckConfig") or {}
    defaults = HealthCheck()
    return CustomRuntimeSettings(
        command=tuple(config.get("command") or ()), args=tuple(config.get("args") or ()),
        port=int(config.get("port") or 9000),
        health_check=HealthCheck(
            http_get_url=str(health.get("httpGetUrl") or ""),
            initial_delay_seconds=float(health.get("initialDelaySeconds")
                                        or defaults.initial_delay_seconds),
            period_seconds=float(health.get("periodSeconds") or defaults.period_seconds),
            timeout_seconds=float(health.get("timeoutSeconds") or defaults.timeout_seconds),
            failure_threshold=int(health.get("failureThreshold") or defaults.failure_threshold),
            success_threshold=int(health.get("successThreshold")
                                  or defaults.success_threshold)))


class FunctionResolver:
    """Resolve a function and qualifier to what runs (see the module docstring).

    ``versions`` (published versions and aliases) and ``cloud_endpoint`` (``host:port`` where
    SDK calls made by handlers are routed) are set once the emulator is wired and listening.
    """

    def __init__(self, functions: FunctionRepo, code: CodeStore, clock: Clock,
                 tokens: SecurityTokenService | None) -> None:
        self._functions = functions
        self._code = code
        self._clock = clock
        self._tokens = tokens
        self.cloud_endpoint = ""
        self.versions: FunctionReleases | None = None
        self.layer_source: LayerLookup | None = None
        # record (as cached by the repository) -> its Function and InstanceSpec
        self._current: dict[tuple[str, str, str], tuple[FunctionRecord, Function,
                                                        InstanceSpec]] = {}
        # (function key, qualifier, version) -> (snapshot identity, Function, InstanceSpec)
        self._published: dict[tuple[str, ...], tuple[tuple[Any, ...], Function,
                                                      InstanceSpec]] = {}

    def resolve(self, account_id: str, region: str, name: str, qualifier: str | None, *,
                weighted: bool = True) -> tuple[Function, InstanceSpec]:
        """The function and its spec: current settings for ``LATEST`` (or no qualifier), the
        snapshot a version froze for a version id, an alias's version (picked by its weights
        when ``weighted``, else its main version). Raises ResourceNotFound."""
        rec = self._functions.get(account_id, region, name)
        if rec is None:
            raise ResourceNotFound(f"function '{name}' does not exist",
                                   Resource.FUNCTION, name=name)
        if qualifier not in (None, "", "LATEST"):
            return self._resolve_published(account_id, region, name, str(qualifier),
                                           weighted)
        key = (account_id, region, name)
        cached = self._current.get(key)
        if cached is not None and cached[0] is rec:
            return cached[1], cached[2]
        fn = function_from_record(rec)
        spec = self._spec(fn)
        self._current[key] = (rec, fn, spec)
        return fn, spec

    def _resolve_published(self, account_id: str, region: str, name: str, qualifier: str,
                           weighted: bool) -> tuple[Function, InstanceSpec]:
        """A version id or an alias: the frozen snapshot it runs (cached per version)."""
        if self.versions is None:
            kind = Resource.VERSION if names_version(qualifier) else Resource.ALIAS
            raise ResourceNotFound(
                f"{kind.value} '{qualifier}' of function '{name}' does not exist", kind,
                name=qualifier)
        found = self.versions.resolve(account_id, region, name, qualifier, weighted=weighted)
        snap = found.record
        identity = (snap.function_id, snap.code_checksum, snap.modified_at)
        key = (account_id, region, name, qualifier, found.version_id)
        cached = self._published.get(key)
        if cached is not None and cached[0] == identity:
            return cached[1], cached[2]
        fn = function_from_record(snap)
        spec = dataclasses.replace(self._spec(fn), qualifier=qualifier,
                                   version_id=found.version_id)
        self._published[key] = (identity, fn, spec)
        return fn, spec

    def _spec(self, fn: Function) -> InstanceSpec:
        c = fn.config
        source = None
        if c.role and self._tokens is not None:
            source = RoleCredentials(self._tokens, self._clock, fn.account_id, c.role, fn.name,
                                     c.timeout)
        idle = c.opaque.get("idleTimeout")
        return InstanceSpec(fn.account_id, fn.region, fn.name, c.handler, c.runtime, c.timeout,
                            c.memory_size, dict(c.environment), fn.code_checksum,
                            self._code.path(fn.code_checksum), c.initializer_handler,
                            c.initializer_timeout, role=c.role,
                            disable_inject_credentials=str(
                                c.opaque.get("disableInjectCredentials") or "None"),
                            disk_size=c.disk_size, internet_access=c.internet_access,
                            cloud_endpoint=self.cloud_endpoint, credentials=source,
                            pre_stop_handler=c.pre_stop_handler,
                            pre_stop_timeout=c.pre_stop_timeout,
                            instance_concurrency=c.instance_concurrency,
                            custom=custom_settings(c.runtime, c.opaque.get("customRuntimeConfig")),
                            layers=self._layers(fn),
                            idle_timeout=float(idle) if isinstance(idle, int) and idle > 0
                            else None, mounts=function_mounts(c.opaque))

    def _layers(self, fn: Function) -> tuple[LayerSource, ...]:
        """The function's layers as the layer source knows them; a layer it cannot name (or no
        source at all) is a :class:`MissingLayer` the runtime refuses by its ARN."""
        found: list[LayerSource] = []
        for arn in fn.config.layers:
            layer = self.layer_source(fn.account_id, fn.region, arn) \
                if self.layer_source is not None else None
            found.append(layer if layer is not None else missing_layer(arn))
        return tuple(found)
