"""Validation of a parsed flow: a separate pass over the frozen AST returning diagnostics.

Checks, for every scope (the flow, each Parallel branch, each Map processor): the keys and value
types of every mapping (unknown keys get a "did you mean" hint), required fields, state names
(unique in the whole flow), transitions (``Next``/``End``, ``Default``, ``Catch[].Next`` must
name a state of the same scope), reachability from ``StartAt`` (warning), expressions (syntax,
``$Output`` placement), documented limits and Task actions. Decisions where the reference is
unsure are recorded in docs/fdl-semantics.md, section "Definitions and validation".

This module walks the flow and dispatches; the checks live by concern: ``schema`` (keys and
types), ``transitions`` (names and transitions), ``flow_checks`` (the legacy dialect, the flow's
header and Timeout), ``state_checks`` (limits and exclusive keys of one state),
``expression_checks`` (expressions and templates), ``rule_checks`` (Retry/Catch) and
``task_checks`` (a Task's mode, Action and FC parameters).
"""

from __future__ import annotations

from collections.abc import Mapping

from deployer.fdl.syntax.ast import (
    ChoiceState,
    Flow,
    MapState,
    ParallelState,
    RawField,
    Scope,
    State,
    TaskState,
    WaitState,
)
from deployer.fdl.syntax.diagnostics import Code, Collector, Diagnostic, state_path
from deployer.fdl.syntax.expression_checks import check_expression, check_template
from deployer.fdl.syntax.flow_checks import (
    check_flow_header,
    check_flow_timeout,
    is_legacy_dialect,
    report_legacy_dialect,
)
from deployer.fdl.syntax.map_checks import check_distributed
from deployer.fdl.syntax.rule_checks import check_catch, check_retry
from deployer.fdl.syntax.schema import (
    CHOICE_BRANCH_FIELDS,
    FLOW_FIELDS,
    SCOPE_FIELDS,
    STATE_FIELDS,
    check_fields,
    check_list,
    did_you_mean,
    indexed,
    mapping_indexes,
)
from deployer.fdl.syntax.state_checks import (
    check_branch_count,
    check_map_concurrency,
    check_task_timeout,
    check_wait,
)
from deployer.fdl.syntax.task_checks import check_action
from deployer.fdl.syntax.transitions import Transitions

__all__ = ["EXECUTION_MODES", "validate_flow"]

EXECUTION_MODES = ("Standard", "Express")


def validate_flow(flow: Flow, *, execution_mode: str = "Standard") -> tuple[Diagnostic, ...]:
    """Check a parsed flow; return its diagnostics sorted by position (empty when valid).

    ``execution_mode`` (``Standard`` or ``Express``; anything else counts as Standard) selects
    the Wait and flow ``Timeout`` limits and whether callback task modes are allowed. A
    document in the legacy dialect (``version``/``type``/``steps``) gets exactly one error
    saying so. Pure; never raises.
    """
    diagnostics = Collector()
    mode = "Express" if execution_mode == "Express" else "Standard"
    _Validator(mode, diagnostics, flow.scope).flow(flow)
    return diagnostics.sorted()


