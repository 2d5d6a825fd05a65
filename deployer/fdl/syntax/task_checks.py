"""Validator checks on what a Task state does: its ``TaskMode`` (and callback modes only in
Standard flows), its ``Action`` (``Service:Operation``; ``FC:InvokeFunction``, ``HTTP:Request``
and ``FNF:StartExecution`` are carried out by the emulator, any other action is answered from
mocked responses only: a warning, FDL504, that ``deploy validate`` lists) and the parameters
``FC:InvokeFunction`` takes (reference §6)."""

from __future__ import annotations

from deployer.fdl.syntax.ast import TaskState, Template, TemplateField
from deployer.fdl.syntax.diagnostics import Code, Reporter, Severity
from deployer.fdl.syntax.expression_checks import describe_template_value
from deployer.fdl.syntax.schema import did_you_mean

__all__ = ["EMULATED_ACTIONS", "FC_INVOKE", "check_action"]

FC_INVOKE = "FC:InvokeFunction"
#: The actions the emulator carries out itself; any other is answered from mocks.
EMULATED_ACTIONS = (FC_INVOKE, "HTTP:Request", "FNF:StartExecution")
FC_PARAMETERS = ("resourceArn", "invocationType", "body")
INVOCATION_TYPES = ("Sync", "Async")
TASK_MODES = ("RequestComplete", "WaitForSystemCallback", "WaitForCustomCallback")


def check_action(state: TaskState, path: str, report: Reporter, execution_mode: str) -> None:
    """TaskMode, callback modes in Express, the Action's format and FC:InvokeFunction's
    parameters."""
    _check_task_mode(state, path, report, execution_mode)
    action = state.raw.get("Action")
    if action is None or not state.action:
        return
    service, _, operation = state.action.partition(":")
    if not service or not operation:
        report(
            Code.ACTION_FORMAT,
            f"Action '{state.action}' must look like Service:Operation",
            action.value_position,
            f"{path}.Action",
            hint="e.g. FC:InvokeFunction",
        )
    elif state.action not in EMULATED_ACTIONS:
        report(
            Code.ACTION_NOT_EMULATED,
            f"Action '{state.action}' needs a mocked response on the emulator (it calls "
            f"only {', '.join(EMULATED_ACTIONS)} itself)",
            action.value_position,
            f"{path}.Action",
            severity=Severity.WARNING,
            hint=did_you_mean(state.action, list(EMULATED_ACTIONS)) or (
                f"map state '{state.name}' to a response in a mock file's test case "
                "(docs/emulator.md, \"Mocked integrations\")"),
        )
    elif state.action == FC_INVOKE:
        _check_fc_parameters(state, path, report)


def _check_task_mode(state: TaskState, path: str, report: Reporter, execution_mode: str) -> None:
    mode = state.raw.get("TaskMode")
    if mode is not None and isinstance(mode.value, str) and mode.value != state.task_mode.value:
        report(
            Code.INVALID_VALUE,
            f"unknown TaskMode '{mode.value}'",
            mode.value_position,
            f"{path}.TaskMode",
            hint=did_you_mean(mode.value, TASK_MODES) or "one of " + ", ".join(TASK_MODES),
        )
    elif state.task_mode.value != "RequestComplete" and execution_mode == "Express":
        report(
            Code.CALLBACK_IN_EXPRESS,
            f"TaskMode {state.task_mode.value} needs a Standard flow; Express flows cannot wait "
            "for callbacks",
            mode.value_position if mode else state.position,
            f"{path}.TaskMode",
        )


def _check_fc_parameters(state: TaskState, path: str, report: Reporter) -> None:
    """The required parameters are there, those written as literals have the right type, and
    the others are ones FC:InvokeFunction takes."""
    params = state.parameters
    where = params.position if params is not None else state.position
    keys = {item.key: item for item in params.fields} if params is not None else {}
    for name in ("resourceArn", "invocationType"):
        if name not in keys and f"{name}.$" not in keys:
            report(
                Code.FC_MISSING_PARAMETER,
                f"{FC_INVOKE} needs the parameter '{name}'",
                where,
                f"{path}.Parameters",
            )
    _check_fc_literals(keys, f"{path}.Parameters", report)
    for key, item in keys.items():
        base = key[:-2] if key.endswith(".$") else key
        if base not in FC_PARAMETERS:
            report(
                Code.FC_UNKNOWN_PARAMETER,
                f"{FC_INVOKE} does not take the parameter '{key}'",
                item.position,
                f"{path}.Parameters.{key}",
                severity=Severity.WARNING,
                hint=did_you_mean(base, FC_PARAMETERS),
            )


def _check_fc_literals(keys: dict[str, TemplateField], path: str, report: Reporter) -> None:
    """``invocationType`` Sync or Async, ``resourceArn`` a non-empty string, ``body`` a mapping
    or a string (an expression key's value is known only at run time)."""
    kind = keys.get("invocationType")
    if kind is not None and kind.value not in INVOCATION_TYPES:
        report(
            Code.FC_INVOCATION_TYPE,
            f"invocationType must be Sync or Async, found {describe_template_value(kind.value)}",
            kind.value_position,
            f"{path}.invocationType",
            hint=did_you_mean(str(kind.value), INVOCATION_TYPES),
        )
    arn = keys.get("resourceArn")
    if arn is not None and not (isinstance(arn.value, str) and arn.value):
        report(
            Code.WRONG_TYPE,
            f"resourceArn must be a non-empty string, found {describe_template_value(arn.value)}",
            arn.value_position,
            f"{path}.resourceArn",
        )
    body = keys.get("body")
    if body is not None and not isinstance(body.value, (Template, str)):
        report(
            Code.FC_BODY_TYPE,
            f"body must be a mapping or a string, found {describe_template_value(body.value)}",
            body.value_position,
            f"{path}.body",
        )
