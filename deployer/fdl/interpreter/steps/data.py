"""How data moves through a legacy flow (docs/fdl-semantics.md, "The legacy dialect: data").

Every running steps list has a :class:`~deployer.fdl.interpreter.active.Frame`: the ``input`` of
its parent step (the flow's input at the top) and its ``local``, into which each step's output
merges, a later key overwriting an earlier one. A step's input is its ``inputMappings`` over the
frame (``$input``, ``$local``, ``$context``), or, without them, the frame's input and local
merged (local keys win). Its output is its ``outputMappings`` over its own input and its
``$local`` (a task's result, the list of a parallel's branch locals, ...), or, without them,
its ``$local`` (nothing for parallel and foreach). :class:`LegacyData` does this for the
lifecycle (:class:`~deployer.fdl.interpreter.states.base.StepData`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deployer.fdl.interpreter.active import ActiveState, Frame, ScopeRun
from deployer.fdl.interpreter.runtime import Ctx, Raw, StateFailure, task_token
from deployer.fdl.legacy.ast import DataMapping, LegacyFlow
from deployer.fdl.legacy.errors import (
    INVALID_LOCAL_CODE,
    RUNTIME_CODE,
    LegacyEvaluationError,
    PathSyntaxError,
)
from deployer.fdl.legacy.paths import MAPPING_ROOTS, Path, evaluate_path, parse_path
from deployer.fdl.syntax.positions import RawValue

__all__ = [
    "CompiledMappings",
    "CompiledParams",
    "LegacyData",
    "flow_closing",
    "flow_opening",
    "kind_of",
    "plain",
]


def plain(value: RawValue) -> Any:
    """A YAML value as plain JSON data (mappings as dicts, sequences as lists)."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [plain(item) for item in value]
    return value


