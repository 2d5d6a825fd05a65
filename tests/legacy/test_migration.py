"""`deploy flow migrate` is tested, not assumed: every legacy flow of the corpus and its
migration run on the same inputs and mocks and end in the same status with the same output;
the migration validates, keeps names and comments, and lists what did not carry over."""

from __future__ import annotations

from typing import Any

import pytest

from deployer.core.flow_mocks import load_mocks
from deployer.fdl import LegacyFlow, check_flow, read_flow
from deployer.fdl.interpreter.simulate import simulate
from deployer.fdl.legacy import walk_steps
from deployer.fdl.migration import MigratedFlow, migrate_legacy
from deployer.fdl.syntax.ast import walk_states
from tests.legacy.corpus import CASES, Case, flow_text, mocks_file


def migrated(name: str) -> tuple[LegacyFlow, MigratedFlow]:
    text = flow_text(name)
    flow = read_flow(text).flow
    assert isinstance(flow, LegacyFlow)
    return flow, migrate_legacy(flow, text, name="Migrated")


def outcome(flow: Any, case: Case) -> tuple[str, Any, str, str]:
    mocks = load_mocks(mocks_file(case.flow))
    ex = simulate(flow, mocks.answerer(case.case), input=case.input,
                  execution_name="equivalence").execution
    return ex.status.value, ex.output, ex.error_code, ex.error_detail


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_migration_ends_like_the_original(case: Case) -> None:
    flow, result = migrated(case.flow)
    check = check_flow(result.text, source="migrated.yaml")
    assert check.ok, [d.format() for d in check.errors]
    original = outcome(flow, case)
    assert original[0] == case.status
    assert outcome(check.flow, case) == original


@pytest.mark.parametrize("name", sorted({case.flow for case in CASES}))
def test_every_task_and_step_keeps_its_name(name: str) -> None:
    flow, result = migrated(name)
    check = check_flow(result.text)
    assert check.flow is not None and not isinstance(check.flow, LegacyFlow)
    v1_names = {state.name for _, state in walk_states(check.flow.scope)}
    assert {step.name for _, step in walk_steps(flow.steps)} <= v1_names


def test_comments_go_above_the_state_of_their_step() -> None:
    _, result = migrated("orders")
    lines = result.text.splitlines()
    assert lines[0].startswith("# Migrated from the legacy dialect")
    assert "# An order flow in the legacy dialect: flow mappings, $local accumulation, " \
           "constants, $context." in lines
    above = lines.index("  # the prices come back under $local.prices; the order stays in "
                        "$input")
    assert lines[above + 2] == "    Name: PriceOrder"
    discount = lines.index("    Name: ApplyDiscount")
    assert lines[discount - 2] == "  # name: reads what the two steps before it left in $local"


def test_what_does_not_carry_over_is_listed_with_its_line() -> None:
    _, approval = migrated("approval")
    assert [(n.line, n.path) for n in approval.notes] == [
        (8, "steps[1](Pause)"), (11, "steps[2](NotBefore)")]
    assert "a wait until a timestamp has no v1 counterpart" in approval.notes[1].message
    _, booking = migrated("booking")
    assert [(n.line, n.path) for n in booking.notes] == [(5, "steps[0](BookTrain)")]
    assert "function's own error type" in booking.notes[0].message
    _, integrations = migrated("integrations")
    assert [n.path for n in integrations.notes] == [
        "steps[0](RunChild)", "steps[1](Detect)", "steps[2](Announce)"]


@pytest.mark.parametrize(("text", "message"), [
    ("version: v1\ntype: flow\nsteps:\n  - type: foreach\n    name: F\n"
     "    iterationMapping: {collection: $.a, item: x}\n    steps:\n"
     "      - {type: pass, name: P, outputMappings: [{target: l, source: [1, 2]}]}\n"
     "    outputMappings:\n      - {target: all, source: '$local[*].l[*]'}\n",
     "reads every element ([*]) of a list of unknown length"),
    ("version: v1\ntype: flow\nsteps:\n  - {type: wait, name: W, duration: 600}\n",
     "a wait of 600 s is longer than v1 allows"),
    ("version: v1\ntype: flow\nsteps:\n  - type: foreach\n    name: F\n"
     "    iterationMapping: {collection: $.a, item: x, index: i}\n"
     "    steps: [{type: pass, name: P}]\n",
     "v1 Map iterations do not know their position"),
])
def test_non_mechanical_spots(text: str, message: str) -> None:
    flow = read_flow(text).flow
    assert isinstance(flow, LegacyFlow)
    result = migrate_legacy(flow, text, name="M")
    assert check_flow(result.text).ok
    assert any(message in note.message for note in result.notes), result.notes


def test_a_name_used_twice_gets_a_new_one_and_a_note() -> None:
    text = ("version: v1\ntype: flow\nsteps:\n  - type: parallel\n    name: P\n    branches:\n"
            "      - steps: [{type: pass, name: Same}]\n"
            "      - steps: [{type: pass, name: Same}]\n")
    flow = read_flow(text).flow
    assert isinstance(flow, LegacyFlow)
    result = migrate_legacy(flow, text, name="M")
    assert check_flow(result.text).ok
    assert "Name: Same (2)" in result.text
    assert [n.path for n in result.notes] == ["steps[0](P).branches[1].steps[0](Same)"]
