"""Provisioned instances of a function: its provision config and its scaling config
(Get/Put/Delete/ListProvisionConfig(s), Get/Put/Delete/ListScalingConfig(s); no HTTP), and
the instances the runtime keeps warm for them.

FC 3.0 (docs "Configure provisioned instances", "Configure elastic scaling policies";
fc3-api.md §2): a provision config per function and qualifier (LATEST or an alias) asks for
``defaultTarget`` (the older ``target``) instances started ahead of requests; a scaling config
asks for ``minInstances``. The emulator keeps the larger of the two started for the qualifier
(:meth:`ProvisionedInstances.reconcile`): each new instance is started and initialized (its
initializer runs, reported in the function's logs as an ``Initializer`` record) before Put*
answers, its requests are warm (no modelled cold start) and it is never reaped for
idleness. ``current`` is how many are started now; ``currentError`` says why fewer than the
target are (the emulator's instance cap, an initializer that fails). ``scheduledActions``,
``targetTrackingPolicies``, ``alwaysAllocateCPU``/``GPU`` (provision) and
``horizontalScalingPolicies``, ``scheduledPolicies`` and the rest (scaling) are checked for
shape, stored and echoed, not acted on [decided: no metrics or calendar locally].
Instances dropped (a lower target, a deleted config) become on-demand ones and age out.
After UpdateFunction the old instances stop and the next reconcile (the idle reaper's pass,
every few seconds, or any Put) starts new ones.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import InvalidValue, Resource, ResourceNotFound
from deployer.emulator.services.ports import InstanceSpec
from deployer.emulator.store.function_config_repos import FunctionConfigRepo

__all__ = ["MAX_PROVISIONED", "PROVISION", "SCALING", "ConfigKind", "ProvisionedInstances",
           "WarmConfig"]

log = logging.getLogger("deployer.emulator")

MAX_PROVISIONED = 100  # per function and qualifier [INFERRED: FC's console caps provisioning]

SpecOf = Callable[[str, str, str, str], InstanceSpec]
"""(account, region, function, qualifier) -> the spec its instances start from."""


@dataclass(frozen=True, slots=True)
class ConfigKind:
    """A provision or scaling config: its store kind, the field giving the target, the
    other fields it records (name -> required JSON type) and its not-found case."""

    kind: str
    target: tuple[str, ...]  # the first one present is the target
    recorded: Mapping[str, type | tuple[type, ...]]
    resource: Resource


PROVISION = ConfigKind("provision", ("defaultTarget", "target"), {
    "alwaysAllocateCPU": bool, "alwaysAllocateGPU": bool, "scheduledActions": list,
    "targetTrackingPolicies": list}, Resource.PROVISION_CONFIG)
SCALING = ConfigKind("scaling", ("minInstances",), {
    "horizontalScalingPolicies": list, "scheduledPolicies": list, "residentPoolId": str,
    "enableOnDemandScaling": bool, "enableMixMode": bool, "requestDispatchPolicy": str},
    Resource.SCALING_CONFIG)


@dataclass(frozen=True, slots=True)
class WarmConfig:
    """A stored config, with how many instances are started for its qualifier now."""

    function_name: str
    qualifier: str
    document: Mapping[str, Any]  # what Put* stored, in FC's names
    target: int
    current: int
    current_error: str
    modified_at: float


def _target(kind: ConfigKind, body: Mapping[str, Any]) -> int:
    name = next((k for k in kind.target if k in body), kind.target[0])
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 0 <= value <= MAX_PROVISIONED:
        raise InvalidValue(f"{name} must be an integer between 0 and {MAX_PROVISIONED}, got "
                           f"{value!r}", field=name)
    return value


def _document(kind: ConfigKind, body: Mapping[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {"target": _target(kind, body)} if kind is PROVISION else {
        "minInstances": _target(kind, body)}
    if kind is PROVISION:
        doc["defaultTarget"] = doc["target"]
    for name, wanted in kind.recorded.items():
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, wanted) or (isinstance(value, list) and not all(
                isinstance(item, dict) for item in value)):
            raise InvalidValue(f"{name} has the wrong type ({type(value).__name__})",
                               field=name)
        doc[name] = value
    return doc


class ProvisionedInstances:
    """Provision and scaling configs, and the warm instances they ask the runtime for."""

    def __init__(self, repo: FunctionConfigRepo, clock: Clock, runtime: Any,
                 spec_of: SpecOf) -> None:
        self._repo = repo
        self._clock = clock
        self._runtime = runtime
        self._spec_of = spec_of
        self._errors: dict[tuple[str, str, str, str], str] = {}

    def put(self, kind: ConfigKind, account_id: str, region: str, function: str,
            qualifier: str, body: Mapping[str, Any]) -> WarmConfig:
        """Store the config (checked) and start or release instances before answering;
        ResourceNotFound for a qualifier the function does not have."""
        doc = _document(kind, body)
        self._spec_of(account_id, region, function, qualifier)
        self._repo.put((account_id, region, function, kind.kind, qualifier), doc,
                       self._clock.now())
        self._warm(account_id, region, function, qualifier)
        return self.get(kind, account_id, region, function, qualifier)

    def get(self, kind: ConfigKind, account_id: str, region: str, function: str,
            qualifier: str) -> WarmConfig:
        found = self._repo.get((account_id, region, function, kind.kind, qualifier))
        if found is None:
            raise ResourceNotFound(f"function '{function}' has no {kind.resource.value} for "
                                   f"qualifier '{qualifier}'", kind.resource, name=function)
        return self._config(kind, account_id, region, function, qualifier, *found)

    def delete(self, kind: ConfigKind, account_id: str, region: str, function: str,
               qualifier: str) -> None:
        if not self._repo.delete((account_id, region, function, kind.kind, qualifier)):
            raise ResourceNotFound(f"function '{function}' has no {kind.resource.value} for "
                                   f"qualifier '{qualifier}'", kind.resource, name=function)
        self._warm(account_id, region, function, qualifier)

    def list(self, kind: ConfigKind, account_id: str, region: str, *, function: str = "",
             next_token: str = "", limit: int = 20) -> tuple[builtins.list[WarmConfig], str]:
        rows = self._repo.list(account_id, region, kind.kind, function_name=function,
                               start=next_token, limit=limit + 1)
        configs = [self._config(kind, account_id, region, fn, q, doc, at)
                   for fn, q, doc, at in rows[:limit]]
        return configs, rows[limit][0] if len(rows) > limit else ""

    def forget_function(self, account_id: str, region: str, function: str) -> None:
        """The function was deleted: its configs go with it (its instances are retired with
        it)."""
        for kind in (PROVISION, SCALING):
            for _fn, qualifier, _doc, _at in self._repo.list(
                    account_id, region, kind.kind, function_name=function, start="",
                    limit=10_000):
                self._repo.delete((account_id, region, function, kind.kind, qualifier))
        for key in [k for k in self._errors if k[:3] == (account_id, region, function)]:
            del self._errors[key]

    def reconcile(self) -> None:
        """Bring every configured qualifier to its target (instances that stopped, a function
        updated since); the idle reaper calls this on each pass."""
        seen: set[tuple[str, str, str, str]] = set()
        for account_id, region in self._repo.scopes():
            for kind in (PROVISION, SCALING):
                for fn, qualifier, _doc, _at in self._repo.list(
                        account_id, region, kind.kind, start="", limit=10_000):
                    key = (account_id, region, fn, qualifier)
                    if key not in seen:
                        seen.add(key)
                        self._warm(*key)

    def _wanted(self, account_id: str, region: str, function: str, qualifier: str) -> int:
        targets = [0]
        for kind in (PROVISION, SCALING):
            found = self._repo.get((account_id, region, function, kind.kind, qualifier))
            if found is not None:
                targets.append(_target(kind, found[0]))
        return max(targets)

    def _warm(self, account_id: str, region: str, function: str, qualifier: str) -> None:
        key = (account_id, region, function, qualifier)
        keep_warm = getattr(self._runtime, "keep_warm", None)
        if keep_warm is None:
            self._errors[key] = "this emulator's runtime keeps no instances"
            return
        try:
            spec = self._spec_of(*key)
        except ResourceNotFound as exc:  # an alias deleted since: nothing to keep warm
            self._errors[key] = exc.message
            return
        _current, problem = keep_warm(spec, self._wanted(*key))
        self._errors[key] = problem
        if problem:
            log.warning("provisioned instances of %s (%s): %s", function, qualifier, problem)

    def _config(self, kind: ConfigKind, account_id: str, region: str, function: str,
                qualifier: str, doc: Mapping[str, Any], at: float) -> WarmConfig:
        key = (account_id, region, function, qualifier)
        current = 0
        count = getattr(self._runtime, "warm_count", None)
        try:
            if count is not None:
                current = min(int(count(self._spec_of(*key))), _target(kind, doc))
        except ResourceNotFound:
            current = 0
        return WarmConfig(function, qualifier, doc, _target(kind, doc), current,
                          self._errors.get(key, "") if current < _target(kind, doc) else "",
                          at)
