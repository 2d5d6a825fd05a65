"""Asynchronous invocations as tasks: their configuration (Get/Put/DeleteAsyncInvokeConfig),
their records (GetAsyncTask, ListAsyncTasks), stopping them (StopAsyncTask), retries, the
maximum event age and destinations (no HTTP).

An asynchronous invocation (``x-fc-invocation-type: Async``) is a task named by the
caller's ``x-fc-async-task-id`` or, without one, by its request id. It is ``Enqueued``, then
``Running``, then ``Succeeded`` or ``Failed`` (after its retries), ``Expired`` (older than the
configuration's ``maxAsyncEventAgeInSeconds`` when its turn came) or ``Stopped``
(StopAsyncTask: an enqueued task never runs; a running one is ``Stopping`` until its attempt
ends, then ``Stopped``, its result discarded). A failed attempt is retried up to
``maxAsyncRetryAttempts`` times, at once [decided: FC waits between retries; the emulator does
not]. Defaults (fc3's schema, devsapp/fc3; CONFIRMED as fc3's): 3 retries, 18,000 seconds of
event age. After the last attempt, ``destinationConfig.onSuccess`` / ``onFailure`` receive
the destination event ``{timestamp, requestContext {requestId, functionArn, condition,
approximateInvokeCount}, requestPayload, responseContext {statusCode, functionError},
responsePayload}`` [INFERRED from FC's destination docs]: a function destination is invoked
asynchronously with it, a flow destination starts an execution with it as input; other
destinations (MNS, EventBridge) are recorded, not delivered (nothing local receives them).
"""

from __future__ import annotations

import builtins
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.records import AsyncTaskRow
from deployer.emulator.services.errors import InvalidValue, Resource, ResourceNotFound
from deployer.emulator.services.ports import InstanceSpec, InvocationResult
from deployer.emulator.store.async_task_repos import AsyncTaskRepo
from deployer.emulator.store.function_config_repos import FunctionConfigRepo

__all__ = ["DEFAULT_MAX_AGE", "DEFAULT_RETRIES", "AsyncInvokeConfigs", "AsyncTaskRow",
           "AsyncTaskService"]

log = logging.getLogger("deployer.emulator")
DEFAULT_RETRIES = 3
DEFAULT_MAX_AGE = 18000
_KIND = "async"
FUNCTION_ARN = re.compile(r"^acs:fc:[a-z0-9-]+:\d+:functions/[A-Za-z_][A-Za-z0-9_-]*(/\S+)?$")
FLOW_ARN = re.compile(r"^acs:fnf:[a-z0-9-]+:\d+:flow/[A-Za-z_][A-Za-z0-9_-]*$")
FINAL = ("Succeeded", "Failed", "Stopped", "Expired", "Invalid")

Deliver = Callable[[str, str, str, bytes], None]
"""(account, region, destination ARN, event): hand a destination event over."""


class AsyncInvokeConfigs:
    """``asyncInvokeConfig`` per function and qualifier."""

    def __init__(self, repo: FunctionConfigRepo, clock: Clock) -> None:
        self._repo = repo
        self._clock = clock

    def put(self, account_id: str, region: str, function: str, qualifier: str,
            config: Mapping[str, Any]) -> dict[str, Any]:
        doc = _checked(config)
        self._repo.put((account_id, region, function, _KIND, qualifier or "LATEST"), doc,
                       self._clock.now())
        return doc

    def find(self, account_id: str, region: str, function: str,
             qualifier: str) -> dict[str, Any] | None:
        found = self._repo.get((account_id, region, function, _KIND, qualifier or "LATEST"))
        return found[0] if found else None

    def get(self, account_id: str, region: str, function: str,
            qualifier: str) -> dict[str, Any]:
        found = self.find(account_id, region, function, qualifier)
        if found is None:
            raise ResourceNotFound(f"function '{function}' has no async invoke config for "
                                   f"qualifier '{qualifier or 'LATEST'}'",
                                   Resource.ASYNC_INVOKE_CONFIG, name=function)
        return found

    def delete(self, account_id: str, region: str, function: str, qualifier: str) -> None:
        self._repo.delete((account_id, region, function, _KIND, qualifier or "LATEST"))

    def modified_at(self, account_id: str, region: str, function: str,
                    qualifier: str) -> float:
        found = self._repo.get((account_id, region, function, _KIND, qualifier or "LATEST"))
        return found[1] if found else self._clock.now()

    def list(self, account_id: str, region: str, *, function: str = "", next_token: str = "",
             limit: int = 20) -> tuple[builtins.list[tuple[str, str, dict[str, Any], float]],
                                       str]:
        """(function, qualifier, config, modified_at) by function name, and the next page's
        token."""
        rows = self._repo.list(account_id, region, _KIND, function_name=function,
                               start=next_token, limit=limit + 1)
        return rows[:limit], rows[limit][0] if len(rows) > limit else ""


