"""Legacy flow text (already composed into a positioned YAML tree) -> frozen legacy AST.

One pass builds complete nodes (:mod:`deployer.fdl.legacy.ast`). Like the SpecVersion v1
parser, it reports only what stops a node from being built: a step, branch, mapping, choice or
retry/catch rule that is not a mapping (FDL004, the item is skipped); duplicate and non-scalar
keys are reported by the shared :class:`~deployer.fdl.syntax.fields.MappingReader`. Everything
else is the validator's job, from what ``raw`` keeps.

Field coercion follows the v1 rules (docs/fdl-semantics.md): text fields take any non-null
scalar as written, integers YAML integers, ``end`` booleans only. A step whose ``type`` is
missing or unknown is built as a :class:`PassStep` so names and jumps can still be checked. A
mapping ``source`` starting with ``$input``, ``$local`` or ``$context`` is a path; anything else
is a constant (documented in the dialect's own samples).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from deployer.fdl.legacy.ast import (
    ChoiceDefault,
    ChoiceOption,
    ChoiceStep,
    DataMapping,
    FailStep,
    ForeachStep,
    IterationMapping,
    LegacyCatch,
    LegacyFlow,
    LegacyRetry,
    MappingSource,
    ParallelStep,
    PassStep,
    Step,
    StepList,
    SucceedStep,
    TaskStep,
    WaitStep,
)
from deployer.fdl.legacy.paths import is_path_text
from deployer.fdl.syntax.diagnostics import join_path
from deployer.fdl.syntax.fields import (
    Fields,
    MappingReader,
    as_bool,
    as_int,
    as_strings,
    as_text,
    getter,
    raw_value,
)
from deployer.fdl.syntax.positions import Expr, Position, RawField
from deployer.fdl.syntax.yaml_tree import YNode

__all__ = ["LegacyBuilder", "step_path"]


class _Common(TypedDict):
    """The fields every step has, read once for any type."""

    name: str
    position: Position
    end: bool
    input_mappings: tuple[DataMapping, ...] | None
    output_mappings: tuple[DataMapping, ...] | None
    raw: Mapping[str, RawField]


def step_path(prefix: str, index: int, name: str) -> str:
    """``steps[3](GetJobStatus)`` under ``prefix`` (empty at the top)."""
    label = f"steps[{index}]({name})" if name else f"steps[{index}]"
    return f"{prefix}.{label}" if prefix else label


class LegacyBuilder:
    """Builds a :class:`LegacyFlow` from its document node."""

    def __init__(self, reader: MappingReader) -> None:
        self.reader = reader

    def flow(self, node: YNode) -> LegacyFlow:
        fields = self.reader.fields(node, "")
        get = getter(fields)
        return LegacyFlow(
            version=as_text(get("version")) or "",
            type=as_text(get("type")) or "",
            steps=self.step_list(get("steps"), "", node),
            position=node.position,
            input_mappings=self.mappings(get("inputMappings"), "inputMappings"),
            output_mappings=self.mappings(get("outputMappings"), "outputMappings"),
            raw=self.reader.raw(fields),
        )

    # -- lists and mappings --------------------------------------------------------------

    def step_list(self, node: YNode | None, prefix: str, owner: YNode) -> StepList:
        items = self.reader.mapping_items(node, join_path(prefix, "steps"), "step")
        steps = tuple(self.step(child, step_path(prefix, index, _name(child)))
                      for index, child in items)
        return StepList(steps, node.position if node is not None else owner.position)

    def mappings(self, node: YNode | None, path: str) -> tuple[DataMapping, ...] | None:
        if node is None or not node.is_seq:
            return None
        return tuple(self._mapping(child, f"{path}[{index}]")
                     for index, child in self.reader.mapping_items(node, path, "mapping"))

    def _mapping(self, node: YNode, path: str) -> DataMapping:
        fields = self.reader.fields(node, path)
        get = getter(fields)
        source = get("source")
        built = None
        if source is not None:
            if source.is_scalar and isinstance(source.value, str) and is_path_text(source.value):
                built = MappingSource(Expr(source.value, source.position), None,
                                      source.position)
            else:
                built = MappingSource(None, raw_value(source), source.position)
        return DataMapping(as_text(get("target")) or "", built, node.position,
                           self.reader.raw(fields))

    # -- steps ---------------------------------------------------------------------------

    def step(self, node: YNode, path: str) -> Step:
        fields = self.reader.fields(node, path)
        get = getter(fields)
        common: _Common = {
            "name": as_text(get("name")) or "",
            "position": node.position,
            "end": as_bool(get("end")),
            "input_mappings": self.mappings(get("inputMappings"), f"{path}.inputMappings"),
            "output_mappings": self.mappings(get("outputMappings"), f"{path}.outputMappings"),
            "raw": self.reader.raw(fields),
        }
        kind = as_text(get("type"))
        if kind == "task":
            return self._task(fields, path, common)
        if kind == "wait":
            return WaitStep(**common, duration=_duration(get("duration")),
                            timestamp=_timestamp(get("timestamp")))
        if kind == "choice":
            return self._choice(fields, path, common)
        if kind == "parallel":
            branches = get("branches")
            items = self.reader.mapping_items(branches, f"{path}.branches", "branch")
            return ParallelStep(**common, branches=tuple(
                self._branch(child, f"{path}.branches[{index}]") for index, child in items))
        if kind == "foreach":
            return ForeachStep(**common, iteration=self._iteration(get("iterationMapping"),
                                                                   path),
                               steps=self.step_list(get("steps"), path, node)
                               if get("steps") is not None else None)
        if kind == "succeed":
            return SucceedStep(**common)
        if kind == "fail":
            return FailStep(**common, error=as_text(get("error")) or "",
                            cause=as_text(get("cause")) or "")
        return PassStep(**common)

    def _branch(self, node: YNode, path: str) -> StepList:
        fields = self.reader.fields(node, path)
        built = self.step_list(getter(fields)("steps"), path, node)
        return StepList(built.steps, node.position, self.reader.raw(fields))

    def _task(self, fields: Fields, path: str, common: _Common) -> TaskStep:
        get = getter(fields)
        arn = get("resourceArn")
        params = get("serviceParams")
        return TaskStep(
            **common,
            resource_arn=as_text(arn) or "",
            ref=arn is not None and arn.tag == "!Ref",
            action=as_text(get("action")) or "",
            pattern=as_text(get("pattern")) or "requestResponse",
            timeout_seconds=as_int(get("timeoutSeconds")),
            service_params=raw_value(params) if params is not None else None,
            retry=tuple(self._retry(child, f"{path}.retry[{index}]") for index, child in
                        self.reader.mapping_items(get("retry"), f"{path}.retry", "retry rule")),
            catch=tuple(self._catch(child, f"{path}.catch[{index}]") for index, child in
                        self.reader.mapping_items(get("catch"), f"{path}.catch", "catch rule")),
            error_mappings=self.mappings(get("errorMappings"), f"{path}.errorMappings"),
        )

    def _retry(self, node: YNode, path: str) -> LegacyRetry:
        fields = self.reader.fields(node, path)
        get = getter(fields)
        attempts, interval = as_int(get("maxAttempts")), as_int(get("intervalSeconds"))
        longest = as_int(get("maxIntervalSeconds"))
        return LegacyRetry(
            as_strings(get("errors")), node.position,
            interval_seconds=1 if interval is None else interval,
            max_attempts=3 if attempts is None else attempts,
            multiplier=_number(get("multiplier"), 2.0),
            max_interval_seconds=86_400 if longest is None else longest,
            raw=self.reader.raw(fields),
        )

    def _catch(self, node: YNode, path: str) -> LegacyCatch:
        fields = self.reader.fields(node, path)
        get = getter(fields)
        return LegacyCatch(as_strings(get("errors")), as_text(get("goto")), node.position,
                           self.reader.raw(fields))

    def _choice(self, fields: Fields, path: str, common: _Common) -> ChoiceStep:
        get = getter(fields)
        options = []
        for index, child in self.reader.mapping_items(get("choices"), f"{path}.choices",
                                                      "choice"):
            option_path = f"{path}.choices[{index}]"
            option = self.reader.fields(child, option_path)
            read = getter(option)
            condition = read("condition")
            steps = read("steps")
            options.append(ChoiceOption(
                Expr(condition.text, condition.position)
                if condition is not None and condition.is_scalar
                and isinstance(condition.value, str) else None,
                self.step_list(steps, option_path, child) if steps is not None else None,
                as_text(read("goto")), child.position, self.reader.raw(option)))
        default = None
        node = get("default")
        if node is not None and node.is_map:
            default_fields = self.reader.fields(node, f"{path}.default")
            read = getter(default_fields)
            steps = read("steps")
            default = ChoiceDefault(
                self.step_list(steps, f"{path}.default", node) if steps is not None else None,
                as_text(read("goto")), node.position, self.reader.raw(default_fields))
        return ChoiceStep(**common, choices=tuple(options),
                          default=default)

    def _iteration(self, node: YNode | None, path: str) -> IterationMapping | None:
        if node is None or not node.is_map:
            return None
        fields = self.reader.fields(node, f"{path}.iterationMapping")
        get = getter(fields)
        collection = get("collection")
        return IterationMapping(
            Expr(collection.text, collection.position)
            if collection is not None and isinstance(collection.value, str) else None,
            as_text(get("item")) or "", as_text(get("index")), node.position,
            self.reader.raw(fields))


def _name(node: YNode) -> str:
    return as_text(next((v for k, _, v in node.entries if k == "name"), None)) or ""


def _number(node: YNode | None, default: float) -> float:
    if node is None or not node.is_scalar or isinstance(node.value, bool) \
            or not isinstance(node.value, (int, float)):
        return default
    return node.value


def _duration(node: YNode | None) -> int | Expr | None:
    if node is None or not node.is_scalar:
        return None
    if isinstance(node.value, str):
        return Expr(node.value, node.position)
    return as_int(node)


def _timestamp(node: YNode | None) -> str | Expr | None:
    text = as_text(node)
    if text is None or node is None:
        return None
    return Expr(text, node.position) if text.startswith("$") else text
