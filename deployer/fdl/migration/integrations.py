"""What a legacy task calls, written as a SpecVersion v1 Task: ``Action``, ``TaskMode`` and
``Parameters`` (the mapping of :mod:`deployer.fdl.legacy.resources`), and what its result
(``$local``) is in v1 terms."""

from __future__ import annotations

import re
from typing import Any

from deployer.fdl.legacy.ast import TaskStep
from deployer.fdl.legacy.errors import PathSyntaxError
from deployer.fdl.legacy.paths import parse_path
from deployer.fdl.legacy.resources import Integration
from deployer.fdl.migration.expressions import Base, NoCounterpart, Roots, map_literal, path_expr
from deployer.fdl.syntax.ast import TaskMode

__all__ = ["fc3_arn", "task_fields"]

_FC2 = re.compile(r"^acs:fc:([^:]*):([^:]*):services/[^/.]+(?:\.([^/]+))?/functions/([^/]+)$")


def fc3_arn(arn: str) -> str:
    """A function ARN in the FC 3.0 form (``functions/F[/qualifier]``); others unchanged."""
    match = _FC2.match(arn)
    if match is None:
        return arn
    region, account, qualifier, name = match.groups()
    return f"acs:fc:{region}:{account}:functions/{name}" + (f"/{qualifier}" if qualifier else "")


def task_fields(state: dict[str, Any], step: TaskStep, call: Integration, x: Base,
                roots: Roots) -> tuple[Base, list[str]]:
    """Fill ``Action``, ``TaskMode`` and ``Parameters`` of ``state``; return what the task's
    ``$local`` is in v1 and the notes of what did not carry over exactly."""
    notes: list[str] = []
    state["Action"] = call.action
    state["TaskMode"] = call.task_mode.value
    step_input = map_literal(x.fields) if x.fields is not None else x.expr
    if call.kind == "function":
        arn = fc3_arn(call.resource_arn)
        if step.ref:
            notes.append(f"!Ref {step.resource_arn} is the function {call.target} of the "
                         f"template's service; written {arn} (an empty region and account are "
                         "the flow's)")
        state["Parameters"] = {"resourceArn": arn, "invocationType": "Sync",
                               "body.$": step_input}
        wrapped = call.task_mode is not TaskMode.WAIT_FOR_CUSTOM_CALLBACK
        return Base("$Output.Body" if wrapped else "$Output"), notes
    params = _template(step.service_params, roots, notes)
    if call.kind == "flow" or call.action == "FNF:StartExecution":
        state["Parameters"] = _subflow(call, params, step_input)
        notes.append("a sub-flow: the v1 FNF:StartExecution task's result is taken as the "
                     "legacy task's $local; check the child's output against the mappings")
        return Base("$Output"), notes
    state["Parameters"] = {"TopicName" if call.kind == "topic" else "QueueName": call.target,
                           **params} if call.kind in ("topic", "queue") else params
    notes.append(f"{call.action} ({call.target}): its serviceParams are written as Parameters; "
                 "check them against the v1 integration's parameters (the emulator does not "
                 "run this integration)")
    return Base("$Output"), notes


def _subflow(call: Integration, params: dict[str, Any], step_input: str) -> dict[str, Any]:
    given: dict[str, Any] = {}
    if call.kind == "flow":
        given["resourceArn"] = call.resource_arn
    elif "FlowName.$" in params:
        given["resourceArn.$"] = f'"acs:fnf:::flow/" + {params["FlowName.$"]}'
    else:
        given["resourceArn"] = f"acs:fnf:::flow/{params.get('FlowName', '')}"
    for legacy, current in (("ExecutionName", "executionName"), ("Input", "input")):
        if f"{legacy}.$" in params:
            given[f"{current}.$"] = params[f"{legacy}.$"]
        elif legacy in params:
            given[current] = params[legacy]
    if "input" not in given and "input.$" not in given:
        given["input.$"] = step_input
    return given


def _template(value: Any, roots: Roots, notes: list[str]) -> dict[str, Any]:
    """``serviceParams`` as a v1 template: a path (``$``, ``$.key``) becomes a ``.$`` key."""
    if not hasattr(value, "items"):
        return {}
    built: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, str) and item.startswith("$") and (len(item) == 1 or item[1] in ".["):
            built[f"{key}.$"] = _path(item, roots, notes)
        elif hasattr(item, "items"):
            built[str(key)] = _template(item, roots, notes)
        elif isinstance(item, tuple):
            built[str(key)] = [_element(v, roots, notes) for v in item]
        else:
            built[str(key)] = item
    return built


def _element(value: Any, roots: Roots, notes: list[str]) -> Any:
    if isinstance(value, str) and value.startswith("$") and (len(value) == 1 or value[1] in ".["):
        return {"$": _path(value, roots, notes)}
    if hasattr(value, "items"):
        return _template(value, roots, notes)
    if isinstance(value, tuple):
        return [_element(v, roots, notes) for v in value]
    return value


def _path(text: str, roots: Roots, notes: list[str]) -> str:
    try:
        return path_expr(parse_path(text), roots)
    except (NoCounterpart, PathSyntaxError) as exc:
        notes.append(f"serviceParams `{text}`: {getattr(exc, 'reason', exc)}; written as null")
        return "null"
