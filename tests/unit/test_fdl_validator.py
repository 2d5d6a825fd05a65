"""Validator: valid reference flows are clean; each broken flow gets the exact diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from deployer.fdl import Severity, check_flow

VALID = sorted((Path(__file__).parent.parent / "fixtures" / "flows" / "valid").glob("*.yaml"))

# Every case below is the header plus a States list; the first state starts at line 6 and its
# keys at column 5 ("  - Type: ..." / "    Name: ...").
HEADER = "Type: StateMachine\nName: t\nSpecVersion: v1\nStartAt: A\nStates:\n"


def flow(states: str, header: str = HEADER) -> str:
    return header + states.strip("\n") + "\n"


PASS_B = """
  - Type: Pass
    Name: B
    End: true
"""
FC = "    Action: FC:InvokeFunction\n"


def task(params: str, extra: str = "") -> str:
    return flow(f"""
  - Type: Task
    Name: A
{FC}    Parameters:
{params}{extra}    End: true
""")


def branches(count: int) -> str:
    one = "      - StartAt: X{i}\n        States:\n"
    one += "          - {{Type: Pass, Name: X{i}, End: true}}\n"
    return "".join(one.format(i=i) for i in range(count))


# (id, text, code, line, column, path[, execution mode])
CASES = [
    (
        "misspelled-field",
        flow("""
  - Type: Pass
    Name: A
    Nxt: B
    End: true
"""),
        "FDL103",
        8,
        5,
        "States[0](A).Nxt",
    ),
    (
        "seconds-not-int",
        flow("""
  - Type: Wait
    Name: A
    Seconds: "ten"
    End: true
"""),
        "FDL102",
        8,
        14,
        "States[0](A).Seconds",
    ),
    (
        "end-not-bool",
        flow("""
  - Type: Pass
    Name: A
    End: "yes"
"""),
        "FDL102",
        8,
        10,
        "States[0](A).End",
    ),
    (
        "parallel-branches-not-list",
        flow("""
  - Type: Parallel
    Name: A
    Branches: foo
    End: true
"""),
        "FDL102",
        8,
        15,
        "States[0](A).Branches",
    ),
    (
        "next-and-end",
        flow(
            """
  - Type: Pass
    Name: A
    Next: B
    End: true
"""
            + PASS_B
        ),
        "FDL201",
        8,
        5,
        "States[0](A).Next",
    ),
    (
        "no-transition",
        flow("""
  - Type: Pass
    Name: A
"""),
        "FDL202",
        6,
        5,
        "States[0](A)",
    ),
    (
        "end-false-no-next",
        flow("""
  - Type: Pass
    Name: A
    End: false
"""),
        "FDL202",
        8,
        10,
        "States[0](A).End",
    ),
    (
        "next-unknown",
        flow(
            """
  - Type: Pass
    Name: A
    Next: Bee
"""
            + PASS_B
        ),
        "FDL203",
        8,
        11,
        "States[0](A).Next",
    ),
    (
        "choice-without-default",
        flow(
            """
  - Type: Choice
    Name: A
    Branches:
      - Condition: $Input.x == 1
        Next: B
"""
            + PASS_B
        ),
        "FDL101",
        6,
        5,
        "States[0](A)",
    ),
    (
        "choice-with-next",
        flow(
            """
  - Type: Choice
    Name: A
    Next: B
    Branches:
      - Condition: $Input.x == 1
        Next: B
    Default: B
"""
            + PASS_B
        ),
        "FDL104",
        8,
        5,
        "States[0](A).Next",
    ),
    (
        "duplicate-name-in-scope",
        flow("""
  - Type: Pass
    Name: A
    End: true
  - Type: Pass
    Name: A
    End: true
"""),
        "FDL204",
        10,
        11,
        "States[1](A).Name",
    ),
    (
        "duplicate-name-across-scopes",
        flow("""
  - Type: Parallel
    Name: A
    End: true
    Branches:
      - StartAt: A
        States:
          - Type: Pass
            Name: A
            End: true
"""),
        "FDL205",
        13,
        19,
        "States[0](A).Branches[0].States[0](A).Name",
    ),
    (
        "unreachable",
        flow(
            """
  - Type: Pass
    Name: A
    End: true
"""
            + PASS_B
        ),
        "FDL206",
        10,
        5,
        "States[1](B)",
    ),
    (
        "condition-syntax",
        flow(
            """
  - Type: Choice
    Name: A
    Branches:
      - Condition: $Input.x ==
        Next: B
    Default: B
