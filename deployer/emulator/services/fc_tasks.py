"""Carrying out ``FC:InvokeFunction`` tasks on the emulator's Function Compute.

``resourceArn`` forms (cloudflow-fdl.md §6.1):

* ``acs:fc:<region>:<account>:functions/<name>[/<qualifier>]`` (FC 3.0);
* ``acs:fc:<region>:<account>:services/<service>.<qualifier>/functions/<name>`` (the older form;
  the function ``<name>`` is called, the service name is not part of FC 3.0).

Empty region/account segments mean the execution's. A task ends in a
:class:`~deployer.emulator.ports.TaskOutcome`: the function's result text on success; function
errors mapped by ``fc.map_function_error`` (``FC.Unknown``) and service errors by
``fc.map_service_error`` over the code FC answers for them (``fc_code``: FC's error table,
wired in by ``emulator/app.py``; ``FC.FunctionNotFound``...); the emulator failing to invoke at
all (its disk is full) as ``FC.InternalServerError``. ``invocationType: Async`` with
``RequestComplete`` completes on acceptance (output ``{}``); with ``WaitForSystemCallback`` the
task waits for the run's result. ``WaitForCustomCallback`` tasks invoke the function (which
receives the token in its parameters) and then wait for ReportTask*; a function error fails
the task at once.

Injected faults (:mod:`deployer.emulator.services.faults`) reach these invocations like direct
ones: an error fault fails the task with ``FC.<Code>`` (e.g. ``FC.ResourceThrottled``), a
function error or timeout with ``FC.Unknown`` and FC's error JSON; latency delays the call
(it holds one of the function's calls, as a slow answer would).

Waiting: :meth:`FunctionInvoker.start` returns at once; the invocation waits for a free call of
its function in :mod:`.fc_task_calls` (no thread per waiting task) and ``done`` gets its outcome.
With ``--throttle cloud`` a synchronous task holds one of the account's FC instances from the
moment it is started: one beyond the quota fails at once with ``FC.ResourceExhausted``.

CloudFlow invokes functions with the flow's execution role: when the flow has a ``RoleArn``, the
role's RAM policies must allow ``fc:InvokeFunction`` on the function, else the task fails with
``FC.AccessDenied`` (FC answers ``403 NotAuthorized`` and CloudFlow names FC errors ``FC.<Code>``;
docs/runtime.md). A flow without a role invokes unchecked (docs/runtime.md says why).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from deployer.emulator.ports import TaskDone, TaskOutcome, TaskRequest
from deployer.emulator.services.authorization import Authorizer, Subject
from deployer.emulator.services.errors import (
    NotAuthorized,
    QuotaExceeded,
    ResourceNotFound,
    ServiceError,
)
from deployer.emulator.services.faults import (
    INVOKE,
    FaultCall,
    FaultKind,
    FaultService,
    injected_failure_body,
)
from deployer.emulator.services.fc_task_calls import FunctionCalls
from deployer.emulator.services.functions import FunctionService
from deployer.emulator.services.quotas import CloudQuotas
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import InvokeTask
from deployer.fdl.interpreter.fc import map_function_error, map_service_error
from deployer.fdl.progress import task_request_id

__all__ = ["CALLS_PER_FUNCTION", "FunctionArn", "FunctionInvoker", "parse_function_arn"]

log = logging.getLogger("deployer.emulator")
CALLS_PER_FUNCTION = 10  # the local runtime's instances per function (runtime.process)

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


def _failed(code: str, message: str) -> TaskOutcome:
    """The outcome of a task FC refused with wire ``code`` (``FC.<code>`` in CloudFlow)."""
    return TaskOutcome.failed(*map_service_error(code, message))


@dataclass(frozen=True, slots=True)
class _Call:
    """One task's invocation, checked and ready to run."""

    arn: FunctionArn
    body: bytes
    request_id: str
    fire_and_forget: bool  # invocationType Async with RequestComplete: done on acceptance
    callback: bool  # WaitForCustomCallback: the task then waits for ReportTask*