def kind_of(value: Any) -> str:
    """``an object``, ``a list``, ``a string``... for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


@dataclass(frozen=True, slots=True)
class _Entry:
    target: str
    path: Path | None
    constant: Any
    error: str  # the path's syntax error ("" when it parsed)


@dataclass(frozen=True, slots=True)
class CompiledMappings:
    """A mapping list: ``build(roots)`` is the object each target gets its source's value in
    (a path over ``roots``, or the constant)."""

    where: str  # "inputMappings", "outputMappings", ...
    entries: tuple[_Entry, ...]

    @classmethod
    def of(cls, mappings: tuple[DataMapping, ...] | None, where: str) -> CompiledMappings | None:
        if mappings is None:
            return None
        entries = []
        for mapping in mappings:
            source = mapping.source
            path, error, constant = None, "", None
            if source is not None and source.path is not None:
                try:
                    path = parse_path(source.path.text, roots=MAPPING_ROOTS)
                except PathSyntaxError as exc:
                    error = str(exc)
            elif source is not None:
                constant = plain(source.constant)
            entries.append(_Entry(mapping.target, path, constant, error))
        return cls(where, tuple(entries))

    def build(self, roots: Mapping[str, Any]) -> dict[str, Any]:
        """The object the mappings make; ``StateFailure`` when a path does not parse."""
        built: dict[str, Any] = {}
        for entry in self.entries:
            if entry.error:
                raise StateFailure(RUNTIME_CODE, f"{self.where}: {entry.error}")
            built[entry.target] = evaluate_path(entry.path, roots) if entry.path is not None \
                else entry.constant
        return built


@dataclass(frozen=True, slots=True)
class CompiledParams:
    """``serviceParams``: strings that are paths (``$``, ``$.key``) read the step's input; the
    rest is literal, at any depth."""

    value: Any

    @classmethod
    def of(cls, raw: RawValue) -> CompiledParams:
        return cls(_compile_params(plain(raw)))

    def build(self, step_input: Any) -> Any:
        return _build_params(self.value, {"": step_input})


def _compile_params(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _compile_params(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_compile_params(item) for item in value]
    if isinstance(value, str) and value.startswith("$") and (
            len(value) == 1 or value[1] in ".["):
        try:
            return parse_path(value)
        except PathSyntaxError as exc:
            return LegacyEvaluationError(f"serviceParams: {exc}")
    return value


def _build_params(value: Any, roots: dict[str, Any]) -> Any:
    if isinstance(value, Path):
        return evaluate_path(value, roots)
    if isinstance(value, LegacyEvaluationError):
        raise StateFailure(value.code, value.message)
    if isinstance(value, dict):
        return {key: _build_params(item, roots) for key, item in value.items()}
    if isinstance(value, list):
        return [_build_params(item, roots) for item in value]
    return value


def _context(ctx: Ctx, name: str, token: str) -> dict[str, Any]:
    ex = ctx.ex
    return {"flow": {"name": ex.flow_name}, "execution": {"name": ex.name},
            "step": {"name": name}, "task": {"token": token}}


def merged_view(frame: Frame) -> dict[str, Any]:
    """A step's default input: the frame's input and local merged, local keys winning."""
    return {**frame.input, **frame.local}


@dataclass(frozen=True, slots=True)
class LegacyData:
    """A step's mappings, compiled: how it selects its input and output and hands its output
    on. ``outputs_default`` is False for parallel and foreach (no output without mappings);
    ``tokens`` for tasks (``$context.task.token`` is the token of the step's visit)."""

    name: str
    inputs: CompiledMappings | None
    outputs: CompiledMappings | None
    errors: CompiledMappings | None = None
    outputs_default: bool = True
    tokens: bool = False

    def _token(self, ctx: Ctx, entered: int) -> str:
        ex = ctx.ex
        return task_token(ex.flow_name, ex.name, entered) if self.tokens else ""

    def select_input(self, ctx: Ctx, run: ScopeRun, name: str, raw_input: Any,
                     entered: int) -> tuple[Any, Raw]:
        value = raw_input
        if self.inputs is not None and run.frame is not None:
            value = self.inputs.build({"input": run.frame.input, "local": run.frame.local,
                                       "context": _context(ctx, name, self._token(ctx, entered))})
        return value, ctx.sized(value, "input", name)

    def select_output(self, ctx: Ctx, run: ScopeRun, st: ActiveState, local: Any) -> Any:
        if self.outputs is not None:
            return self.outputs.build({
                "input": st.input, "local": local,
                "context": _context(ctx, st.name, self._token(ctx, st.entered_event))})
        if not self.outputs_default:
            return {}
        if not isinstance(local, dict):
            raise StateFailure(INVALID_LOCAL_CODE, f"the result of step {st.name!r} is "
                               f"{kind_of(local)}, not a JSON object; give the step "
                               "outputMappings to take what it needs from $local")
        return local

    def hand_on(self, ctx: Ctx, run: ScopeRun, output: Any, ends: bool) -> Any:
        runs = ctx.ex.runs
        current = runs[run.run_id]
        frame = current.frame
        if frame is None:  # pragma: no cover - a legacy list always has its frame
            raise StateFailure(RUNTIME_CODE, f"step {self.name!r} runs outside a steps list")
        local = {**frame.local, **output}
        runs[run.run_id] = current._replace(frame=Frame(frame.input, local))
        return local if ends else {**frame.input, **local}

    def caught(self, ctx: Ctx, run: ScopeRun, st: ActiveState, code: str, detail: str) -> Any:
        output: dict[str, Any] = {}
        if self.errors is not None:
            output = self.errors.build({"input": st.current_input,
                                        "local": {"error": code, "cause": detail},
                                        "context": _context(ctx, st.name, "")})
        return self.hand_on(ctx, run, output, False)


def flow_opening(flow: LegacyFlow) -> Any:
    """The opening of ``flow``: its input mappings over the execution input make the top
    list's input, which must be a JSON object (no input counts as ``{}``)."""
    inputs = CompiledMappings.of(flow.input_mappings, "the flow's inputMappings")

    def opening(ctx: Ctx, value: Any) -> tuple[Frame, Any]:
        given = {} if value is None else value
        if inputs is not None:
            given = inputs.build({"input": given, "local": {},
                                  "context": _context(ctx, "", "")})
        if not isinstance(given, dict):
            raise StateFailure(RUNTIME_CODE, f"the input of a legacy flow is a JSON object, "
                               f"got {kind_of(given)}")
        return Frame(given, {}), dict(given)

    return opening


def flow_closing(flow: LegacyFlow) -> Any:
    """The closing of ``flow``: its output mappings over its input and the top list's local
    make the execution output; without them, the local is."""
    outputs = CompiledMappings.of(flow.output_mappings, "the flow's outputMappings")

    def closing(ctx: Ctx, run: ScopeRun, local: Any) -> Any:
        if outputs is None or run.frame is None:
            return local
        return outputs.build({"input": run.frame.input, "local": local,
                              "context": _context(ctx, "", "")})

    return closing