"""
            + PASS_B
        ),
        "FDL301",
        9,
        20,
        "States[0](A).Branches[0].Condition",
    ),
    (
        "expression-key-not-string",
        flow("""
  - Type: Pass
    Name: A
    InputConstructor:
      n.$: 3
    End: true
"""),
        "FDL302",
        9,
        12,
        "States[0](A).InputConstructor.n.$",
    ),
    (
        "output-in-input-constructor",
        flow("""
  - Type: Pass
    Name: A
    InputConstructor:
      n.$: $Output.Body
    End: true
"""),
        "FDL303",
        9,
        12,
        "States[0](A).InputConstructor.n.$",
    ),
    (
        "root-key-with-others",
        flow("""
  - Type: Pass
    Name: A
    OutputConstructor:
      $: $Input
      extra: 1
    End: true
"""),
        "FDL304",
        9,
        7,
        "States[0](A).OutputConstructor.$",
    ),
    (
        "literal-and-expression-same-key",
        flow("""
  - Type: Pass
    Name: A
    OutputConstructor:
      n: 1
      n.$: $Input.n
    End: true
"""),
        "FDL107",
        10,
        7,
        "States[0](A).OutputConstructor.n.$",
    ),
    (
        "unknown-variable",
        flow("""
  - Type: Pass
    Name: A
    OutputConstructor:
      n.$: $input.name
    End: true
"""),
        "FDL305",
        9,
        12,
        "States[0](A).OutputConstructor.n.$",
    ),
    (
        "too-many-branches",
        flow(f"""
  - Type: Parallel
    Name: A
    End: true
    Branches:
{branches(51)}"""),
        "FDL401",
        10,
        7,
        "States[0](A).Branches",
    ),
    (
        "wait-over-300",
        flow("""
  - Type: Wait
    Name: A
    Seconds: 301
    End: true
"""),
        "FDL402",
        8,
        14,
        "States[0](A).Seconds",
    ),
    (
        "wait-express-over-20",
        flow("""
  - Type: Wait
    Name: A
    Seconds: 21
    End: true
"""),
        "FDL402",
        8,
        14,
        "States[0](A).Seconds",
        "Express",
    ),
    (
        "timeout-too-long",
        task("      resourceArn: arn\n      invocationType: Sync\n", "    Timeout: 604801\n"),
        "FDL403",
        12,
        14,
        "States[0](A).Timeout",
    ),
    (
        "timeout-not-number",
        task("      resourceArn: arn\n      invocationType: Sync\n", "    Timeout: soon\n"),
        "FDL102",
        12,
        14,
        "States[0](A).Timeout",
    ),
    (
        "retry-interval",
        task(
            "      resourceArn: arn\n      invocationType: Sync\n",
            """\
    Retry:
      - Errors: [FnF.ALL]
        MaxAttempts: 1
        IntervalSeconds: 86401
""",
        ),
        "FDL404",
        15,
        26,
        "States[0](A).Retry[0].IntervalSeconds",
    ),
    (
        "retry-negative-attempts",
        task(
            "      resourceArn: arn\n      invocationType: Sync\n",
            """\
    Retry:
      - Errors: [FnF.ALL]
        MaxAttempts: -1
        IntervalSeconds: 1
""",
        ),
        "FDL405",
        14,
        22,
        "States[0](A).Retry[0].MaxAttempts",
    ),
    (
        "retry-backoff-below-one",
        task(
            "      resourceArn: arn\n      invocationType: Sync\n",
            """\
    Retry:
      - Errors: [FnF.ALL]
        MaxAttempts: 1
        IntervalSeconds: 1
        BackoffRate: 0.5
""",
        ),
        "FDL406",
        16,
        22,
        "States[0](A).Retry[0].BackoffRate",
    ),
    (
        "retry-empty-errors",
        task(
            "      resourceArn: arn\n      invocationType: Sync\n",
            """\
    Retry:
      - Errors: []
        MaxAttempts: 1
        IntervalSeconds: 1
""",
        ),
        "FDL108",
        13,
        17,
        "States[0](A).Retry[0].Errors",
    ),
    (
        "retry-error-not-string",
        task(
            "      resourceArn: arn\n      invocationType: Sync\n",
            """\
    Retry:
      - Errors: [{a: 1}]
        MaxAttempts: 1
        IntervalSeconds: 1
""",
        ),
        "FDL102",
        13,
        17,
        "States[0](A).Retry[0].Errors[0]",
    ),
    (
        "catch-without-next",
        task(
            "      resourceArn: arn\n      invocationType: Sync\n",
            """\
    Catch:
      - Errors: [FnF.ALL]
