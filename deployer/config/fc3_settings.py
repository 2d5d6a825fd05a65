"""Readers of the fc3 props that become a function's structured settings.

Each reader checks its prop the way Function Compute does (types, ranges, names) and returns
the value in the API's shape (fc3's props use the API's names), so ``deployer.core.deploy``
sends it as it is. Which props these are, and what each one means on the emulator, is the
table in :mod:`deployer.config.fc3` (docs/manifest.md, "fc3 props").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from deployer.config.props import PropReader, type_name
from deployer.config.variables import BROKEN

__all__ = ["LAYER_ARN", "read_async_invoke", "read_concurrency_config", "read_custom_dns",
           "read_custom_runtime", "read_layers", "read_lifecycle", "read_mounts", "read_recorded",
           "read_tag_map", "read_tracing", "read_vpc"]

#: A layer version ARN (fc3-api.md §6.1): ``acs:fc:<region>:<account>:layers/<name>/versions/<n>``.
LAYER_ARN = r"acs:fc:[a-z0-9-]*:[A-Za-z0-9]*:layers/[A-Za-z0-9_-]{1,128}/versions/[0-9]+"
MAX_LAYERS = 5  # FC: at most five layers per function
HOOK_LIMITS = {"initializer": 300, "preStop": 90}  # seconds (fc3-api.md §8.10)
MAX_TAGS = 20
MOUNT_DIR = r"/mnt/[A-Za-z0-9._/-]+|/home/[A-Za-z0-9._/-]+|/data[A-Za-z0-9._/-]*"

Values = dict[str, Any]
Reader = Callable[[PropReader, Values, Any], Any]


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _sub(r: PropReader, key: str, value: Mapping[str, Any]) -> PropReader:
    return PropReader(value, (*r.path, key), r.log)


def read_layers(r: PropReader, v: Values, c: Any) -> Any:
    """``layers``: layer version ARNs, or local directories (kept as absolute paths: ``deploy
    up`` publishes them, :mod:`deployer.core.layers`), the first listed winning a file two
    layers hold."""
    items = r.sequence("layers")
    if items is None:
        return ()
    arns: list[str] = []
    for i, item in enumerate(items):
        if item is BROKEN:
            continue
        if isinstance(item, str) and not item.startswith("acs:") and \
                (c.base_dir / item).is_dir():
            local = str((c.base_dir / item).resolve())  # published by deploy up (core/layers)
            if local in arns:
                r.error(("layers", i), f"{item} is listed twice")
            else:
                arns.append(local)
        elif not isinstance(item, str) or not re.fullmatch(LAYER_ARN, item):
            r.error(("layers", i), "must be a layer version ARN, acs:fc:<region>:<account>:"
                    f"layers/<name>/versions/<n> (got {item!r})")
        elif item in arns:
            r.error(("layers", i), f"{item} is listed twice")
        else:
            arns.append(item)
    if len(items) > MAX_LAYERS:
        r.error("layers", f"at most {MAX_LAYERS} layers (got {len(items)})")
    return tuple(arns)


def read_lifecycle(r: PropReader, v: Values, c: Any) -> Any:
    """``instanceLifecycleConfig``: ``initializer`` and ``preStop`` hooks, each a handler of
    the function's code and a timeout."""
    value = r.mapping("instanceLifecycleConfig")
    if value is None:
        return None
    sub = _sub(r, "instanceLifecycleConfig", value)
    sub.check_keys(tuple(HOOK_LIMITS), {}, "instanceLifecycleConfig")
    out: dict[str, Any] = {}
    for hook, limit in HOOK_LIMITS.items():
        raw = sub.mapping(hook)
        if raw is None:
            continue
        one = _sub(sub, hook, raw)
        one.check_keys(("handler", "timeout"), {
            "command": "a hook given as a command is not deployed by this toolkit (the "
                       "emulator runs hooks that are handlers of the function's code); give "
                       "handler instead"}, hook)
        handler = one.string("handler", required=True, pattern=r"[^\s]{1,128}",
                             what="must be a handler such as index.initialize")
        timeout = one.integer("timeout", default=3, low=1, high=limit, unit=" seconds")
        if handler:
            out[hook] = {"handler": handler, "timeout": timeout}
    return _frozen(out) if out else None


