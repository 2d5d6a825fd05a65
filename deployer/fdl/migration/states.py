"""Legacy steps -> SpecVersion v1 states (the compiler of :mod:`deployer.fdl.migration`).

Every v1 state's data is its steps list's frame ``{"input": ..., "local": ...}``: the legacy
``$input`` and ``$local``, so mappings carry over exactly; a step's output merges into the frame
with ``jsonMerge`` in the state's ``OutputConstructor``. A state that ends its scope gives the
scope's result instead: the local (a parallel branch, a foreach iteration) or the flow's output
mappings (the top list). Anything the compiler cannot carry over exactly is a
:class:`MigrationNote` with the legacy line it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deployer.fdl.legacy.ast import (
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
from deployer.fdl.legacy.parser import step_path
from deployer.fdl.legacy.paths import parse_path
from deployer.fdl.legacy.resources import Integration, resolve_task
from deployer.fdl.migration import compound
from deployer.fdl.migration.expressions import (
    Base,
    NoCounterpart,
    Roots,
    map_literal,
    mappings_expr,
    path_expr,
)
from deployer.fdl.migration.integrations import task_fields
from deployer.fdl.migration.scopes import (
    Finish,
    StateDoc,
    StepsList,
    all_steps,
)
from deployer.fdl.syntax.positions import Position

__all__ = ["MigrationNote", "Migrator"]



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


class Migrator:
    """Migrates one flow; :meth:`states` gives the top ``States`` and ``StartAt``."""

    def __init__(self, flow: LegacyFlow, name: str) -> None:
        self.flow = flow
        self.name = name
        self.notes: list[MigrationNote] = []
        self.used: set[str] = set()
        self.state_of: dict[int, str] = {}  # id(legacy step) -> the v1 state it became
        self.fail_codes = {s.error for s in all_steps(flow.steps)
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
              = None, outer: bool = False) -> StepsList:
        scope = StepsList(steps, prefix, finish, after, outer)
        for index, step in enumerate(steps.steps):
            name = self.unique(step.name)
            if name != step.name:
                self.note(step.position, step_path(prefix, index, step.name),
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

    def _list(self, scope: StepsList) -> list[StateDoc]:
        states: list[StateDoc] = []
        for index, step in enumerate(scope.steps.steps):
            states += self._step(step, scope, step_path(scope.prefix, index, step.name))
        return states

    # -- shared pieces ----------------------------------------------------------------------

    def after(self, step: Step, scope: StepsList) -> str | None:
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

    def frame(self, scope: StepsList, local: str, base: str = "$Input") -> dict[str, Any]:
        built = {"input.$": f"{base}.input", "local.$": local}
        if scope.outer:
            built["outer.$"] = f"{base}.outer"
        return built

    def close(self, state: StateDoc, step: Step, scope: StepsList, local: str,
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

    def _step(self, step: Step, scope: StepsList, path: str) -> list[StateDoc]:
        if isinstance(step, TaskStep):
            return [self._task(step, scope, path)]
        if isinstance(step, ChoiceStep):
            return compound.choice(self, step, scope, path)
        if isinstance(step, ParallelStep):
            return [compound.parallel(self, step, scope, path)]
        if isinstance(step, ForeachStep):
            return compound.foreach(self, step, scope, path)
        if isinstance(step, FailStep):
            failed: StateDoc = {"Type": "Fail", "Name": scope.names[step.name]}
            if step.error:
                failed["Code"] = step.error
            if step.cause:
                failed["Detail"] = step.cause
            return [failed]
        return [self._quiet(step, scope, path)]

    def _quiet(self, step: Step, scope: StepsList, path: str) -> StateDoc:
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
            expr = self.path_of(step.duration.text, self.step_input(step, path), path,
                              step.position)
        self.note(where, path, "a wait for a duration read from the input: v1 waits 1-300 "
                  "seconds (legacy: 0 to two days); longer or shorter values fail the state")
        return {"Type": "Wait", "Name": name, "Seconds.$": expr}

    def path_of(self, text: str, x: Base, path: str, position: Position) -> str:
        try:
            return path_expr(parse_path(text), self.roots(**{"": x}))
        except (NoCounterpart, PathSyntaxError) as exc:
            self.note(position, path, f"{getattr(exc, 'reason', exc)}; migrated as null")
            return "null"

    def _task(self, step: TaskStep, scope: StepsList, path: str) -> StateDoc:
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

    def _rules(self, state: StateDoc, step: TaskStep, scope: StepsList, path: str) -> None:
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

