"""Validation of a parsed flow: a separate pass over the frozen AST returning diagnostics.

Checks, for every scope (the flow, each Parallel branch, each Map processor): the keys and value
types of every mapping (unknown keys get a "did you mean" hint), required fields, state names
(unique in the whole flow), transitions (``Next``/``End``, ``Default``, ``Catch[].Next`` must
name a state of the same scope), reachability from ``StartAt`` (warning), expressions (syntax,
``$Output`` placement), documented limits and Task actions. Decisions where the reference is
unsure are recorded in docs/fdl-semantics.md, section "Definitions and validation".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from deployer.fdl._checks import (
    check_action,
    check_catch,
    check_expression,
    check_retry,
    check_template,
    indexed,
    mapping_indexes,
)
from deployer.fdl._schema import (
    CHOICE_BRANCH_FIELDS,
    FLOW_FIELDS,
    SCOPE_FIELDS,
    STATE_FIELDS,
    check_fields,
    did_you_mean,
)
from deployer.fdl.ast import (
    ChoiceState,
    FailState,
    Flow,
    MapState,
    ParallelState,
    Position,
    RawField,
    Scope,
    State,
    SucceedState,
    TaskState,
    WaitState,
)
from deployer.fdl.diagnostics import Code, Diagnostic, Severity
from deployer.fdl.parser import state_path

__all__ = ["EXECUTION_MODES", "validate_flow"]

EXECUTION_MODES = ("Standard", "Express")
WAIT_LIMITS = {"Standard": (1, 300), "Express": (1, 20)}
MAX_TIMEOUT = 604_800
MAX_PARALLEL_BRANCHES = 50
MAX_MAP_CONCURRENCY = 100
_FLOW_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,127}")
_ENDS_SCOPE = (ChoiceState, SucceedState, FailState)


def validate_flow(flow: Flow, *, execution_mode: str = "Standard") -> tuple[Diagnostic, ...]:
    """Check a parsed flow; return its diagnostics sorted by position (empty when valid).

    ``execution_mode`` (``Standard`` or ``Express``; anything else counts as Standard) selects
    the Wait limits and whether callback task modes are allowed. Pure; never raises.
    """
    validator = _Validator("Express" if execution_mode == "Express" else "Standard")
    validator.flow(flow)
    return tuple(sorted(validator.diagnostics, key=lambda d: (d.line, d.column, d.code)))


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _successors(state: State) -> Iterator[str | None]:
    yield state.next
    if isinstance(state, ChoiceState):
        yield from (branch.next for branch in state.branches)
        yield state.default
    if isinstance(state, (TaskState, ParallelState, MapState)):
        yield from (rule.next for rule in state.catch)


@dataclass
class _Validator:
    execution_mode: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    all_names: dict[str, str] = field(default_factory=dict)  # name -> path of its first state
    scopes_of: dict[str, list[str]] = field(default_factory=dict)  # name -> scope prefixes

    def report(
        self,
        code: Code,
        message: str,
        position: Position,
        path: str,
        *,
        hint: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> None:
        diagnostic = Diagnostic.at(code, message, position, path, hint=hint, severity=severity)
        self.diagnostics.append(diagnostic)

    # -- flow and scopes ------------------------------------------------------------------

    def flow(self, flow: Flow) -> None:
        check_fields(flow.raw, FLOW_FIELDS, flow.position, "", self.report, where="the flow")
        self._expect(flow.raw, "Type", "StateMachine", "the new dialect needs Type: StateMachine")
        self._expect(flow.raw, "SpecVersion", "v1", "the new dialect needs SpecVersion: v1")
        name = flow.raw.get("Name")
        if name is not None and flow.name and not _FLOW_NAME.fullmatch(flow.name):
            self.report(
                Code.INVALID_VALUE,
                f"invalid flow name '{flow.name}'",
                name.value_position,
                "Name",
                hint="1-128 letters, digits, '_' or '-', starting with a letter or '_'",
            )
        if "steps" in flow.raw or "version" in flow.raw:
            self.report(
                Code.UNSUPPORTED,
                "this looks like the legacy flow dialect (version/steps)",
                flow.position,
                "",
                hint="rewrite it as Type: StateMachine with States",
            )
        self._collect_names(flow.scope, "")
        self.scope(flow.scope, flow.raw, "")

    def _expect(self, raw: Mapping[str, RawField], key: str, wanted: str, hint: str) -> None:
        entry = raw.get(key)
        if entry is not None and isinstance(entry.value, str) and entry.value != wanted:
            self.report(
                Code.INVALID_VALUE,
                f"'{key}' must be '{wanted}', found '{entry.value}'",
                entry.value_position,
                key,
                hint=hint,
            )

    def _collect_names(self, scope: Scope, prefix: str) -> None:
        for state in scope.states:
            self.scopes_of.setdefault(state.name, []).append(prefix)
            for index, child in enumerate(_child_scopes(state)):
                label = "Processor" if isinstance(state, MapState) else f"Branches[{index}]"
                self._collect_names(child, f"{prefix}/{state.name}.{label}")

    def scope(self, scope: Scope, raw: Mapping[str, RawField], prefix: str) -> None:
        states = raw.get("States")
        if states is not None and states.value == ():
            self.report(
                Code.EMPTY_LIST,
                "'States' must hold at least one state",
                states.value_position,
                _join(prefix, "States"),
            )
        start = raw.get("StartAt")
        if start is not None and scope.start_at and scope.start_at not in scope.by_name:
            self._unknown_target(
                scope.start_at, start.value_position, _join(prefix, "StartAt"), scope, "StartAt"
            )
        indexes = mapping_indexes(raw, "States")
        seen: set[str] = set()
        for number, state in enumerate(scope.states):
            index = indexes[number] if number < len(indexes) else number
            path = state_path(prefix, index, state.name)
            self._name(state, path, seen)
            self.state(state, path, scope)
        self._reachability(scope, prefix, indexes)

    def _name(self, state: State, path: str, seen: set[str]) -> None:
        entry = state.raw.get("Name")
        if entry is None:
            return
        if not state.name:
            self.report(
                Code.INVALID_VALUE,
                "a state name must not be empty",
                entry.value_position,
                f"{path}.Name",
            )
        elif state.name in seen:
            self.report(
                Code.DUPLICATE_NAME,
                f"another state of this scope is already named '{state.name}'",
                entry.value_position,
                f"{path}.Name",
            )
        elif state.name in self.all_names:
            self.report(
                Code.DUPLICATE_NAME_IN_FLOW,
                f"state name '{state.name}' is already used by {self.all_names[state.name]}",
                entry.value_position,
                f"{path}.Name",
                hint="state names must be unique in the whole flow",
            )
        seen.add(state.name)
        self.all_names.setdefault(state.name, path)

    def _reachability(self, scope: Scope, prefix: str, indexes: list[int]) -> None:
        if scope.start_at not in scope.by_name:
            return
        reached = {scope.start_at}
        pending = [scope.start_at]
        while pending:
            for target in _successors(scope.by_name[pending.pop()]):
                if target is not None and target in scope.by_name and target not in reached:
                    reached.add(target)
                    pending.append(target)
        for number, state in enumerate(scope.states):
            if state.name and state.name not in reached:
                index = indexes[number] if number < len(indexes) else number
                self.report(
                    Code.UNREACHABLE,
                    f"state '{state.name}' can never run: no "
                    f"transition from '{scope.start_at}' leads to it",
                    state.position,
                    state_path(prefix, index, state.name),
                    severity=Severity.WARNING,
                )

    def _target(
        self, target: str | None, key: str, raw: Mapping[str, RawField], path: str, scope: Scope
    ) -> None:
        entry = raw.get(key)
        if target is None or entry is None or target in scope.by_name:
            return
        self._unknown_target(target, entry.value_position, _join(path, key), scope, key)

    def _unknown_target(
        self, target: str, position: Position, path: str, scope: Scope, key: str
    ) -> None:
        hint = did_you_mean(target, scope.by_name)
        if hint is None and target in self.scopes_of:
            hint = "that state is in another scope; transitions cannot leave their scope"
        self.report(
            Code.UNKNOWN_TARGET,
            f"{key} names '{target}', which is not a state of this scope",
            position,
            path,
            hint=hint,
        )

    # -- states ---------------------------------------------------------------------------

    def state(self, state: State, path: str, scope: Scope) -> None:
        type_entry = state.raw.get("Type")
        type_name = type_entry.value if type_entry is not None else None
        spec = STATE_FIELDS.get(type_name) if isinstance(type_name, str) else None
        if type_entry is None:
            self.report(
                Code.MISSING_FIELD,
                "a state needs 'Type'",
                state.position,
                path,
                hint="one of " + ", ".join(STATE_FIELDS),
            )
        elif spec is None:
            self.report(
                Code.INVALID_VALUE,
                f"unknown state type {type_name!r}",
                type_entry.value_position,
                f"{path}.Type",
                hint=did_you_mean(str(type_name), STATE_FIELDS)
                or "one of " + ", ".join(STATE_FIELDS),
            )
        else:
            check_fields(
                state.raw, spec, state.position, path, self.report, where=f"{type_name} state"
            )
        self._transitions(state, path, scope, known_type=spec is not None)
        for key, template, output_allowed in (
            ("InputConstructor", state.input_constructor, False),
            ("OutputConstructor", state.output_constructor, True),
            ("GlobalConstructor", state.global_constructor, True),
        ):
            if template is not None:
                check_template(
                    template, f"{path}.{key}", self.report, output_allowed=output_allowed
                )
        if spec is None:
            return
        if isinstance(state, TaskState):
            self._task(state, path)
        elif isinstance(state, WaitState):
            self._wait(state, path)
        elif isinstance(state, ChoiceState):
            self._choice(state, path, scope)
        elif isinstance(state, ParallelState):
            self._parallel(state, path)
        elif isinstance(state, MapState):
            self._map(state, path)
        if isinstance(state, (TaskState, ParallelState, MapState)):
            self._rules(state, path, scope)

    def _transitions(self, state: State, path: str, scope: Scope, *, known_type: bool) -> None:
        raw = state.raw
        self._target(state.next, "Next", raw, path, scope)
        if isinstance(state, _ENDS_SCOPE) and known_type:
            return
        if "Next" not in raw and "End" in raw and raw["End"].value is False:
            self.report(
                Code.NO_TRANSITION,
                "the state has 'End: false' and no 'Next'",
                raw["End"].value_position,
                f"{path}.End",
                hint="add 'Next: <state>' or set 'End: true'",
            )
        if "Next" in raw and state.end:
            self.report(
                Code.NEXT_AND_END,
                "a state cannot have both 'Next' and 'End: true'",
                raw["Next"].key_position,
                f"{path}.Next",
                hint="remove one of them",
            )
        elif "Next" not in raw and "End" not in raw and known_type:
            self.report(
                Code.NO_TRANSITION,
                "the state has neither 'Next' nor 'End: true'",
                state.position,
                path,
                hint="add 'Next: <state>' or 'End: true'",
            )

    def _rules(self, state: TaskState | ParallelState | MapState, path: str, scope: Scope) -> None:
        for index, rule in indexed(state.raw, "Retry", state.retry):
            check_retry(rule, f"{path}.Retry[{index}]", self.report)
        for index, catch in indexed(state.raw, "Catch", state.catch):
            rule_path = f"{path}.Catch[{index}]"
            check_catch(catch, rule_path, self.report)
            self._target(catch.next, "Next", catch.raw, rule_path, scope)

    def _task(self, state: TaskState, path: str) -> None:
        check_action(state, path, self.report, self.execution_mode)
        if state.parameters is not None:
            check_template(
                state.parameters, f"{path}.Parameters", self.report, output_allowed=False
            )
        raw = state.raw
        self._exclusive(raw, "Timeout", "Timeout.$", path)
        timeout = raw.get("Timeout")
        literal = isinstance(state.timeout, int) and "Timeout.$" not in raw
        if timeout is not None and literal and not 0 <= state.timeout <= MAX_TIMEOUT:  # type: ignore[operator]
            self.report(
                Code.TIMEOUT_RANGE,
                f"'Timeout' must be between 0 and {MAX_TIMEOUT} seconds, found {state.timeout}",
                timeout.value_position,
                f"{path}.Timeout",
            )
        if not isinstance(state.timeout, int) and state.timeout is not None:
            check_expression(state.timeout, f"{path}.Timeout.$", self.report, output_allowed=False)

    def _wait(self, state: WaitState, path: str) -> None:
        raw = state.raw
        if "Seconds" not in raw and "Seconds.$" not in raw:
            self.report(
                Code.MISSING_FIELD,
                "a Wait state needs 'Seconds' or 'Seconds.$'",
                state.position,
                path,
            )
        self._exclusive(raw, "Seconds", "Seconds.$", path)
        low, high = WAIT_LIMITS[self.execution_mode]
        if state.seconds is not None and not low <= state.seconds <= high:
            self.report(
                Code.WAIT_RANGE,
                f"'Seconds' must be between {low} and {high} in "
                f"{self.execution_mode} mode, found {state.seconds}",
                raw["Seconds"].value_position,
                f"{path}.Seconds",
            )
        if state.seconds_expr is not None:
            check_expression(
                state.seconds_expr, f"{path}.Seconds.$", self.report, output_allowed=False
            )

    def _choice(self, state: ChoiceState, path: str, scope: Scope) -> None:
        branches = state.raw.get("Branches")
        if branches is not None and branches.value == ():
            self.report(
                Code.EMPTY_LIST,
                "a Choice needs at least one branch",
                branches.value_position,
                f"{path}.Branches",
            )
        for index, branch in indexed(state.raw, "Branches", state.branches):
            branch_path = f"{path}.Branches[{index}]"
            check_fields(
                branch.raw,
                CHOICE_BRANCH_FIELDS,
                branch.position,
                branch_path,
                self.report,
                where="Choice branch",
            )
            if branch.condition is not None:
                check_expression(
                    branch.condition, f"{branch_path}.Condition", self.report, output_allowed=False
                )
            self._target(branch.next, "Next", branch.raw, branch_path, scope)
        self._target(state.default, "Default", state.raw, path, scope)

    def _parallel(self, state: ParallelState, path: str) -> None:
        entry = state.raw.get("Branches")
        if entry is not None and isinstance(entry.value, tuple):
            if not entry.value:
                self.report(
                    Code.EMPTY_LIST,
                    "a Parallel state needs at least one branch",
                    entry.value_position,
                    f"{path}.Branches",
                )
            elif len(entry.value) > MAX_PARALLEL_BRANCHES:
                self.report(
                    Code.TOO_MANY_BRANCHES,
                    f"a Parallel state may have at most "
                    f"{MAX_PARALLEL_BRANCHES} branches, found {len(entry.value)}",
                    entry.value_position,
                    f"{path}.Branches",
                )
        for index, branch in indexed(state.raw, "Branches", state.branches):
            self._nested(branch, f"{path}.Branches[{index}]", "Parallel branch")

    def _map(self, state: MapState, path: str) -> None:
        raw = state.raw
        self._exclusive(raw, "MaxConcuccency", "MaxConcurrency", path)
        key = "MaxConcuccency" if "MaxConcuccency" in raw else "MaxConcurrency"
        value = state.max_concurrency
        if value is not None and not 1 <= value <= MAX_MAP_CONCURRENCY:
            self.report(
                Code.CONCURRENCY_RANGE,
                f"'{key}' must be between 1 and {MAX_MAP_CONCURRENCY}, found {value}",
                raw[key].value_position,
                f"{path}.{key}",
            )
        if state.items_path is not None:
            check_expression(
                state.items_path, f"{path}.ItemsPath", self.report, output_allowed=False
            )
        if state.processor is not None:
            self._nested(state.processor, f"{path}.Processor", "Map Processor")

    def _nested(self, scope: Scope, path: str, where: str) -> None:
        check_fields(scope.raw, SCOPE_FIELDS, scope.position, path, self.report, where=where)
        self.scope(scope, scope.raw, path)

    def _exclusive(self, raw: Mapping[str, RawField], first: str, second: str, path: str) -> None:
        if first in raw and second in raw:
            self.report(
                Code.CONFLICTING_FIELDS,
                f"'{first}' and '{second}' cannot both be set",
                raw[second].key_position,
                f"{path}.{second}",
                hint="keep only one of them",
            )


def _child_scopes(state: State) -> tuple[Scope, ...]:
    if isinstance(state, ParallelState):
        return state.branches
    if isinstance(state, MapState) and state.processor is not None:
        return (state.processor,)
    return ()
