"""Succeed: end the scope with the input as output."""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.interpreter.states.base import Site
from deployer.fdl.interpreter.states.pass_state import PassEvaluator
from deployer.fdl.syntax.ast import PassState, SucceedState

__all__ = ["SucceedEvaluator"]


@dataclass(frozen=True, slots=True)
class SucceedEvaluator(PassEvaluator):
    """A Pass that always ends its scope (a Parallel branch, a Map iteration or the execution),
    whatever its ``End`` says."""

    @classmethod
    def compile(cls, state: SucceedState | PassState, site: Site) -> SucceedEvaluator:
        return cls(**{**cls.lifecycle_of(state), "next": None})
