"""Flow definition text -> frozen AST (:mod:`deployer.fdl.syntax.ast`) and document diagnostics.

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

Modules: ``yaml_tree`` composes the text into positioned nodes, this module builds the document
and its scopes, ``state_builder`` the states (with their templates and rules) and ``fields``
reads mappings and coerces field values.
"""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.syntax import yaml_tree
from deployer.fdl.syntax.ast import Flow, Position, Scope, State
from deployer.fdl.syntax.diagnostics import Code, Collector, Diagnostic, state_path
from deployer.fdl.syntax.fields import MappingReader, as_text, describe_node, getter
from deployer.fdl.syntax.state_builder import StateBuilder, literal_timeout
from deployer.fdl.syntax.yaml_tree import LoadError, YNode

__all__ = ["ParseResult", "build_state_machine", "load_document", "parse_flow", "state_path"]

_HINT = "start with 'Type: StateMachine', 'SpecVersion: v1', 'StartAt' and 'States'"


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
    loaded = load_document(text, source=source)
    if isinstance(loaded, tuple):
        return ParseResult(None, loaded)
    return build_state_machine(loaded, source=source)


def load_document(text: str, *, source: str = "<flow>") -> YNode | tuple[Diagnostic, ...]:
    """The document's mapping node, or the one diagnostic saying why there is none (FDL001
    invalid YAML, FDL006 runaway nesting, FDL003 not a mapping). Never raises."""
    loaded = yaml_tree.load(text)
    if isinstance(loaded, LoadError):
        code = Code.TOO_DEEP if loaded.too_deep else Code.YAML_SYNTAX
        message = loaded.message if loaded.too_deep else f"invalid YAML: {loaded.message}"
        diagnostic = Diagnostic.at(code, message, loaded.position, "")
        return (diagnostic.with_source(source),)
    if loaded is None or not loaded.is_map:
        position = loaded.position if loaded is not None else Position(1, 1)
        found = "an empty document" if loaded is None else f"a YAML {describe_node(loaded)}"
        message = f"a flow definition must be a YAML mapping, found {found}"
        diagnostic = Diagnostic.at(Code.NOT_A_DOCUMENT, message, position, "", hint=_HINT)
        return (diagnostic.with_source(source),)
    return loaded


def build_state_machine(node: YNode, *, source: str = "<flow>") -> ParseResult:
    """The SpecVersion v1 flow of a document mapping (:func:`load_document`), with the
    document-level diagnostics. Never raises."""
    diagnostics = Collector(once_per_place=True)
    flow = _DocumentBuilder(MappingReader(diagnostics)).flow(node)
    return ParseResult(flow, tuple(d.with_source(source) for d in diagnostics.sorted()))


class _DocumentBuilder:
    """Builds the flow and its scopes; states are left to a :class:`StateBuilder`."""

    def __init__(self, reader: MappingReader) -> None:
        self.reader = reader
        self.states = StateBuilder(reader, self.scope)

    def flow(self, node: YNode) -> Flow:
        fields = self.reader.fields(node, "")
        get = getter(fields)
        return Flow(
            name=as_text(get("Name")) or "",
            spec_version=as_text(get("SpecVersion")) or "",
            start_at=as_text(get("StartAt")) or "",
            states=self.state_list(get("States"), ""),
            position=node.position,
            description=as_text(get("Description")) or "",
            type=as_text(get("Type")) or "",
            timeout=literal_timeout(get),
            raw=self.reader.raw(fields),
        )

    def scope(self, node: YNode, path: str) -> Scope:
        """A Parallel branch or Map processor: ``StartAt`` and ``States``."""
        fields = self.reader.fields(node, path)
        get = getter(fields)
        return Scope(
            start_at=as_text(get("StartAt")) or "",
            states=self.state_list(get("States"), path),
            position=node.position,
            raw=self.reader.raw(fields),
        )

    def state_list(self, node: YNode | None, prefix: str) -> tuple[State, ...]:
        return tuple(
            self.states.state(child, path) for path, child in self.reader.states(node, prefix)
        )
