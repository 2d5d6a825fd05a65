"""The compound legacy steps migrated: a choice (its inline steps joined to its scope, a closing
Pass per arm), a parallel (its branches' frames) and a foreach (a Pass keeping its input in
``$Global``, then a Map). Functions of the :class:`~deployer.fdl.migration.states.Migrator`
doing the work (see :mod:`deployer.fdl.migration`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deployer.fdl.legacy.ast import (
    ChoiceDefault,
    ChoiceOption,
    ChoiceStep,
    DataMapping,
    ForeachStep,
    ParallelStep,
    StepList,
)
from deployer.fdl.legacy.errors import PathSyntaxError
from deployer.fdl.legacy.paths import MAPPING_ROOTS, parse_path
from deployer.fdl.migration.expressions import (
    Base,
    NoCounterpart,
    condition_expr,
    literal,
    map_literal,
)
from deployer.fdl.migration.scopes import (
    Finish,
    StateDoc,
    StepsList,
    all_steps,
    expr_of,
    keys_chain,
    local_result,
)

if TYPE_CHECKING:
    from deployer.fdl.migration.states import Migrator

__all__ = ["arm_target", "choice", "foreach", "foreach_output", "parallel", "projection"]


def choice(m: Migrator, step: ChoiceStep, scope: StepsList, path: str) -> list[StateDoc]:
    name = scope.names[step.name]
    x = m.step_input(step, path)
    inline = any(arm.steps is not None for arm in step.arms)
    extra: list[StateDoc] = []
    state: StateDoc = {"Type": "Choice", "Name": name}
    roots = m.roots(**{"": x})
    if inline:
        state["InputConstructor"] = {"input.$": expr_of(x), "local": {}, "outer.$": "$Input"}
        roots = m.roots(**{"": Base("$Input.input", True)})
    arms: list[tuple[str, ChoiceOption | ChoiceDefault | None]] = [
        (f"choices[{i}]", option) for i, option in enumerate(step.choices)]
    arms.append(("default", step.default) if step.default is not None
                else ("no match", None))
    branches = []
    for label, arm in arms:
        target = arm_target(m, step, scope, path, label, arm, x, inline, extra)
        if label == "default" or label == "no match":
            state["Default"] = target
            continue
        assert isinstance(arm, ChoiceOption) and arm.condition is not None
        try:
            condition = condition_expr(arm.condition.text, roots)
        except (NoCounterpart, PathSyntaxError) as exc:
            m.note(arm.condition.position, f"{path}.{label}.condition",
                      f"{getattr(exc, 'reason', exc)}; the option never holds in the "
                      "migration")
            condition = "false"
        branches.append({"Condition": condition, "Next": target})
    state["Branches"] = branches
    return [state, *extra]

def arm_target(m: Migrator, step: ChoiceStep, scope: StepsList, path: str, label: str,
         arm: ChoiceOption | ChoiceDefault | None, x: Base, inline: bool,
         extra: list[StateDoc]) -> str:
    """The v1 target of one arm; its inline steps and closing Pass go to ``extra``."""
    goto = scope.entry.get(arm.goto, arm.goto) if arm is not None and arm.goto else None
    target = goto or m.after(step, scope)
    if not inline and step.output_mappings is None and target is not None:
        return target
    closing = m.unique(f"{scope.names[step.name]}/{label}")
    state: StateDoc = {"Type": "Pass", "Name": closing}
    if inline:  # the arm's frame: {input: X, local: <the arm's>, outer: <the list's>}
        output = m.outputs(step, Base("$Input.input", True),
                              Base("$Input.local", True), path)
        local = f"jsonMerge($Input.outer.local, {output or '$Input.local'})"
        m.close(state, step, scope, local, "$Input.outer", target)
    else:
        output = m.outputs(step, x, Base("{}", fields={}), path)
        local = "$Input.local" if output is None else f"jsonMerge($Input.local, {output})"
        m.close(state, step, scope, local, "$Input", target)
    if arm is None or arm.steps is None:
        extra.append(state)
        return closing
    inner = m._open(arm.steps, f"{path}.{label}", None, after=closing, outer=True)
    extra += m._list(inner)
    extra.append(state)
    return inner.entry[arm.steps.first]

def parallel(m: Migrator, step: ParallelStep, scope: StepsList, path: str) -> StateDoc:
    x = m.step_input(step, path)
    branches = []
    for index, branch in enumerate(step.branches):
        inner = m._open(branch, f"{path}.branches[{index}]", local_result)
        branches.append({"StartAt": inner.entry[branch.first], "States": m._list(inner)})
    locals_ = Base("", elements=tuple(f"$Output.Branch{i}" for i in range(len(branches))))
    output = m.outputs(step, Base("$Input.input", True), locals_, path)
    state: StateDoc = {"Type": "Parallel", "Name": scope.names[step.name],
                    "InputConstructor": {"input.$": expr_of(x), "local": {},
                                         "outer.$": "$Input"},
                    "Branches": branches}
    local = "$Input.outer.local" if output is None else \
        f"jsonMerge($Input.outer.local, {output})"
    m.close(state, step, scope, local, "$Input.outer")
    return state

def foreach(m: Migrator, step: ForeachStep, scope: StepsList, path: str) -> list[StateDoc]:
    name = scope.names[step.name]
    x = m.step_input(step, path)
    iteration = step.iteration
    assert iteration is not None and iteration.collection is not None
    project = projection(m, step, path)
    finish: Finish = (lambda frame, local: keys_chain(local, project)) if project is not None \
        else local_result
    inner = m._open(step.steps or StepList((), step.position), f"{path}.steps", finish)
    entry = m.unique(f"{name}/iteration")
    item = map_literal({iteration.item: "$Input"})
    if iteration.index:
        m.note(iteration.position, f"{path}.iterationMapping.index", "v1 Map iterations "
                  f"do not know their position; '{iteration.index}' is not set")
    if any(isinstance(s, ForeachStep) for s in all_steps(step.steps)) or scope.prefix:
        m.note(step.position, path, "the foreach input is kept in $Global under its "
                  "name; two of its runs at once (inside a parallel or another foreach) "
                  "would share it")
    begin: StateDoc = {"Type": "Pass", "Name": entry, "OutputConstructor": {
        "input.$": f"jsonMerge($Global[{literal(name)}], {item})", "local": {}}}
    body = m._list(inner) if step.steps is not None else []
    if step.steps is not None and body:
        begin["Next"] = inner.entry[step.steps.first]
    else:
        begin["End"] = True
    collection = m.path_of(iteration.collection.text, x, f"{path}.iterationMapping",
                            iteration.position)
    prepare: StateDoc = {"Type": "Pass", "Name": scope.entry[step.name],
                      "GlobalConstructor": {f"{name}.$": expr_of(x)}, "Next": name}
    state: StateDoc = {"Type": "Map", "Name": name, "ItemsPath": collection,
                    "MaxConcurrency": 100,
                    "Processor": {"StartAt": entry, "States": [begin, *body]}}
    items = Base("$Output.Items", fields=None)
    output = foreach_output(m, step, x, items, project, path)
    local = "$Input.local" if output is None else f"jsonMerge($Input.local, {output})"
    m.close(state, step, scope, local)
    return [prepare, state]

def projection(m: Migrator, step: ForeachStep, path: str) -> tuple[str | int, ...] | None:
    """The path every output mapping reads below ``$local[*]``, when they all read the
    same one: each iteration then ends with that value."""
    found: set[tuple[str | int | None, ...]] = set()
    for mapping in step.output_mappings or ():
        source = mapping.source
        if source is None or source.path is None:
            continue
        keys = parse_path(source.path.text, roots=MAPPING_ROOTS).keys()
        if source.path.text.startswith("$local") and keys and keys[0] is None:
            found.add(keys[1:])
    if len(found) == 1:
        rest = next(iter(found))
        if None not in rest:
            return tuple(k for k in rest if k is not None)
    return None

def foreach_output(m: Migrator, step: ForeachStep, x: Base, items: Base,
                    project: tuple[str | int, ...] | None, path: str) -> str | None:
    if step.output_mappings is None:
        return None
    entries: dict[str, str] = {}
    rest = [m for m in step.output_mappings if not _projected(m, project)]
    for mapping in step.output_mappings:
        if _projected(mapping, project):
            entries[mapping.target] = items.expr
    entries.update(m.exprs(tuple(rest), m.roots(input=x, local=items),
                              f"{path}.outputMappings"))
    ordered = {m.target: entries[m.target] for m in step.output_mappings
               if m.target in entries}
    return map_literal(ordered)




def _projected(mapping: DataMapping, project: tuple[str | int, ...] | None) -> bool:
    source = mapping.source
    if project is None or source is None or source.path is None:
        return False
    keys = parse_path(source.path.text, roots=MAPPING_ROOTS).keys()
    return source.path.text.startswith("$local") and keys[:1] == (None,) and \
        keys[1:] == project


