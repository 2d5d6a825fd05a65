"""Carrying out ``FC:InvokeFunction`` tasks on the emulator's Function Compute.

``resourceArn`` forms (cloudflow-fdl.md §6.1):

* ``acs:fc:<region>:<account>:functions/<name>[/<qualifier>]`` (FC 3.0);
* ``acs:fc:<region>:<account>:services/<service>.<qualifier>/functions/<name>`` (the older form;
  the function ``<name>`` is called, the service name is not part of FC 3.0).

Empty region/account segments mean the execution's. Outcomes follow the interpreter's
conventions: ``(output_text, "", "")`` on success, ``("", code, detail)`` on failure, with
function errors mapped by ``fc.map_function_error`` (``FC.Unknown``) and service errors by
``fc.map_service_error`` over the code FC answers for them (``fc_code``: FC's error table,
wired in by ``emulator/app.py``; ``FC.FunctionNotFound``...). ``invocationType: Async`` with
``RequestComplete`` completes on acceptance (output ``{}``); with ``WaitForSystemCallback`` the
task waits for the run's result. ``WaitForCustomCallback`` tasks invoke the function (which
receives the token in its parameters) and then wait for ReportTask*; a function error fails
the task at once.

Injected faults (:mod:`deployer.emulator.services.faults`) reach these invocations like direct
ones: an error fault fails the task with ``FC.<Code>`` (e.g. ``FC.ResourceThrottled``), a
function error or timeout with ``FC.Unknown`` and FC's error JSON; latency holds the worker.

CloudFlow invokes functions with the flow's execution role: when the flow has a ``RoleArn``, the
role's RAM policies must allow ``fc:InvokeFunction`` on the function, else the task fails with
``FC.AccessDenied`` (FC answers ``403 NotAuthorized`` and CloudFlow names FC errors ``FC.<Code>``;
docs/runtime.md). A flow without a role invokes unchecked (docs/runtime.md says why).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from deployer.emulator.services.authorization import Authorizer, Subject
from deployer.emulator.services.errors import NotAuthorized, ResourceNotFound, ServiceError
from deployer.emulator.services.faults import (
    INVOKE,
    FaultCall,
    FaultKind,
    FaultService,
    injected_failure_body,
)
from deployer.emulator.services.functions import FunctionService
from deployer.emulator.services.quotas import CloudQuotas
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import InvokeTask
from deployer.fdl.interpreter.fc import map_function_error, map_service_error
from deployer.fdl.progress import task_request_id

__all__ = ["FunctionArn", "FunctionInvoker", "Outcome", "parse_function_arn"]

Outcome = tuple[str, str, str]

_ARN_V3 = re.compile(r"^acs:fc:([a-z0-9-]*):(\d*):functions/([^/]+)(?:/([^/]+))?$")
_ARN_V2 = re.compile(r"^acs:fc:([a-z0-9-]*):(\d*):services/([^/.]+)(?:\.([^/]+))?"
                     r"/functions/([^/]+)$")


@dataclass(frozen=True, slots=True)
class FunctionArn:
    region: str
    account_id: str
    name: str
    qualifier: str


def parse_function_arn(arn: str, region: str, account_id: str) -> FunctionArn | None:
    """The function an ARN names, empty segments filled in; None if it is not an FC ARN."""
    m = _ARN_V3.match(arn)
    if m:
        return FunctionArn(m.group(1) or region, m.group(2) or account_id, m.group(3),
                           m.group(4) or "LATEST")
    m = _ARN_V2.match(arn)
    if m:
        return FunctionArn(m.group(1) or region, m.group(2) or account_id, m.group(5),
                           m.group(4) or "LATEST")
    return None


def _body(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class FunctionInvoker:
    """Runs tasks against :class:`FunctionService` (blocking; called from engine workers)."""

    def __init__(self, functions: FunctionService, fc_code: Callable[[ServiceError], str],
                 authorizer: Authorizer | None = None, *, faults: FaultService | None = None,
                 quotas: CloudQuotas | None = None) -> None:
        self._functions = functions
        self._fc_code = fc_code
        self._authorizer = authorizer
        self._faults = faults
        self._quotas = quotas

    @staticmethod
    def handles(cmd: InvokeTask) -> bool:
        """True when the task's action is carried out here (FC:InvokeFunction)."""
        return cmd.action == "FC:InvokeFunction"

    def _denied(self, role_arn: str, account_id: str, arn: FunctionArn) -> Outcome | None:
        """``FC.AccessDenied`` when the flow's role may not invoke the function."""
        if not role_arn or self._authorizer is None:
            return None
        role_name = role_arn.rpartition(":role/")[2]
        subject = Subject(account_id, role_name, f"fnf.aliyuncs.com ({role_arn})")
        resource = f"acs:fc:{arn.region}:{arn.account_id}:functions/{arn.name}"
        try:
            self._authorizer.check(subject, "fc:InvokeFunction", resource)
        except NotAuthorized as exc:
            return ("", *map_service_error(self._fc_code(exc), exc.message))
        return None

    def run(self, cmd: InvokeTask, account_id: str, region: str,
            role_arn: str = "") -> Outcome | None:
        """Carry out ``cmd`` with the flow's execution role; None when the task now waits for a
        callback."""
        callback = cmd.task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK
        if not self.handles(cmd):
            if callback:
                return None
            return "", "FnF.UnsupportedAction", (
                f"the emulator cannot run action {cmd.action!r}; only FC:InvokeFunction")
        params = cmd.parameters if isinstance(cmd.parameters, dict) else {}
        arn = parse_function_arn(str(params.get("resourceArn", "")), region, account_id)
        if arn is None:
            return "", "FC.InvalidArgument", (
                f"resourceArn {params.get('resourceArn')!r} is not a Function Compute "
                "function ARN (acs:fc:<region>:<account>:functions/<name>[/<qualifier>])")
        denied = self._denied(role_arn, account_id, arn)
        if denied is not None:
            return denied
        asynchronous = str(params.get("invocationType", "Sync")) == "Async"
        fire_and_forget = asynchronous and cmd.task_mode is TaskMode.REQUEST_COMPLETE
        injected = self._injected(arn, fire_and_forget)
        if injected is not None:
            return injected
        try:
            with self._instance(arn, fire_and_forget):
                inv = self._functions.invoke(arn.account_id, arn.region, arn.name,
                                             _body(params.get("body")),
                                             request_id=task_request_id(cmd.task_id),
                                             asynchronous=fire_and_forget,
                                             qualifier=arn.qualifier)
        except ServiceError as exc:  # FC's wire code for it, as CloudFlow reports FC's errors
            return ("", *map_service_error(self._fc_code(exc), exc.message))
        if inv.result is None:
            return "{}", "", ""
        payload = inv.result.payload.decode("utf-8", errors="replace")
        if inv.result.error_type:
            return ("", *map_function_error(payload))
        if callback:
            return None
        return payload, "", ""

    def _injected(self, arn: FunctionArn, fire_and_forget: bool) -> Outcome | None:
        """The outcome an injected fault gives this invocation (after its latency), or None
        to invoke. Refusals (error faults) happen before the function runs; a function error
        or timeout replaces its run (an accepted asynchronous call just completes)."""
        if self._faults is None or self._faults.empty:
            return None
        effect = self._faults.effect(FaultCall("fc", INVOKE, arn.name, origin="task"))
        if effect.latency:
            self._faults.sleep(effect.latency)
        fault = effect.failure
        if fault is None:
            return None
        spec = fault.spec
        if spec.kind is FaultKind.ERROR:
            return ("", *map_service_error(spec.code, spec.message))
        try:
            fn = self._functions.get(arn.account_id, arn.region, arn.name, arn.qualifier)
        except ResourceNotFound:
            return None  # the invocation answers FunctionNotFound itself
        if fire_and_forget:
            return "{}", "", ""
        return ("", *map_function_error(injected_failure_body(spec, fn.config.timeout).decode()))

    def _instance(self, arn: FunctionArn, fire_and_forget: bool) -> AbstractContextManager[None]:
        """One of the account's FC instances for a synchronous run (``--throttle cloud``)."""
        if self._quotas is None or fire_and_forget:
            return nullcontext()
        return self._quotas.instance(arn.account_id, arn.region)
