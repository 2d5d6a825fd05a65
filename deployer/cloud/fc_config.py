"""The configuration of an FC 3.0 function a deploy manages, and its wire form.

:class:`FunctionConfig` is what a deploy sets (code aside). The settings that FC stores as
objects or plain values without typed fields here (``instanceLifecycleConfig``,
``vpcConfig``, ``nasConfig``, ...) travel in ``settings`` under their API names, exactly as
the SDK's ``from_map`` reads them, so each one reaches CreateFunction and UpdateFunction on
every target and comes back from GetFunction. Nothing a deploy was asked to set is left out:
a managed setting s.yaml no longer has is cleared (sent with its empty value, as fc3 does),
and a setting counts as changed only when its meaningful content differs (the service may
echo extra fields or defaults).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from deployer.plain_values import plain_data

__all__ = ["EMPTY_SETTINGS", "SETTING_KEYS", "FunctionConfig", "LogConfig", "config_from_wire",
           "meaningful"]

#: The settings carried in ``FunctionConfig.settings``, with the value that clears each one
#: (fc3's ``FC_RESOURCES_EMPTY_CONFIG`` for those it lists).
EMPTY_SETTINGS: dict[str, Any] = {
    "instanceLifecycleConfig": {"initializer": {"handler": ""}, "preStop": {"handler": ""}},
    "customRuntimeConfig": {"command": [], "args": []},
    "vpcConfig": {"securityGroupId": "", "vSwitchIds": [], "vpcId": ""},
    "nasConfig": {"groupId": 0, "userId": 0, "mountPoints": []},
    "ossMountConfig": {"mountPoints": []},
    "customDNS": {"nameServers": [], "searches": [], "dnsOptions": []},
    "tracingConfig": {},
    "sessionAffinity": "NONE",
    "sessionAffinityConfig": "",
    "instanceIsolationMode": "SHARE",
    "enableLongLiving": False,
    "resourceGroupId": "",
}
SETTING_KEYS = tuple(EMPTY_SETTINGS)
#: Settings CreateFunction takes but UpdateFunction does not (a change needs its own call).
CREATE_ONLY = frozenset({"resourceGroupId"})
_DEFAULTS = {"sessionAffinity": "NONE", "instanceIsolationMode": "SHARE"}


def meaningful(key: str, value: Any) -> Any:
    """``value`` without what means "not set": None, empty strings, lists and maps, false
    flags, zeros and the service's defaults (None when nothing is left)."""
    if key in _DEFAULTS and value == _DEFAULTS[key]:
        return None
    return _prune(value)


