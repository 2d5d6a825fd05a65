"""A flow compiled for the interpreter: one evaluator per state, built once.

``compile_flow(flow)`` walks the validated AST and builds, for every ``States`` list (the
flow, each Parallel branch, each Map processor), a :class:`CompiledScope` holding the
evaluator of each state (:mod:`.states`): expressions parsed and compiled, templates compiled,
``Next``/``End`` resolved. A flow in the legacy dialect compiles the same way, one evaluator per
step (:mod:`.steps`), a scope per steps list, with the flow's own mappings as its ``opening``
and ``closing``. A :class:`CompiledFlow` is immutable and holds no execution state, so one
serves every execution of the flow, in any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from deployer.fdl.interpreter.active import Frame, ScopeRun
from deployer.fdl.interpreter.states import EVALUATORS, StateEvaluator
from deployer.fdl.interpreter.states.base import Site
from deployer.fdl.legacy.ast import AnyFlow, LegacyFlow
from deployer.fdl.syntax.ast import Scope

if TYPE_CHECKING:
    from deployer.fdl.interpreter.runtime import Ctx

__all__ = ["CompiledFlow", "CompiledScope", "FlowLike", "Opening", "as_compiled",
           "compile_flow"]

#: A legacy flow's start: the execution input -> the top list's frame and its first step's
#: input (raises ``StateFailure``).
Opening = Callable[["Ctx", Any], tuple[Frame, Any]]
#: A legacy flow's end: (the top run with its frame, the list's local) -> the execution output.
Closing = Callable[["Ctx", ScopeRun, Any], Any]


@dataclass(frozen=True, slots=True)
class CompiledScope:
    """One ``States`` list: ``StartAt`` and the evaluator of each state by name."""

    start_at: str
    states: Mapping[str, StateEvaluator]


@dataclass(frozen=True, slots=True)
class CompiledFlow:
    """A flow ready to run: pass it to ``start``/``step``/``simulate``. ``opening`` and
    ``closing`` are a legacy flow's (None for SpecVersion v1)."""

    flow: AnyFlow
    root: CompiledScope
    opening: Opening | None = None
    closing: Closing | None = None

    @property
    def name(self) -> str:
        return self.flow.name

    def scope_at(self, path: tuple[tuple[str, int], ...]) -> CompiledScope:
        """The scope a run's ``path`` locates (KeyError for a path the flow has not)."""
        scope = self.root
        for name, index in path:
            scope = scope.states[name].child_scope(index)
        return scope

    def evaluator(self, run: ScopeRun, name: str) -> StateEvaluator:
        """The evaluator of state ``name`` in the scope ``run`` executes."""
        scope = self.root if not run.path else self.scope_at(run.path)
        return scope.states[name]


def compile_flow(flow: AnyFlow) -> CompiledFlow:
    """Compile a validated flow (either dialect) once for any number of executions. Never
    fails: an expression or path that does not parse fails its state when it runs, as it would
    if evaluated directly."""
    if isinstance(flow, LegacyFlow):
        from deployer.fdl.interpreter.steps import compile_legacy

        return compile_legacy(flow)
    return CompiledFlow(flow, _compile_scope(flow.scope, ()))


#: What ``start``/``step``/``simulate`` run: a compiled flow, or a flow to compile first.
FlowLike = CompiledFlow | AnyFlow


def as_compiled(flow: FlowLike) -> CompiledFlow:
    """``flow`` when it is compiled, else ``compile_flow(flow)``."""
    return flow if isinstance(flow, CompiledFlow) else compile_flow(flow)


def _compile_scope(scope: Scope, outer: tuple[str, ...]) -> CompiledScope:
    site = Site(outer, _compile_scope)
    states = {
        name: EVALUATORS[type(state)](state, site) for name, state in scope.by_name.items()
    }
    return CompiledScope(scope.start_at, MappingProxyType(states))