def read_tag_map(r: PropReader, v: Values, c: Any) -> Any:
    """``tags``: a list of ``{key, value}`` (fc3's spelling; the API's is Key/Value)."""
    items = r.sequence("tags")
    if items is None:
        return ()
    tags: dict[str, str] = {}
    for i, item in enumerate(items):
        if item is BROKEN:
            continue
        if not isinstance(item, Mapping):
            r.error(("tags", i), f"must be a map {{key, value}} (got {type_name(item)})")
            continue
        one = PropReader(item, (*r.path, "tags", i), r.log)
        one.check_keys(("key", "value"), {}, "tag")
        key = one.string("key", required=True, pattern=r"[^\s].{0,127}",
                         what="must be 1-128 characters")
        value = one.string("value", default="", pattern=r".{0,256}",
                           what="must be at most 256 characters")
        if key is not None and key.lower().startswith(("acs:", "aliyun")):
            one.error("key", "keys starting with acs: or aliyun are reserved")
        elif key is not None:
            if key in tags:
                one.error("key", f"tag {key!r} is given twice")
            tags[key] = value or ""
    if len(tags) > MAX_TAGS:
        r.error("tags", f"at most {MAX_TAGS} tags (got {len(tags)})")
    return tuple(tags.items())


def read_async_invoke(r: PropReader, v: Values, c: Any) -> Any:
    """``asyncInvokeConfig`` (fc3's ``IAsyncInvokeConfig``): ``maxAsyncRetryAttempts`` 0-8,
    ``maxAsyncEventAgeInSeconds`` 1-2,592,000, ``destinationConfig.onSuccess/onFailure``
    ``.destination`` ARNs, ``asyncTask``; PutAsyncInvokeConfig's body for LATEST."""
    value = r.mapping("asyncInvokeConfig")
    if value is None:
        return None
    sub = _sub(r, "asyncInvokeConfig", value)
    sub.check_keys(("maxAsyncRetryAttempts", "maxAsyncEventAgeInSeconds", "destinationConfig",
                    "asyncTask"), {"qualifier": "the configuration is for LATEST; a version "
                                                "or alias of its own is not deployed"},
                   "asyncInvokeConfig")
    out: dict[str, Any] = {}
    for key, low, high in (("maxAsyncRetryAttempts", 0, 8),
                           ("maxAsyncEventAgeInSeconds", 1, 2_592_000)):
        number = sub.integer(key, low=low, high=high)
        if number is not None:
            out[key] = number
    if sub.props.get("asyncTask") is not None:
        out["asyncTask"] = sub.boolean("asyncTask", default=False)
    targets = sub.mapping("destinationConfig")
    if targets is not None:
        one = _sub(sub, "destinationConfig", targets)
        one.check_keys(("onSuccess", "onFailure"), {}, "destinationConfig")
        for when in ("onSuccess", "onFailure"):
            where = one.mapping(when)
            if where is None:
                continue
            arn = _sub(one, when, where).string(
                "destination", required=True, pattern=r"acs:[a-z]+:[a-z0-9-]*:\d+:.+",
                what="must be the ARN of a function, a flow, an MNS queue or topic, or an "
                     "EventBridge bus")
            if arn:
                out.setdefault("destinationConfig", {})[when] = {"destination": arn}
    return _frozen(out)


def read_concurrency_config(r: PropReader, v: Values, c: Any) -> Any:
    """``concurrencyConfig: {reservedConcurrency: N}`` (0 stops the function)."""
    value = r.mapping("concurrencyConfig")
    if value is None:
        return None
    sub = _sub(r, "concurrencyConfig", value)
    sub.check_keys(("reservedConcurrency",), {}, "concurrencyConfig")
    if "reservedConcurrency" not in sub.props:
        sub.error("reservedConcurrency", "required: the requests the function may run at once "
                  "(0-300; 0 stops it)")
        return None
    return sub.integer("reservedConcurrency", low=0, high=300)


