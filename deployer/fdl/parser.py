"""Flow definition text -> frozen AST (:mod:`deployer.fdl.ast`) plus document-level diagnostics.

One pass over the YAML node tree builds complete nodes. The parser reports only what stops a
node from being built or what YAML itself forbids: syntax errors (FDL001), duplicate keys
(FDL002), a document that is not a mapping (FDL003), a state/branch/rule that is not a mapping
(FDL004, the item is skipped), non-scalar keys (FDL005) and runaway nesting (FDL006). Everything
else (missing fields, wrong types, unknown keys, bad transitions) is the validator's job; the
parser keeps what was written in each node's ``raw`` so the validator can see it.

Field coercion (documented in docs/fdl-semantics.md): string fields (Name, Next, Action, Code,
...) take any non-null scalar as its text as written; integer fields take YAML integers only
(``Timeout`` also a string of digits); ``End`` takes booleans only. A value of the wrong type
leaves the field at its empty default. A state whose ``Type`` is missing or unknown is built as a
:class:`PassState` so names and transitions can still be checked; the validator reports the Type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from deployer.fdl import _yaml
from deployer.fdl._yaml import LoadError, YNode
from deployer.fdl.ast import (
    EXPRESSION_SUFFIX,
    ROOT_EXPRESSION_KEY,
    CatchRule,
    ChoiceBranch,
    ChoiceState,
    Expr,
    FailState,
    Flow,
    MapState,
    ParallelState,
    PassState,
    Position,
    RawField,
    RawValue,
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
from deployer.fdl.diagnostics import Code, Diagnostic

__all__ = ["ParseResult", "parse_flow", "state_path"]

Fields = dict[str, tuple[Position, YNode]]


@dataclass(frozen=True, slots=True)
class ParseResult:
    """The flow (None when the text is not a YAML mapping) and the parser's diagnostics."""

    flow: Flow | None
    diagnostics: tuple[Diagnostic, ...]


def parse_flow(text: str, *, source: str = "<flow>") -> ParseResult:
    """Parse a flow definition without validating it.

    Never raises on bad input: YAML errors become FDL001 diagnostics at the position ruamel.yaml
    reports, and ``flow`` is None. Pure function of ``text``; no I/O, no clock.
    """
    loaded = _yaml.load(text)
    if isinstance(loaded, LoadError):
        code = Code.TOO_DEEP if loaded.too_deep else Code.YAML_SYNTAX
        message = loaded.message if loaded.too_deep else f"invalid YAML: {loaded.message}"
        diagnostic = Diagnostic.at(code, message, loaded.position, "")
        return ParseResult(None, (diagnostic.with_source(source),))
    if loaded is None or not loaded.is_map:
        position = loaded.position if loaded is not None else Position(1, 1)
        found = "an empty document" if loaded is None else f"a YAML {_kind(loaded)}"
        diagnostic = Diagnostic.at(
            Code.NOT_A_DOCUMENT,
            f"a flow definition must be a YAML mapping, found {found}",
            position,
            "",
            hint="start with 'Type: StateMachine', 'SpecVersion: v1', 'StartAt' and 'States'",
        )
        return ParseResult(None, (diagnostic.with_source(source),))
    builder = _Builder()
    flow = builder.flow(loaded)
    return ParseResult(flow, tuple(d.with_source(source) for d in builder.finish()))


def state_path(prefix: str, index: int, name: str) -> str:
    """``States[3](GetJobStatus)`` under ``prefix`` (empty at top level)."""
    label = f"States[{index}]({name})" if name else f"States[{index}]"
    return f"{prefix}.{label}" if prefix else label


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _kind(node: YNode) -> str:
    if node.is_map:
        return "mapping"
    if node.is_seq:
        return "list"
    return "null" if node.value is None else f"scalar ({node.text!r})"


