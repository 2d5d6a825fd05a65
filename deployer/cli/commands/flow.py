"""``deploy flow ...``: work with flow definitions locally."""

from __future__ import annotations

import json
from pathlib import Path

import click

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import account_id_option, output_option, region_option
from deployer.cli.render import view
from deployer.core.flow_migrate import MigrateRequest, MigrateResult, migrate_flow_file
from deployer.core.flow_test import (
    FlowTestRequest,
    FlowTestResult,
    StateTestResult,
    parse_test_input,
    run_flow_test,
    run_state_test,
)


@click.group("flow", epilog="""\b
Examples:
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case HappyPath
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case NeverFinishes   exit 5
  deploy flow migrate legacy.yaml -o flow-v1.yaml
""")
def flow() -> None:
    """Run and inspect CloudFlow flow definitions locally."""


TEST_EPILOG = """\b
Examples:
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case HappyPath --input '{}'
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case NeverFinishes   exit 5
  deploy flow test flow.yaml --mocks mocks.yaml --case HappyPath --input @input.json --output json
  deploy flow test flow.yaml --state CheckJobComplete --input '{"job_status": "success"}'
  deploy flow test flow.yaml --state GetJobStatus --mocks mocks.yaml --case HappyPath
\b
--state NAME runs that one state alone (like AWS's TestState): its constructors, its Retry and
Catch with the mocked failures, a Choice's routing; it prints the state's output and the state
that would come next.
\b
Every Task state needs a mocked answer. A mock file (Step Functions Local style):
\b
  TestCases:
    HappyPath: {StartJob: Started, GetJobStatus: RunningThenSuccess}
    NeverFinishes: {StartJob: Started, GetJobStatus: AlwaysRunning}
  MockedResponses:
    Started: {"0": {Return: {Body: {job_id: j-1}}}}
    RunningThenSuccess:
      "0": {Return: {Body: {job_id: j-1, job_status: running, try_count: 1}}}
      "1": {Return: {Body: {job_id: j-1, job_status: success, try_count: 2}}}
    AlwaysRunning:
      "0": {Return: {Body: {job_id: j-1, job_status: running, try_count: 1}}}
      "1-2": {Return: {Body: {job_id: j-1, job_status: running, try_count: 3}}}
      "3": {Return: {Body: {job_id: j-1, job_status: running, try_count: 4}}}
\b
Entries are keyed by the task's invocation index ("0", or a range "1-3"); {Throw: {Error: ...,
Cause: ...}} makes an invocation fail. The Step Functions Local / LocalStack layout is read too:
StateMachines: {<flow>: {TestCases: ...}} in place of TestCases.
"""


@flow.command("test", epilog=TEST_EPILOG)
@click.argument("flow_file", metavar="FLOW", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--input", "input_text", help="Execution input: JSON text or @file.json.")
@click.option("--mocks", type=click.Path(dir_okay=False, path_type=Path),
              help="Mock file answering Task states (TestCases + MockedResponses).")
@click.option("--case", help="Test case of the mock file (needed when it has several).")
@click.option("--state", "state", metavar="NAME",
              help="Run only this state, with --input as its input; print its output and the "
                   "next state.")
@region_option
@account_id_option
@output_option
@pass_app
def test(app: AppContext, flow_file: Path, input_text: str | None, mocks: Path | None,
         case: str | None, state: str | None, region: str | None, account_id: str | None,
         output: str) -> None:
    """Run FLOW (YAML or .j2 template) on a virtual clock with mocked task results.

    Exit 0 when the execution (or the --state) succeeds or its error is caught, 5 when it
    fails, times out or stops, 3 when the flow or the mock file is invalid (or a task has no
    mocked response), 4 when the flow has no such --state."""
    request = FlowTestRequest(
        flow_file=app.resolve(flow_file),
        input=parse_test_input(input_text, app.project_dir),
        mocks_file=app.resolve(mocks) if mocks else None,
        case=case, region=region, account_id=account_id, manifest_file=app.manifest_file,
    )
    if state is not None:
        app.render(run_state_test(request, state), output)
        return
    app.render(run_flow_test(request), output)


@view(StateTestResult)
def _state_human(result: StateTestResult) -> str:
    run = result.run
    lines = [f"State:    {run.state}", f"Status:   {run.status}"]
    if run.error is not None:
        lines.append(f"Error:    {run.error[0]}" + (f" ({run.error[1]})" if run.error[1] else ""))
    if run.status != "Failed":
        lines.append(f"Output:   {json.dumps(run.output, ensure_ascii=False)}")
        lines.append(f"Next:     {run.next_state or '(end of its scope)'}")
    if run.retries:
        lines.append(f"Retries:  {run.retries}")
    return "\n".join(lines)


@view(FlowTestResult)
def _human(result: FlowTestResult) -> str:
    lines = [f"Status:   {result.status}"]
    if result.error is None:
        lines.append(f"Output:   {json.dumps(result.output, ensure_ascii=False)}")
    else:
        lines.append(f"Error:    {result.error['code']}")
        if result.error["detail"]:
            lines.append(f"Detail:   {result.error['detail']}")
    lines.append(f"States:   {' -> '.join(result.states) or '(none)'}")
    lines.append(f"Duration: {result.duration_seconds:g}s (virtual)")
    return "\n".join(lines)


MIGRATE_EPILOG = """\b
Examples:
  deploy flow migrate legacy.yaml                      the v1 text on stdout
  deploy flow migrate legacy.yaml -o flow-v1.yaml      written to a file
  deploy flow migrate legacy.yaml --name MyFlow --output json
\b
FILE is a flow in the legacy dialect (version: v1beta1 or v1, type: flow, steps). The result
keeps step names and comments, passes `deploy validate`, and behaves like the original; every
spot that did not carry over mechanically (a wait until a timestamp, a path reading every
element of a list, a function's own error type...) is listed on stderr with its line.
"""


@flow.command("migrate", epilog=MIGRATE_EPILOG)
@click.argument("flow_file", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the SpecVersion v1 flow to this file (default: stdout).")
@click.option("--name", help="The v1 flow's Name (default: from the file name).")
@region_option
@account_id_option
@output_option
@pass_app
def migrate(app: AppContext, flow_file: Path, out_file: Path | None, name: str | None,
            region: str | None, account_id: str | None, output: str) -> None:
    """Rewrite FILE, a legacy-dialect flow, as SpecVersion v1 (Type: StateMachine).

    Exit 0 when migrated, 3 when FILE is not a valid legacy flow."""
    request = MigrateRequest(
        flow_file=app.resolve(flow_file), out_file=app.resolve(out_file) if out_file else None,
        name=name, region=region, account_id=account_id, manifest_file=app.manifest_file)
    result = migrate_flow_file(request)
    renderer = app.use_output(output)
    if not renderer.is_json:
        for note in result.notes:
            renderer.warn(f"{result.source}:{note.line}:{note.column}: "
                          f"{note.path + ': ' if note.path else ''}{note.message}")
    app.render(result, output)


@view(MigrateResult)
def _migrated(result: MigrateResult) -> str:
    if result.written is None:
        return result.text.rstrip("\n")
    return (f"Migrated {result.source} -> {result.written} (Name: {result.name}; "
            f"{len(result.notes)} note{'s' if len(result.notes) != 1 else ''})")
