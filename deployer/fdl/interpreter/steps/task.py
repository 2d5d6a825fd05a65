"""The legacy task step: the same scheduling, events, timeout and callbacks as a SpecVersion v1
Task (:class:`~deployer.fdl.interpreter.states.task.TaskEvaluator`), with the legacy call
(:mod:`deployer.fdl.legacy.resources`), results and error names.

* parameters: a function gets the step's input as its event (``FC:InvokeFunction`` with
  ``body``); a sub-flow ``FNF:StartExecution`` with ``input`` (``serviceParams.Input``, else the
  step's input); MNS and other actions their ``serviceParams``;
* ``$local`` is the result itself (a function's decoded response, not ``{"Body": ...}``), ``{}``
  for an empty response;
* a function error names its ``errorType`` (``BookTrainTicketError``) rather than
  ``FC.Unknown``; a timeout is ``FnF.TaskTimeout``;
* the task token (``$context.task.token``) is one per visit of the step, so input mappings can
  read it before the call and every retry reports with the same token.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from deployer.fdl.interpreter.active import ActiveState
from deployer.fdl.interpreter.fc import UNKNOWN_FUNCTION_ERROR, decode_body
from deployer.fdl.interpreter.runtime import Ctx, dump, task_token
from deployer.fdl.interpreter.states.task import TaskEvaluator
from deployer.fdl.interpreter.steps.data import CompiledParams
from deployer.fdl.legacy.errors import TASK_TIMEOUT_CODE
from deployer.fdl.legacy.resources import Integration

__all__ = ["LegacyTaskEvaluator", "task_parameters"]


@dataclass(frozen=True, slots=True)
class LegacyTaskEvaluator(TaskEvaluator):
    """``integration``: what the task calls; ``params``: its compiled ``serviceParams``."""

    integration: Integration
    params: CompiledParams | None
    timeout_code: ClassVar[str] = TASK_TIMEOUT_CODE

    def new_token(self, ctx: Ctx, st: ActiveState) -> str:
        ex = ctx.ex
        return task_token(ex.flow_name, ex.name, st.entered_event)

    def prepare(self, ctx: Ctx, st: ActiveState, token: str) -> tuple[Any, int]:
        given = None if self.params is None else self.params.build(st.input)
        timeout = self.timeout if isinstance(self.timeout, int) else 0
        return task_parameters(self.integration, st.input, given), timeout

    def shape(self, raw: str) -> Any:
        return decode_body(raw) if raw.strip() else {}

    def failure_code(self, code: str, detail: str) -> str:
        """A function's own error type names the error (``errorType`` of FC's error body)."""
        if code != UNKNOWN_FUNCTION_ERROR:
            return code
        try:
            body = json.loads(detail)
        except ValueError:
            return code
        kind = body.get("errorType") if isinstance(body, dict) else None
        return kind if isinstance(kind, str) and kind.strip() else code


def task_parameters(integration: Integration, step_input: Any, given: Any) -> Any:
    """The parameters of the call a legacy task makes (see the module docstring)."""
    kind = integration.kind
    if kind == "function":
        return {"resourceArn": integration.resource_arn, "invocationType": "Sync",
                "body": step_input}
    params = given if isinstance(given, dict) else {}
    if kind == "flow":
        return {"resourceArn": integration.resource_arn,
                "input": params.get("Input", step_input) if given is not None else step_input}
    if kind == "action" and integration.action == "FNF:StartExecution":  # fnf:StartExecution
        built: dict[str, Any] = {
            "resourceArn": f"acs:fnf:::flow/{params.get('FlowName', '')}",
            "input": params.get("Input", step_input)}
        if params.get("ExecutionName") is not None:
            built["executionName"] = params["ExecutionName"]
        return built
    if kind == "topic":
        return {"TopicName": integration.target,
                "MessageBody": params.get("MessageBody", dump(step_input)), **params}
    if kind == "queue":
        return {"QueueName": integration.target,
                "MessageBody": params.get("MessageBody", dump(step_input)), **params}
    return params
