"""The outline (:mod:`deployer.fdl.syntax.outline`) of a legacy flow, and of a flow in either
dialect (:func:`flow_outline`).

A legacy step's edges: to the step written after it (``next``), unless it ends its list; a
choice's options and default to their ``goto`` (``choice`` labelled with the condition,
``default``), or to the step after the choice when they have none; with no default, the choice
also falls through when nothing holds (``next``, "no match"); a task's catches (``catch``).
Nested scopes: a parallel's branches and a choice's inline steps are ``branch`` scopes (a
choice's by its option's index, its default's is ``len(choices)``), a foreach body an
``iteration``.
"""

from __future__ import annotations

from deployer.fdl.legacy.ast import (
    AnyFlow,
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
from deployer.fdl.legacy.resources import Integration, resolve_task
from deployer.fdl.syntax.outline import Nested, Outline, OutlineEdge, OutlineNode, outline_scope
from deployer.fdl.syntax.outline import short as _short

__all__ = ["flow_outline", "legacy_outline"]


def flow_outline(flow: AnyFlow) -> Outline:
    """The outline of the top scope of a flow in either dialect."""
    if isinstance(flow, LegacyFlow):
        return legacy_outline(flow.steps)
    return outline_scope(flow.scope)


def legacy_outline(steps: StepList) -> Outline:
    """The outline of a legacy steps list and of the lists nested in it."""
    return Outline(steps.first, tuple(_node(step, steps) for step in steps.steps))


def _node(step: Step, steps: StepList) -> OutlineNode:
    seconds = step.duration if isinstance(step, WaitStep) and isinstance(step.duration, int) \
        else None
    return OutlineNode(step.name, step.type.value, _detail(step), tuple(_edges(step, steps)),
                       _nested(step), seconds, isinstance(step, WaitStep))


def _edges(step: Step, steps: StepList) -> list[OutlineEdge]:
    after = None if step.end else steps.after(step.name)
    found: list[OutlineEdge] = []
    if isinstance(step, ChoiceStep):
        for option in step.choices:
            target = option.goto or after
            if target:
                found.append(OutlineEdge(target, "choice",
                                         _short(option.condition.text)
                                         if option.condition else ""))
        if step.default is not None:
            target = step.default.goto or after
            if target:
                found.append(OutlineEdge(target, "default", "Default"))
        elif after:
            found.append(OutlineEdge(after, "next", "no match"))
    elif after and not isinstance(step, (SucceedStep, FailStep)):
        found.append(OutlineEdge(after, "next"))
    if isinstance(step, TaskStep):
        found += [OutlineEdge(rule.goto, "catch", "Catch " + _short(",".join(rule.errors), 18))
                  for rule in step.catch if rule.goto]
    return found


def _nested(step: Step) -> tuple[Nested, ...]:
    if isinstance(step, ParallelStep):
        return tuple(Nested("branch", i, f"Branch {i + 1}", legacy_outline(b))
                     for i, b in enumerate(step.branches))
    if isinstance(step, ForeachStep) and step.steps is not None:
        item = step.iteration.item if step.iteration is not None else ""
        return (Nested("iteration", -1, f"For each {item}".rstrip(),
                       legacy_outline(step.steps)),)
    if isinstance(step, ChoiceStep):
        found = []
        for index, arm in enumerate(step.arms):
            if arm.steps is None:
                continue
            condition = getattr(arm, "condition", None)
            label = _short(condition.text, 24) if condition is not None else "Default"
            found.append(Nested("branch", index, label, legacy_outline(arm.steps)))
        return tuple(found)
    return ()


def _detail(step: Step) -> str:
    if isinstance(step, TaskStep):
        found = resolve_task(step)
        return found.target if isinstance(found, Integration) else ""
    if isinstance(step, WaitStep):
        if isinstance(step.duration, int):
            return f"{step.duration} s"
        if step.duration is not None:
            return f"duration {step.duration.text}"
        stamp = step.timestamp
        return f"until {stamp if isinstance(stamp, str) else stamp.text}" if stamp else ""
    if isinstance(step, ParallelStep):
        return f"{len(step.branches)} branches"
    if isinstance(step, ForeachStep):
        collection = step.iteration.collection if step.iteration is not None else None
        return f"for each in {collection.text}" if collection is not None else "for each"
    return ""
