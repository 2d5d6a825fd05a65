"""Validation of a legacy flow: a separate pass over its frozen AST returning diagnostics with the
same codes, positions, paths (``steps[2](check).choices[0].goto``) and hints as SpecVersion v1.

For the flow and every steps list (a parallel branch, a foreach body, a choice's inline steps):
the keys and value types of every mapping (a "did you mean" for unknown keys, the step type a
key belongs to), step types and names (unique in their list, and in the flow, a warning), jumps
(``goto`` of choices, defaults and catches name a step of the same list), reachability (a
warning), and the values (:mod:`deployer.fdl.legacy.checks`).
"""

from __future__ import annotations

from collections.abc import Mapping

from deployer.fdl.legacy.ast import (
    LEGACY_VERSIONS,
    ChoiceDefault,
    ChoiceOption,
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
from deployer.fdl.legacy.checks import (
    check_condition,
    check_iteration,
    check_mappings,
    check_retry_rule,
    check_task,
    check_wait_step,
)
from deployer.fdl.legacy.parser import step_path
from deployer.fdl.legacy.schema import (
    CATCH_KEYS,
    CHOICE_KEYS,
    DEFAULT_KEYS,
    FLOW_KEYS,
    LIST_KEYS,
    STEP_KEYS,
    check_keys,
)
from deployer.fdl.limits import LEGACY_BRANCHES
from deployer.fdl.syntax.diagnostics import Code, Collector, Diagnostic, Reporter, Severity
from deployer.fdl.syntax.positions import RawField
from deployer.fdl.syntax.schema import did_you_mean

__all__ = ["validate_legacy_flow"]


def validate_legacy_flow(flow: LegacyFlow, *,
                         execution_mode: str = "Standard") -> tuple[Diagnostic, ...]:
    """Check a parsed legacy flow; its diagnostics sorted by position (empty when valid).
    ``execution_mode`` Express refuses callbacks and sub-flow waits. Pure; never raises."""
    diagnostics = Collector()
    _Validator(diagnostics.report, execution_mode).flow(flow)
    return diagnostics.sorted()


class _Validator:
    def __init__(self, report: Reporter, execution_mode: str) -> None:
        self.report = report
        self.execution_mode = execution_mode
        self.names: dict[str, str] = {}  # every step name -> where it was first written

    def flow(self, flow: LegacyFlow) -> None:
        check_keys(flow.raw, FLOW_KEYS, flow.position, "", self.report, where="the flow")
        self._value(flow.raw, "version", LEGACY_VERSIONS)
        self._value(flow.raw, "type", ("flow",))
        check_mappings(flow.input_mappings, "inputMappings", self.report)
        check_mappings(flow.output_mappings, "outputMappings", self.report)
        self.steps(flow.steps, "", flow.raw)

    def _value(self, raw: Mapping[str, RawField], key: str, allowed: tuple[str, ...]) -> None:
        entry = raw.get(key)
        if entry is not None and isinstance(entry.value, str) and entry.value not in allowed:
            self.report(Code.INVALID_VALUE, f"'{key}' must be {' or '.join(allowed)}, found "
                        f"'{entry.value}'", entry.value_position, key,
                        hint=did_you_mean(entry.value, allowed))

    # -- lists ----------------------------------------------------------------------------

    def steps(self, steps: StepList, prefix: str, raw: Mapping[str, RawField]) -> None:
        entry = raw.get("steps")
        if entry is not None and entry.value == ():
            self.report(Code.EMPTY_LIST, "'steps' must hold at least one step",
                        entry.value_position, f"{prefix}.steps" if prefix else "steps")
        seen: set[str] = set()
        for index, step in self._indexed(steps, raw):
            path = step_path(prefix, index, step.name)
            self._name(step, path, seen)
            self.step(step, path, steps)
        self._reachability(steps, prefix, raw)

    @staticmethod
    def _indexed(steps: StepList, raw: Mapping[str, RawField]) -> list[tuple[int, Step]]:
        entry = raw.get("steps")
        written = entry.value if entry is not None and isinstance(entry.value, tuple) else ()
        indexes = [i for i, item in enumerate(written) if isinstance(item, Mapping)]
        return [(indexes[n] if n < len(indexes) else n, step)
                for n, step in enumerate(steps.steps)]

    def _name(self, step: Step, path: str, seen: set[str]) -> None:
        entry = step.raw.get("name")
        if entry is not None and not step.name:
            self.report(Code.INVALID_VALUE, "a step name must not be empty",
                        entry.value_position, f"{path}.name")
            return
        if not step.name:
            return
        where = entry.value_position if entry is not None else step.position
        if step.name in seen:
            self.report(Code.DUPLICATE_NAME, f"two steps of this list are named '{step.name}'",
                        where, f"{path}.name", hint="goto and history tell steps by name")
        elif step.name in self.names:
            self.report(Code.DUPLICATE_NAME_IN_FLOW, f"step name '{step.name}' is already used "
                        f"by {self.names[step.name]}", where, f"{path}.name",
                        severity=Severity.WARNING,
                        hint="the history and `deploy flow test` mocks tell steps by name")
        seen.add(step.name)
        self.names.setdefault(step.name, path)

    def _goto(self, target: str | None, raw: Mapping[str, RawField], path: str,
              steps: StepList) -> None:
        entry = raw.get("goto")
        if target is None or entry is None or target in steps.by_name:
            return
        elsewhere = target in self.names
        hint = did_you_mean(target, steps.by_name) or (
            f"'{target}' is in another steps list; goto jumps to a step of the same list"
            if elsewhere else None)
        self.report(Code.UNKNOWN_TARGET, f"goto names '{target}', which is not a step of "
                    "this list", entry.value_position, f"{path}.goto", hint=hint)

    # -- steps ----------------------------------------------------------------------------

    def step(self, step: Step, path: str, steps: StepList) -> None:
        type_entry = step.raw.get("type")
        kind = type_entry.value if type_entry is not None else None
        spec = STEP_KEYS.get(kind) if isinstance(kind, str) else None
        if type_entry is None:
            self.report(Code.MISSING_FIELD, "a step needs 'type'", step.position, path,
                        hint="one of " + ", ".join(STEP_KEYS))
            return
        if spec is None:
            self.report(Code.INVALID_VALUE, f"unknown step type {kind!r}",
                        type_entry.value_position, f"{path}.type",
                        hint=did_you_mean(str(kind), STEP_KEYS) or
                        "one of " + ", ".join(STEP_KEYS))
            return
        check_keys(step.raw, spec, step.position, path, self.report, where=f"{kind} step")
        check_mappings(step.input_mappings, f"{path}.inputMappings", self.report)
        check_mappings(step.output_mappings, f"{path}.outputMappings", self.report)
        if isinstance(step, TaskStep):
            self._task(step, path, steps)
        elif isinstance(step, WaitStep):
            check_wait_step(step, path, self.report)
        elif isinstance(step, ChoiceStep):
            self._choice(step, path, steps)
        elif isinstance(step, ParallelStep):
            self._parallel(step, path)
        elif isinstance(step, ForeachStep):
            check_iteration(step.iteration, path, self.report)
            if step.steps is not None:
                self.steps(step.steps, path, step.raw)

    def _task(self, step: TaskStep, path: str, steps: StepList) -> None:
        check_task(step, path, self.report, self.execution_mode)
        check_mappings(step.error_mappings, f"{path}.errorMappings", self.report, errors=True)
        for index, rule in enumerate(step.retry):
            check_retry_rule(rule, f"{path}.retry[{index}]", self.report)
        for index, catch in enumerate(step.catch):
            where = f"{path}.catch[{index}]"
            check_keys(catch.raw, CATCH_KEYS, catch.position, where, self.report,
                       where="catch rule")
            errors = catch.raw.get("errors")
            if errors is not None and errors.value == ():
                self.report(Code.EMPTY_LIST, "a catch rule needs at least one error name",
                            errors.value_position, f"{where}.errors")
            self._goto(catch.goto, catch.raw, where, steps)

    def _choice(self, step: ChoiceStep, path: str, steps: StepList) -> None:
        entry = step.raw.get("choices")
        if entry is not None and entry.value == ():
            self.report(Code.EMPTY_LIST, "a choice needs at least one entry in 'choices'",
                        entry.value_position, f"{path}.choices")
        for index, arm in enumerate(step.arms):
            where = f"{path}.choices[{index}]" if isinstance(arm, ChoiceOption) \
                else f"{path}.default"
            self._arm(arm, where, steps)

    def _arm(self, arm: ChoiceOption | ChoiceDefault, where: str, steps: StepList) -> None:
        if isinstance(arm, ChoiceOption):
            check_keys(arm.raw, CHOICE_KEYS, arm.position, where, self.report, where="choice")
            if arm.condition is not None:
                check_condition(arm.condition, f"{where}.condition", self.report)
        else:
            check_keys(arm.raw, DEFAULT_KEYS, arm.position, where, self.report,
                       where="choice default")
        self._goto(arm.goto, arm.raw, where, steps)
        if arm.steps is not None:
            self.steps(arm.steps, where, arm.raw)

    def _parallel(self, step: ParallelStep, path: str) -> None:
        entry = step.raw.get("branches")
        if entry is not None and entry.value == ():
            self.report(Code.EMPTY_LIST, "a parallel step needs at least one branch",
                        entry.value_position, f"{path}.branches")
        if len(step.branches) > LEGACY_BRANCHES and entry is not None:
            self.report(Code.TOO_MANY_BRANCHES, f"a parallel step has at most {LEGACY_BRANCHES} "
                        f"branches, found {len(step.branches)}", entry.value_position,
                        f"{path}.branches")
        for index, branch in enumerate(step.branches):
            where = f"{path}.branches[{index}]"
            check_keys(branch.raw, LIST_KEYS, branch.position, where, self.report,
                       where="parallel branch")
            self.steps(branch, where, branch.raw)

    # -- reachability ---------------------------------------------------------------------

    def _reachability(self, steps: StepList, prefix: str,
                      raw: Mapping[str, RawField]) -> None:
        if not steps.steps:
            return
        reached = {steps.first}
        pending = [steps.first]
        while pending:
            name = pending.pop()
            step = steps.by_name.get(name)
            if step is None:
                continue
            for target in next_steps(step, steps):
                if target not in reached:
                    reached.add(target)
                    pending.append(target)
        for index, step in self._indexed(steps, raw):
            if step.name and step.name not in reached:
                self.report(Code.UNREACHABLE, f"step '{step.name}' can never run: no step "
                            f"before it falls through or jumps to it", step.position,
                            step_path(prefix, index, step.name), severity=Severity.WARNING)


def next_steps(step: Step, steps: StepList) -> list[str]:
    """The steps of ``steps`` that may run right after ``step``: the next one written (unless
    the step ends the list), goto targets and catch targets."""
    found: list[str] = []
    after = steps.after(step.name)
    if isinstance(step, ChoiceStep):
        falls = step.default is None or any(arm.goto is None for arm in step.arms)
        found += [arm.goto for arm in step.arms if arm.goto]
    else:
        falls = not (step.end or isinstance(step, (SucceedStep, FailStep)))
    if isinstance(step, TaskStep):
        found += [rule.goto for rule in step.catch if rule.goto]
    if falls and after is not None and not (isinstance(step, ChoiceStep) and step.end):
        found.append(after)
    return [name for name in found if name in steps.by_name]