class FunctionInvoker:
    """The engine's :class:`~deployer.emulator.ports.TaskRunner` for ``FC:InvokeFunction``,
    over :class:`FunctionService`. :meth:`start` checks the task at once and queues the
    invocation on the function's queue (:class:`FunctionCalls`, ``calls_per_function`` at a
    time); the outcome goes to ``done`` from the thread that ran it."""

    def __init__(self, functions: FunctionService, fc_code: Callable[[ServiceError], str],
                 authorizer: Authorizer | None = None, *, faults: FaultService | None = None,
                 quotas: CloudQuotas | None = None,
                 calls_per_function: int = CALLS_PER_FUNCTION) -> None:
        self._functions = functions
        self._fc_code = fc_code
        self._authorizer = authorizer
        self._faults = faults
        self._quotas = quotas
        self.calls = FunctionCalls(calls_per_function)

    def _service_error(self, exc: ServiceError) -> TaskOutcome:
        """The outcome of a task FC refused with ``exc``: the code FC answers for it."""
        return _failed(self._fc_code(exc), exc.message)

    @staticmethod
    def handles(cmd: InvokeTask) -> bool:
        """True when the task's action is carried out here (FC:InvokeFunction)."""
        return cmd.action == "FC:InvokeFunction"

    def cancel(self, execution_seq: int, task_id: str) -> None:
        """A function call is not cancelled: CloudFlow leaves a started invocation to run
        (its result is then ignored)."""

    def _denied(self, role_arn: str, account_id: str, arn: FunctionArn) -> TaskOutcome | None:
        """``FC.AccessDenied`` when the flow's role may not invoke the function."""
        if not role_arn or self._authorizer is None:
            return None
        role_name = role_arn.rpartition(":role/")[2]
        subject = Subject(account_id, role_name, f"fnf.aliyuncs.com ({role_arn})")
        resource = f"acs:fc:{arn.region}:{arn.account_id}:functions/{arn.name}"
        try:
            self._authorizer.check(subject, "fc:InvokeFunction", resource)
        except NotAuthorized as exc:
            return self._service_error(exc)
        return None

    def start(self, request: TaskRequest, done: TaskDone) -> None:
        """Carry out the task with the flow's execution role: refusals (unsupported action,
        bad ARN, access denied, ``--throttle cloud``'s instance quota) answer at once; the
        invocation itself runs when the function has a free call (see the module
        docstring). ``done(None)`` when the task now waits for a callback."""
        checked = self._check(request)
        if not isinstance(checked, _Call):
            done(checked)
            return
        hold = ExitStack()
        if self._quotas is not None and not checked.fire_and_forget:
            try:  # one of the account's instances, held until the call ends
                hold.enter_context(self._quotas.instance(checked.arn.account_id,
                                                         checked.arn.region))
            except QuotaExceeded as exc:
                done(self._service_error(exc))
                return

        def call() -> None:
            try:
                outcome = self._call(checked)
            finally:
                hold.close()
            done(outcome)

        arn = checked.arn
        self.calls.submit((arn.account_id, arn.region, arn.name, checked.fire_and_forget), call)

    def _check(self, request: TaskRequest) -> _Call | TaskOutcome | None:
        """The invocation to run, or the task's outcome when it ends here."""
        cmd = request.command
        callback = cmd.task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK
        if not self.handles(cmd):
            if callback:
                return None
            return TaskOutcome.failed("FnF.UnsupportedAction", (
                f"the emulator cannot run action {cmd.action!r}; only FC:InvokeFunction"))
        params = cmd.parameters if isinstance(cmd.parameters, dict) else {}
        arn = parse_function_arn(str(params.get("resourceArn", "")), request.region,
                                 request.account_id)
        if arn is None:
            return TaskOutcome.failed("FC.InvalidArgument", (
                f"resourceArn {params.get('resourceArn')!r} is not a Function Compute "
                "function ARN (acs:fc:<region>:<account>:functions/<name>[/<qualifier>])"))
        denied = self._denied(request.role_arn, request.account_id, arn)
        if denied is not None:
            return denied
        asynchronous = str(params.get("invocationType", "Sync")) == "Async"
        return _Call(arn, _body(params.get("body")), task_request_id(cmd.task_id),
                     asynchronous and cmd.task_mode is TaskMode.REQUEST_COMPLETE, callback)

    def _call(self, call: _Call) -> TaskOutcome | None:
        """Invoke the function (blocks: runs on a thread of :class:`FunctionCalls`)."""
        arn = call.arn
        injected = self._injected(arn, call.fire_and_forget)
        if injected is not None:
            return injected
        try:
            inv = self._functions.invoke(arn.account_id, arn.region, arn.name, call.body,
                                         request_id=call.request_id,
                                         asynchronous=call.fire_and_forget,
                                         qualifier=arn.qualifier)
        except ServiceError as exc:  # FC's wire code for it, as CloudFlow reports FC's errors
            return self._service_error(exc)
        except Exception as exc:  # the emulator itself failed (its disk is full...)
            log.error("function %s could not be invoked for a flow task", arn.name,
                      exc_info=exc)
            return _failed("InternalServerError", (
                f"the emulator could not invoke the function ({type(exc).__name__}: "
                f"{str(exc)[:500]})"))
        if inv.result is None:
            return TaskOutcome("{}")
        payload = inv.result.payload.decode("utf-8", errors="replace")
        if inv.result.error_type:
            return TaskOutcome.failed(*map_function_error(payload))
        if call.callback:
            return None
        return TaskOutcome(payload)

    def _injected(self, arn: FunctionArn, fire_and_forget: bool) -> TaskOutcome | None:
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
            return _failed(spec.code, spec.message)
        try:
            fn = self._functions.get(arn.account_id, arn.region, arn.name, arn.qualifier)
        except ResourceNotFound:
            return None  # the invocation answers FunctionNotFound itself
        if fire_and_forget:
            return TaskOutcome("{}")
        return TaskOutcome.failed(*map_function_error(
            injected_failure_body(spec, fn.config.timeout).decode()))

    def close(self) -> None:
        """Drop the invocations still waiting for their function (the engine invokes
        unfinished tasks again when it starts)."""
        self.calls.close()
