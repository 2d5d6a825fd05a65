"""Map in distributed mode: every item (or batch of items) runs as a child execution of the
Map's ``Processor`` in a *map run*, carried out by the engine (docs/fdl-semantics.md,
"Distributed Map").

1. Items: ``ItemsPath``, or ``ItemReader`` read by a task of its own (``OSS:ListObjects`` for
   ``OSS_OBJECTS``, ``OSS:GetObject`` for the CSV, JSON-list and inventory sources; on the
   emulator answered from mocked responses mapped to the Map's state): objects from
   ``{"Objects": [...]}``, a JSON array from ``{"Body": ...}``, CSV rows (the first row, or
   ``ReaderConfig.CSVHeaders``, names the columns) from ``{"Body": "<text>"}``.
2. ``MaxItems`` keeps the first ones; ``ItemConstructor`` builds each from ``$Item`` (and
   ``$Input``, the Map's input); ``ItemBatcher`` groups them (``MaxItemsPerBatch``,
   ``MaxInputBytesPerBatch``) into child inputs ``{"Items": [...]}`` (with ``BatchInput``
   beside them).
3. One task, ``FNF:StartMapRun`` (parameters ``MapRunName``, ``ExecutionMode``,
   ``MaxConcurrency``, ``ToleratedFailureCount``/``Percentage``, ``ResultWriter``, ``Items``),
   runs the children; its result is the Map's default output, its error the Map's error
   (Retry and Catch apply). The history shows the task with the run's size, not its items.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from deployer.fdl.interpreter.active import ActiveState, ScopeRun, Waiting
from deployer.fdl.interpreter.commands import CancelTask, InvokeTask
from deployer.fdl.interpreter.compiled import (
    CompiledExpression,
    CompiledTemplate,
    compiled,
    expression_scope,
)
from deployer.fdl.interpreter.events import TaskFailed, TaskSucceeded
from deployer.fdl.interpreter.fc import decode_body
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.runtime import EMPTY_DETAIL, Ctx, StateFailure, dump, task_token
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator, WakeEvent
from deployer.fdl.interpreter.states.task import TaskCall
from deployer.fdl.syntax.ast import MapState, TaskMode

__all__ = ["DEFAULT_MAP_RUN_CONCURRENCY", "MAP_RUN_ACTION", "MAP_RUN_FAILED", "READ_ACTIONS",
           "DistributedMapEvaluator", "items_from"]

MAP_RUN_ACTION = "FNF:StartMapRun"
READ_ACTIONS = {"OSS_OBJECTS": "OSS:ListObjects", "OSS_CSV": "OSS:GetObject",
                "OSS_JSON_LIST": "OSS:GetObject", "OSS_INVENTORY_FILES": "OSS:GetObject"}
DEFAULT_MAP_RUN_CONCURRENCY = 100  # the quota's default for distributed mode
#: The error of a map run with more failed children than it tolerates.
MAP_RUN_FAILED = "FnF.MapRunFailed"
READER_ERROR = "FnF.ItemReaderFailed"
_READ, _RUN = ":read-", ":maprun:"


def items_from(source: str, result: Any, reader_config: Any) -> list[Any]:
    """The items an ``ItemReader`` result gives (see the module docstring); ValueError says
    why there are none."""
    if source == "OSS_OBJECTS":
        objects = result.get("Objects") if isinstance(result, dict) else result
        if not isinstance(objects, list):
            raise ValueError("an OSS_OBJECTS read must give {\"Objects\": [...]}")
        return objects
    body = result.get("Body") if isinstance(result, dict) else None
    if source == "OSS_JSON_LIST":
        items = decode_body(body) if isinstance(body, str) else body
        if not isinstance(items, list):
            raise ValueError("an OSS_JSON_LIST read must give {\"Body\": <a JSON array>}")
        return items
    if not isinstance(body, str):
        raise ValueError(f"an {source} read must give {{\"Body\": \"<CSV text>\"}}")
    rows = list(csv.reader(io.StringIO(body)))
    headers = reader_config.get("CSVHeaders") if isinstance(reader_config, dict) else None
    if not isinstance(headers, list):
        headers, rows = (rows[0] if rows else []), rows[1:]
    return [dict(zip((str(h) for h in headers), row, strict=False)) for row in rows if row]


@dataclass(frozen=True, slots=True)
class DistributedMapEvaluator(StateEvaluator):
    """See the module docstring; ``path`` is the enclosing states' names then the Map's."""

    items_path: CompiledExpression | None
    reader: CompiledTemplate | None
    constructor: CompiledTemplate | None
    batcher: CompiledTemplate | None
    writer: CompiledTemplate | None
    mode: str
    max_items: int | None
    max_concurrency: int | None
    tolerated_count: int | None
    tolerated_percentage: float | None
    path: tuple[str, ...]

    @classmethod
    def compile(cls, state: MapState, site: Site) -> DistributedMapEvaluator:
        spec = state.distributed
        assert spec is not None
        return cls(
            **cls.lifecycle_of(state),
            items_path=None if state.items_path is None
            else CompiledExpression.of(state.items_path),
            reader=compiled(spec.item_reader), constructor=compiled(spec.item_constructor),
            batcher=compiled(spec.item_batcher), writer=compiled(spec.result_writer),
            mode=spec.execution_mode, max_items=spec.max_items,
            max_concurrency=state.max_concurrency, tolerated_count=spec.tolerated_count,
            tolerated_percentage=spec.tolerated_percentage, path=site.path(state.name),
        )

    def _scope(self, ctx: Ctx, st: ActiveState, token: str = "") -> Any:
        return expression_scope(ctx, self.name, st.input, st.retry_count, token, draws=True)

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Waiting:
        if self.reader is None:
            if self.items_path is None:
                raise StateFailure(READER_ERROR, "a distributed Map needs ItemsPath or "
                                   "ItemReader")
            items = self.items_path.evaluate(self._scope(ctx, st), "ItemsPath")
            if not isinstance(items, list):
                raise StateFailure(READER_ERROR, f"ItemsPath `{self.items_path.text}` did "
                                   "not give an array")
            return self._start_run(ctx, run, st, items)
        params = self.reader.build(self._scope(ctx, st), "ItemReader")
        source = str(params.get("SourceType", "")) if isinstance(params, dict) else ""
        if source not in READ_ACTIONS:
            raise StateFailure(READER_ERROR, f"unknown ItemReader.SourceType {source!r}")
        return self._task(ctx, run, st, _READ + source + ":", READ_ACTIONS[source],
                          {**(params.get("SourceParameters") or {}), "SourceType": source,
                           "ReaderConfig": params.get("ReaderConfig") or {}}, None)

    def _task(self, ctx: Ctx, run: ScopeRun, st: ActiveState, kind: str, action: str,
              parameters: Any, shown: Any) -> TaskCall:
        """Schedule one task of the Map (the read, or the map run: ``shown`` is what its
        TaskScheduled event says of its parameters)."""
        ex = ctx.ex
        token = task_token(ex.flow_name, ex.name, ex.next_event_id)
        text = dump({"Resource": action, "TaskMode": TaskMode.REQUEST_COMPLETE.value,
                     "Parameters": parameters if shown is None else shown})
        event = ctx.emit(H.TASK_SCHEDULED, self.name, st.entered_event, text)
        ctx.emit(H.TASK_STARTED, self.name, event, EMPTY_DETAIL)
        task_id = f"{ex.name}{kind}{event}"
        ex.tasks[task_id] = run.run_id
        ctx.commands.append(InvokeTask(task_id, self.path, action, parameters,
                                       TaskMode.REQUEST_COMPLETE, token, 0))
        return TaskCall(task_id, token, event)

    def _start_run(self, ctx: Ctx, run: ScopeRun, st: ActiveState, items: list[Any]) -> Waiting:
        if self.max_items:
            items = items[:self.max_items]
        if self.constructor is not None:
            scope = self._scope(ctx, st)
            items = [self.constructor.build(scope._replace(item=item), "ItemConstructor")
                     for item in items]
        inputs = self._batches(ctx, st, items)
        name = f"{ctx.ex.name}-{self.name}-{ctx.ex.next_event_id}"
        writer = self.writer.build(self._scope(ctx, st), "ResultWriter") \
            if self.writer is not None else None
        settings = {
            "MapRunName": name, "ExecutionMode": self.mode,
            "MaxConcurrency": self.max_concurrency or DEFAULT_MAP_RUN_CONCURRENCY,
            "ToleratedFailureCount": self.tolerated_count,
            "ToleratedFailurePercentage": self.tolerated_percentage, "ResultWriter": writer,
        }
        return self._task(ctx, run, st, _RUN, MAP_RUN_ACTION, {**settings, "Items": inputs},
                          {**settings, "ItemCount": len(inputs)})

    def _batches(self, ctx: Ctx, st: ActiveState, items: list[Any]) -> list[Any]:
        if self.batcher is None:
            return items
        spec = self.batcher.build(self._scope(ctx, st), "ItemBatcher")
        spec = spec if isinstance(spec, dict) else {}
        per_batch = spec.get("MaxItemsPerBatch") or len(items) or 1
        max_bytes = spec.get("MaxInputBytesPerBatch") or 0
        batches: list[list[Any]] = [[]]
        size = 0
        for item in items:
            item_size = len(json.dumps(item, separators=(",", ":")).encode())
            if batches[-1] and (len(batches[-1]) >= per_batch
                                or (max_bytes and size + item_size > max_bytes)):
                batches.append([])
                size = 0
            batches[-1].append(item)
            size += item_size
        extra = {"BatchInput": spec["BatchInput"]} if "BatchInput" in spec else {}
        return [{**extra, "Items": batch} for batch in batches if batch]

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> Done | Waiting | None:
        if not isinstance(record, TaskCall) or not isinstance(wake, (TaskSucceeded,
                                                                     TaskFailed)) \
                or wake.task_id != record.task_id:
            return None
        ctx.ex.tasks.pop(record.task_id, None)
        if isinstance(wake, TaskFailed):
            ctx.emit(H.TASK_FAILED, self.name, record.task_event,
                     dump({"Error": wake.code, "Cause": wake.detail}))
            raise StateFailure(wake.code, wake.detail)
        result = decode_body(wake.output)
        if _RUN in record.task_id:
            ctx.emit(H.TASK_SUCCEEDED, self.name, record.task_event,
                     '{"Output":' + ctx.text(result) + "}")
            return Done(result, self.next)
        ctx.emit(H.TASK_SUCCEEDED, self.name, record.task_event, dump({"Output": {
            "ItemCount": len(result) if isinstance(result, list) else None}}))
        source = record.task_id.split(_READ, 1)[1].split(":", 1)[0]
        params = self.reader.build(self._scope(ctx, st), "ItemReader") if self.reader else {}
        try:
            items = items_from(source, result, params.get("ReaderConfig"))
        except ValueError as exc:
            raise StateFailure(READER_ERROR, str(exc)) from None
        return self._start_run(ctx, run, st, items)

    def cancel(self, ctx: Ctx, record: Waiting) -> None:
        if isinstance(record, TaskCall) and ctx.ex.tasks.pop(record.task_id, None) is not None:
            ctx.commands.append(CancelTask(record.task_id))

    def task_token(self, record: Waiting | None) -> str:
        return record.task_token if isinstance(record, TaskCall) else ""
