"""``deploy flow ...``: work with flow definitions locally."""

from __future__ import annotations

import json
from pathlib import Path

import click

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import account_id_option, output_option, region_option
from deployer.cli.render import view
from deployer.core.flow_test import FlowTestRequest, FlowTestResult, parse_test_input, run_flow_test


@click.group("flow", epilog="""\b
Examples:
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case HappyPath
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case NeverFinishes   exit 5
""")
def flow() -> None:
    """Run and inspect CloudFlow flow definitions locally."""


TEST_EPILOG = """\b
Examples:
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case HappyPath --input '{}'
  deploy flow test templates/flow.yaml.j2 --mocks mocks.yaml --case NeverFinishes   exit 5
  deploy flow test flow.yaml --mocks mocks.yaml --case HappyPath --input @input.json --output json
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
Entries are keyed by the task's invocation index ("0", or a range "1-3"); {Throw: {Code: ...,
Detail: ...}} makes an invocation fail.
"""


@flow.command("test", epilog=TEST_EPILOG)
@click.argument("flow_file", metavar="FLOW", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--input", "input_text", help="Execution input: JSON text or @file.json.")
@click.option("--mocks", type=click.Path(dir_okay=False, path_type=Path),
              help="Mock file answering Task states (TestCases + MockedResponses).")
@click.option("--case", help="Test case of the mock file (needed when it has several).")
@region_option
@account_id_option
@output_option
@pass_app
def test(app: AppContext, flow_file: Path, input_text: str | None, mocks: Path | None,
         case: str | None, region: str | None, account_id: str | None, output: str) -> None:
    """Run FLOW (YAML or .j2 template) on a virtual clock with mocked task results.

    Exit 0 when the execution succeeds, 5 when it fails, times out or stops, 3 when the flow
    or the mock file is invalid (or a task has no mocked response)."""
    request = FlowTestRequest(
        flow_file=app.resolve(flow_file),
        input=parse_test_input(input_text, app.project_dir),
        mocks_file=app.resolve(mocks) if mocks else None,
        case=case, region=region, account_id=account_id, manifest_file=app.manifest_file,
    )
    app.render(run_flow_test(request), output)


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