def read_custom_runtime(r: PropReader, v: Values, c: Any) -> Any:
    """``customRuntimeConfig`` of a custom runtime: ``command``/``args`` (lists of strings),
    ``port`` (default 9000) and ``healthCheckConfig``."""
    value = r.mapping("customRuntimeConfig")
    if value is None:
        return None
    runtime = v.get("runtime")
    if isinstance(runtime, str) and not runtime.startswith("custom"):
        r.error("customRuntimeConfig", f"only for custom runtimes (runtime is {runtime})")
        return None
    sub = _sub(r, "customRuntimeConfig", value)
    sub.check_keys(("command", "args", "port", "healthCheckConfig"), {}, "customRuntimeConfig")
    out: dict[str, Any] = {}
    for key in ("command", "args"):
        items = sub.sequence(key)
        if items is not None:
            if not all(isinstance(x, str) for x in items):
                sub.error(key, "must be a list of strings")
            else:
                out[key] = items
    port = sub.integer("port", low=1, high=65535)
    if port is not None:
        out["port"] = port
    health = sub.mapping("healthCheckConfig")
    if health is not None:
        one = _sub(sub, "healthCheckConfig", health)
        ranges = {"initialDelaySeconds": (0, 120), "periodSeconds": (1, 120),
                  "timeoutSeconds": (1, 3), "failureThreshold": (1, 120),
                  "successThreshold": (1, 120)}
        one.check_keys(("httpGetUrl", *ranges), {}, "healthCheckConfig")
        checked: dict[str, Any] = {}
        url = one.string("httpGetUrl", pattern=r"/.{0,2047}", what="must be a path starting "
                         "with /")
        if url:
            checked["httpGetUrl"] = url
        for key, (low, high) in ranges.items():
            number = one.integer(key, low=low, high=high)
            if number is not None:
                checked[key] = number
        out["healthCheckConfig"] = checked
    return _frozen(out)


def read_vpc(r: PropReader, v: Values, c: Any) -> Any:
    """``vpcConfig``: ``auto`` (noted), or ``{vpcId, vSwitchIds, securityGroupId}``, recorded
    (the emulator runs functions on this machine's network)."""
    raw = r.props.get("vpcConfig")
    if isinstance(raw, str) and raw.lower() == "auto":
        v["vpc_auto"] = True
        return None
    value = r.mapping("vpcConfig")
    if value is None:
        return None
    sub = _sub(r, "vpcConfig", value)
    sub.check_keys(("vpcId", "vSwitchIds", "securityGroupId"), {}, "vpcConfig")
    vpc = sub.string("vpcId", required=True, pattern=r"vpc-[A-Za-z0-9]+",
                     what="must be a VPC id (vpc-...)")
    group = sub.string("securityGroupId", required=True, pattern=r"sg-[A-Za-z0-9]+",
                       what="must be a security group id (sg-...)")
    switches = sub.sequence("vSwitchIds")
    if switches is None or not switches or not all(
            isinstance(s, str) and re.fullmatch(r"vsw-[A-Za-z0-9]+", s) for s in switches):
        sub.error("vSwitchIds", "must be a list of vSwitch ids (vsw-...)")
    return _frozen({"vpcId": vpc, "vSwitchIds": switches or [], "securityGroupId": group})


def read_mounts(name: str) -> Reader:
    """``nasConfig`` / ``ossMountConfig``: ``auto`` (nasConfig only, noted) or the mount
    points; the emulator mounts a local directory at each ``mountDir`` (docs/runtime.md)."""

    def read(r: PropReader, v: Values, c: Any) -> Any:
        raw = r.props.get(name)
        if name == "nasConfig" and isinstance(raw, str) and raw.lower() == "auto":
            v["nas_auto"] = True
            return None
        value = r.mapping(name)
        if value is None:
            return None
        sub = _sub(r, name, value)
        nas = name == "nasConfig"
        sub.check_keys(("userId", "groupId", "mountPoints") if nas else ("mountPoints",), {},
                       name)
        out: dict[str, Any] = {}
        if nas:
            out["userId"] = sub.integer("userId", default=10003, low=0, high=65535)
            out["groupId"] = sub.integer("groupId", default=10003, low=0, high=65535)
        points = sub.sequence("mountPoints") or []
        out["mountPoints"] = [p for i, item in enumerate(points)
                              if (p := _mount_point(sub, i, item, nas)) is not None]
        if not out["mountPoints"]:
            sub.error("mountPoints", "needs at least one mount point")
        return _frozen(out)

    return read


