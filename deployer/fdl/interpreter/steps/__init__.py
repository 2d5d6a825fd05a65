"""The legacy dialect's steps, run by the same deterministic interpreter as SpecVersion v1 states.

``compile_legacy(flow)`` makes a :class:`~deployer.fdl.interpreter.program.CompiledFlow` of a
:class:`~deployer.fdl.legacy.ast.LegacyFlow`: one :class:`CompiledScope` per steps list (the
flow's, each parallel branch, each foreach body, each choice's inline steps), one evaluator per
step, each reusing its SpecVersion v1 counterpart's machinery (``states/``): task scheduling,
callbacks and timeouts, wait timers, Parallel/Map child scopes, Retry (the legacy rule's
``intervalSeconds``, ``multiplier``, ``maxIntervalSeconds``, ``maxAttempts``) and Catch (its
``goto``). What differs is data (data.py: frames, mappings, ``$local``), which the lifecycle
asks each step's :class:`~deployer.fdl.interpreter.steps.data.LegacyData` about, and the flow's
shape: a step goes to the one written after it unless it ends its list (``end: true``, a
succeed, a fail, the last step) or jumps (a choice's or a catch's ``goto``).

Modules: data.py (frames and mappings), task.py, control.py (pass, wait, succeed, fail),
choice.py, children.py (parallel, foreach), and compiling here.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from deployer.fdl.interpreter.program import CompiledFlow, CompiledScope
from deployer.fdl.interpreter.runtime import RUNTIME_ERROR_CODE, dump
from deployer.fdl.interpreter.states.base import Catch, StateEvaluator
from deployer.fdl.interpreter.steps.children import (
    LegacyForeachEvaluator,
    LegacyParallelEvaluator,
)
from deployer.fdl.interpreter.steps.choice import Arm, LegacyChoiceEvaluator
from deployer.fdl.interpreter.steps.control import (
    LegacyFailEvaluator,
    LegacyPassEvaluator,
    LegacySucceedEvaluator,
    LegacyWaitEvaluator,
    compile_when,
)
from deployer.fdl.interpreter.steps.data import (
    CompiledMappings,
    CompiledParams,
    LegacyData,
    flow_closing,
    flow_opening,
)
from deployer.fdl.interpreter.steps.task import LegacyTaskEvaluator
from deployer.fdl.legacy.ast import (
    ChoiceStep,
    FailStep,
    ForeachStep,
    LegacyFlow,
    ParallelStep,
    Step,
    StepList,
    SucceedStep,
    TaskStep,
    WaitStep,
)
from deployer.fdl.legacy.errors import PathSyntaxError
from deployer.fdl.legacy.paths import Path, parse_path
from deployer.fdl.legacy.resources import Problem, resolve_task
from deployer.fdl.syntax.ast import RetryRule, TaskMode

__all__ = ["compile_legacy"]


def compile_legacy(flow: LegacyFlow) -> CompiledFlow:
    """Compile a validated legacy flow once for any number of executions. Never fails: what
    does not parse fails its step when it runs."""
    return CompiledFlow(flow, _list(flow.steps, ()), flow_opening(flow), flow_closing(flow))


def _list(steps: StepList, outer: tuple[str, ...]) -> CompiledScope:
    states = {name: _step(step, steps, outer) for name, step in steps.by_name.items()}
    return CompiledScope(steps.first, MappingProxyType(states))


def _lifecycle(step: Step, steps: StepList, *, outputs_default: bool = True,
               tokens: bool = False) -> dict[str, Any]:
    ends = step.end or isinstance(step, (SucceedStep, FailStep))
    retry: tuple[RetryRule, ...] = ()
    catch: tuple[Catch, ...] = ()
    errors = None
    if isinstance(step, TaskStep):
        retry = tuple(RetryRule(rule.errors, rule.position, max_attempts=rule.max_attempts,
                                interval_seconds=rule.interval_seconds,
                                backoff_rate=rule.multiplier,
                                max_backoff_seconds=rule.max_interval_seconds)
                      for rule in step.retry)
        catch = tuple(Catch(rule.errors, rule.goto, None) for rule in step.catch)
        errors = CompiledMappings.of(step.error_mappings, "errorMappings")
    data = LegacyData(step.name, CompiledMappings.of(step.input_mappings, "inputMappings"),
                      CompiledMappings.of(step.output_mappings, "outputMappings"), errors,
                      outputs_default, tokens)
    return {
        "name": step.name, "next": None if ends else steps.after(step.name),
        "input_constructor": None, "output_constructor": None, "global_constructor": None,
        "retry": retry, "catch": catch, "no_retries": (0,) * len(retry), "data": data,
    }


def _step(step: Step, steps: StepList, outer: tuple[str, ...]) -> StateEvaluator:
    inner = (*outer, step.name)
    if isinstance(step, TaskStep):
        return _task(step, steps, outer)
    if isinstance(step, WaitStep):
        return LegacyWaitEvaluator(**_lifecycle(step, steps), seconds=None, seconds_expr=None,
                                   duration=compile_when(step.duration),
                                   timestamp=compile_when(step.timestamp))
    if isinstance(step, ChoiceStep):
        arms = [Arm.of(f"choices[{index}].condition", option.condition,
                       _list(option.steps, inner) if option.steps is not None else None,
                       option.goto, default=False)
                for index, option in enumerate(step.choices)]
        if step.default is not None:
            arms.append(Arm.of("default", None, _list(step.default.steps, inner)
                               if step.default.steps is not None else None,
                               step.default.goto, default=True))
        return LegacyChoiceEvaluator(**_lifecycle(step, steps), arms=tuple(arms))
    if isinstance(step, ParallelStep):
        return LegacyParallelEvaluator(**_lifecycle(step, steps, outputs_default=False),
                                       branches=tuple(_list(b, inner) for b in step.branches))
    if isinstance(step, ForeachStep):
        return _foreach(step, steps, inner)
    if isinstance(step, SucceedStep):
        return LegacySucceedEvaluator(**_lifecycle(step, steps))
    if isinstance(step, FailStep):
        return LegacyFailEvaluator(**_lifecycle(step, steps), error=step.error,
                                   cause=step.cause)
    return LegacyPassEvaluator(**_lifecycle(step, steps))


def _foreach(step: ForeachStep, steps: StepList, inner: tuple[str, ...]) -> StateEvaluator:
    iteration = step.iteration
    collection: Path | PathSyntaxError | None = None
    if iteration is not None and iteration.collection is not None:
        try:
            collection = parse_path(iteration.collection.text)
        except PathSyntaxError as exc:
            collection = exc
    return LegacyForeachEvaluator(
        **_lifecycle(step, steps, outputs_default=False), items_path=None,
        processor=_list(step.steps, inner) if step.steps is not None else None,
        max_concurrency=None, collection=collection,
        item=iteration.item if iteration is not None else "",
        index=iteration.index if iteration is not None else None)


def _task(step: TaskStep, steps: StepList, outer: tuple[str, ...]) -> StateEvaluator:
    found = resolve_task(step)
    if isinstance(found, Problem):  # only a flow that did not validate gets here
        return LegacyFailEvaluator(**_lifecycle(step, steps), error=RUNTIME_ERROR_CODE,
                                   cause=f"task {step.name!r}: {found.message}")
    mode = found.task_mode
    return LegacyTaskEvaluator(
        **_lifecycle(step, steps, tokens=True), action=found.action, task_mode=mode,
        parameters=None, timeout=step.timeout_seconds, path=(*outer, step.name), draws=False,
        mode_text=mode.value, submits=mode is not TaskMode.REQUEST_COMPLETE,
        scheduled_prefix=(f'{{"Resource":{dump(found.action)},'
                          f'"TaskMode":{dump(mode.value)},"Parameters":'),
        integration=found,
        params=None if step.service_params is None else CompiledParams.of(step.service_params))
