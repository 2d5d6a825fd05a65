"""A distributed Map's map run in ``deploy flow test``: every child input runs in-process as
an execution of the Map's ``Processor``, its tasks answered by the same mocks; the result has
the shape the emulator gives (docs/fdl-semantics.md, "Distributed Map")."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from deployer.fdl import AnyFlow
from deployer.fdl.interpreter.commands import InvokeTask
from deployer.fdl.interpreter.model import ExecutionStatus
from deployer.fdl.interpreter.simulate import Answerer, TaskAnswer, simulate
from deployer.fdl.interpreter.states.distributed_map import MAP_RUN_ACTION, MAP_RUN_FAILED
from deployer.fdl.syntax.ast import Flow, MapState, Scope, walk_states

__all__ = ["with_map_runs"]



def _map_named(scope: Scope, name: str) -> MapState:
    """The Map state ``name`` anywhere in ``scope`` (state names are unique in a flow)."""
    return next(s for _, s in walk_states(scope) if isinstance(s, MapState) and s.name == name)


def with_map_runs(flow: AnyFlow, answer: Answerer) -> Answerer:
    """``answer``, with map runs carried out in-process (children answered by ``answer``)."""

    def run(command: InvokeTask, now: float) -> TaskAnswer | None:
        if command.action != MAP_RUN_ACTION or not isinstance(flow, Flow):
            return answer(command, now)
        params: dict[str, Any] = command.parameters
        processor = _map_named(flow.scope, command.state_path[-1]).processor
        assert processor is not None
        child = dataclasses.replace(flow, start_at=processor.start_at, states=processor.states)
        items = list(params.get("Items") or [])
        outputs: list[Any] = []
        failed = 0
        for index, item in enumerate(items):
            sim = simulate(child, with_map_runs(child, answer), input=item,
                           execution_name=f"{params['MapRunName']}:{index}")
            ok = sim.execution.status is ExecutionStatus.SUCCEEDED
            failed += not ok
            outputs.append(sim.execution.output if ok else None)
        count, percentage = params.get("ToleratedFailureCount"), \
            params.get("ToleratedFailurePercentage")
        too_many = failed and (
            (count is None and percentage is None)
            or (count is not None and failed > count)
            or (percentage is not None and failed * 100.0 / (len(items) or 1) > percentage))
        if too_many:
            return TaskAnswer.failure(MAP_RUN_FAILED, f"map run {params['MapRunName']}: "
                                      f"{failed} of {len(items)} child executions failed")
        result: dict[str, Any] = {"MapRunName": params["MapRunName"], "ItemCounts": {
            "Total": len(items), "Succeeded": len(items) - failed, "Failed": failed}}
        writer = params.get("ResultWriter")
        if writer is not None:
            result["ResultWriterDetails"] = writer.get("Parameters", writer) \
                if isinstance(writer, dict) else writer
        else:
            result["Items"] = outputs
        return TaskAnswer(json.dumps(result, ensure_ascii=False))

    return run