def _mount_point(r: PropReader, i: int, item: Any, nas: bool) -> dict[str, Any] | None:
    if not isinstance(item, Mapping):
        r.error(("mountPoints", i), f"must be a map (got {type_name(item)})")
        return None
    one = PropReader(item, (*r.path, "mountPoints", i), r.log)
    keys = ("serverAddr", "mountDir", "enableTLS") if nas else (
        "bucketName", "bucketPath", "endpoint", "mountDir", "readOnly")
    one.check_keys(keys, {}, "mount point")
    out: dict[str, Any] = {}
    if nas:
        out["serverAddr"] = one.string("serverAddr", required=True, pattern=r"[^\s:]+:/\S*",
                                       what="must be <host>:/<path>")
        out["enableTLS"] = one.boolean("enableTLS", default=False)
    else:
        out["bucketName"] = one.string("bucketName", required=True,
                                       pattern=r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]",
                                       what="must be an OSS bucket name")
        out["bucketPath"] = one.string("bucketPath", default="/") or "/"
        out["endpoint"] = one.string("endpoint", default="") or ""
        out["readOnly"] = one.boolean("readOnly", default=False)
    out["mountDir"] = one.string("mountDir", required=True, pattern=MOUNT_DIR,
                                 what="must be a directory under /mnt, /home or /data")
    return out if out["mountDir"] else None


def read_custom_dns(r: PropReader, v: Values, c: Any) -> Any:
    """``customDNS``: recorded (the emulator's functions use this machine's resolver)."""
    value = r.mapping("customDNS")
    if value is None:
        return None
    sub = _sub(r, "customDNS", value)
    sub.check_keys(("nameServers", "searches", "dnsOptions"), {}, "customDNS")
    out: dict[str, Any] = {}
    for key in ("nameServers", "searches"):
        items = sub.sequence(key)
        if items is not None and not all(isinstance(x, str) for x in items):
            sub.error(key, "must be a list of strings")
        elif items is not None:
            out[key] = items
    options = sub.sequence("dnsOptions")
    if options is not None:
        if not all(isinstance(o, Mapping) and isinstance(o.get("name"), str) for o in options):
            sub.error("dnsOptions", "must be a list of {name, value}")
        else:
            out["dnsOptions"] = [{"name": o["name"], "value": str(o.get("value", ""))}
                                 for o in options]
    return _frozen(out)


def read_tracing(r: PropReader, v: Values, c: Any) -> Any:
    """``tracingConfig``: recorded (no tracing service runs locally)."""
    value = r.mapping("tracingConfig")
    if value is None:
        return None
    sub = _sub(r, "tracingConfig", value)
    sub.check_keys(("type", "params", "jaegerConfig"), {}, "tracingConfig")
    out: dict[str, Any] = {}
    kind = sub.string("type")
    if kind is not None:
        out["type"] = kind
    params = sub.props.get("params")
    if params is not None:
        out["params"] = params if isinstance(params, (str, Mapping)) else str(params)
    return _frozen(out)


def read_recorded(name: str, kind: type, choices: tuple[str, ...] = ()) -> Reader:
    """A plain setting FC stores and echoes (``sessionAffinity``, ``enableLongLiving``...)."""

    def read(r: PropReader, v: Values, c: Any) -> Any:
        if kind is bool:
            return r.boolean(name, default=False) if name in r.props else None
        if name == "sessionAffinityConfig" and isinstance(r.props.get(name), Mapping):
            import json

            return json.dumps(dict(r.props[name]), sort_keys=True, separators=(",", ":"))
        if choices:
            value = r.one_of(name, choices, default="")
            return value or None
        return r.string(name)

    return read
