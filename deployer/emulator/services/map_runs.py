"""Map runs: the child executions of a distributed Map (``FNF:StartMapRun`` tasks).

The interpreter's distributed Map (``fdl/interpreter/states/distributed_map.py``) hands the run
over in one task: the child inputs, ``ExecutionMode``, ``MaxConcurrency``, the tolerated
failures and the ``ResultWriter``. Each input runs as a child execution of the Map's
``Processor`` (a flow of its own, cut out of the parent's definition) in that mode, named
``<MapRunName>:<index>``, under the parent's flow name and linked to the map run
(``execution_links.map_run``): ``ListExecutions`` with ``MapRunName`` lists them, a plain
``ListExecutions`` leaves them out.

At most ``MaxConcurrency`` children run at once; each end (the engine's end listener) starts
the next. Without tolerated failures one failed child fails the map run (the Map fails with
``FnF.MapRunFailed``, its Retry and Catch apply: CloudFlow's documented default); with
``ToleratedFailureCount`` / ``ToleratedFailurePercentage`` it fails only once more children
than that failed. The running children are then stopped. A succeeded map run answers
``{"MapRunName", "ItemCounts", "Items": [outputs in input order]}``, or with a
``ResultWriter`` its ``ResultWriterDetails`` in place of ``Items`` (the emulator keeps the
outputs with the children; it writes nothing to OSS).

Each map run is stored (``store/map_run_repos.py``) with the settings UpdateMapRun may change
(``Concurrency``, ``ToleratedFailedCount``, ``ToleratedFailedPercentage``), its status and
times: :meth:`MapRuns.describe` answers DescribeMapRun from it and the children's statuses,
:meth:`MapRuns.update` changes a running run (a higher concurrency starts more children at
once; a lower tolerance may fail the run at once).

The task waits like a callback (the engine's virtual clock may jump while children wait); the
outcome goes to the parent with its task token. After a restart the task is sent again and the
run carries on from its children as stored: nothing is started twice.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML

from deployer.emulator.clock import Clock
from deployer.emulator.ports import (
    ExecutionEngine,
    ExecutionLinks,
    TaskDone,
    TaskOutcome,
    TaskRequest,
)
from deployer.emulator.records import FlowRecord, MapRunRow
from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.executions import ExecutionService
from deployer.emulator.store.errors import ExecutionNameTaken
from deployer.emulator.store.flow_repos import FlowRepo
from deployer.emulator.store.link_repos import LinkRepo
from deployer.emulator.store.map_run_repos import MapRunRepo
from deployer.fdl.interpreter import Event, StopRequested
from deployer.fdl.interpreter.states.distributed_map import MAP_RUN_FAILED

__all__ = ["MapRunChanges", "MapRunView", "MapRuns", "processor_definition"]

log = logging.getLogger("deployer.emulator")


def processor_definition(definition: str, state_path: tuple[str, ...], name: str) -> str:
    """A flow named ``name`` whose states are the Processor of the Map at ``state_path`` (the
    enclosing states' names, then the Map's) in ``definition``."""
    yaml = YAML(typ="safe")
    doc = yaml.load(definition)
    states = doc["States"]
    for index, step in enumerate(state_path):
        state = next(s for s in _candidates(states) if s.get("Name") == step)
        if index == len(state_path) - 1:
            processor = state["Processor"]
            break
        states = _nested(state)
    flow = {"Type": "StateMachine", "SpecVersion": "v1", "Name": name,
            "StartAt": processor["StartAt"], "States": processor["States"]}
    return json.dumps(flow, ensure_ascii=False)


def _candidates(states: Any) -> list[dict[str, Any]]:
    return [s for s in states if isinstance(s, dict)]


def _nested(state: dict[str, Any]) -> list[Any]:
    """Every state of the scopes nested in ``state`` (branch names are unique in a flow)."""
    if "Processor" in state:
        return list(state["Processor"]["States"])
    return [s for branch in state.get("Branches", []) for s in branch["States"]]


@dataclass(slots=True)
class _Run:
    """A map run in progress (its children's outcomes stay with them in the store)."""

    name: str
    parent_seq: int
    task_id: str
    token: str
    account_id: str
    region: str
    flow: FlowRecord
    mode: str
    items: list[Any]
    concurrency: int
    tolerated_count: int | None
    tolerated_percentage: float | None
    writer: Any
    mock_case: str
    started: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    ended: bool = False
    finished_children: set[int] = field(default_factory=set)  # seqs counted as ended
    lock: threading.Lock = field(default_factory=threading.Lock)

    def too_many_failures(self) -> bool:
        if self.failed == 0:
            return False
        if self.tolerated_count is None and self.tolerated_percentage is None:
            return True
        if self.tolerated_count is not None and self.failed > self.tolerated_count:
            return True
        total = len(self.items) or 1
        return self.tolerated_percentage is not None and \
            self.failed * 100.0 / total > self.tolerated_percentage


@dataclass(frozen=True, slots=True)
class MapRunView:
    """A map run as DescribeMapRun answers it: its stored row and its items by state
    (``Pending``, ``Running``, ``Succeed``, ``Failed``, ``Aborted``, ``Total``)."""

    execution_name: str
    row: MapRunRow
    item_counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class MapRunChanges:
    """UpdateMapRun's settings (None: unchanged)."""

    concurrency: int | None = None
    tolerated_count: int | None = None
    tolerated_percentage: float | None = None


class MapRuns:
    """Runs the map runs of distributed Maps (see the module docstring). Thread-safe."""

    def __init__(self, links: LinkRepo, repo: FlowRepo, store: MapRunRepo,
                 clock: Clock) -> None:
        self._links = links
        self._repo = repo
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._executions: ExecutionService | None = None
        self._engine: ExecutionEngine | None = None

    def attach(self, executions: ExecutionService, engine: ExecutionEngine) -> None:
        self._executions, self._engine = executions, engine

    def start(self, request: TaskRequest, done: TaskDone) -> None:
        """Begin (or take up again) the map run of ``request``; blocks for the children's
        starts (call it from a thread that may wait for the database)."""
        run = self._open(request)
        if run is None:
            done(TaskOutcome.failed(MAP_RUN_FAILED, "the map run's execution is gone"))
            return
        done(None)  # waits like a callback: its outcome comes with the task token
        self._fill(run)
        self._check(run)

    def _open(self, request: TaskRequest) -> _Run | None:
        cmd = request.command
        params = cmd.parameters if isinstance(cmd.parameters, dict) else {}
        name = str(params.get("MapRunName", ""))
        with self._lock:
            if name in self._runs:
                return self._runs[name]
        parent = self._repo.execution_by_seq(request.execution_seq)
        if parent is None:
            return None
        child_flow = FlowRecord(
            parent.account_id, parent.region, parent.flow_name, "",
            processor_definition(parent.definition, cmd.state_path, parent.flow_name), "",
            "FDL", parent.role_arn, str(params.get("ExecutionMode", "Express")),
            parent.environment, "", "", 0.0, 0.0)
        run = _Run(name, request.execution_seq, cmd.task_id, cmd.task_token, parent.account_id,
                   parent.region, child_flow, child_flow.execution_mode,
                   list(params.get("Items") or []), int(params.get("MaxConcurrency") or 1),
                   params.get("ToleratedFailureCount"), params.get("ToleratedFailurePercentage"),
                   params.get("ResultWriter"),
                   self._links.links(request.execution_seq).mock_case)
        stored = self._store.open(MapRunRow(
            run.parent_seq, name, run.task_id, run.concurrency, run.tolerated_count,
            run.tolerated_percentage, len(run.items), "Running", self._clock.now(), None))
        run.concurrency, run.tolerated_count = stored.concurrency, stored.tolerated_count
        run.tolerated_percentage = stored.tolerated_percentage  # as UpdateMapRun left them
        with run.lock:  # an end reported meanwhile waits for the count below
            with self._lock:
                if name in self._runs:
                    return self._runs[name]
                self._runs[name] = run
            self._recover(run)
        return run

    def _recover(self, run: _Run) -> None:
        """Count the children a previous life of the emulator already started (the caller
        holds ``run.lock``)."""
        for seq in self._links.children(run.parent_seq, run.task_id):
            row = self._repo.execution_by_seq(seq)
            if row is None:
                continue
            run.started += 1
            if row.status == "Running":
                run.running += 1
                continue
            run.finished_children.add(seq)
            if row.status == "Succeeded":
                run.succeeded += 1
            else:
                run.failed += 1

    def _fill(self, run: _Run) -> None:
        """Start children until ``MaxConcurrency`` run or every item has one."""
        while True:
            with run.lock:
                if run.ended or run.running >= run.concurrency or \
                        run.started >= len(run.items):
                    return
                index = run.started
                run.started += 1
                run.running += 1
            self._begin_child(run, index)

    def _begin_child(self, run: _Run, index: int) -> None:
        assert self._engine is not None
        item = run.items[index]
        text = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        links = ExecutionLinks(mock_case=run.mock_case, parent_seq=run.parent_seq,
                               parent_task_id=run.task_id, map_run=run.name)
        try:
            self._engine.begin(run.flow, name=f"{run.name}:{index}", input_text=text,
                               input_value=item, links=links)
        except ExecutionNameTaken:
            log.debug("map run %s: child %s exists already", run.name, index)

    def execution_ended(self, seq: int, links: ExecutionLinks | None = None) -> None:
        """Execution ``seq`` ended: count it for its map run, start the next child
        (``links``: its links when the caller has read them)."""
        links = links if links is not None else self._links.links(seq)
        if not links.map_run:
            return
        with self._lock:
            run = self._runs.get(links.map_run)
        if run is None:
            return
        row = self._repo.execution_by_seq(seq)
        with run.lock:
            if seq in run.finished_children:
                return  # counted already (when the run was taken up again)
            run.finished_children.add(seq)
            run.running -= 1
            if row is not None and row.status == "Succeeded":
                run.succeeded += 1
            else:
                run.failed += 1
        self._fill(run)
        self._check(run)

    def _check(self, run: _Run) -> None:
        """End the run once it failed beyond tolerance or every child ended."""
        with run.lock:
            if run.ended:
                return
            failed = run.too_many_failures()
            finished = run.succeeded + run.failed == len(run.items)
            if not failed and not finished:
                return
            run.ended = True
        with self._lock:
            self._runs.pop(run.name, None)
        self._store.end(run.parent_seq, run.name, "Failed" if failed else "Succeeded",
                        self._clock.now())
        if failed:
            self._stop_children(run, "the map run failed")
            self._report(run, error=MAP_RUN_FAILED, cause=(
                f"map run {run.name}: {run.failed} of {len(run.items)} child executions "
                f"failed (tolerated: {run.tolerated_count or 0} executions, "
                f"{run.tolerated_percentage or 0:g}%)"))
            return
        self._report(run, output=json.dumps(self._result(run), ensure_ascii=False))

    def _result(self, run: _Run) -> dict[str, Any]:
        counts = {"Total": len(run.items), "Succeeded": run.succeeded, "Failed": run.failed}
        result: dict[str, Any] = {"MapRunName": run.name, "ItemCounts": counts}
        if run.writer is not None:
            result["ResultWriterDetails"] = run.writer.get("Parameters", run.writer) \
                if isinstance(run.writer, dict) else run.writer
            return result
        outputs: dict[int, Any] = {}
        for seq in self._links.children(run.parent_seq, run.task_id):
            row = self._repo.execution_by_seq(seq)
            if row is not None:
                index = int(row.name.rpartition(":")[2])
                outputs[index] = json.loads(row.output) if row.output else None
        result["Items"] = [outputs.get(i) for i in range(len(run.items))]
        return result

    def _report(self, run: _Run, *, output: str | None = None, error: str = "",
                cause: str = "") -> None:
        if self._executions is None:
            return
        self._executions.report_later(run.account_id, run.region, run.token, output=output,
                                      error=error, cause=cause[:4096])

    def _stop_children(self, run: _Run, cause: str) -> None:
        if self._engine is None:
            return
        for seq in self._links.children(run.parent_seq, run.task_id):
            row = self._repo.execution_by_seq(seq)
            if row is not None and row.status == "Running":
                self._engine.post(seq, _stop(cause))

    def cancel(self, execution_seq: int, task_id: str) -> None:
        """The parent no longer waits (stopped, timed out, its Map failed): stop the run."""
        with self._lock:
            run = next((r for r in self._runs.values()
                        if (r.parent_seq, r.task_id) == (execution_seq, task_id)), None)
            if run is not None:
                self._runs.pop(run.name, None)
        if run is not None:
            with run.lock:
                run.ended = True
            self._store.end(run.parent_seq, run.name, "Aborted", self._clock.now())
            self._stop_children(run, "the parent execution no longer waits for its map run")

    # --- DescribeMapRun, UpdateMapRun -----------------------------------------------------------

    def describe(self, execution_seq: int, execution_name: str, name: str) -> MapRunView:
        """Map run ``name`` of execution ``execution_seq``; InvalidValue when it has none of
        that name."""
        row = self._row(execution_seq, name)
        counts = self._store.child_counts(execution_seq, name)
        running = counts.get("Running", 0)
        succeeded = counts.get("Succeeded", 0)
        failed = counts.get("Failed", 0) + counts.get("TimedOut", 0)
        aborted = counts.get("Stopped", 0)
        items = {"Pending": max(row.total - running - succeeded - failed - aborted, 0),
                 "Running": running, "Succeed": succeeded, "Failed": failed,
                 "Aborted": aborted, "Total": row.total}
        return MapRunView(execution_name, row, items)

    def update(self, execution_seq: int, name: str, changes: MapRunChanges) -> MapRunRow:
        """Change a running map run's concurrency or tolerated failures (stored, and acted
        on at once); InvalidValue for an unknown or ended run."""
        row = self._row(execution_seq, name)
        if row.status != "Running":
            raise InvalidValue(f"map run {name} has ended ({row.status}); only a running map "
                               "run can be updated", field="MapRunName")
        concurrency = row.concurrency if changes.concurrency is None else changes.concurrency
        count = row.tolerated_count if changes.tolerated_count is None \
            else changes.tolerated_count
        percentage = row.tolerated_percentage if changes.tolerated_percentage is None \
            else changes.tolerated_percentage
        self._store.change(execution_seq, name, concurrency=concurrency,
                           tolerated_count=count, tolerated_percentage=percentage)
        with self._lock:
            run = self._runs.get(name)
        if run is not None and run.parent_seq == execution_seq:
            with run.lock:
                run.concurrency, run.tolerated_count = concurrency, count
                run.tolerated_percentage = percentage
            self._fill(run)
            self._check(run)
        found = self._store.get(execution_seq, name)
        return found if found is not None else row

    def names(self, execution_seq: int) -> list[str]:
        """The map runs execution ``execution_seq`` started."""
        return self._store.of_execution(execution_seq)

    def _row(self, execution_seq: int, name: str) -> MapRunRow:
        row = self._store.get(execution_seq, name)
        if row is None:
            raise InvalidValue(f"MapRunName '{name}' does not exist in this execution",
                               field="MapRunName")
        return row


def _stop(cause: str) -> Callable[[float], Event]:
    def make(now: float) -> Event:
        return StopRequested(now, "", cause)

    return make
