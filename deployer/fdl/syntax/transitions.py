"""Validator checks on state names and transitions.

State names are unique in the whole flow (FDL204 in one scope, FDL205 across scopes);
``StartAt``, ``Next``, ``Default`` and ``Catch[].Next`` must name a state of the *same* scope
(FDL203, with a hint when the name exists in another scope); every state but Choice, Succeed and
Fail needs ``Next`` or ``End: true`` and not both (FDL201/FDL202); a state no transition from
``StartAt`` reaches is a warning (FDL206).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from deployer.fdl.syntax.ast import (
    ChoiceState,
    FailState,
    MapState,
    ParallelState,
    Position,
    RawField,
    Scope,
    State,
    SucceedState,
    TaskState,
    child_scopes,
)
from deployer.fdl.syntax.diagnostics import Code, Reporter, Severity, join_path, state_path
from deployer.fdl.syntax.schema import did_you_mean

__all__ = ["Transitions", "successors"]

_ENDS_SCOPE = (ChoiceState, SucceedState, FailState)


def successors(state: State) -> Iterator[str | None]:
    """Every state name ``state`` may go to: Next, Choice branches and Default, Catch targets."""
    yield state.next
    if isinstance(state, ChoiceState):
        yield from (branch.next for branch in state.branches)
        yield state.default
    if isinstance(state, (TaskState, ParallelState, MapState)):
        yield from (rule.next for rule in state.catch)


class Transitions:
    """Checks names and transitions; knows every state name of the flow and its scopes."""

    def __init__(self, report: Reporter, flow_scope: Scope) -> None:
        self.report = report
        self.all_names: dict[str, str] = {}  # name -> path of its first state
        self.scopes_of: dict[str, list[str]] = {}  # name -> scope prefixes
        self._collect_names(flow_scope, "")

    def _collect_names(self, scope: Scope, prefix: str) -> None:
        for state in scope.states:
            self.scopes_of.setdefault(state.name, []).append(prefix)
            for index, child in enumerate(child_scopes(state)):
                label = "Processor" if isinstance(state, MapState) else f"Branches[{index}]"
                self._collect_names(child, f"{prefix}/{state.name}.{label}")

    def name(self, state: State, path: str, seen: set[str]) -> None:
        """Report an empty name or one already used in this scope (``seen``) or the flow."""
        entry = state.raw.get("Name")
        if entry is None:
            return
        where, name_path = entry.value_position, f"{path}.Name"
        if not state.name:
            self.report(Code.INVALID_VALUE, "a state name must not be empty", where, name_path)
        elif state.name in seen:
            self.report(
                Code.DUPLICATE_NAME,
                f"another state of this scope is already named '{state.name}'",
                where,
                name_path,
            )
        elif state.name in self.all_names:
            self.report(
                Code.DUPLICATE_NAME_IN_FLOW,
                f"state name '{state.name}' is already used by {self.all_names[state.name]}",
                where,
                name_path,
                hint="state names must be unique in the whole flow",
            )
        seen.add(state.name)
        self.all_names.setdefault(state.name, path)

    def start_at(self, scope: Scope, raw: Mapping[str, RawField], prefix: str) -> None:
        """``StartAt`` must name a state of ``scope``."""
        start = raw.get("StartAt")
        if start is not None and scope.start_at and scope.start_at not in scope.by_name:
            path = join_path(prefix, "StartAt")
            self._unknown(scope.start_at, start.value_position, path, scope, "StartAt")

    def target(
        self, target: str | None, key: str, raw: Mapping[str, RawField], path: str, scope: Scope
    ) -> None:
        """The state named under ``key`` (Next, Default...) must exist in ``scope``."""
        entry = raw.get(key)
        if target is None or entry is None or target in scope.by_name:
            return
        self._unknown(target, entry.value_position, join_path(path, key), scope, key)

    def _unknown(self, target: str, position: Position, path: str, scope: Scope, key: str) -> None:
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

    def next_or_end(self, state: State, path: str, scope: Scope, *, known_type: bool) -> None:
        """``Next`` exists; a state that does not end its scope has ``Next`` xor ``End: true``."""
        raw = state.raw
        self.target(state.next, "Next", raw, path, scope)
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

    def reachability(self, scope: Scope, prefix: str, indexes: list[int]) -> None:
        """Warn about every state of ``scope`` that no transition from ``StartAt`` reaches."""
        if scope.start_at not in scope.by_name:
            return
        reached = {scope.start_at}
        pending = [scope.start_at]
        while pending:
            for target in successors(scope.by_name[pending.pop()]):
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
