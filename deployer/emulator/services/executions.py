"""CloudFlow executions: start, describe (long poll), list, history, stop, callbacks.

Domain logic only; the engine runs the steps, reached through the ``ExecutionEngine`` port of
``emulator/ports.py`` (the service never imports ``emulator.engine``; ``emulator/app.py`` plugs
the FlowEngine in).
Decisions (docs/emulator.md):
StartExecution on an Express flow and StopExecution of a finished execution answer
InvalidValue; StartSyncExecution on a Standard flow answers ActionNotSupported; an unknown
task token answers InvalidValue. ListExecutions returns executions in start order (oldest
first); its NextToken is the name of the first execution of the next page.
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from deployer.emulator.clock import Clock
from deployer.emulator.ports import ExecutionEngine, ExecutionLinks
from deployer.emulator.records import FlowRecord, HistoryRow
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    PayloadTooLarge,
    Resource,
    ResourceNotFound,
    TaskCompleted,
    Unsupported,
)
from deployer.emulator.services.flows import FlowService, check_name
from deployer.emulator.services.numbers import names_version, parse_number
from deployer.emulator.services.task_mocks import TaskMocks, split_case
from deployer.emulator.store.errors import ExecutionNameTaken
from deployer.emulator.store.flow_repos import ExecutionRow, FlowRepo
from deployer.emulator.store.link_repos import LinkRepo
from deployer.emulator.store.steps import output_text
from deployer.fdl.interpreter import (
    StopRequested,
    TaskFailed,
    TaskSucceeded,
)
from deployer.fdl.limits import DATA_LIMIT_BYTES

__all__ = ["EXECUTION_STATUSES", "ExecutionFilter", "ExecutionService", "ExecutionView",
           "SyncResult"]

EXECUTION_STATUSES = ("Starting", "Running", "Stopped", "Succeeded", "Failed", "TimedOut")
SYNC_TIMEOUT = 330.0  # real seconds: Express executions end within 300 s of their clock


class QualifierResolver(Protocol):
    """Flow versions and aliases (``services.flow_versions.FlowReleases``)."""

    def resolve(self, flow: FlowRecord, qualifier: str) -> tuple[FlowRecord, str]: ...


@dataclass(frozen=True, slots=True)
class ExecutionView:
    name: str
    flow_name: str
    status: str
    input: str
    output: str | None
    started_at: float
    stopped_at: float | None
    definition: str
    environment: dict[str, Any] | None
    role_arn: str
    error_code: str = ""
    error_detail: str = ""
    version: int = 0  # steps committed so far (goes up by one per step)
    mode: str = "Standard"


@dataclass(frozen=True, slots=True)
class SyncResult:
    view: ExecutionView
    error_code: str
    error_message: str


@dataclass(frozen=True, slots=True)
class ExecutionFilter:
    status: str = ""
    name_prefix: str = ""
    started_from: str = ""
    started_to: str = ""
    qualifier: str = ""  # LATEST, a version or an alias the executions were started with
    map_run_name: str = ""


def _view(row: ExecutionRow) -> ExecutionView:
    return ExecutionView(row.name, row.flow_name, row.status, row.input, row.output,
                         row.started_at, row.stopped_at, row.definition, row.environment,
                         row.role_arn, row.error_code, row.error_detail, row.version, row.mode)


def _parse_time(text: str, field: str) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InvalidValue(f"{field} '{text}' is not an RFC 3339 UTC time "
                           "(e.g. 2020-12-02T02:39:20.402Z)", field=field) from None


def _input(text: str) -> tuple[str, Any]:
    if text == "":
        return "{}", {}
    size = len(text.encode("utf-8"))
    if size > DATA_LIMIT_BYTES:
        raise PayloadTooLarge(
            f"the execution input is {size} bytes; an execution input may be at most "
            f"{DATA_LIMIT_BYTES} bytes (64 KiB)", limit=DATA_LIMIT_BYTES)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidValue(f"Input is not valid JSON: {exc.msg} at position {exc.pos}",
                           field="Input") from None
    if not isinstance(value, dict):
        raise InvalidValue("Input must be a JSON object", field="Input")
    return text, value


class ExecutionService:
    """Execution use-cases over the store and the engine."""

    def __init__(self, repo: FlowRepo, flows: FlowService, engine: ExecutionEngine,
                 clock: Clock) -> None:
        self._repo = repo
        self._flows = flows
        self._engine = engine
        self._clock = clock
        self.versions: QualifierResolver | None = None  # flow versions and aliases
        self.mocks: TaskMocks | None = None  # the loaded mock test cases
        self.links: LinkRepo | None = None  # parent and child executions

    def start(self, account_id: str, region: str, flow_name: str, *, name: str = "",
              input_text: str = "", qualifier: str = "", callback_token: str = "",
              links: ExecutionLinks | None = None, generated: bool = False) -> ExecutionView:
        """Start a Standard execution asynchronously, as the cloud does: the answer comes once
        the start is committed, with status ``Running`` and before any state has run; the
        execution then proceeds in the engine (wait for it with :meth:`describe`'s long poll).
        A running one of that name is returned as is, a finished one raises
        AlreadyExists (``Resource.EXECUTION``). With ``qualifier`` (a published version or an
        alias) the execution runs that version's definition. A name ending in ``#<case>`` runs
        with the loaded mock test case ``<case>`` (the execution is named without the suffix);
        ``callback_token`` (StartExecution's ``CallbackFnFTaskToken``) is reported to with
        the execution's output or error when it ends. ``generated``: ``name`` is a UUID the
        service made up (as it does for a name left out), not the caller's."""
        flow, version, alias = self._qualified(self._flows.get(account_id, region, flow_name),
                                               qualifier)
        if flow.execution_mode != "Standard":
            raise InvalidValue(f"Flow {flow_name} is an Express flow: use "
                               "StartSyncExecution", field="FlowName")
        name, links = self._linked(flow, name, links, callback_token)
        if name and not generated:
            check_name(name, "ExecutionName")
        name = name or str(uuid.uuid4())  # generated names are UUIDs, as the cloud's
        return self._begin(flow, name, input_text, reuse=True, version=version, alias=alias,
                           links=links)

    def _linked(self, flow: FlowRecord, name: str, links: ExecutionLinks | None,
                callback_token: str) -> tuple[str, ExecutionLinks | None]:
        """The execution name without its ``#<case>`` suffix, and its links (the case
        checked against the loaded mocks)."""
        base, case = split_case(name)
        if not case and not callback_token:
            return name, links
        if case:
            if self.mocks is None:
                raise InvalidValue("no mock test cases are loaded (deploy emulator mocks "
                                   "load FILE)", field="ExecutionName")
            self.mocks.check_case(flow.name, case)
        links = links or ExecutionLinks()
        return base, replace(links, mock_case=case or links.mock_case,
                             callback_token=callback_token or links.callback_token)

    def _begin(self, flow: FlowRecord, name: str, input_text: str, *,
               reuse: bool, version: str = "", alias: str = "",
               links: ExecutionLinks | None = None) -> ExecutionView:
        text, value = _input(input_text)
        for attempt in range(3):
            if attempt:  # the name is taken (the INSERT said so): the existing one answers
                status = self._repo.execution_status(flow.account_id, flow.region, flow.name,
                                                     name)
                if status is not None:
                    existing = self._repo.get_execution(flow.account_id, flow.region,
                                                        flow.name, name)
                    if existing is None:
                        continue  # deleted meanwhile
                    if reuse and existing.status == "Running":
                        return _view(existing)
                    raise AlreadyExists(f"Execution {name} for flow {flow.name} already "
                                        "exists.", Resource.EXECUTION, name=name)
                # deleted meanwhile: the flow may have changed too; a version never does
                fresh = self._flows.get(flow.account_id, flow.region, flow.name)
                flow = flow if version else fresh
            try:
                ex = self._engine.begin(flow, name=name, input_text=text, input_value=value,
                                        flow_version=version, qualifier=alias, links=links)
            except ExecutionNameTaken:
                continue  # in use (perhaps started concurrently): read it
            return ExecutionView(name, flow.name, ex.status.value, text, output_text(ex),
                                 ex.started_at, ex.stopped_at, flow.definition,
                                 flow.environment, ex.role_arn, ex.error_code, ex.error_detail,
                                 1, flow.execution_mode)
        raise ResourceNotFound(f"Execution {name} does not exist.", Resource.EXECUTION, name=name)

    def start_scheduled(self, account_id: str, region: str, flow_name: str, *, name: str,
                        input_text: str) -> ExecutionView:
        """Start the execution a schedule fires (Standard or Express flow); an execution of
        that name that exists already (the instant fired before a crash) is returned as is."""
        flow = self._flows.get(account_id, region, flow_name)
        try:
            return self._begin(flow, name, input_text, reuse=True)
        except AlreadyExists:
            return _view(self._row(account_id, region, flow_name, name))

    def _qualified(self, flow: FlowRecord, qualifier: str) -> tuple[FlowRecord, str, str]:
        """The flow ``qualifier`` runs, its version ('' for LATEST) and alias ('' for none)."""
        if not qualifier or qualifier == "LATEST":
            return flow, "", ""
        if self.versions is None:
            raise ResourceNotFound(f"Qualifier {qualifier} of flow {flow.name} does not exist.",
                                   Resource.ALIAS, name=qualifier)
        frozen, version = self.versions.resolve(flow, qualifier)
        return frozen, version, "" if names_version(qualifier) else qualifier

    def start_sync(self, account_id: str, region: str, flow_name: str, *, name: str = "",
                   input_text: str = "", qualifier: str = "") -> SyncResult:
        """Run an Express execution to its end and return it (name ``<name>:<uuid>``)."""
        flow, version, alias = self._qualified(self._flows.get(account_id, region, flow_name),
                                               qualifier)
        if flow.execution_mode != "Express":
            raise Unsupported("Standard execution is not supported")
        name, links = self._linked(flow, name, None, "")
        if name:
            check_name(name, "ExecutionName")
        full = f"{name or uuid.uuid4()}:{uuid.uuid4()}"
        self._begin(flow, full, input_text, reuse=False, version=version, alias=alias,
                    links=links)
        view = self.describe(account_id, region, flow_name, full, wait_seconds=SYNC_TIMEOUT)
        if view.status == "Succeeded":
            return SyncResult(view, "", "")
        return SyncResult(view, view.error_code, view.error_detail)

    def describe(self, account_id: str, region: str, flow_name: str, name: str, *,
                 wait_seconds: float = 0) -> ExecutionView:
        """The execution; with ``wait_seconds`` > 0 the call blocks (real seconds) until the
        execution ends or the time is up, woken by the engine, then answers."""
        row = self._row(account_id, region, flow_name, name)
        if row.status == "Running" and wait_seconds > 0:
            def ended() -> bool:
                current = self._repo.execution_by_seq(row.seq)
                return current is None or current.status != "Running"
            self._engine.wait_ended(ended, wait_seconds)
            row = self._row(account_id, region, flow_name, name)
        return _view(row)

    def list(self, account_id: str, region: str, flow_name: str, *, limit: int,
             next_token: str = "", filt: ExecutionFilter = ExecutionFilter(),
             newest_first: bool = False) -> tuple[list[ExecutionView], str]:
        """One page in start order (``newest_first``: newest first, the console's order) and
        the next page's token ('' on the last page). ``filt.qualifier``: ``LATEST``, a version
        (started with it or through an alias that picked it) or an alias (started through it);
        an unknown one raises ResourceNotFound as StartExecution does. ``filt.map_run_name``
        lists the child executions of that map run (a distributed Map's; an unknown one raises
        InvalidValue); without it a map run's children are left out, as they are not the
        flow's own executions."""
        flow = self._flows.get(account_id, region, flow_name)
        version, alias = self._started_with(flow, filt.qualifier)
        if filt.map_run_name and (self.links is None
                                  or not self.links.map_run_exists(filt.map_run_name)):
            raise InvalidValue(f"MapRunName '{filt.map_run_name}' does not exist",
                               field="MapRunName")
        if filt.status and filt.status not in EXECUTION_STATUSES:
            raise InvalidValue(f"Status '{filt.status}' is invalid: use one of "
                               + ", ".join(EXECUTION_STATUSES), field="Status")
        after = 0
        if next_token:
            start = self._repo.get_execution(account_id, region, flow_name, next_token)
            if start is None:
                raise InvalidValue(f"NextToken '{next_token}' is invalid", field="NextToken")
            after = start.seq
        rows = self._repo.list_executions(
            account_id, region, flow_name, after_seq=after, limit=limit + 1,
            status=filt.status, prefix=filt.name_prefix,
            started_from=_parse_time(filt.started_from, "StartedTimeBegin"),
            started_to=_parse_time(filt.started_to, "StartedTimeEnd"), newest_first=newest_first,
            flow_version=version, alias=alias, map_run=filt.map_run_name)
        token = rows[limit].name if len(rows) > limit else ""
        return [_view(r) for r in rows[:limit]], token

    def _started_with(self, flow: FlowRecord, qualifier: str) -> tuple[str | None, str | None]:
        """ListExecutions' Qualifier as (flow version, alias) to match; None matches any."""
        if not qualifier:
            return None, None
        _frozen, version, alias = self._qualified(flow, qualifier)
        return (None, alias) if alias else (version, None)

    def counts_by_status(self, account_id: str, region: str, flow_name: str) -> dict[str, int]:
        """The number of executions of the flow per status (every status, zeros included)."""
        self._flows.get(account_id, region, flow_name)
        found = self._repo.execution_counts(account_id, region, flow_name)
        return {status: found.get(status, 0) for status in EXECUTION_STATUSES}

    def watch_changes(self, account_id: str, region: str, flow_name: str, name: str, *,
                      after_version: int, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once the execution's ``version`` is above ``after_version``: at once
        if it already is or the execution has ended, else when the engine commits its next
        step (or rows change behind it). Holds no thread; reads the row once. Returns the
        unsubscribe function; ResourceNotFound when the execution does not exist."""
        row = self._row(account_id, region, flow_name, name)
        if row.version > after_version or row.status not in ("Running", "Starting"):
            wake()
            return _nothing
        return self._engine.watch_changes(row.seq, after_version, wake)

    def history(self, account_id: str, region: str, flow_name: str, name: str, *,
                limit: int, next_token: str = "") -> tuple[builtins.list[HistoryRow], str]:
        """History events in event id order; the token is the next page's first event id."""
        row = self._row(account_id, region, flow_name, name)
        start = parse_number(next_token) if next_token else 1
        if start is None:
            raise InvalidValue(f"NextToken '{next_token}' is invalid", field="NextToken")
        events = self._repo.history(row.seq, from_event=start, limit=limit + 1)
        token = str(events[limit].event_id) if len(events) > limit else ""
        return events[:limit], token

    def stop(self, account_id: str, region: str, flow_name: str, name: str, *,
             error: str = "", cause: str = "") -> ExecutionView:
        """Stop a running execution: one ExecutionStopped event, pending timers cancelled."""
        if len(error) > 128 or len(cause) > 4096:
            raise InvalidValue("Error must be at most 128 and Cause at most 4096 characters",
                               field="Error")
        row = self._row(account_id, region, flow_name, name)
        if row.status != "Running":
            raise InvalidValue(f"Execution {name} is not running (status {row.status}).",
                               field="ExecutionName")
        self._engine.deliver(row.seq, lambda now: StopRequested(now, error, cause))
        return _view(self._row(account_id, region, flow_name, name))

    def report(self, account_id: str, region: str, token: str, *, output: str | None = None,
               error: str = "", cause: str = "") -> int:
        """Complete a WaitForCustomCallback task; return the EventId it produced."""
        if output is not None:
            try:
                json.loads(output)
            except json.JSONDecodeError:
                raise InvalidValue("Output is not valid JSON", field="Output") from None
        tasks = self._repo.task_by_token(account_id, region, token)
        if not tasks:
            raise InvalidValue(f"TaskToken '{token}' is invalid: no task has it",
                               field="TaskToken")
        live = [t for t in tasks if not t.completed]
        if not live:
            raise TaskCompleted(f"Task {token} has already completed.")
        task = live[0]
        ex = self._engine.deliver(task.exec_seq, lambda now: (
            TaskSucceeded(now, task.task_id, output) if output is not None
            else TaskFailed(now, task.task_id, error, cause)))
        if ex is None or not ex.new_events:
            raise TaskCompleted(f"Task {token} has already completed.")
        return ex.new_events[0].event_id

    def report_later(self, account_id: str, region: str, token: str, *,
                     output: str | None = None, error: str = "", cause: str = "") -> bool:
        """Complete the pending task holding ``token`` without waiting for the step (a child
        execution reporting to its parent); False when no pending task has it."""
        live = [t for t in self._repo.task_by_token(account_id, region, token)
                if not t.completed]
        if not live:
            return False
        task = live[0]
        self._engine.post(task.exec_seq, lambda now: (
            TaskSucceeded(now, task.task_id, output) if output is not None
            else TaskFailed(now, task.task_id, error, cause)))
        return True

    def children(self, account_id: str, region: str, flow_name: str, name: str,
                 task_id: str) -> builtins.list[ExecutionView]:
        """The executions that task ``task_id`` of execution ``name`` started (sub-flows)."""
        row = self._repo.get_execution(account_id, region, flow_name, name)
        if row is None or self.links is None:
            return []
        views = [self.view(seq) for seq in self.links.children(row.seq, task_id)]
        return [v for v in views if v is not None]

    def parent(self, account_id: str, region: str, flow_name: str,
               name: str) -> tuple[ExecutionView, str] | None:
        """The execution whose task started execution ``name``, and that task's id."""
        row = self._repo.get_execution(account_id, region, flow_name, name)
        if row is None or self.links is None:
            return None
        links = self.links.links(row.seq)
        parent = self.view(links.parent_seq) if links.parent_seq else None
        return None if parent is None else (parent, links.parent_task_id)

    def map_run_counts(self, map_run: str) -> dict[str, int]:
        """Child executions of map run ``map_run`` by status (the console's counts)."""
        return self._repo.map_run_counts(map_run)

    def described(self, account_id: str, region: str, flow_name: str,
                  name: str) -> tuple[ExecutionView, int, bool]:
        """:meth:`describe`'s view, the execution's stored number and whether it has
        relations (a parent, sub-flow children, map runs: ``ExecutionRelations``), in one
        read."""
        self._flows.get(account_id, region, flow_name)
        found = self._repo.execution_and_relations(account_id, region, flow_name, name)
        if found is None:
            raise ResourceNotFound(f"Execution {name} does not exist.",
                                   Resource.EXECUTION, name=name)
        row, related = found
        return _view(row), row.seq, related

    def seq(self, account_id: str, region: str, flow_name: str, name: str) -> int:
        """The stored number of the named execution (ResourceNotFound as DescribeExecution)."""
        return self._row(account_id, region, flow_name, name).seq

    def row_keys(self, seq: int) -> tuple[str, str] | None:
        """The account and region of execution ``seq`` (None when it is gone)."""
        row = self._repo.execution_by_seq(seq)
        return None if row is None else (row.account_id, row.region)

    def view(self, seq: int) -> ExecutionView | None:
        """Execution ``seq`` as it is now (None when it is gone)."""
        row = self._repo.execution_by_seq(seq)
        return None if row is None else _view(row)

    def forget_flow(self, account_id: str, region: str, flow_name: str) -> None:
        """Called after a flow was deleted: the engine forgets its timers and long-polling
        callers are woken."""
        self._engine.resync()

    def _row(self, account_id: str, region: str, flow_name: str, name: str) -> ExecutionRow:
        self._flows.get(account_id, region, flow_name)
        row = self._repo.get_execution(account_id, region, flow_name, name)
        if row is None:
            raise ResourceNotFound(f"Execution {name} does not exist.",
                                   Resource.EXECUTION, name=name)
        return row


def _nothing() -> None:
    return None
