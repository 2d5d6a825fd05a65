"""Validator checks on the values of a legacy flow: mappings and paths, conditions, a task's
resource and pattern, retry and catch rules, wait durations and timestamps, foreach iteration
mappings (docs/fdl-diagnostics.md gives each code)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from deployer.fdl.legacy.ast import (
    DataMapping,
    IterationMapping,
    LegacyRetry,
    TaskStep,
    WaitStep,
)
from deployer.fdl.legacy.conditions import parse_condition
from deployer.fdl.legacy.errors import PathSyntaxError
from deployer.fdl.legacy.paths import MAPPING_ROOTS, parse_path
from deployer.fdl.legacy.resources import (
    FC_INVOKE,
    PATTERNS,
    Integration,
    Problem,
    resolve_task,
)
from deployer.fdl.legacy.schema import (
    ITERATION_KEYS,
    MAPPING_KEYS,
    RETRY_KEYS,
    check_keys,
)
from deployer.fdl.limits import LEGACY_WAIT_SECONDS, MAX_TIMEOUT_SECONDS
from deployer.fdl.syntax.ast import TaskMode
from deployer.fdl.syntax.diagnostics import Code, Reporter, Severity
from deployer.fdl.syntax.positions import Expr, Position, RawValue
from deployer.fdl.syntax.schema import did_you_mean

__all__ = [
    "ERROR_SOURCES",
    "check_condition",
    "check_iteration",
    "check_mappings",
    "check_path",
    "check_retry_rule",
    "check_task",
    "check_wait_step",
    "rfc3339_seconds",
]

#: The only sources an ``errorMappings`` entry may read (documented).
ERROR_SOURCES = ("$local.error", "$local.cause")


def check_path(expr: Expr, path: str, report: Reporter, *,
               roots: tuple[str, ...] = ("",)) -> None:
    """A path that does not parse (FDL301, offset in the message)."""
    try:
        parse_path(expr.text, roots=roots)
    except PathSyntaxError as error:
        report(Code.EXPRESSION_SYNTAX, f"invalid path `{expr.text}`: {error.message} "
               f"(at offset {error.offset})", expr.position, path,
               hint="e.g. $.key, $.list[0] or $.items[*].name" if roots == ("",)
               else "e.g. $input.key, $local.key or $context.task.token")


def check_condition(expr: Expr, path: str, report: Reporter) -> None:
    """A condition that does not parse (FDL301)."""
    try:
        parse_condition(expr.text)
    except PathSyntaxError as error:
        report(Code.EXPRESSION_SYNTAX, f"invalid condition `{expr.text}`: {error.message} "
               f"(at offset {error.offset})", expr.position, path,
               hint='e.g. $.status == "ready" && $.count > 1')


def check_mappings(mappings: tuple[DataMapping, ...] | None, path: str, report: Reporter, *,
                   errors: bool = False) -> None:
    """Keys, targets and sources of a mapping list; ``errors`` for ``errorMappings``, whose
    sources are ``$local.error`` or ``$local.cause``."""
    for index, mapping in enumerate(mappings or ()):
        where = f"{path}[{index}]"
        check_keys(mapping.raw, MAPPING_KEYS, mapping.position, where, report, where="mapping")
        target = mapping.raw.get("target")
        if target is not None and not mapping.target:
            report(Code.INVALID_VALUE, "a mapping's target must not be empty",
                   target.value_position, f"{where}.target")
        source = mapping.source
        if source is None:
            continue
        if errors:
            text = source.path.text if source.path is not None else source.constant
            if text not in ERROR_SOURCES:
                report(Code.INVALID_VALUE, f"errorMappings read {' or '.join(ERROR_SOURCES)}, "
                       f"found {text!r}", source.position, f"{where}.source")
            continue
        if source.path is not None:
            check_path(source.path, f"{where}.source", report, roots=MAPPING_ROOTS)
        else:
            _constant_like_path(source.constant, source.position, f"{where}.source", report)


def _constant_like_path(value: RawValue, position: Position, path: str,
                        report: Reporter) -> None:
    if isinstance(value, str) and value.startswith("$") and len(value) > 1:
        report(Code.CONSTANT_LIKE_PATH,
               f"source '{value}' is taken as a constant string: only $input, $local and "
               "$context start a path in a mapping", position, path,
               severity=Severity.WARNING,
               hint="write $input." + value[2:] if value.startswith("$.") else None)


def check_task(step: TaskStep, path: str, report: Reporter, execution_mode: str) -> None:
    """The resource or action, the pattern, serviceParams and timeoutSeconds."""
    found = resolve_task(step)
    raw = step.raw
    if isinstance(found, Problem):
        entry = raw.get(found.key)
        if entry is None:
            report(Code.MISSING_FIELD, found.message, step.position, path, hint=found.hint)
        else:
            hint = did_you_mean(step.pattern, PATTERNS) if found.key == "pattern" else None
            code = Code.CONFLICTING_FIELDS if "not both" in found.message else \
                Code.INVALID_VALUE
            report(code, found.message, entry.value_position, f"{path}.{found.key}",
                   hint=hint or found.hint)
        return
    if found.task_mode is not TaskMode.REQUEST_COMPLETE and execution_mode == "Express":
        report(Code.CALLBACK_IN_EXPRESS, f"pattern {step.pattern} needs a Standard flow; "
               "Express flows cannot wait for callbacks or sub-flows",
               raw["pattern"].value_position, f"{path}.pattern")
    _check_integration(step, found, path, report)
    timeout = raw.get("timeoutSeconds")
    if step.timeout_seconds is not None and timeout is not None and \
            not 1 <= step.timeout_seconds <= MAX_TIMEOUT_SECONDS:
        report(Code.TIMEOUT_RANGE, f"timeoutSeconds must be 1 to {MAX_TIMEOUT_SECONDS}, "
               f"found {step.timeout_seconds}", timeout.value_position,
               f"{path}.timeoutSeconds")


def _check_integration(step: TaskStep, found: Integration, path: str,
                       report: Reporter) -> None:
    params = step.raw.get("serviceParams")
    if found.kind == "function" and params is not None:
        report(Code.FIELD_NOT_ALLOWED, "a function task sends its input as the event; "
               "serviceParams belong to actions, sub-flows and MNS", params.key_position,
               f"{path}.serviceParams", hint="map the event with inputMappings")
    elif found.kind == "flow" and params is not None and isinstance(params.value, Mapping):
        for key in params.value:
            if key != "Input":
                report(Code.UNKNOWN_FIELD, f"a sub-flow takes serviceParams.Input only, "
                       f"found '{key}'", params.value_position, f"{path}.serviceParams.{key}",
                       hint=did_you_mean(key, ["Input"]))
    if params is not None and params.value is not None and \
            not isinstance(params.value, Mapping):
        report(Code.WRONG_TYPE, "'serviceParams' must be a mapping", params.value_position,
               f"{path}.serviceParams")
    if found.action != FC_INVOKE:
        entry = step.raw.get("resourceArn") or step.raw.get("action")
        position = entry.value_position if entry is not None else step.position
        report(Code.ACTION_NOT_EMULATED,
               f"this task calls {found.action} ({found.target}), not a function: the "
               "emulator runs it only where it emulates that integration",
               position, path, severity=Severity.WARNING,
               hint="valid for the cloud; mock it in `deploy flow test`")


def check_retry_rule(rule: LegacyRetry, path: str, report: Reporter) -> None:
    """Keys, ``errors`` not empty, and the documented ranges."""
    check_keys(rule.raw, RETRY_KEYS, rule.position, path, report, where="retry rule")
    raw = rule.raw
    errors = raw.get("errors")
    if errors is not None and errors.value == ():
        report(Code.EMPTY_LIST, "a retry rule needs at least one error name",
               errors.value_position, f"{path}.errors", hint="FnF.ALL matches every error")
    for key, value, low, high, code in (
        ("intervalSeconds", rule.interval_seconds, 0, 86_400, Code.RETRY_INTERVAL_RANGE),
        ("maxIntervalSeconds", rule.max_interval_seconds, 0, 86_400, Code.RETRY_INTERVAL_RANGE),
    ):
        entry = raw.get(key)
        if entry is not None and not low < value <= high:
            report(code, f"{key} must be more than {low} and at most {high}, found {value}",
                   entry.value_position, f"{path}.{key}")
    attempts = raw.get("maxAttempts")
    if attempts is not None and rule.max_attempts < 0:
        report(Code.MAX_ATTEMPTS_RANGE, f"maxAttempts must not be negative, found "
               f"{rule.max_attempts}", attempts.value_position, f"{path}.maxAttempts")
    multiplier = raw.get("multiplier")
    if multiplier is not None and rule.multiplier < 1:
        report(Code.BACKOFF_RATE_RANGE, f"multiplier must be at least 1, found "
               f"{rule.multiplier}", multiplier.value_position, f"{path}.multiplier")


def rfc3339_seconds(text: str) -> float | None:
    """Seconds since the epoch of an RFC 3339 timestamp (``2019-05-02T15:04:05Z``, an offset,
    fractions), or None when ``text`` is not one."""
    value = text.strip()
    if len(value) < 20 or value[10] not in "Tt" or (value[-1] not in "Zz" and \
            value[-6] not in "+-"):
        return None
    if value[-1] in "Zz":
        value = value[:-1] + "+00:00"
    try:
        stamp = datetime.fromisoformat(value[:10] + "T" + value[11:])
    except ValueError:
        return None
    return stamp.timestamp() if stamp.tzinfo is not None else None


def check_wait_step(step: WaitStep, path: str, report: Reporter) -> None:
    """One of duration and timestamp; a literal within two days, or a valid path."""
    raw = step.raw
    duration, timestamp = raw.get("duration"), raw.get("timestamp")
    if duration is None and timestamp is None:
        report(Code.MISSING_FIELD, "a wait step needs duration or timestamp", step.position,
               path)
    elif duration is not None and timestamp is not None:
        report(Code.CONFLICTING_FIELDS, "give duration or timestamp, not both",
               timestamp.key_position, f"{path}.timestamp")
    if isinstance(step.duration, Expr):
        check_path(step.duration, f"{path}.duration", report)
    elif duration is not None and (step.duration is None or isinstance(duration.value, bool)):
        report(Code.WRONG_TYPE, "duration is a whole number of seconds or a path ($.key)",
               duration.value_position, f"{path}.duration")
    elif step.duration is not None and not 0 <= step.duration <= LEGACY_WAIT_SECONDS:
        report(Code.WAIT_RANGE, f"duration must be 0 to {LEGACY_WAIT_SECONDS} seconds (two "
               f"days), found {step.duration}", duration.value_position if duration else
               step.position, f"{path}.duration")
    if isinstance(step.timestamp, Expr):
        check_path(step.timestamp, f"{path}.timestamp", report)
    elif isinstance(step.timestamp, str) and rfc3339_seconds(step.timestamp) is None:
        report(Code.INVALID_VALUE, f"timestamp '{step.timestamp}' is not an RFC 3339 time",
               timestamp.value_position if timestamp else step.position, f"{path}.timestamp",
               hint="e.g. 2019-05-02T15:04:05Z")


def check_iteration(iteration: IterationMapping | None, path: str, report: Reporter) -> None:
    """``iterationMapping``: its keys, a collection path and non-empty key names."""
    if iteration is None:
        return
    where = f"{path}.iterationMapping"
    check_keys(iteration.raw, ITERATION_KEYS, iteration.position, where, report,
               where="iterationMapping")
    if iteration.collection is not None:
        check_path(iteration.collection, f"{where}.collection", report)
    for key, value in (("item", iteration.item), ("index", iteration.index)):
        entry = iteration.raw.get(key)
        if entry is not None and value == "":
            report(Code.INVALID_VALUE, f"{key} names the key the iteration input gets; it "
                   "must not be empty", entry.value_position, f"{where}.{key}")
