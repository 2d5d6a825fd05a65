"""Building state nodes: the fields every state has, one builder per state type, templates and
Retry/Catch rules.

A state whose ``Type`` is missing or unknown is built as a :class:`PassState` so names and
transitions can still be checked (the validator reports the Type). Parallel branches and Map
processors are scopes: :class:`StateBuilder` calls back into the document builder for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.fdl.syntax.ast import (
    CatchRule,
    ChoiceBranch,
    ChoiceState,
    DistributedMap,
    Expr,
    FailState,
    MapState,
    ParallelState,
    PassState,
    RetryRule,
    Scope,
    State,
    SucceedState,
    TaskMode,
    TaskState,
    Template,
    TemplateField,
    TemplateList,
    TemplateValue,
    WaitState,
)
from deployer.fdl.syntax.diagnostics import join_path
from deployer.fdl.syntax.fields import (
    Getter,
    MappingReader,
    as_bool,
    as_expr,
    as_int,
    as_strings,
    as_text,
    getter,
)
from deployer.fdl.syntax.template_nodes import is_expression_key
from deployer.fdl.syntax.yaml_tree import YNode

__all__ = ["ScopeBuilder", "StateBuilder", "literal_timeout"]

#: Builds the scope written at a YAML mapping (a Parallel branch, a Map processor) at a path.
ScopeBuilder = Callable[[YNode, str], Scope]
_CONSTRUCTORS = {
    "InputConstructor": "input_constructor",
    "OutputConstructor": "output_constructor",
    "GlobalConstructor": "global_constructor",
}


class StateBuilder:
    """Builds complete state nodes (with their templates and rules) from YAML mappings."""

    def __init__(self, reader: MappingReader, scope: ScopeBuilder) -> None:
        self.reader = reader
        self.scope = scope

    def state(self, node: YNode, path: str) -> State:
        """The state written at ``node``; its type picks the builder (Pass when unknown)."""
        fields = self.reader.fields(node, path)
        get = getter(fields)
        common: dict[str, Any] = {
            "name": as_text(get("Name")) or "",
            "position": node.position,
            "description": as_text(get("Description")) or "",
            "next": as_text(get("Next")),
            "end": as_bool(get("End")),
            "raw": self.reader.raw(fields),
        }
        for key, attribute in _CONSTRUCTORS.items():
            common[attribute] = self.template(get(key), path, key)
        build = _STATE_BUILDERS.get(as_text(get("Type")) or "", _build_pass)
        return build(self, get, path, common)

    # -- templates ------------------------------------------------------------------------

    def template(self, node: YNode | None, path: str, key: str) -> Template | None:
        """The template under ``key`` (None unless the value is a mapping)."""
        if node is None or not node.is_map:
            return None
        return self._template_map(node, join_path(path, key))

    def _template_map(self, node: YNode, path: str) -> Template:
        items = []
        for key, (position, child) in self.reader.fields(node, path).items():
            value = self._template_value(child, join_path(path, key), is_expression_key(key))
            items.append(TemplateField(key, value, position, child.position))
        return Template(tuple(items), node.position)

    def _template_value(self, node: YNode, path: str, is_expression: bool) -> TemplateValue:
        if node.is_map:
            return self._template_map(node, path)
        if node.is_seq:
            values = tuple(
                self._template_value(child, f"{path}[{index}]", False)
                for index, child in enumerate(node.items)
            )
            return TemplateList(values, node.position)
        if is_expression and isinstance(node.value, str):
            return Expr(node.value, node.position)
        value = node.value
        return value if isinstance(value, (bool, int, float, str)) else None

    # -- error handling -------------------------------------------------------------------

    def retry(self, node: YNode | None, path: str) -> tuple[RetryRule, ...]:
        """The ``Retry`` rules of the state at ``path``."""
        rules = []
        for index, child in self.reader.mapping_items(node, join_path(path, "Retry"), "Retry rule"):
            fields = self.reader.fields(child, f"{path}.Retry[{index}]")
            get = getter(fields)
            rate = get("BackoffRate")
            rate_value = rate.value if rate is not None and rate.is_scalar else None
            numeric = isinstance(rate_value, (int, float)) and not isinstance(rate_value, bool)
            rules.append(
                RetryRule(
                    errors=as_strings(get("Errors")),
                    position=child.position,
                    description=as_text(get("Description")) or "",
                    max_attempts=as_int(get("MaxAttempts")) or 0,
                    interval_seconds=as_int(get("IntervalSeconds")) or 0,
                    backoff_rate=float(rate_value) if numeric else 1.0,  # type: ignore[arg-type]
                    max_backoff_seconds=as_int(get("MaxBackoffSeconds")),
                    raw=self.reader.raw(fields),
                )
            )
        return tuple(rules)

    def catch(self, node: YNode | None, path: str) -> tuple[CatchRule, ...]:
        """The ``Catch`` rules of the state at ``path``."""
        rules = []
        for index, child in self.reader.mapping_items(node, join_path(path, "Catch"), "Catch rule"):
            rule_path = f"{path}.Catch[{index}]"
            fields = self.reader.fields(child, rule_path)
            get = getter(fields)
            rules.append(
                CatchRule(
                    errors=as_strings(get("Errors")),
                    position=child.position,
                    next=as_text(get("Next")),
                    description=as_text(get("Description")) or "",
                    output_constructor=self.template(
                        get("OutputConstructor"), rule_path, "OutputConstructor"
                    ),
                    raw=self.reader.raw(fields),
                )
            )
        return tuple(rules)


TypeBuilder = Callable[[StateBuilder, Getter, str, dict[str, Any]], State]


def _build_pass(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return PassState(**common)


def _build_succeed(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return SucceedState(**common)


def _build_fail(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    code, detail = as_text(get("Code")) or "", as_text(get("Detail")) or ""
    return FailState(**common, code=code, detail=detail)


def _timeout(get: Getter) -> int | Expr | None:
    """``Timeout.$`` as an expression, else ``Timeout`` as an integer or a string of digits."""
    expression = as_expr(get("Timeout.$"))
    if expression is not None:
        return expression
    return literal_timeout(get)


def literal_timeout(get: Getter) -> int | None:
    """``Timeout`` as an integer or a string of digits (a Task's, or the flow's)."""
    timeout = as_int(get("Timeout"))
    literal = as_text(get("Timeout"))
    if timeout is None and literal is not None and literal.isascii() and literal.strip().isdigit():
        timeout = int(literal.strip())
    return timeout


_TASK_MODES = {mode.value: mode for mode in TaskMode}


def _build_task(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return TaskState(
        **common,
        action=as_text(get("Action")) or "",
        task_mode=_TASK_MODES.get(as_text(get("TaskMode")) or "", TaskMode.REQUEST_COMPLETE),
        parameters=b.template(get("Parameters"), path, "Parameters"),
        timeout=_timeout(get),
        retry=b.retry(get("Retry"), path),
        catch=b.catch(get("Catch"), path),
    )


def _build_wait(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    seconds, seconds_expr = as_int(get("Seconds")), as_expr(get("Seconds.$"))
    return WaitState(**common, seconds=seconds, seconds_expr=seconds_expr)


def _build_choice(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    branches = []
    items = b.reader.mapping_items(get("Branches"), f"{path}.Branches", "Choice branch")
    for index, child in items:
        fields = b.reader.fields(child, f"{path}.Branches[{index}]")
        branch_get = getter(fields)
        branches.append(
            ChoiceBranch(
                condition=as_expr(branch_get("Condition")),
                next=as_text(branch_get("Next")),
                position=child.position,
                raw=b.reader.raw(fields),
            )
        )
    return ChoiceState(**common, branches=tuple(branches), default=as_text(get("Default")))


def _build_parallel(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    branches = tuple(
        b.scope(child, f"{path}.Branches[{index}]")
        for index, child in b.reader.mapping_items(get("Branches"), f"{path}.Branches", "branch")
    )
    return ParallelState(
        **common,
        branches=branches,
        retry=b.retry(get("Retry"), path),
        catch=b.catch(get("Catch"), path),
    )


def _build_map(b: StateBuilder, get: Getter, path: str, common: dict[str, Any]) -> State:
    processor_node = get("Processor")
    processor = None
    if processor_node is not None and processor_node.is_map:
        processor = b.scope(processor_node, f"{path}.Processor")
    concurrency = as_int(get("MaxConcuccency"))
    if concurrency is None:
        concurrency = as_int(get("MaxConcurrency"))
    return MapState(
        **common,
        items_path=as_expr(get("ItemsPath")),
        processor=processor,
        max_concurrency=concurrency,
        retry=b.retry(get("Retry"), path),
        catch=b.catch(get("Catch"), path),
        distributed=_distributed(b, get, path),
    )


def _number(node: YNode | None) -> float | None:
    value = node.value if node is not None and node.is_scalar else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _distributed(b: StateBuilder, get: Getter, path: str) -> DistributedMap | None:
    """The distributed mode's fields, when ``ProcessorConfig`` names an execution mode."""
    config = get("ProcessorConfig")
    mode = None
    if config is not None and config.is_map:
        mode = as_text(next((v for k, _, v in config.entries if k == "ExecutionMode"), None))
    if mode is None:
        return None
    percentage = get("ToleratedFailurePercentage")
    return DistributedMap(
        execution_mode=mode,
        item_reader=b.template(get("ItemReader"), path, "ItemReader"),
        item_constructor=b.template(get("ItemConstructor"), path, "ItemConstructor"),
        item_batcher=b.template(get("ItemBatcher"), path, "ItemBatcher"),
        result_writer=b.template(get("ResultWriter"), path, "ResultWriter"),
        max_items=as_int(get("MaxItems")),
        tolerated_percentage=_number(percentage),
        tolerated_count=as_int(get("ToleratedFailureCount")),
    )


_STATE_BUILDERS: dict[str, TypeBuilder] = {
    "Task": _build_task,
    "Pass": _build_pass,
    "Wait": _build_wait,
    "Choice": _build_choice,
    "Succeed": _build_succeed,
    "Fail": _build_fail,
    "Parallel": _build_parallel,
    "Map": _build_map,
}