def raw_value(node: YNode) -> RawValue:
    """The plain frozen value of a node (mappings keep the first of duplicate keys)."""
    if node.is_map:
        values: dict[str, RawValue] = {}
        for key, _, child in node.entries:
            values.setdefault(key, raw_value(child))
        return MappingProxyType(values)
    if node.is_seq:
        return tuple(raw_value(child) for child in node.items)
    return node.value


def _text(node: YNode | None) -> str | None:
    """String field coercion: any non-null scalar, as written."""
    if node is None or not node.is_scalar or node.value is None:
        return None
    return node.text


def _int(node: YNode | None) -> int | None:
    if node is None or not node.is_scalar:
        return None
    value = node.value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _expr(node: YNode | None) -> Expr | None:
    if node is None or not node.is_scalar or not isinstance(node.value, str):
        return None
    return Expr(node.value, node.position)


class _Builder:
    def __init__(self) -> None:
        self._diagnostics: list[Diagnostic] = []
        self._seen: set[tuple[str, int, int]] = set()
        self._checked: set[int] = set()

    def finish(self) -> list[Diagnostic]:
        return sorted(self._diagnostics, key=lambda d: (d.line, d.column, d.code))

    def report(self, code: Code, message: str, position: Position, path: str) -> None:
        key = (code.value, position.line, position.column)
        if key not in self._seen:
            self._seen.add(key)
            self._diagnostics.append(Diagnostic.at(code, message, position, path))

    # -- mappings -------------------------------------------------------------------------

    def fields(self, node: YNode, path: str) -> Fields:
        """Keys of a mapping (first occurrence wins). The first visit of a mapping reports its
        duplicate and non-scalar keys and those of everything below it."""
        first_visit = id(node) not in self._checked
        self._checked.add(id(node))
        result: Fields = {}
        for key, position, child in node.entries:
            if key in result:
                if first_visit:
                    first = result[key][0]
                    self.report(
                        Code.DUPLICATE_KEY,
                        f"duplicate key '{key}' (first written at line {first.line})",
                        position,
                        _join(path, key),
                    )
                continue
            result[key] = (position, child)
            if first_visit:
                self.check_nested(child, _join(path, key))
        if first_visit:
            for position in node.bad_keys:
                self.report(Code.BAD_KEY, "mapping keys must be scalars", position, path)
        return result

    def check_nested(self, node: YNode, path: str) -> None:
        if node.is_map:
            self.fields(node, path)
        elif node.is_seq:
            is_states = path == "States" or path.endswith(".States")
            for index, child in enumerate(node.items):
                if is_states and child.is_map:
                    name = next((v for k, _, v in child.entries if k == "Name"), None)
                    prefix = path[: -len("States")].rstrip(".")
                    self.check_nested(child, state_path(prefix, index, _text(name) or ""))
                else:
                    self.check_nested(child, f"{path}[{index}]")

    @staticmethod
    def raw(fields: Fields) -> Mapping[str, RawField]:
        return MappingProxyType(
            {
                key: RawField(key, raw_value(child), position, child.position)
                for key, (position, child) in fields.items()
            }
        )

    def mapping_items(self, node: YNode | None, path: str, what: str) -> list[tuple[int, YNode]]:
        """Elements of a list that must be mappings; other elements are reported and skipped."""
        if node is None or not node.is_seq:
            return []
        result: list[tuple[int, YNode]] = []
        for index, child in enumerate(node.items):
            if child.is_map:
                result.append((index, child))
            else:
                self.report(
                    Code.EXPECTED_MAPPING,
                    f"each {what} must be a mapping, found {_kind(child)}",
                    child.position,
                    f"{path}[{index}]",
                )
        return result

    # -- flow and scopes ------------------------------------------------------------------

    def flow(self, node: YNode) -> Flow:
        fields = self.fields(node, "")
        get = _getter(fields)
        return Flow(
            name=_text(get("Name")) or "",
            spec_version=_text(get("SpecVersion")) or "",
            start_at=_text(get("StartAt")) or "",
            states=self.states(get("States"), ""),
            position=node.position,
            description=_text(get("Description")) or "",
            type=_text(get("Type")) or "",
            raw=self.raw(fields),
        )

    def scope(self, node: YNode, path: str) -> Scope:
        fields = self.fields(node, path)
        get = _getter(fields)
        return Scope(
            start_at=_text(get("StartAt")) or "",
            states=self.states(get("States"), path),
            position=node.position,
            raw=self.raw(fields),
        )

    def states(self, node: YNode | None, prefix: str) -> tuple[State, ...]:
        states: list[State] = []
        for index, child in self.mapping_items(node, _join(prefix, "States"), "state"):
            name_node = next((v for k, _, v in child.entries if k == "Name"), None)
            path = state_path(prefix, index, _text(name_node) or "")
            states.append(self.state(child, path))
        return tuple(states)

    # -- states ---------------------------------------------------------------------------

    def state(self, node: YNode, path: str) -> State:
        fields = self.fields(node, path)
        get = _getter(fields)
        common: dict[str, Any] = {
            "name": _text(get("Name")) or "",
            "position": node.position,
            "description": _text(get("Description")) or "",
            "input_constructor": self.template(get("InputConstructor"), path, "InputConstructor"),
            "output_constructor": self.template(
                get("OutputConstructor"), path, "OutputConstructor"
            ),
            "global_constructor": self.template(
                get("GlobalConstructor"), path, "GlobalConstructor"
            ),
            "next": _text(get("Next")),
            "end": _bool(get("End")),
            "raw": self.raw(fields),
        }
        build = _STATE_BUILDERS.get(_text(get("Type")) or "", _build_pass)
        return build(self, get, path, common)

    def template(self, node: YNode | None, path: str, key: str) -> Template | None:
        if node is None or not node.is_map:
            return None
        return self.template_map(node, _join(path, key))

    def template_map(self, node: YNode, path: str) -> Template:
        fields = self.fields(node, path)
        items = []
        for key, (position, child) in fields.items():
            is_expression = key == ROOT_EXPRESSION_KEY or key.endswith(EXPRESSION_SUFFIX)
            value = self.template_value(child, _join(path, key), is_expression)
            items.append(TemplateField(key, value, position, child.position))
        return Template(tuple(items), node.position)

    def template_value(self, node: YNode, path: str, is_expression: bool) -> TemplateValue:
        if node.is_map:
            return self.template_map(node, path)
        if node.is_seq:
            values = tuple(
                self.template_value(child, f"{path}[{index}]", False)
                for index, child in enumerate(node.items)
            )
            return TemplateList(values, node.position)
        if is_expression and isinstance(node.value, str):
            return Expr(node.value, node.position)
        value = node.value
        return value if isinstance(value, (bool, int, float, str)) else None

    def retry(self, node: YNode | None, path: str) -> tuple[RetryRule, ...]:
        rules = []
        for index, child in self.mapping_items(node, _join(path, "Retry"), "Retry rule"):
            fields = self.fields(child, f"{path}.Retry[{index}]")
            get = _getter(fields)
            rate = get("BackoffRate")
            rate_value = rate.value if rate is not None and rate.is_scalar else None
            numeric = isinstance(rate_value, (int, float)) and not isinstance(rate_value, bool)
            rules.append(
                RetryRule(
                    errors=_strings(get("Errors")),
                    position=child.position,
                    description=_text(get("Description")) or "",
                    max_attempts=_int(get("MaxAttempts")) or 0,
                    interval_seconds=_int(get("IntervalSeconds")) or 0,
                    backoff_rate=float(rate_value) if numeric else 1.0,  # type: ignore[arg-type]
                    max_backoff_seconds=_int(get("MaxBackoffSeconds")),
                    raw=self.raw(fields),
                )
            )
        return tuple(rules)

    def catch(self, node: YNode | None, path: str) -> tuple[CatchRule, ...]:
        rules = []
        for index, child in self.mapping_items(node, _join(path, "Catch"), "Catch rule"):
            rule_path = f"{path}.Catch[{index}]"
            fields = self.fields(child, rule_path)
            get = _getter(fields)
            rules.append(
                CatchRule(
                    errors=_strings(get("Errors")),
                    position=child.position,
                    next=_text(get("Next")),
                    description=_text(get("Description")) or "",
                    output_constructor=self.template(
                        get("OutputConstructor"), rule_path, "OutputConstructor"
                    ),
                    raw=self.raw(fields),
                )
            )
        return tuple(rules)