def _prune(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {k: p for k, v in value.items() if (p := _prune(v)) is not None}
        return out or None
    if isinstance(value, (list, tuple)):
        items = [p for v in value if (p := _prune(v)) is not None]
        return items or None
    if value is None or value == "" or value is False or value == 0:
        return None
    return value


def _covers(remote: Any, desired: Any) -> bool:
    """Whether ``remote`` holds everything ``desired`` asks for (extra keys the service
    fills in are allowed)."""
    if isinstance(desired, Mapping):
        return isinstance(remote, Mapping) and all(
            _covers(remote.get(k), v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(remote, list) and len(remote) == len(desired) and all(
            _covers(r, d) for r, d in zip(remote, desired, strict=True))
    if isinstance(desired, float) or isinstance(remote, float):
        try:
            return abs(float(desired) - float(remote)) < 1e-9
        except (TypeError, ValueError):
            return False
    return bool(remote == desired)


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Where Function Compute writes a function's logs: a Log Service project and logstore."""

    project: str
    logstore: str
    enable_request_metrics: bool = True
    enable_instance_metrics: bool = False
    log_begin_rule: str = ""

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"project": self.project, "logstore": self.logstore,
                               "enableRequestMetrics": self.enable_request_metrics,
                               "enableInstanceMetrics": self.enable_instance_metrics}
        if self.log_begin_rule:
            out["logBeginRule"] = self.log_begin_rule
        return out

    def to_sdk(self) -> Any:
        from alibabacloud_fc20230330 import models

        return models.LogConfig().from_map(self.to_wire())

    @classmethod
    def from_wire(cls, value: Mapping[str, Any] | None) -> LogConfig | None:
        if not value or not (value.get("project") or value.get("logstore")):
            return None
        request = value.get("enableRequestMetrics")
        return cls(project=value.get("project") or "", logstore=value.get("logstore") or "",
                   enable_request_metrics=bool(request if request is not None else True),
                   enable_instance_metrics=bool(value.get("enableInstanceMetrics") or False),
                   log_begin_rule=value.get("logBeginRule") or "")


@dataclass(frozen=True, slots=True)
class FunctionConfig:
    """The configuration of a function that a deploy manages (code aside). ``layers`` are
    layer version ARNs (the first wins a file both hold); ``settings`` the other settings by
    API name (:data:`SETTING_KEYS`)."""

    runtime: str
    handler: str
    memory_size: int = 512
    timeout: int = 3
    cpu: float = 0.35
    disk_size: int = 512
    description: str = ""
    environment_variables: Mapping[str, str] = field(default_factory=dict)
    instance_concurrency: int = 1
    internet_access: bool = True
    role: str = ""
    log_config: LogConfig | None = None  # None: not managed by the deploy (left as it is)
    layers: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)

    def differences(self, other: FunctionConfig) -> dict[str, tuple[Any, Any]]:
        """``{name: (other's value, this value)}`` for every managed setting that differs;
        a setting's name is its field name, or its API name for ``settings``."""
        out: dict[str, tuple[Any, Any]] = {}
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name == "settings":
                out.update(_setting_differences(mine, theirs))
                continue
            if f.name == "log_config":
                if mine is not None and mine != theirs:
                    out[f.name] = (theirs.to_wire() if theirs else None, mine.to_wire())
                continue
            if f.name == "layers":
                mine, theirs = list(mine), list(theirs)
            elif isinstance(mine, Mapping) or isinstance(theirs, Mapping):
                mine, theirs = dict(mine or {}), dict(theirs or {})
            elif (isinstance(mine, float) or isinstance(theirs, float)) and abs(
                float(mine or 0) - float(theirs or 0)
            ) < 1e-9:
                continue
            if mine != theirs:
                out[f.name] = (theirs, mine)
        return out

    def to_wire(self, *, update: bool = False) -> dict[str, Any]:
        """The configuration as a Create/UpdateFunctionInput body (API names); every managed
        setting s.yaml does not set is sent with its empty value (clearing it)."""
        out: dict[str, Any] = {
            "runtime": self.runtime, "handler": self.handler, "memorySize": self.memory_size,
            "timeout": self.timeout, "cpu": self.cpu, "diskSize": self.disk_size,
            "description": self.description,
            "environmentVariables": dict(self.environment_variables),
            "instanceConcurrency": self.instance_concurrency,
            "internetAccess": self.internet_access, "role": self.role,
            "layers": list(self.layers)}
        if self.log_config is not None:
            out["logConfig"] = self.log_config.to_wire()
        for key in SETTING_KEYS:
            if update and key in CREATE_ONLY:
                continue
            value = self.settings.get(key)
            if value is not None:
                out[key] = plain_data(value)
            elif not update and key in CREATE_ONLY:
                continue
            else:
                out[key] = plain_data(EMPTY_SETTINGS[key])
        return out


def _setting_differences(mine: Mapping[str, Any], theirs: Mapping[str, Any]
                         ) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for key in SETTING_KEYS:
        wanted = meaningful(key, mine.get(key))
        found = meaningful(key, theirs.get(key))
        if wanted is None:
            if found is not None:
                out[key] = (plain_data(theirs.get(key)), None)
        elif found is None or not _covers(found, wanted):
            out[key] = (plain_data(theirs.get(key)) if found is not None else None,
                        plain_data(mine.get(key)))
    return out


def config_from_wire(fn: Mapping[str, Any]) -> FunctionConfig:
    """The managed configuration a ``Function`` object (API names) holds."""
    layers = tuple(str(x.get("arn") if isinstance(x, Mapping) else x)
                   for x in fn.get("layers") or ())
    return FunctionConfig(
        runtime=fn.get("runtime") or "", handler=fn.get("handler") or "",
        memory_size=int(fn.get("memorySize") or 0), timeout=int(fn.get("timeout") or 0),
        cpu=float(fn.get("cpu") or 0), disk_size=int(fn.get("diskSize") or 0),
        description=fn.get("description") or "",
        environment_variables=dict(fn.get("environmentVariables") or {}),
        instance_concurrency=int(fn.get("instanceConcurrency") or 1),
        internet_access=bool(fn["internetAccess"] if fn.get("internetAccess") is not None
                             else True),
        role=fn.get("role") or "", log_config=LogConfig.from_wire(fn.get("logConfig")),
        layers=layers,
        settings={k: fn[k] for k in SETTING_KEYS if fn.get(k) is not None})
