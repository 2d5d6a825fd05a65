"""``deploy flow migrate``: a legacy-dialect flow rewritten as SpecVersion v1.

Pipeline (pure: text in, text and notes out)::

    legacy text --read_flow--> LegacyFlow --Migrator (states.py; choice, parallel and foreach
        in compound.py; calls in integrations.py; paths and conditions in expressions.py)-->
        v1 states --comments.py: the legacy comments by step--> YAML text (ruamel.yaml), notes

How the data model carries over (docs/fdl-semantics.md, "Migrating the legacy dialect"): every
v1 state's data is the frame of its legacy steps list, ``{"input": <the parent step's input>,
"local": <the outputs merged so far>}``; a first Pass (``FlowInput``) makes it from the
execution input and the flow's ``inputMappings``; each state merges its step's output into
``local`` with ``jsonMerge`` in its ``OutputConstructor``; the states ending a scope give the
scope's result (the flow's ``outputMappings`` at the top). Fall-through becomes ``Next``; a
choice's inline steps join the choice's scope between the Choice and a closing Pass per arm; a
foreach becomes a Pass keeping its input in ``$Global`` and a Map whose iterations start from
it. Names are kept (the few added states are named after their step); comments above and
beside a step go above its state. What cannot carry over exactly is a :class:`MigrationNote`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from deployer.fdl.legacy.ast import LegacyFlow
from deployer.fdl.migration.comments import step_comments
from deployer.fdl.migration.states import MigrationNote, Migrator

__all__ = ["MigratedFlow", "MigrationNote", "migrate_legacy"]


@dataclass(frozen=True, slots=True)
class MigratedFlow:
    """The SpecVersion v1 text and the spots that did not carry over mechanically, in line
    order."""

    text: str
    notes: tuple[MigrationNote, ...]


def migrate_legacy(flow: LegacyFlow, source_text: str, *, name: str) -> MigratedFlow:
    """Rewrite a valid legacy flow (parsed from ``source_text``) as SpecVersion v1 named
    ``name``. Pure; the caller validates the result."""
    migrator = Migrator(flow, name)
    start, states = migrator.states()
    comments = step_comments(flow, source_text)
    by_state = {migrator.state_of[key]: text for key, text in comments.by_step.items()
                if key in migrator.state_of}
    document = CommentedMap()
    document["Type"] = "StateMachine"
    document["Name"] = name
    document["SpecVersion"] = "v1"
    document["StartAt"] = start
    document["States"] = _states(states, by_state, 2)
    header = ["Migrated from the legacy dialect (version/type: flow/steps) by "
              "`deploy flow migrate`."]
    if comments.header:
        header += ["", *comments.header]
    document.yaml_set_start_comment("\n".join(header))
    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump(document, out)
    notes = sorted(migrator.notes, key=lambda n: (n.line, n.column, n.path))
    return MigratedFlow(out.getvalue(), tuple(notes))


def _states(states: list[dict[str, Any]], comments: dict[str, list[str]],
            dash: int) -> CommentedSeq:
    """A ``States`` list whose items' dashes sit at column ``dash``, each state preceded by the
    comments of the step it came from."""
    seq = CommentedSeq()
    for index, state in enumerate(states):
        seq.append(_map(state, comments, dash + 2))
        lines = comments.get(str(state.get("Name")))
        if lines:
            seq.yaml_set_comment_before_after_key(index, before="\n".join(lines), indent=dash)
    return seq


def _map(value: dict[str, Any], comments: dict[str, list[str]], column: int) -> CommentedMap:
    built = CommentedMap()
    for key, item in value.items():
        built[key] = _value(key, item, comments, column + 2)
    return built


def _value(key: str, item: Any, comments: dict[str, list[str]], column: int) -> Any:
    """``item`` under ``key``, whose nested keys (or list dashes) sit at ``column``."""
    if isinstance(item, dict):
        if key in ("Processor",) or (key.isdigit() and "States" in item):
            return _scope(item, comments, column)
        return _map(item, comments, column)
    if isinstance(item, list):
        if key == "States":
            return _states(item, comments, column)
        if key == "Branches" and item and isinstance(item[0], dict) and "States" in item[0]:
            seq = CommentedSeq()
            for branch in item:
                seq.append(_scope(branch, comments, column + 2))
            return seq
        seq = CommentedSeq()
        for element in item:
            seq.append(_value("", element, comments, column + 2))
        return seq
    return item


def _scope(value: dict[str, Any], comments: dict[str, list[str]], column: int) -> CommentedMap:
    built = CommentedMap()
    for key, item in value.items():
        built[key] = _states(item, comments, column + 2) if key == "States" \
            else _value(key, item, comments, column + 2)
    return built