class _Validator:
    """Walks the flow, its scopes and states and runs the checks that apply to each."""

    def __init__(self, execution_mode: str, diagnostics: Collector, flow_scope: Scope) -> None:
        self.execution_mode = execution_mode
        self.report = diagnostics.report
        self.transitions = Transitions(self.report, flow_scope)

    def flow(self, flow: Flow) -> None:
        if is_legacy_dialect(flow):  # no advice about its fields: none of them carries over
            report_legacy_dialect(flow, self.report)
            return
        check_fields(flow.raw, FLOW_FIELDS, flow.position, "", self.report, where="the flow")
        check_flow_header(flow, self.report)
        check_flow_timeout(flow, self.report, self.execution_mode)
        self.scope(flow.scope, flow.raw, "")

    def scope(self, scope: Scope, raw: Mapping[str, RawField], prefix: str) -> None:
        check_list(
            raw, "States", prefix, self.report, empty="'States' must hold at least one state"
        )
        self.transitions.start_at(scope, raw, prefix)
        indexes = mapping_indexes(raw, "States")
        seen: set[str] = set()
        for number, state in enumerate(scope.states):
            index = indexes[number] if number < len(indexes) else number
            path = state_path(prefix, index, state.name)
            self.transitions.name(state, path, seen)
            self.state(state, path, scope)
        self.transitions.reachability(scope, prefix, indexes)

    def _nested(self, scope: Scope, path: str, where: str) -> None:
        check_fields(scope.raw, SCOPE_FIELDS, scope.position, path, self.report, where=where)
        self.scope(scope, scope.raw, path)

    # -- states ---------------------------------------------------------------------------

    def state(self, state: State, path: str, scope: Scope) -> None:
        known_type = self._type_and_fields(state, path)
        self.transitions.next_or_end(state, path, scope, known_type=known_type)
        for key, template, output_allowed in (
            ("InputConstructor", state.input_constructor, False),
            ("OutputConstructor", state.output_constructor, True),
            ("GlobalConstructor", state.global_constructor, True),
        ):
            if template is not None:
                check_template(
                    template, f"{path}.{key}", self.report, output_allowed=output_allowed
                )
        if not known_type:
            return
        if isinstance(state, TaskState):
            self._task(state, path)
        elif isinstance(state, WaitState):
            self._wait(state, path)
        elif isinstance(state, ChoiceState):
            self._choice(state, path, scope)
        elif isinstance(state, ParallelState):
            check_branch_count(state, path, self.report)
            for index, branch in indexed(state.raw, "Branches", state.branches):
                self._nested(branch, f"{path}.Branches[{index}]", "Parallel branch")
        elif isinstance(state, MapState):
            self._map(state, path)
        if isinstance(state, (TaskState, ParallelState, MapState)):
            self._rules(state, path, scope)

    def _type_and_fields(self, state: State, path: str) -> bool:
        """Check ``Type`` and, when it is known, the state's keys; True when it is known."""
        type_entry = state.raw.get("Type")
        type_name = type_entry.value if type_entry is not None else None
        spec = STATE_FIELDS.get(type_name) if isinstance(type_name, str) else None
        known = "one of " + ", ".join(STATE_FIELDS)
        if type_entry is None:
            self.report(
                Code.MISSING_FIELD, "a state needs 'Type'", state.position, path, hint=known
            )
        elif spec is None:
            self.report(
                Code.INVALID_VALUE,
                f"unknown state type {type_name!r}",
                type_entry.value_position,
                f"{path}.Type",
                hint=did_you_mean(str(type_name), STATE_FIELDS) or known,
            )
        else:
            where = f"{type_name} state"
            check_fields(state.raw, spec, state.position, path, self.report, where=where)
        return spec is not None

    def _rules(self, state: TaskState | ParallelState | MapState, path: str, scope: Scope) -> None:
        for index, rule in indexed(state.raw, "Retry", state.retry):
            check_retry(rule, f"{path}.Retry[{index}]", self.report)
        for index, catch in indexed(state.raw, "Catch", state.catch):
            rule_path = f"{path}.Catch[{index}]"
            check_catch(catch, rule_path, self.report)
            self.transitions.target(catch.next, "Next", catch.raw, rule_path, scope)

    def _task(self, state: TaskState, path: str) -> None:
        check_action(state, path, self.report, self.execution_mode)
        if state.parameters is not None:
            check_template(
                state.parameters, f"{path}.Parameters", self.report, output_allowed=False
            )
        check_task_timeout(state, path, self.report)
        if not isinstance(state.timeout, int) and state.timeout is not None:
            check_expression(state.timeout, f"{path}.Timeout.$", self.report, output_allowed=False)

    def _wait(self, state: WaitState, path: str) -> None:
        check_wait(state, path, self.report, self.execution_mode)
        if state.seconds_expr is not None:
            check_expression(
                state.seconds_expr, f"{path}.Seconds.$", self.report, output_allowed=False
            )

    def _choice(self, state: ChoiceState, path: str, scope: Scope) -> None:
        check_list(
            state.raw, "Branches", path, self.report, empty="a Choice needs at least one branch"
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
            self.transitions.target(branch.next, "Next", branch.raw, branch_path, scope)
        self.transitions.target(state.default, "Default", state.raw, path, scope)

    def _map(self, state: MapState, path: str) -> None:
        check_map_concurrency(state, path, self.report)
        check_distributed(state, path, self.report)
        if state.distributed is not None:
            for key, template in (("ItemReader", state.distributed.item_reader),
                                  ("ItemConstructor", state.distributed.item_constructor),
                                  ("ItemBatcher", state.distributed.item_batcher),
                                  ("ResultWriter", state.distributed.result_writer)):
                if template is not None:
                    check_template(template, f"{path}.{key}", self.report,
                                   output_allowed=False,
                                   item_allowed=key == "ItemConstructor")
        if state.items_path is not None:
            check_expression(
                state.items_path, f"{path}.ItemsPath", self.report, output_allowed=False
            )
        if state.processor is not None:
            self._nested(state.processor, f"{path}.Processor", "Map Processor")