""",
        ),
        "FDL101",
        13,
        9,
        "States[0](A).Catch[0]",
    ),
    (
        "retry-on-pass",
        flow("""
  - Type: Pass
    Name: A
    Retry: []
    End: true
"""),
        "FDL104",
        8,
        5,
        "States[0](A).Retry",
    ),
    (
        "map-concurrency-zero",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Input.xs
    MaxConcurrency: 0
    Processor:
      StartAt: P
      States: [{Type: Pass, Name: P, End: true}]
    End: true
"""),
        "FDL407",
        9,
        21,
        "States[0](A).MaxConcurrency",
    ),
    (
        "map-both-spellings",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Input.xs
    MaxConcuccency: 2
    MaxConcurrency: 2
    Processor:
      StartAt: P
      States: [{Type: Pass, Name: P, End: true}]
    End: true
"""),
        "FDL107",
        10,
        5,
        "States[0](A).MaxConcurrency",
    ),
    (
        "map-distributed-field-without-mode",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Input.xs
    MaxItems: 3
    Processor:
      StartAt: P
      States: [{Type: Pass, Name: P, End: true}]
    End: true
"""),
        "FDL101",
        9,
        5,
        "States[0](A).MaxItems",
    ),
    (
        "map-distributed-unknown-mode",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Input.xs
    ProcessorConfig: {ExecutionMode: Fast}
    Processor:
      StartAt: P
      States: [{Type: Pass, Name: P, End: true}]
    End: true
"""),
        "FDL106",
        9,
        22,
        "States[0](A).ProcessorConfig.ExecutionMode",
    ),
    (
        "map-without-processor",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Input.xs
    End: true
"""),
        "FDL101",
        6,
        5,
        "States[0](A)",
    ),
    (
        "map-items-path-reads-output",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Output.Body.xs
    Processor:
      StartAt: P
      States: [{Type: Pass, Name: P, End: true}]
    End: true
"""),
        "FDL303",
        8,
        16,
        "States[0](A).ItemsPath",
    ),
    (
        "wait-timestamp",
        flow("""
  - Type: Wait
    Name: A
    Timestamp: "2030-01-01T00:00:00Z"
    End: true
"""),
        "FDL105",
        8,
        5,
        "States[0](A).Timestamp",
    ),
    (
        "wait-without-seconds",
        flow("""
  - Type: Wait
    Name: A
    End: true
"""),
        "FDL101",
        6,
        5,
        "States[0](A)",
    ),
    (
        "wait-both-seconds",
        flow("""
  - Type: Wait
    Name: A
    Seconds: 3
    Seconds.$: $Input.n
    End: true
"""),
        "FDL107",
        9,
        5,
        "States[0](A).Seconds.$",
    ),
    (
        "fc-missing-arn",
        task("      invocationType: Sync\n"),
        "FDL501",
        10,
        7,
        "States[0](A).Parameters",
    ),
    (
        "fc-invocation-type",
        task("      resourceArn: arn\n      invocationType: Snyc\n"),
        "FDL502",
        11,
        23,
        "States[0](A).Parameters.invocationType",
    ),
    (
        "fc-body-list",
        task("      resourceArn: arn\n      invocationType: Sync\n      body: [1]\n"),
        "FDL503",
        12,
        13,
        "States[0](A).Parameters.body",
    ),
    (
        "fc-unknown-parameter",
        task("      resourceArn: arn\n      invocationType: Sync\n      qualifier: LATEST\n"),
        "FDL507",
        12,
        7,
        "States[0](A).Parameters.qualifier",
    ),
    (
        "other-action",
        flow("""
  - Type: Task
    Name: A
    Action: ECS:DescribeInstances
    End: true
"""),
        "FDL504",
        8,
        13,
        "States[0](A).Action",
    ),
    (
        "action-format",
        flow("""
  - Type: Task
    Name: A
    Action: InvokeFunction
    End: true
"""),
        "FDL505",
        8,
        13,
        "States[0](A).Action",
    ),
    (
        "callback-in-express",
        flow("""
  - Type: Task
    Name: A
    Action: FC:InvokeFunction
    TaskMode: WaitForCustomCallback
    Parameters: {resourceArn: arn, invocationType: Async}
    End: true
"""),
        "FDL506",
        9,
        15,
        "States[0](A).TaskMode",
        "Express",
    ),
    (
        "task-mode-unknown",
        flow("""
  - Type: Task
    Name: A
    Action: FC:InvokeFunction
    TaskMode: RequestCompleted
    Parameters: {resourceArn: arn, invocationType: Sync}
    End: true
"""),
        "FDL106",
        9,
        15,
        "States[0](A).TaskMode",
    ),
    (
        "unknown-state-type",
        flow("""
  - Type: Tsk
    Name: A
    End: true
"""),
        "FDL106",
        6,
        11,
        "States[0](A).Type",
    ),
    (
        "spec-version",
        flow(PASS_B, HEADER.replace("v1", "v2").replace("StartAt: A", "StartAt: B")),
        "FDL106",
        3,
        14,
        "SpecVersion",
    ),
    (
        "flow-type",
        flow(PASS_B, HEADER.replace("StateMachine", "Flow").replace(": A", ": B")),
        "FDL106",
        1,
        7,
        "Type",
    ),
    ("missing-start-at", flow(PASS_B, HEADER.replace("StartAt: A\n", "")), "FDL101", 1, 1, ""),
    ("start-at-unknown", flow(PASS_B), "FDL203", 4, 10, "StartAt"),
    ("empty-states", HEADER.rstrip("\n") + " []\n", "FDL108", 5, 9, "States"),
    (
        "bad-flow-name",
        flow(PASS_B, HEADER.replace("Name: t", "Name: 9 lives").replace(": A", ": B")),
        "FDL106",
        2,
        7,
        "Name",
    ),
    (
        "comment-on-state",
        flow("""
  - Type: Pass
    Name: A
    Comment: hi
    End: true
"""),
        "FDL103",
        8,
        5,
        "States[0](A).Comment",
    ),
    (
        "cross-scope-next",
        flow("""
  - Type: Parallel
    Name: A
    End: true
    Branches:
      - StartAt: X
        States:
          - Type: Pass
            Name: Y
            End: true
          - Type: Pass
            Name: X
            Next: A
"""),
        "FDL203",
        17,
        19,
        "States[0](A).Branches[0].States[1](X).Next",
    ),
    (
        "nested-map-processor",
        flow("""
  - Type: Map
    Name: A
    ItemsPath: $Input.xs
    Processor:
      StartAt: P
      States:
        - Type: Wait
          Name: P
          Seconds: 0
          End: true
    End: true
"""),
        "FDL402",
        14,
        20,
        "States[0](A).Processor.States[0](P).Seconds",
    ),
]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_reference_flows_are_clean(path: Path) -> None:
    result = check_flow(path.read_text(), source=path.name)
    assert result.ok
    assert result.diagnostics == ()


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_broken_flow_reports_exact_diagnostic(case: tuple) -> None:
    _, text, code, line, column, path, *mode = case
    result = check_flow(text, source="flow.yaml", execution_mode=mode[0] if mode else "Standard")
    found = [(d.code, d.line, d.column, d.path) for d in result.diagnostics]
    assert (code, line, column, path) in found, "\n".join(d.format() for d in result.diagnostics)
    diagnostic = next(d for d in result.diagnostics if (d.code, d.line, d.column) == case[2:5])
    assert diagnostic.source == "flow.yaml"
    assert diagnostic.message


def test_case_table_is_large_and_distinct() -> None:
    assert len(CASES) >= 30
    assert len({case[1] for case in CASES}) == len(CASES)


def test_misspelled_field_gets_did_you_mean_hint() -> None:
    result = check_flow(CASES[0][1], source="flow.yaml")
    (diagnostic,) = [d for d in result.diagnostics if d.code == "FDL103"]
    assert diagnostic.hint == "did you mean 'Next'?"
    assert diagnostic.format() == (
        "flow.yaml:8:5: error FDL103: States[0](A).Nxt: unknown field 'Nxt' in Pass state "
        "(did you mean 'Next'?)"
    )


def test_misspelled_state_type_and_target_get_hints() -> None:
    text = flow("""
  - Type: Paralel
    Name: A
    Next: Finsh
  - Type: Succeed
    Name: Finish
""")
    hints = {d.code: d.hint for d in check_flow(text).diagnostics}
    assert hints["FDL106"] == "did you mean 'Parallel'?"
    assert hints["FDL203"] == "did you mean 'Finish'?"


def test_cross_scope_target_hint_names_the_scope_rule() -> None:
    result = check_flow(next(case[1] for case in CASES if case[0] == "cross-scope-next"))
    (diagnostic,) = [d for d in result.diagnostics if d.code == "FDL203"]
    assert "another scope" in (diagnostic.hint or "")


def test_warnings_do_not_make_a_flow_invalid() -> None:
    result = check_flow(next(case[1] for case in CASES if case[0] == "other-action"))
    assert result.ok
    assert [d.code for d in result.warnings] == ["FDL504"]
    assert result.warnings[0].severity is Severity.WARNING


def test_unreachable_is_a_warning_but_bad_target_is_an_error() -> None:
    result = check_flow(next(case[1] for case in CASES if case[0] == "unreachable"))
    assert result.ok and [d.code for d in result.warnings] == ["FDL206"]
    assert not check_flow(next(c[1] for c in CASES if c[0] == "next-unknown")).ok


def test_express_mode_tightens_wait_and_forbids_callbacks() -> None:
    wait_21 = next(case[1] for case in CASES if case[0] == "wait-express-over-20")
    assert check_flow(wait_21, execution_mode="Standard").ok
    assert not check_flow(wait_21, execution_mode="Express").ok
    callback = next(case[1] for case in CASES if case[0] == "callback-in-express")
    assert check_flow(callback).ok


def test_expression_error_message_carries_text_and_offset() -> None:
    result = check_flow(next(case[1] for case in CASES if case[0] == "condition-syntax"))
    (diagnostic,) = [d for d in result.diagnostics if d.code == "FDL301"]
    assert "`$Input.x ==`" in diagnostic.message
    assert "(at offset 11)" in diagnostic.message


def test_every_diagnostic_serialises_to_json() -> None:
    for case in CASES:
        for diagnostic in check_flow(case[1], source="f.yaml").diagnostics:
            data = diagnostic.to_json()
            assert data["code"].startswith("FDL") and data["source"] == "f.yaml"
            assert data["severity"] in ("error", "warning")
            assert data["line"] >= 1 and data["column"] >= 1


def test_succeed_and_fail_accept_end_true_but_not_next() -> None:
    text = flow("""
  - Type: Fail
    Name: A
    Code: boom
    End: true
""")
    assert check_flow(text).ok
    bad = flow("""
  - Type: Succeed
    Name: A
    Next: A
""")
    assert [d.code for d in check_flow(bad).errors] == ["FDL104"]


# -- the flow-level Timeout and the legacy dialect ------------------------------------------

TIMED_HEADER = "Type: StateMachine\nName: t\nSpecVersion: v1\nTimeout: {}\nStartAt: B\nStates:\n"


@pytest.mark.parametrize(("timeout", "mode"), [
    ("60", "Express"), ("300", "Express"), ('"300"', "Express"), ("0", "Express"),
    ("31536000", "Standard"), ('" 3600 "', "Standard"),
])
def test_a_flow_timeout_within_the_modes_limit_is_accepted(timeout: str, mode: str) -> None:
    check = check_flow(flow(PASS_B, TIMED_HEADER.format(timeout)), execution_mode=mode)
    assert check.ok, [str(d) for d in check.diagnostics]
    assert check.flow is not None and check.flow.timeout == int(timeout.strip('" '))


@pytest.mark.parametrize(("timeout", "mode", "code"), [
    ("301", "Express", "FDL408"), ("-1", "Standard", "FDL408"),
    ("31536001", "Standard", "FDL408"), ("1.5", "Standard", "FDL102"),
    ("ten", "Standard", "FDL102"), ("[60]", "Standard", "FDL102"),
])
def test_a_flow_timeout_out_of_range_or_type_is_one_error(timeout: str, mode: str,
                                                          code: str) -> None:
    check = check_flow(flow(PASS_B, TIMED_HEADER.format(timeout)), execution_mode=mode)
    assert [(d.code, d.line, d.column, d.path) for d in check.errors] == [(code, 4, 10, "Timeout")]


def test_the_flow_timeout_takes_no_expression() -> None:
    header = TIMED_HEADER.replace("Timeout: {}", "Timeout.$: $Input.t")
    check = check_flow(flow(PASS_B, header))
    assert [d.code for d in check.errors] == ["FDL103"]


def test_a_legacy_document_is_validated_in_its_own_dialect() -> None:
    # tests/legacy/ holds the dialect's own tests; here: the v1 checks do not run on it
    text = ("version: v1beta1\ntype: flow\nsteps:\n  - type: task\n    name: hello\n"
            "    resourceArn: acs:fc:::services/s/functions/f\n")
    assert check_flow(text, source="legacy.yaml").ok


def test_a_current_flow_with_a_stray_legacy_key_gets_field_advice() -> None:
    header = "Type: StateMachine\nName: t\nSpecVersion: v1\nversion: v1\nStartAt: B\nStates:\n"
    check = check_flow(flow(PASS_B, header))
    assert [(d.code, d.path) for d in check.errors] == [("FDL103", "version")]
