"""CloudFlow's legacy flow dialect (``version: v1beta1|v1``, ``type: flow``, ``steps``).

CloudFlow runs flows written for Serverless Workflow beside SpecVersion v1 ones; this package
reads them (docs/fdl-semantics.md, "The legacy dialect", says what each construct means and
where that comes from)::

    YAML tree --LegacyBuilder--> LegacyFlow --validate_legacy_flow--> diagnostics
                  parser.py        ast.py        validator.py, checks.py, schema.py

plus the dialect's own small languages, evaluated by the interpreter's legacy steps
(:mod:`deployer.fdl.interpreter.steps`): paths (``$input.key``, ``$local[*].x``: paths.py) and
choice conditions (``$.status == "ready" && $.n > 1``: conditions.py); what a task calls
(resources.py) and the error names it raises (errors.py). :func:`is_legacy_document` tells the
dialects apart; :func:`deployer.fdl.check_flow` and :func:`deployer.fdl.read_flow` dispatch.
"""

from __future__ import annotations

from collections.abc import Iterable

from deployer.fdl.legacy.ast import *  # noqa: F403 (the AST is part of the package API)
from deployer.fdl.legacy.ast import LegacyFlow
from deployer.fdl.legacy.ast import __all__ as _ast_names
from deployer.fdl.legacy.parser import LegacyBuilder
from deployer.fdl.legacy.validator import validate_legacy_flow
from deployer.fdl.syntax.diagnostics import Collector, Diagnostic
from deployer.fdl.syntax.fields import MappingReader
from deployer.fdl.syntax.yaml_tree import YNode

__all__ = [
    *_ast_names,
    "build_legacy_flow",
    "is_legacy_document",
    "validate_legacy_flow",
]

#: Keys of the legacy document and of the SpecVersion v1 one: a document with some of the first
#: and none of the second is in the legacy dialect.
_LEGACY_KEYS = frozenset({"version", "type", "steps"})
_CURRENT_KEYS = frozenset({"Type", "SpecVersion", "StartAt", "States"})


def is_legacy_document(keys: Iterable[str]) -> bool:
    """Whether a document with these top-level ``keys`` is written in the legacy dialect."""
    present = set(keys)
    return bool(present & _LEGACY_KEYS) and not present & _CURRENT_KEYS


def build_legacy_flow(node: YNode) -> tuple[LegacyFlow, tuple[Diagnostic, ...]]:
    """Build the flow from its document mapping, with the document-level diagnostics
    (duplicate keys, items that are not mappings). Never raises."""
    diagnostics = Collector(once_per_place=True)
    flow = LegacyBuilder(MappingReader(diagnostics)).flow(node)
    return flow, diagnostics.sorted()