def _checked(config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, low, high in (("maxAsyncRetryAttempts", 0, 8),
                           ("maxAsyncEventAgeInSeconds", 1, 2_592_000)):
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidValue(f"{key} must be an integer between {low} and {high}, got "
                               f"{value!r}", field=key)
        out[key] = value
    destinations = config.get("destinationConfig") or {}
    if not isinstance(destinations, Mapping):
        raise InvalidValue("destinationConfig must be an object", field="destinationConfig")
    for when in ("onSuccess", "onFailure"):
        arn = (destinations.get(when) or {}).get("destination")
        if arn is None:
            continue
        if not isinstance(arn, str) or not arn.startswith("acs:"):
            raise InvalidValue(f"destinationConfig.{when}.destination must be an ARN, got "
                               f"{arn!r}", field="destinationConfig")
        out.setdefault("destinationConfig", {})[when] = {"destination": arn}
    if config.get("asyncTask") is not None:
        out["asyncTask"] = bool(config["asyncTask"])
    return out


@dataclass(frozen=True, slots=True)
class _Attempt:
    result: InvocationResult | None
    error: str


class AsyncTaskService:
    """Runs asynchronous invocations as tasks on the runner's pool and records them."""

    def __init__(self, repo: AsyncTaskRepo, configs: AsyncInvokeConfigs, clock: Clock, *,
                 submit: Callable[[Callable[[], object]], None],
                 attempt: Callable[[InstanceSpec, bytes, str], InvocationResult],
                 deliver: Deliver) -> None:
        self._repo = repo
        self._configs = configs
        self._clock = clock
        #: queues a task's job (the runner's async pool); replaceable, e.g. to hold tasks
        self.queue = submit
        self._attempt = attempt
        self._deliver = deliver

    def submit(self, spec: InstanceSpec, event: bytes, request_id: str,
               task_id: str | None) -> str:
        """Record the task (``Enqueued``) and queue it; the task id."""
        task = task_id or request_id
        row = AsyncTaskRow(spec.account_id, spec.region, spec.function_name, task,
                           spec.qualifier, request_id, "Enqueued", event,
                           created_at=self._clock.now())
        if not self._repo.insert(row):
            raise InvalidValue(f"async task '{task}' of function '{spec.function_name}' "
                               "exists already", field="x-fc-async-task-id")
        self.queue(lambda: self._run(spec, row))
        return task

    def get(self, account_id: str, region: str, function: str, task_id: str) -> AsyncTaskRow:
        found = self._repo.get((account_id, region, function, task_id))
        if found is None:
            raise ResourceNotFound(f"async task '{task_id}' of function '{function}' does not "
                                   "exist",
                                   Resource.ASYNC_TASK, name=task_id)
        return found

    def list(self, account_id: str, region: str, function: str, *, prefix: str = "",
             status: str = "", newest_first: bool = True, limit: int = 20,
             next_token: str = "") -> tuple[builtins.list[AsyncTaskRow], str]:
        offset = int(next_token) if next_token.isdigit() else 0
        rows = self._repo.list(account_id, region, function, prefix=prefix, status=status,
                               newest_first=newest_first, limit=limit + 1, offset=offset)
        return rows[:limit], str(offset + limit) if len(rows) > limit else ""

    def stop(self, account_id: str, region: str, function: str, task_id: str) -> None:
        """StopAsyncTask: an enqueued task never runs; a running one stops counting."""
        row = self.get(account_id, region, function, task_id)
        if row.status in FINAL:
            raise InvalidValue(f"async task '{task_id}' has ended ({row.status})",
                               field="taskId")
        key = row.key
        if not self._repo.update(key, unless=("Running", *FINAL), status="Stopped",
                                 ended_at=self._clock.now()):
            self._repo.update(key, unless=FINAL, status="Stopping")

    def forget_function(self, account_id: str, region: str, function: str) -> None:
        self._repo.delete_function(account_id, region, function)

    # --- running ------------------------------------------------------------------------------

    def _run(self, spec: InstanceSpec, row: AsyncTaskRow) -> None:
        config = self._configs.find(row.account_id, row.region, row.function_name,
                                    row.qualifier) or {}
        age = self._clock.now() - row.created_at
        if age > int(config.get("maxAsyncEventAgeInSeconds", DEFAULT_MAX_AGE)):
            self._repo.update(row.key, unless=FINAL, status="Expired",
                              ended_at=self._clock.now())
            return
        started = self._clock.now()
        if not self._repo.update(row.key, unless=FINAL, status="Running", started_at=started):
            return  # stopped while it waited
        retries = int(config.get("maxAsyncRetryAttempts", DEFAULT_RETRIES))
        attempts, outcome = 0, _Attempt(None, "")
        while True:
            attempts += 1
            outcome = self._one(spec, row, attempts)
            current = self._repo.get(row.key)
            if current is None or current.status == "Stopping":
                self._repo.update(row.key, status="Stopped", ended_at=self._clock.now())
                return
            if not outcome.error or attempts > retries:
                break
        ok = not outcome.error
        result = outcome.result
        self._repo.update(
            row.key, status="Succeeded" if ok else "Failed", retries=attempts - 1,
            ended_at=self._clock.now(), error_message=outcome.error,
            return_payload=result.payload if result else None,
            instance_id=result.instance_id if result else "",
            duration_ms=result.duration_ms if result else None)
        self._destination(row, config, ok, attempts, outcome)

    def _one(self, spec: InstanceSpec, row: AsyncTaskRow, attempt: int) -> _Attempt:
        request_id = row.request_id if attempt == 1 else f"{row.request_id}-retry{attempt - 1}"
        try:
            result = self._attempt(spec, row.payload, request_id)
        except InvalidValue as exc:  # the runtime cannot run it at all
            return _Attempt(None, exc.message)
        if result.error_type:
            return _Attempt(result, result.payload.decode("utf-8", "replace")[:4096])
        return _Attempt(result, "")

    def _destination(self, row: AsyncTaskRow, config: Mapping[str, Any], ok: bool,
                     attempts: int, outcome: _Attempt) -> None:
        when = "onSuccess" if ok else "onFailure"
        arn = ((config.get("destinationConfig") or {}).get(when) or {}).get("destination")
        if not arn:
            return
        result = outcome.result
        event = {
            "timestamp": int(self._clock.now()),
            "requestContext": {
                "requestId": row.request_id,
                "functionArn": f"acs:fc:{row.region}:{row.account_id}:functions/"
                               f"{row.function_name}",
                "condition": "" if ok else (result.error_type if result and result.error_type
                                            else "RuntimeUnavailable"),
                "approximateInvokeCount": attempts},
            "requestPayload": row.payload.decode("utf-8", "replace"),
            "responseContext": {"statusCode": 200,
                                "functionError": "" if ok else outcome.error},
            "responsePayload": result.payload.decode("utf-8", "replace") if result else ""}
        try:
            self._deliver(row.account_id, row.region, arn, json.dumps(event).encode())
            status = "Succeeded"
        except Exception as exc:
            log.warning("destination %s of %s could not be reached: %s", arn,
                        row.function_name, getattr(exc, "message", exc))
            status = "Failed"
        self._repo.update(row.key, destination_status=status)


def deliver_to(arn: str) -> str:
    """What kind of destination ``arn`` is: function, flow, or other."""
    if FUNCTION_ARN.match(arn):
        return "function"
    if FLOW_ARN.match(arn):
        return "flow"
    return "other"
