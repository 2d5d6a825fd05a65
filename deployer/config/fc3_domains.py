"""Reader of the fc3 prop ``customDomain`` (fc3's shape: one domain and this function's
``route`` on it): ``{domainName, protocol, route: {path, qualifier, methods}, certConfig,
tlsConfig, authConfig, wafConfig}``. Several functions may name the same domain with their
own paths; ``deploy up`` merges each function's route into the domain
(:mod:`deployer.core.custom_domains`). ``domainName: auto`` is a name on the emulator only
(docs/fc3-functions.md, "Custom domains in s.yaml").
"""

from __future__ import annotations

import re
from typing import Any

from deployer.config.fc3_settings import Values, _frozen, _sub
from deployer.config.props import PropReader

__all__ = ["AUTO_DOMAIN", "auto_domain_name", "read_custom_domain"]

AUTO_DOMAIN = "auto"
_DOMAIN = r"(?=.{1,253}$)([a-z0-9*]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}"
_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS")
_RECORDED = ("certConfig", "tlsConfig", "authConfig", "wafConfig")


def auto_domain_name(function_name: str, region: str) -> str:
    """The name ``domainName: auto`` takes on the emulator: ``<function>.<region>.fc.localhost``
    (lower case, ``_`` as ``-``): ``.localhost`` names reach this machine (RFC 6761)."""
    label = re.sub(r"[^a-z0-9-]", "-", function_name.lower()).strip("-")[:63] or "fn"
    return f"{label}.{region}.fc.localhost"


def _route(sub: PropReader) -> dict[str, Any] | None:
    raw = sub.mapping("route")
    if raw is None:
        sub.error("route", "required: {path, qualifier, methods}, the paths of the domain this "
                  "function serves (path /* for all)")
        return None
    one = _sub(sub, "route", raw)
    one.check_keys(("path", "qualifier", "methods"), {
        "functionName": "the route is this function's (fc3 sets it)",
        "serviceName": "FC 3.0 has no services"}, "route")
    path = one.string("path", required=True, pattern=r"/[^\s]*",
                      what="must start with / (/* for every path, /api/* for a prefix)")
    qualifier = one.string("qualifier", default="LATEST", pattern=r"[A-Za-z0-9_-]{1,128}",
                           what="must be LATEST, a version or an alias")
    methods = one.sequence("methods") or []
    bad = [m for m in methods if not isinstance(m, str) or m.upper() not in _METHODS]
    if bad:
        one.error("methods", f"each must be one of {', '.join(_METHODS)} (got {bad[0]!r})")
    if path is None:
        return None
    route: dict[str, Any] = {"path": path, "qualifier": qualifier}
    if methods and not bad:
        route["methods"] = [str(m).upper() for m in methods]
    return route


def read_custom_domain(r: PropReader, v: Values, c: Any) -> Any:
    """``customDomain``: the domain (``auto`` or a DNS name), ``protocol`` (HTTP, HTTPS or
    HTTP,HTTPS; default HTTP), this function's ``route`` and the recorded settings."""
    value = r.mapping("customDomain")
    if value is None:
        return None
    sub = _sub(r, "customDomain", value)
    sub.check_keys(("domainName", "protocol", "route", *_RECORDED), {
        "routeConfig": "fc3's customDomain takes this function's route; give route: {path, "
                       "qualifier, methods}"}, "customDomain")
    raw = sub.props.get("domainName")
    name = raw.lower().rstrip(".") if isinstance(raw, str) else raw
    if name != AUTO_DOMAIN and (not isinstance(name, str) or not re.fullmatch(_DOMAIN, name)):
        sub.error("domainName", f"must be auto or a domain name such as api.example.com "
                  f"(got {raw!r})")
        name = None
    protocol = sub.one_of("protocol", ("HTTP", "HTTPS", "HTTP,HTTPS"), default="HTTP")
    route = _route(sub)
    out: dict[str, Any] = {"domainName": name, "protocol": protocol, "route": route}
    for key in _RECORDED:
        setting = sub.mapping(key)
        if setting is not None:
            out[key] = dict(setting)
    return _frozen(out) if name and route else None
