"""Legacy steps -> SpecVersion v1 states (the compiler of :mod:`deployer.fdl.migration`).

Every v1 state's data is its steps list's frame ``{"input": ..., "local": ...}``: the legacy
``$input`` and ``$local``, so mappings carry over exactly; a step's output merges into the frame
with ``jsonMerge`` in the state's ``OutputConstructor``. A state that ends its scope gives the
scope's result instead: the local (a parallel branch, a foreach iteration) or the flow's output
mappings (the top list). Anything the compiler cannot carry over exactly is a
:class:`MigrationNote` with the legacy line it comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deployer.fdl.legacy.ast import (
    ChoiceDefault,
    ChoiceOption,
    ChoiceStep,
    DataMapping,
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
from deployer.fdl.legacy.paths import MAPPING_ROOTS, parse_path
from deployer.fdl.legacy.resources import Integration, resolve_task
from deployer.fdl.migration.expressions import (
    Base,
    Roots,
    Unsupported,
    condition_expr,
    literal,
    map_literal,
    mappings_expr,
    member,
    path_expr,
)
from deployer.fdl.migration.integrations import task_fields
from deployer.fdl.syntax.positions import Position

__all__ = ["MigrationNote", "Migrator"]

StateDoc = dict[str, Any]
#: (frame expression, the scope's new local) -> the scope's result.
Finish = Callable[[str, str], str]


@dataclass(frozen=True, slots=True)
class MigrationNote:
    """A spot that did not carry over mechanically: where (legacy ``line:column`` and path)
    and what was done about it."""

    line: int
    column: int
    path: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "path": self.path,
                "message": self.message}


@dataclass(slots=True)
class _List:
    """How one steps list migrates: its v1 names and entry states, how it ends (``finish``
    for a scope of its own, ``after`` for inline steps joined to their parent's scope) and
    whether its frames carry their parent's (``outer``)."""

    steps: StepList
    prefix: str
    finish: Finish | None
    after: str | None = None
    outer: bool = False
    names: dict[str, str] = field(default_factory=dict)
    entry: dict[str, str] = field(default_factory=dict)


class Migrator:
    """Migrates one flow; :meth:`states` gives the top ``States`` and ``StartAt``."""

    def __init__(self, flow: LegacyFlow, name: str) -> None:
        self.flow = flow
        self.name = name
        self.notes: list[MigrationNote] = []
        self.used: set[str] = set()
        self.state_of: dict[int, str] = {}  # id(legacy step) -> the v1 state it became
        self.fail_codes = {s.error for _, s in _all_steps(flow.steps)
                           if isinstance(s, FailStep)}

    # -- bookkeeping ------------------------------------------------------------------------

    def note(self, position: Position, path: str, message: str) -> None:
        note = MigrationNote(position.line, position.column, path, message)
        if note not in self.notes:
            self.notes.append(note)

    def unique(self, wanted: str) -> str:
        name, number = wanted, 2
        while name in self.used:
            name, number = f"{wanted} ({number})", number + 1
        self.used.add(name)
        return name

    def _open(self, steps: StepList, prefix: str, finish: Finish | None, *, after: str | None
              = None, outer: bool = False) -> _List:
        scope = _List(steps, prefix, finish, after, outer)
        for index, step in enumerate(steps.steps):
            name = self.unique(step.name)
            if name != step.name:
                self.note(step.position, _path(prefix, index, step),
                          f"step name '{step.name}' is used elsewhere in the flow; the state "
                          f"is named '{name}' (v1 names are unique flow-wide)")
            scope.names[step.name] = name
            self.state_of[id(step)] = name
            scope.entry[step.name] = self.unique(f"{name}/input") \
                if isinstance(step, ForeachStep) else name
        return scope

    def roots(self, **bases: Base) -> Roots:
        return Roots(bases, self.name)

    def exprs(self, mappings: tuple[DataMapping, ...], roots: Roots, path: str) -> dict[str, str]:
        def unsupported(mapping: DataMapping, reason: str) -> None:
            self.note(mapping.position, path, f"{reason}; the target '{mapping.target}' is "
                      "null in the migration")
        return mappings_expr(mappings, roots, unsupported)

    # -- the flow ---------------------------------------------------------------------------

    def states(self) -> tuple[str, list[StateDoc]]:
        """The top scope: a first Pass making the frame from the execution input, then the
        flow's steps."""
        flow = self.flow
        top = self._open(flow.steps, "", self._flow_output)
        first = self.unique("FlowInput")
        given = "$Input"
        if flow.input_mappings is not None:
            given = map_literal(self.exprs(flow.input_mappings,
                                           self.roots(input=Base("$Input")), "inputMappings"))
        entry: StateDoc = {"Type": "Pass", "Name": first,
                        "OutputConstructor": {"input.$": given, "local": {}},
                        "Next": top.entry[flow.steps.first]}
        return first, [entry, *self._list(top)]

    def _flow_output(self, frame: str, local: str) -> str:
        if self.flow.output_mappings is None:
            return local
        roots = self.roots(input=Base(f"{frame}.input", True), local=Base(local, True))
        return map_literal(self.exprs(self.flow.output_mappings, roots, "outputMappings"))

    def _list(self, scope: _List) -> list[StateDoc]:
        states: list[StateDoc] = []
        for index, step in enumerate(scope.steps.steps):
            states += self._step(step, scope, _path(scope.prefix, index, step))
        return states

    # -- shared pieces ----------------------------------------------------------------------

    def after(self, step: Step, scope: _List) -> str | None:
        """The state a step goes to when it does not jump; None when it ends its scope."""
        following = None if step.end else scope.steps.after(step.name)
        return scope.entry[following] if following is not None else scope.after

    def step_input(self, step: Step, path: str) -> Base:
        """The step's input: its mapped object, or the frame's input and local merged."""
        if step.input_mappings is None:
            return Base("jsonMerge($Input.input, $Input.local)", True)
        fields = self.exprs(step.input_mappings, self.roots(
            input=Base("$Input.input", True), local=Base("$Input.local", True)),
            f"{path}.inputMappings")
        return Base(map_literal(fields), False, fields)

    def frame(self, scope: _List, local: str, base: str = "$Input") -> dict[str, Any]:
        built = {"input.$": f"{base}.input", "local.$": local}
        if scope.outer:
            built["outer.$"] = f"{base}.outer"
        return built

    def close(self, state: StateDoc, step: Step, scope: _List, local: str,
              base: str = "$Input", target: str | None = None) -> None:
        """The state's output (the new frame, or the scope's result) and its transition."""
        target = target if target is not None else self.after(step, scope)
        if target is None:
            assert scope.finish is not None
            state["OutputConstructor"] = {"$": scope.finish(base, local)}
            state["End"] = True
            return
        if local != f"{base}.local" or base != "$Input":
            state["OutputConstructor"] = self.frame(scope, local, base)
        state["Next"] = target

    def outputs(self, step: Step, x: Base, local: Base, path: str) -> str | None:
        """The step's output mappings as one expression, None without any."""
        if step.output_mappings is None:
            return None
        return map_literal(self.exprs(step.output_mappings, self.roots(input=x, local=local),
                                      f"{path}.outputMappings"))

    # -- steps ------------------------------------------------------------------------------

    def _step(self, step: Step, scope: _List, path: str) -> list[StateDoc]:
        if isinstance(step, TaskStep):
            return [self._task(step, scope, path)]
        if isinstance(step, ChoiceStep):
            return self._choice(step, scope, path)
        if isinstance(step, ParallelStep):
            return [self._parallel(step, scope, path)]
        if isinstance(step, ForeachStep):
            return self._foreach(step, scope, path)
        if isinstance(step, FailStep):
            failed: StateDoc = {"Type": "Fail", "Name": scope.names[step.name]}
            if step.error:
                failed["Code"] = step.error
            if step.cause:
                failed["Detail"] = step.cause
            return [failed]
        return [self._quiet(step, scope, path)]

    def _quiet(self, step: Step, scope: _List, path: str) -> StateDoc:
        """pass, wait and succeed: their ``$local`` is empty."""
        name = scope.names[step.name]
        state: StateDoc = {"Type": "Pass", "Name": name}
        if isinstance(step, WaitStep):
            state = self._wait(step, name, path)
        x = self.step_input(step, path)
        output = self.outputs(step, x, Base("{}", fields={}), path)
        local = "$Input.local" if output is None else f"jsonMerge($Input.local, {output})"
        if isinstance(step, SucceedStep) and scope.finish is not None:
            state = {"Type": "Succeed", "Name": name,
                     "OutputConstructor": {"$": scope.finish("$Input", local)}}
            return state
        self.close(state, step, scope, local)
        return state

    def _wait(self, step: WaitStep, name: str, path: str) -> StateDoc:
        where = step.position
        if step.timestamp is not None:
            self.note(where, path, "a wait until a timestamp has no v1 counterpart (v1 waits "
                      "1-300 seconds); migrated as a 1-second wait: compute the delay in a "
                      "function and wait in a loop")
            return {"Type": "Wait", "Name": name, "Seconds": 1}
        if isinstance(step.duration, int):
            if step.duration == 0:
                return {"Type": "Pass", "Name": name}
            if step.duration > 300:
                self.note(where, path, f"a wait of {step.duration} s is longer than v1 allows "
                          "(300 s in Standard mode); migrated as 300 s: wait in a loop")
            return {"Type": "Wait", "Name": name, "Seconds": min(step.duration, 300)}
        expr = "null"
        if step.duration is not None:
            expr = self._path(step.duration.text, self.step_input(step, path), path,
                              step.position)
        self.note(where, path, "a wait for a duration read from the input: v1 waits 1-300 "
                  "seconds (legacy: 0 to two days); longer or shorter values fail the state")
        return {"Type": "Wait", "Name": name, "Seconds.$": expr}

    def _path(self, text: str, x: Base, path: str, position: Position) -> str:
        try:
            return path_expr(parse_path(text), self.roots(**{"": x}))
        except (Unsupported, PathSyntaxError) as exc:
            self.note(position, path, f"{getattr(exc, 'reason', exc)}; migrated as null")
            return "null"

    def _task(self, step: TaskStep, scope: _List, path: str) -> StateDoc:
        call = resolve_task(step)
        assert isinstance(call, Integration)
        x = self.step_input(step, path)
        state: StateDoc = {"Type": "Task", "Name": scope.names[step.name]}
        local, notes = task_fields(state, step, call, x, self.roots(**{"": x}))
        for message in notes:
            self.note(step.position, path, message)
        if step.timeout_seconds is not None:
            state["Timeout"] = step.timeout_seconds
        self._rules(state, step, scope, path)
        output = self.outputs(step, x, local, path)
        self.close(state, step, scope,
                   f"jsonMerge($Input.local, {output if output is not None else local.expr})")
        return state

    def _rules(self, state: StateDoc, step: TaskStep, scope: _List, path: str) -> None:
        if step.retry:
            state["Retry"] = []
        for rule in step.retry:
            entry: StateDoc = {"Errors": self._errors(rule.errors, step, path),
                            "IntervalSeconds": rule.interval_seconds,
                            "MaxAttempts": rule.max_attempts, "BackoffRate": rule.multiplier}
            if "maxIntervalSeconds" in rule.raw:
                entry["MaxBackoffSeconds"] = rule.max_interval_seconds
            state["Retry"].append(entry)
        if step.catch:
            state["Catch"] = []
        for catch in step.catch:
            caught: StateDoc = {"Errors": self._errors(catch.errors, step, path),
                             "Next": scope.entry.get(catch.goto or "", catch.goto)}
            if step.error_mappings is not None:
                error = Base("{}", fields={"error": "$Context.Current.Error.Code",
                                           "cause": "$Context.Current.Error.Detail"})
                mapped = map_literal(self.exprs(step.error_mappings, self.roots(local=error),
                                                f"{path}.errorMappings"))
                caught["OutputConstructor"] = self.frame(scope,
                                                         f"jsonMerge($Input.local, {mapped})")
            state["Catch"].append(caught)

    def _errors(self, names: tuple[str, ...], step: TaskStep, path: str) -> list[str]:
        found = []
        for name in names:
            if name == "FnF.TaskTimeout":
                name = "FnF.Timeout"
            elif not name.startswith(("FC.", "FnF.", "fnf.")) and name not in self.fail_codes:
                self.note(step.position, path, f"error '{name}': a legacy task names a "
                          "function's own error type (errorType); SpecVersion v1 reports it "
                          "as FC.Unknown, so this rule may no longer match")
            found.append(name)
        return found

    # -- choice -----------------------------------------------------------------------------

    def _choice(self, step: ChoiceStep, scope: _List, path: str) -> list[StateDoc]:
        name = scope.names[step.name]
        x = self.step_input(step, path)
        inline = any(arm.steps is not None for arm in step.arms)
        extra: list[StateDoc] = []
        state: StateDoc = {"Type": "Choice", "Name": name}
        roots = self.roots(**{"": x})
        if inline:
            state["InputConstructor"] = {"input.$": _expr(x), "local": {}, "outer.$": "$Input"}
            roots = self.roots(**{"": Base("$Input.input", True)})
        arms: list[tuple[str, ChoiceOption | ChoiceDefault | None]] = [
            (f"choices[{i}]", option) for i, option in enumerate(step.choices)]
        arms.append(("default", step.default) if step.default is not None
                    else ("no match", None))
        branches = []
        for label, arm in arms:
            target = self._arm(step, scope, path, label, arm, x, inline, extra)
            if label == "default" or label == "no match":
                state["Default"] = target
                continue
            assert isinstance(arm, ChoiceOption) and arm.condition is not None
            try:
                condition = condition_expr(arm.condition.text, roots)
            except (Unsupported, PathSyntaxError) as exc:
                self.note(arm.condition.position, f"{path}.{label}.condition",
                          f"{getattr(exc, 'reason', exc)}; the option never holds in the "
                          "migration")
                condition = "false"
            branches.append({"Condition": condition, "Next": target})
        state["Branches"] = branches
        return [state, *extra]

    def _arm(self, step: ChoiceStep, scope: _List, path: str, label: str,
             arm: ChoiceOption | ChoiceDefault | None, x: Base, inline: bool,
             extra: list[StateDoc]) -> str:
        """The v1 target of one arm; its inline steps and closing Pass go to ``extra``."""
        goto = scope.entry.get(arm.goto, arm.goto) if arm is not None and arm.goto else None
        target = goto or self.after(step, scope)
        if not inline and step.output_mappings is None and target is not None:
            return target
        closing = self.unique(f"{scope.names[step.name]}/{label}")
        state: StateDoc = {"Type": "Pass", "Name": closing}
        if inline:  # the arm's frame: {input: X, local: <the arm's>, outer: <the list's>}
            output = self.outputs(step, Base("$Input.input", True),
                                  Base("$Input.local", True), path)
            local = f"jsonMerge($Input.outer.local, {output or '$Input.local'})"
            self.close(state, step, scope, local, "$Input.outer", target)
        else:
            output = self.outputs(step, x, Base("{}", fields={}), path)
            local = "$Input.local" if output is None else f"jsonMerge($Input.local, {output})"
            self.close(state, step, scope, local, "$Input", target)
        if arm is None or arm.steps is None:
            extra.append(state)
            return closing
        inner = self._open(arm.steps, f"{path}.{label}", None, after=closing, outer=True)
        extra += self._list(inner)
        extra.append(state)
        return inner.entry[arm.steps.first]

    # -- parallel and foreach ---------------------------------------------------------------

    def _parallel(self, step: ParallelStep, scope: _List, path: str) -> StateDoc:
        x = self.step_input(step, path)
        branches = []
        for index, branch in enumerate(step.branches):
            inner = self._open(branch, f"{path}.branches[{index}]", _local_result)
            branches.append({"StartAt": inner.entry[branch.first], "States": self._list(inner)})
        locals_ = Base("", elements=tuple(f"$Output.Branch{i}" for i in range(len(branches))))
        output = self.outputs(step, Base("$Input.input", True), locals_, path)
        state: StateDoc = {"Type": "Parallel", "Name": scope.names[step.name],
                        "InputConstructor": {"input.$": _expr(x), "local": {},
                                             "outer.$": "$Input"},
                        "Branches": branches}
        local = "$Input.outer.local" if output is None else \
            f"jsonMerge($Input.outer.local, {output})"
        self.close(state, step, scope, local, "$Input.outer")
        return state

    def _foreach(self, step: ForeachStep, scope: _List, path: str) -> list[StateDoc]:
        name = scope.names[step.name]
        x = self.step_input(step, path)
        iteration = step.iteration
        assert iteration is not None and iteration.collection is not None
        project = self._projection(step, path)
        finish: Finish = (lambda frame, local: _keys(local, project)) if project is not None \
            else _local_result
        inner = self._open(step.steps or StepList((), step.position), f"{path}.steps", finish)
        entry = self.unique(f"{name}/iteration")
        item = map_literal({iteration.item: "$Input"})
        if iteration.index:
            self.note(iteration.position, f"{path}.iterationMapping.index", "v1 Map iterations "
                      f"do not know their position; '{iteration.index}' is not set")
        if any(isinstance(s, ForeachStep) for _, s in _all_steps(step.steps)) or scope.prefix:
            self.note(step.position, path, "the foreach input is kept in $Global under its "
                      "name; two of its runs at once (inside a parallel or another foreach) "
                      "would share it")
        begin: StateDoc = {"Type": "Pass", "Name": entry, "OutputConstructor": {
            "input.$": f"jsonMerge($Global[{literal(name)}], {item})", "local": {}}}
        body = self._list(inner) if step.steps is not None else []
        if step.steps is not None and body:
            begin["Next"] = inner.entry[step.steps.first]
        else:
            begin["End"] = True
        collection = self._path(iteration.collection.text, x, f"{path}.iterationMapping",
                                iteration.position)
        prepare: StateDoc = {"Type": "Pass", "Name": scope.entry[step.name],
                          "GlobalConstructor": {f"{name}.$": _expr(x)}, "Next": name}
        state: StateDoc = {"Type": "Map", "Name": name, "ItemsPath": collection,
                        "MaxConcurrency": 100,
                        "Processor": {"StartAt": entry, "States": [begin, *body]}}
        items = Base("$Output.Items", fields=None)
        output = self._foreach_output(step, x, items, project, path)
        local = "$Input.local" if output is None else f"jsonMerge($Input.local, {output})"
        self.close(state, step, scope, local)
        return [prepare, state]

    def _projection(self, step: ForeachStep, path: str) -> tuple[str | int, ...] | None:
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

    def _foreach_output(self, step: ForeachStep, x: Base, items: Base,
                        project: tuple[str | int, ...] | None, path: str) -> str | None:
        if step.output_mappings is None:
            return None
        entries: dict[str, str] = {}
        rest = [m for m in step.output_mappings if not _projected(m, project)]
        for mapping in step.output_mappings:
            if _projected(mapping, project):
                entries[mapping.target] = items.expr
        entries.update(self.exprs(tuple(rest), self.roots(input=x, local=items),
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


def _keys(base: str, keys: tuple[str | int, ...]) -> str:
    text = base
    for key in keys:
        text = member(text, key, certain=False)
    return text


def _local_result(frame: str, local: str) -> str:
    return local


def _expr(base: Base) -> str:
    return map_literal(base.fields) if base.fields is not None else base.expr


def _path(prefix: str, index: int, step: Step) -> str:
    label = f"steps[{index}]({step.name})" if step.name else f"steps[{index}]"
    return f"{prefix}.{label}" if prefix else label


def _all_steps(steps: StepList | None) -> list[tuple[int, Step]]:
    from deployer.fdl.legacy.ast import walk_steps

    return [] if steps is None else [(0, step) for _, step in walk_steps(steps)]