Getter = Callable[[str], "YNode | None"]
StateBuilder = Callable[[_Builder, Getter, str, dict[str, Any]], State]


def _getter(fields: Fields) -> Getter:
    def get(key: str) -> YNode | None:
        entry = fields.get(key)
        return entry[1] if entry is not None else None

    return get


def _bool(node: YNode | None) -> bool:
    return node is not None and node.is_scalar and node.value is True


def _strings(node: YNode | None) -> tuple[str, ...]:
    if node is None or not node.is_seq:
        return ()
    return tuple(child.value for child in node.items if isinstance(child.value, str))


def _build_pass(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return PassState(**common)


def _build_succeed(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return SucceedState(**common)


def _build_fail(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return FailState(**common, code=_text(get("Code")) or "", detail=_text(get("Detail")) or "")


def _build_task(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    mode_text = _text(get("TaskMode"))
    modes = {mode.value: mode for mode in TaskMode}
    timeout: int | Expr | None = _expr(get("Timeout.$"))
    if timeout is None:
        timeout = _int(get("Timeout"))
        literal = _text(get("Timeout"))
        if timeout is None and literal is not None and literal.strip().isdigit():
            timeout = int(literal.strip())
    return TaskState(
        **common,
        action=_text(get("Action")) or "",
        task_mode=modes.get(mode_text or "", TaskMode.REQUEST_COMPLETE),
        parameters=b.template(get("Parameters"), path, "Parameters"),
        timeout=timeout,
        retry=b.retry(get("Retry"), path),
        catch=b.catch(get("Catch"), path),
    )


def _build_wait(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    return WaitState(**common, seconds=_int(get("Seconds")), seconds_expr=_expr(get("Seconds.$")))


def _build_choice(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    branches = []
    for index, child in b.mapping_items(get("Branches"), f"{path}.Branches", "Choice branch"):
        fields = b.fields(child, f"{path}.Branches[{index}]")
        branch_get = _getter(fields)
        branches.append(
            ChoiceBranch(
                condition=_expr(branch_get("Condition")),
                next=_text(branch_get("Next")),
                position=child.position,
                raw=b.raw(fields),
            )
        )
    return ChoiceState(**common, branches=tuple(branches), default=_text(get("Default")))


def _build_parallel(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    branches = tuple(
        b.scope(child, f"{path}.Branches[{index}]")
        for index, child in b.mapping_items(get("Branches"), f"{path}.Branches", "branch")
    )
    return ParallelState(
        **common,
        branches=branches,
        retry=b.retry(get("Retry"), path),
        catch=b.catch(get("Catch"), path),
    )


def _build_map(b: _Builder, get: Getter, path: str, common: dict[str, Any]) -> State:
    processor_node = get("Processor")
    processor = None
    if processor_node is not None and processor_node.is_map:
        processor = b.scope(processor_node, f"{path}.Processor")
    concurrency = _int(get("MaxConcuccency"))
    if concurrency is None:
        concurrency = _int(get("MaxConcurrency"))
    return MapState(
        **common,
        items_path=_expr(get("ItemsPath")),
        processor=processor,
        max_concurrency=concurrency,
        retry=b.retry(get("Retry"), path),
        catch=b.catch(get("Catch"), path),
    )


_STATE_BUILDERS: dict[str, StateBuilder] = {
    "Task": _build_task,
    "Pass": _build_pass,
    "Wait": _build_wait,
    "Choice": _build_choice,
    "Succeed": _build_succeed,
    "Fail": _build_fail,
    "Parallel": _build_parallel,
    "Map": _build_map,
}
