"""Versions, aliases and schedules in s.yaml.

**Functions (fc3).** The fc3 component has no deploy-time prop for versions or aliases; a
Serverless Devs project publishes them with the component's own commands, run after each
deploy by the resource's ``actions`` hook::

    actions:
      success-deploy:
        - component: fc3 version publish --description "release"
        - component: fc3 alias publish --alias-name prod --version-id latest --vw '{"1": 0.1}'

(``s version publish`` / ``s alias publish`` of devsapp/fc3; ``--version-id latest`` is the
newest version, ``--vw``/``--additionalVersionWeight`` the canary weights.) This deployer reads
exactly these two ``component`` steps of ``success-deploy`` and carries them out itself,
idempotently: a version is published only when the function's code or configuration differs
from its newest version, and an alias is written only when it does not point where asked.
Other ``component`` steps are refused; ``run`` steps are :mod:`deployer.config.actions`'.

**Flows (fnf).** The fnf component has neither; the extension props ``publishVersion``,
``aliases`` (same fields as fc3's alias command: ``aliasName``, ``versionId``,
``description``, ``additionalVersionWeight``) and ``schedules`` (CreateSchedule's fields:
``scheduleName``, ``cronExpression``, ``payload``, ``enable``, ``description``) say the same
for a flow.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deployer.config.paths import Path_
from deployer.config.problems import ProblemLog
from deployer.config.props import PropReader, type_name
from deployer.digits import is_decimal

__all__ = ["AliasSpec", "ReleaseSpec", "ScheduleSpec", "fc3_release", "flow_release",
           "flow_schedules"]

LATEST = "latest"
NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,127}"


@dataclass(frozen=True, slots=True)
class AliasSpec:
    """An alias to keep pointing at ``version`` (a number, or ``latest``), with canary
    ``weights`` (version -> share of 0..1 of the invocations or executions)."""

    name: str
    version: str
    description: str = ""
    weights: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class ReleaseSpec:
    """Publish a version after the deploy (``publish``), and the aliases to maintain."""

    publish: bool = False
    description: str = ""
    aliases: tuple[AliasSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    name: str
    cron: str
    payload: str = ""
    description: str = ""
    enable: bool = True


# --- fc3: actions.success-deploy ----------------------------------------------------------------

_VERSION_OPTIONS = {"--description": "description"}
_ALIAS_OPTIONS = {"--alias-name": "alias", "--version-id": "version",
                  "--description": "description", "--vw": "weights",
                  "--additionalVersionWeight": "weights"}


def fc3_release(steps: list[tuple[Path_, str]], log: ProblemLog) -> ReleaseSpec | None:
    """The release the ``component:`` steps of an fc3 resource's ``success-deploy`` ask for
    (``(where, command)`` each; None: there are none)."""
    if not steps:
        return None
    publish, description, aliases = False, "", []
    for at, command in steps:
        parsed = _command(command, at, log)
        if parsed is None:
            continue
        verb, options = parsed
        if verb == "version":
            publish, description = True, options.get("description", "")
        else:
            alias = _alias_from_options(options, at, log)
            if alias is not None:
                aliases.append(alias)
    return ReleaseSpec(publish, description, tuple(aliases))


def _command(command: str, at: Path_, log: ProblemLog) -> tuple[str, dict[str, str]] | None:
    try:
        words = shlex.split(command)
    except ValueError as exc:
        log.error((*at, "component"), f"cannot parse the command: {exc}")
        return None
    if len(words) < 3 or words[0] != "fc3" or words[2] != "publish" \
            or words[1] not in ("version", "alias"):
        log.error((*at, "component"), f"unsupported step {command!r}: use `fc3 version publish "
                  "[--description D]` or `fc3 alias publish --alias-name N --version-id "
                  "latest|<id> [--description D] [--vw JSON]`")
        return None
    known = _VERSION_OPTIONS if words[1] == "version" else _ALIAS_OPTIONS
    options: dict[str, str] = {}
    rest = words[3:]
    while rest:
        flag = rest.pop(0)
        key, _, inline = flag.partition("=")
        if key not in known:
            log.error((*at, "component"), f"unknown option {key!r} of `fc3 {words[1]} publish`"
                      f" (known: {', '.join(known)})")
            return None
        if not inline and not rest:
            log.error((*at, "component"), f"option {key} needs a value")
            return None
        options[known[key]] = inline or rest.pop(0)
    return words[1], options


def _alias_from_options(options: Mapping[str, str], at: Path_,
                        log: ProblemLog) -> AliasSpec | None:
    name, version = options.get("alias"), options.get("version")
    if not name or not version:
        log.error((*at, "component"), "`fc3 alias publish` needs --alias-name and --version-id")
        return None
    weights: Any = {}
    if options.get("weights"):
        try:
            weights = json.loads(options["weights"])
        except json.JSONDecodeError as exc:
            log.error((*at, "component"), f"--vw is not JSON ({exc.msg}); e.g. '{{\"2\": 0.2}}'")
            return None
    return _alias(name, version, options.get("description", ""), weights, (*at, "component"),
                  log)


def _alias(name: str, version: Any, description: str, weights: Any, at: Path_,
           log: ProblemLog) -> AliasSpec | None:
    import re

    version = str(version)
    ok = True
    if not re.fullmatch(NAME, name) or name == "LATEST":
        log.error(at, f"alias name {name!r} must start with a letter or _ and use letters, "
                      "digits, _ and - (1-128 chars)")
        ok = False
    if version.lower() != LATEST and not is_decimal(version):
        log.error(at, f"versionId must be latest or a version number (got {version!r})")
        ok = False
    if not isinstance(weights, Mapping) or len(weights) > 1 or not all(
            is_decimal(str(k))
            and isinstance(v, (int, float)) and not isinstance(v, bool)
            and 0 <= v <= 1 for k, v in weights.items()):
        log.error(at, 'additionalVersionWeight must map one version number to a share between '
                      '0 and 1, e.g. {"2": 0.1}')
        ok = False
    if not ok:
        return None
    return AliasSpec(name, LATEST if version.lower() == LATEST else version, description,
                     tuple((str(k), float(v)) for k, v in weights.items()))


# --- fnf: extension props -----------------------------------------------------------------------


def flow_release(reader: PropReader) -> ReleaseSpec | None:
    """``publishVersion`` (true, or ``{description}``) and ``aliases`` of an fnf resource."""
    raw = reader.props.get("publishVersion")
    publish, description = False, ""
    if isinstance(raw, bool):
        publish = raw
    elif isinstance(raw, Mapping):
        publish = True
        text = raw.get("description", "")
        if not isinstance(text, str):
            reader.error(("publishVersion", "description"), "must be a string")
        description = text if isinstance(text, str) else ""
    elif raw is not None:
        reader.error("publishVersion", f"must be true, false or {{description: ...}} (got "
                     f"{type_name(raw)})")
    aliases = []
    for index, item in enumerate(reader.sequence("aliases") or []):
        at = (*reader.path, "aliases", index)
        if not isinstance(item, Mapping) or not isinstance(item.get("aliasName"), str) \
                or item.get("versionId") is None:
            reader.log.error(at, "each alias needs aliasName and versionId (latest or a number)")
            continue
        unknown = set(item) - {"aliasName", "versionId", "description",
                               "additionalVersionWeight"}
        if unknown:
            reader.log.error(at, f"unknown alias field(s): {', '.join(sorted(unknown))}")
            continue
        alias = _alias(item["aliasName"], item["versionId"], str(item.get("description", "")),
                       item.get("additionalVersionWeight") or {}, at, reader.log)
        if alias is not None:
            aliases.append(alias)
    if not publish and not aliases and raw is None:
        return None
    return ReleaseSpec(publish, description, tuple(aliases))


def flow_schedules(reader: PropReader) -> tuple[ScheduleSpec, ...] | None:
    """``schedules`` of an fnf resource (None when the prop is absent: not managed)."""
    items = reader.sequence("schedules")
    if items is None:
        return None
    out: list[ScheduleSpec] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        at = (*reader.path, "schedules", index)
        if not isinstance(item, Mapping):
            reader.log.error(at, f"must be a map (got {type_name(item)})")
            continue
        spec = _schedule(item, at, reader.log)
        if spec is None:
            continue
        if spec.name in seen:
            reader.log.error((*at, "scheduleName"), f"schedule {spec.name!r} is listed twice")
            continue
        seen.add(spec.name)
        out.append(spec)
    return tuple(out)


def _schedule(item: Mapping[str, Any], at: Path_, log: ProblemLog) -> ScheduleSpec | None:
    import re

    unknown = set(item) - {"scheduleName", "cronExpression", "payload", "enable",
                           "description"}
    if unknown:
        log.error(at, f"unknown schedule field(s): {', '.join(sorted(unknown))} (fields: "
                      "scheduleName, cronExpression, payload, enable, description)")
        return None
    name, cron = item.get("scheduleName"), item.get("cronExpression")
    ok = True
    if not isinstance(name, str) or not re.fullmatch(NAME, name):
        log.error((*at, "scheduleName"), "required: 1-128 letters, digits, _ and -, starting "
                                         "with a letter or _")
        ok = False
    if not isinstance(cron, str) or not cron.strip():
        log.error((*at, "cronExpression"), "required: six fields `Seconds Minutes Hours "
                  "Day-of-month Month Day-of-week` (UTC; `CRON_TZ=Asia/Shanghai ...` for a "
                  "zone) or `@every <N>m`")
        ok = False
    payload = item.get("payload", "")
    if isinstance(payload, Mapping):
        payload = json.dumps(dict(payload), ensure_ascii=False, separators=(",", ":"),
                             sort_keys=True)
    elif not isinstance(payload, str):
        log.error((*at, "payload"), "must be a map or a JSON object text")
        ok = False
    enable = item.get("enable", True)
    if not isinstance(enable, bool):
        log.error((*at, "enable"), f"must be true or false (got {enable!r})")
        ok = False
    if not ok:
        return None
    return ScheduleSpec(str(name), str(cron).strip(), str(payload),
                        str(item.get("description", "")), bool(enable))
