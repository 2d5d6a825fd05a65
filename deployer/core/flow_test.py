"""``deploy flow test``: run a flow in-process on a virtual clock with mocked task results.

Steps: load the flow (a ``.j2`` template is rendered with region/account id and, when s.yaml
has a flow resource using that template, its ``definitionVars``), validate it with
``check_flow`` (errors -> :class:`InvalidFlowError`, exit 3), load the mock file, then run the
discrete-event simulation (:func:`deployer.fdl.interpreter.simulate.simulate`). The virtual
clock starts at 0: Waits and retry back-offs take no wall time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deployer.config.manifest import load_manifest
from deployer.config.settings import require_cloudflow_region
from deployer.config.specs import FlowSpec, LineMap
from deployer.core.documents import read_json_document
from deployer.core.flow_mocks import MockFile, load_mocks
from deployer.core.map_runs import with_map_runs
from deployer.core.rendering import render_mapped, template_context
from deployer.core.validation import on_template
from deployer.errors import DeployerError, ExitCode, InvalidInputError, NotFoundError
from deployer.fdl import AnyFlow, check_flow
from deployer.fdl.interpreter import ExecutionStatus, HistoryEventType
from deployer.fdl.interpreter.simulate import Simulation, simulate
from deployer.fdl.interpreter.single_state import StateRun, run_state
from deployer.fdl.syntax.ast import Flow, walk_states

__all__ = [
    "DEFAULT_ACCOUNT_ID",
    "DEFAULT_REGION",
    "FlowTestRequest",
    "FlowTestResult",
    "InvalidFlowError",
    "StateTestResult",
    "load_flow",
    "load_text",
    "run_flow_test",
    "run_state_test",
]

DEFAULT_REGION = "cn-hangzhou"
DEFAULT_ACCOUNT_ID = "1234567890123456"


class InvalidFlowError(InvalidInputError):
    """The flow definition does not validate; ``details()`` lists the diagnostics."""

    def __init__(self, message: str, diagnostics: list[str]) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics

    def details(self) -> list[str]:
        return self.diagnostics


@dataclass(frozen=True, slots=True)
class FlowTestRequest:
    """What to run: flow file, execution input, optional mocks and case, render variables."""

    flow_file: Path
    input: Any = field(default_factory=dict)
    mocks_file: Path | None = None
    case: str | None = None
    region: str | None = None
    account_id: str | None = None
    manifest_file: Path | None = None
    execution_name: str = "flow-test"


@dataclass(frozen=True, slots=True)
class FlowTestResult:
    """Outcome of one simulated execution."""

    status: str
    output: Any
    error: dict[str, str] | None
    states: list[str]
    events: list[dict[str, Any]]
    duration_seconds: float

    @property
    def exit_code(self) -> int:
        return int(ExitCode.OK if self.status == "Succeeded" else ExitCode.EXECUTION_FAILED)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status, "output": self.output, "error": self.error,
            "states": self.states, "events": self.events,
            "duration_seconds": self.duration_seconds,
        }


def run_flow_test(request: FlowTestRequest) -> FlowTestResult:
    """Validate and run the flow with mocked tasks; raises InvalidInputError (exit 3) for a bad
    flow, mock file or a task the mocks cannot answer."""
    flow = load_flow(request)
    mocks = load_mocks(request.mocks_file) if request.mocks_file else MockFile("", given=False)
    case = mocks.pick_case(flow.name, request.case) if mocks.given else request.case
    sim = simulate(flow, with_map_runs(flow, mocks.answerer(case, flow.name)),
                   input=request.input,
                   execution_name=request.execution_name)
    return _result(sim)


@dataclass(frozen=True, slots=True)
class StateTestResult:
    """One state run alone (``deploy flow test --state``)."""

    run: StateRun

    @property
    def exit_code(self) -> int:
        return int(ExitCode.EXECUTION_FAILED if self.run.status == "Failed" else ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        return {**self.run.to_json(),
                "events": [e.to_json() for e in self.run.history]}


def run_state_test(request: FlowTestRequest, state: str) -> StateTestResult:
    """Run state ``state`` of the flow alone with the request's input (its tasks answered
    from the mocks); NotFoundError (exit 4) when the flow has no such state."""
    flow = load_flow(request)
    if not isinstance(flow, Flow):
        raise InvalidInputError(
            f"{request.flow_file}: --state runs a state of a SpecVersion v1 flow; this one is "
            "in the legacy dialect", hint="`deploy flow migrate` rewrites it as SpecVersion v1")
    mocks = load_mocks(request.mocks_file) if request.mocks_file else MockFile("", given=False)
    case = request.case
    if mocks.given and (case is not None or len(mocks.case_names(flow.name)) == 1):
        case = mocks.pick_case(flow.name, case)  # several and none chosen: a task will say
    try:
        run = run_state(flow, state, with_map_runs(flow, mocks.answerer(case, flow.name)),
                        input=request.input,
                        execution_name=request.execution_name)
    except KeyError:
        names = sorted({s.name for _, s in walk_states(flow.scope)})
        raise NotFoundError(f"{request.flow_file}: the flow has no state {state!r}",
                            hint=f"states: {', '.join(names)}") from None
    return StateTestResult(run)


def _result(sim: Simulation) -> FlowTestResult:
    ex = sim.execution
    ok = ex.status is ExecutionStatus.SUCCEEDED
    return FlowTestResult(
        status=ex.status.value,
        output=ex.output if ok else None,
        error=None if ok else {"code": ex.error_code, "detail": ex.error_detail},
        states=[e.step_name for e in sim.history if e.type is HistoryEventType.STEP_ENTERED],
        events=[e.to_json() for e in sim.history],  # as GetExecutionHistory serves them
        duration_seconds=sim.duration_seconds,
    )


def load_text(request: FlowTestRequest) -> tuple[str, LineMap | None]:
    """The flow file's text, rendered for ``.j2`` (with the map of the template's lines);
    InvalidInputError when it cannot be read or rendered."""
    path = request.flow_file
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"cannot read flow file {path}: {exc.strerror or exc}") from None
    document = _flow_spec(request.manifest_file, path) if request.manifest_file else None
    if document is not None and document.document is not None:
        # s.yaml loads it with ${yaml(file())}: its magic variables resolved, as deployed
        return document.document, document.document_map
    if path.suffix == ".j2":
        return _render(path, text, request, document)
    return text, None


def load_flow(request: FlowTestRequest) -> AnyFlow:
    """Read (and render, for ``.j2``) the flow file (either dialect) and validate it."""
    path = request.flow_file
    text, line_map = load_text(request)
    check = check_flow(text, source=str(path))
    if not check.ok or check.flow is None:
        lines = []
        for diagnostic in check.errors:
            moved, rendered = on_template(diagnostic, line_map, str(path))
            lines.append(moved.format() + (f" [rendered line {rendered.line}:{rendered.column}]"
                                           if rendered else ""))
        raise InvalidFlowError(f"{path}: the flow definition is invalid",
                               lines or ["the document is not a flow definition"])
    return check.flow


def _render(path: Path, text: str, request: FlowTestRequest, spec: FlowSpec | None
            ) -> tuple[str, LineMap | None]:
    region = require_cloudflow_region(request.region) if request.region else DEFAULT_REGION
    account = request.account_id or DEFAULT_ACCOUNT_ID
    if spec is not None:  # the same variables `deploy up` renders it with
        variables = template_context(spec, region=region, account_id=account)
    else:
        variables = {"region": region, "account_id": account}
    return render_mapped(text, str(path), variables)


def _flow_spec(manifest: Path, template: Path) -> FlowSpec | None:
    """The s.yaml flow whose ``definition`` is ``template``; None when the manifest is missing,
    invalid or names no such flow (the template then needs no definitionVars)."""
    try:
        flows = load_manifest(manifest, account_id=DEFAULT_ACCOUNT_ID, lenient=True).flows
    except DeployerError:
        return None
    target = template.resolve()
    return next((f for f in flows if f.definition.resolve() == target), None)


def parse_test_input(text: str | None, base: Path) -> Any:
    """``--input``: JSON text, or ``@file`` holding JSON (relative to ``base``); default ``{}``.
    Errors as :func:`deployer.core.documents.read_json_document`."""
    if text is None:
        return {}
    return read_json_document(text, option="--input", base=base).value
