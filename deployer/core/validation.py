"""``deploy validate``: the manifest, each rendered flow (FDL checks) and cross-references.

Pipeline: load s.yaml (every problem, positioned) -> render each flow with the region and
account id -> write the rendered text to ``<rendered_dir>/<flow>.yaml`` so every diagnostic's
``file:line:column`` points at a file the user can open -> :func:`deployer.fdl.check_flow` ->
check that each ``FC:InvokeFunction`` Task targets a function s.yaml defines, in the flow's
region and account. Warnings alone leave the report ok.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from deployer.config.manifest import Manifest, ManifestError, ManifestProblem, load_manifest
from deployer.config.settings import require_cloudflow_region
from deployer.config.specs import FlowSpec, LineMap
from deployer.config.values import ExternalValues
from deployer.config.variables import CONFIG_KEYS
from deployer.core.rendering import RenderedFlow, TemplateError, render_flow
from deployer.core.validated import PLACEHOLDER_ACCOUNT_ID
from deployer.errors import DeployerError, ExitCode
from deployer.fdl import AnyFlow, Diagnostic, LegacyFlow, Scope, Severity, TaskState, check_flow
from deployer.fdl.legacy.ast import StepList, TaskStep, walk_steps
from deployer.fdl.legacy.resources import Integration, resolve_task
from deployer.fdl.syntax.ast import MapState, ParallelState, Template, walk_states
from deployer.fdl.syntax.task_checks import EMULATED_ACTIONS

__all__ = [
    "PLACEHOLDER_ACCOUNT_ID",
    "FlowReport",
    "ProjectCode",
    "RenderedAt",
    "ValidationReport",
    "cross_reference",
    "cross_reference_steps",
    "on_template",
    "validate_project",
]

_FC_ARN = re.compile(
    r"^acs:fc:(?P<region>[^:]*):(?P<account>[^:]*):functions/(?P<name>[^/]+)(?:/(?P<q>[^/]+))?$"
)


class ProjectCode:
    """Diagnostic codes of project-level checks (the FDL ones are in docs/fdl-diagnostics.md)."""

    RENDER_FAILED = "PRJ001"
    UNKNOWN_FUNCTION = "PRJ002"
    REGION_MISMATCH = "PRJ003"
    ACCOUNT_MISMATCH = "PRJ004"
    BAD_FUNCTION_ARN = "PRJ005"


@dataclass(frozen=True, slots=True)
class RenderedAt:
    """Where a diagnostic of a template points in the rendered flow (secondary information)."""

    file: str
    line: int
    column: int

    def text(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def to_json(self) -> dict[str, Any]:
        return {"source": self.file, "line": self.line, "column": self.column}


@dataclass(frozen=True, slots=True)
class FlowReport:
    """The diagnostics of one flow. For a template they name the template's own lines (the
    ones the user edits), and ``rendered_at`` holds, for each diagnostic, its position in the
    rendered file ``rendered`` (None when it could not be mapped to the template)."""

    name: str
    diagnostics: tuple[Diagnostic, ...]
    rendered: Path | None = None
    template: str | None = None
    rendered_at: tuple[RenderedAt | None, ...] = ()
    needs_mocks: tuple[tuple[str, str], ...] = ()  # (state, action) answered from mocks only

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    def _rendered(self, index: int) -> RenderedAt | None:
        return self.rendered_at[index] if index < len(self.rendered_at) else None

    def lines(self, diagnostics: tuple[Diagnostic, ...] | None = None) -> list[str]:
        """Each diagnostic (or each of ``diagnostics``) on one line, the rendered position in
        brackets after it."""
        out = []
        for index, diagnostic in enumerate(self.diagnostics):
            if diagnostics is not None and diagnostic not in diagnostics:
                continue
            rendered = self._rendered(index)
            suffix = f" [rendered {rendered.text()}]" if rendered else ""
            out.append(diagnostic.format() + suffix)
        return out

    def to_json(self) -> dict[str, Any]:
        diagnostics = []
        for index, diagnostic in enumerate(self.diagnostics):
            rendered = self._rendered(index)
            diagnostics.append({**diagnostic.to_json(),
                                "rendered": rendered.to_json() if rendered else None})
        return {
            "name": self.name,
            "ok": self.ok,
            "template": self.template,
            "rendered": str(self.rendered) if self.rendered else None,
            "diagnostics": diagnostics,
            "needs_mocks": [{"state": state, "action": action}
                            for state, action in self.needs_mocks],
        }

    def mock_line(self) -> str | None:
        """The integrations the emulator answers only from mocks, on one line (None: none)."""
        if not self.needs_mocks:
            return None
        listed = ", ".join(f"{state} ({action})" for state, action in self.needs_mocks)
        return (f"{self.name}: on the emulator, mocked responses needed for {listed} "
                "(deploy emulator start --mocks FILE; deploy execute --mock-case NAME)")


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """Everything ``deploy validate`` found; ``exit_code`` is 3 when anything is an error."""

    manifest_path: Path
    manifest: Manifest | None
    problems: tuple[ManifestProblem, ...]
    flows: tuple[FlowReport, ...] = field(default=())
    region: str | None = None
    account_id: str | None = None
    target: str | None = None  # the target the project was also checked against
    target_problems: tuple[str, ...] = ()  # what that target would refuse

    @property
    def ok(self) -> bool:
        errors = [p for p in self.problems if p.severity.value == "error"]
        return self.manifest is not None and not errors and all(f.ok for f in self.flows) \
            and not self.target_problems

    @property
    def exit_code(self) -> int:
        return int(ExitCode.OK if self.ok else ExitCode.INVALID_INPUT)

    def to_json(self) -> dict[str, Any]:
        manifest: dict[str, Any] = {
            "path": str(self.manifest_path),
            "problems": [p.to_json() for p in self.problems],
        }
        if self.manifest is not None:
            manifest |= {
                "name": self.manifest.name,
                "functions": [f.function_name for f in self.manifest.functions],
                "flows": [f.name for f in self.manifest.flows],
                "not_deployed": [u.to_json() for u in self.manifest.undeployed],
                "notes": list(self.manifest.notes),
            }
        return {"ok": self.ok, "manifest": manifest,
                "flows": [f.to_json() for f in self.flows],
                "target": {"name": self.target, "problems": list(self.target_problems)}
                if self.target else None}


def validate_project(
    manifest_path: Path,
    *,
    rendered_dir: Path,
    region: str | None = None,
    account_id: str | None = None,
    env: Mapping[str, str] | None = None,
    values: ExternalValues | None = None,
    strict: bool = False,
) -> ValidationReport:
    """Validate s.yaml and every flow it defines; never raises for invalid input.

    ``region`` overrides each flow's region for rendering (default: the manifest's);
    ``account_id`` defaults to ``PLACEHOLDER_ACCOUNT_ID`` (ARNs are then checked for shape and
    consistency, not against a real account). Writes the rendered flows under
    ``rendered_dir``. Raises NotFoundError when the manifest file does not exist and
    InvalidInputError for a ``region`` without CloudFlow (the rule every command applies).
    """
    if region is not None:
        require_cloudflow_region(region)
    account = account_id or PLACEHOLDER_ACCOUNT_ID
    try:
        manifest = load_manifest(manifest_path, env=env, account_id=account, region=region,
                                 values=values, strict=strict,
                                 config={k: f"<{k} of the target>" for k in CONFIG_KEYS
                                         if k != "AccountID"})
    except ManifestError as exc:
        return ValidationReport(manifest_path, None, exc.problems, account_id=account)
    reports = tuple(
        check_one_flow(manifest, spec, region=region or spec.region, account_id=account,
                       rendered_dir=rendered_dir)
        for spec in manifest.flows
    )
    return ValidationReport(manifest.path, manifest, manifest.warnings, reports,
                            region=region or manifest.region, account_id=account)


def check_one_flow(
    manifest: Manifest, spec: FlowSpec, *, region: str, account_id: str, rendered_dir: Path
) -> FlowReport:
    """Render, FDL-check and cross-reference one flow."""
    try:
        rendered = render_flow(spec, region=region, account_id=account_id,
                               project_dir=manifest.project_dir)
    except DeployerError as exc:
        line, message = 0, exc.message
        if isinstance(exc, TemplateError):  # point at the template line, name the file once
            line, message = exc.line or 1, exc.reason
        failed = Diagnostic(ProjectCode.RENDER_FAILED, message, Severity.ERROR, line,
                            1 if line else 0, "", exc.hint,
                            _relative(spec.definition, manifest.project_dir))
        return FlowReport(spec.name, (failed,))
    source_file = _write_rendered(rendered, spec, rendered_dir)
    source = _relative(source_file, manifest.project_dir)
    check = check_flow(rendered.text, source=source, execution_mode=spec.execution_mode.value)
    diagnostics = list(check.diagnostics)
    if isinstance(check.flow, LegacyFlow):
        found = cross_reference_steps(manifest, check.flow.steps, region=region,
                                      account_id=account_id)
        diagnostics += [d.with_source(source) for d in found]
    elif check.flow is not None:
        found = cross_reference(manifest, check.flow.scope, region=region, account_id=account_id)
        diagnostics += [d.with_source(source) for d in found]
    diagnostics.sort(key=lambda d: (d.line, d.column, d.code))
    mocks = needs_mocks(check.flow) if check.flow is not None else ()
    if not spec.is_template and spec.document is None:
        return FlowReport(spec.name, tuple(diagnostics), source_file, needs_mocks=mocks)
    template = _relative(spec.definition, manifest.project_dir)
    mapped = [on_template(d, rendered.line_map, template) for d in diagnostics]
    return FlowReport(spec.name, tuple(d for d, _ in mapped), source_file, template,
                      tuple(r for _, r in mapped), mocks)


def needs_mocks(flow: AnyFlow) -> tuple[tuple[str, str], ...]:
    """(state, action) of every Task (a legacy flow's task step) whose action the emulator
    answers only from mocked responses (not FC:InvokeFunction, HTTP:Request or
    FNF:StartExecution)."""
    if isinstance(flow, LegacyFlow):
        found = []
        for _, step in walk_steps(flow.steps):
            integration = resolve_task(step) if isinstance(step, TaskStep) else None
            if isinstance(integration, Integration) and \
                    integration.action not in EMULATED_ACTIONS:
                found.append((step.name, integration.action))
        return tuple(found)
    return tuple((state.name, state.action) for _, state in walk_states(flow.scope)
                 if isinstance(state, TaskState) and state.action
                 and state.action not in EMULATED_ACTIONS)


def on_template(diagnostic: Diagnostic, line_map: LineMap | None,
                 template: str) -> tuple[Diagnostic, RenderedAt | None]:
    """``diagnostic`` moved to the template line that produced its rendered line, with the
    rendered position kept as secondary information; unchanged when it cannot be mapped."""
    where = line_map.lookup(diagnostic.line, diagnostic.column) \
        if line_map is not None and diagnostic.line else None
    if where is None:
        return diagnostic, None
    rendered = RenderedAt(diagnostic.source or "", diagnostic.line, diagnostic.column)
    moved = replace(diagnostic, line=where[0], column=where[1], source=template)
    return moved, rendered


def cross_reference(
    manifest: Manifest, scope: Scope, *, region: str, account_id: str, prefix: str = ""
) -> list[Diagnostic]:
    """Check each FC Task's literal ``resourceArn`` against the functions s.yaml defines.

    A function s.yaml does not define is a warning (it may be deployed elsewhere); an ARN in
    another region or account, or a malformed one, is an error.
    """
    found: list[Diagnostic] = []
    for index, state in enumerate(scope.states):
        path = f"{prefix}States[{index}]({state.name})"
        if isinstance(state, TaskState) and state.action == "FC:InvokeFunction":
            found += _check_task(manifest, state, path, region, account_id)
        if isinstance(state, ParallelState):
            for number, branch in enumerate(state.branches):
                found += cross_reference(manifest, branch, region=region,
                                         account_id=account_id,
                                         prefix=f"{path}.Branches[{number}].")
        if isinstance(state, MapState) and state.processor is not None:
            found += cross_reference(manifest, state.processor, region=region,
                                     account_id=account_id, prefix=f"{path}.Processor.")
    return found


def _check_task(
    manifest: Manifest, state: TaskState, path: str, region: str, account_id: str
) -> list[Diagnostic]:
    params = state.parameters
    if not isinstance(params, Template):
        return []
    entry = next((f for f in params.fields if f.key == "resourceArn"), None)
    if entry is None or not isinstance(entry.value, str):
        return []  # missing or dynamic (resourceArn.$): the FDL checks cover it
    where = f"{path}.Parameters.resourceArn"
    pos = entry.value_position

    def diag(code: str, message: str, severity: Severity, hint: str | None) -> Diagnostic:
        return Diagnostic(code, message, severity, pos.line, pos.column, where, hint)

    match = _FC_ARN.match(entry.value)
    if match is None:
        return [diag(ProjectCode.BAD_FUNCTION_ARN,
                     f"{entry.value!r} is not a Function Compute 3.0 function ARN",
                     Severity.ERROR,
                     "use acs:fc:<region>:<account-id>:functions/<name>[/<qualifier>]")]
    found = []
    if match["region"] and match["region"] != region:
        found.append(diag(ProjectCode.REGION_MISMATCH,
                          f"invokes a function in {match['region']}, but the flow is deployed "
                          f"in {region}", Severity.ERROR, "build the ARN from {{ region }}"))
    if match["account"] and match["account"] != account_id:
        found.append(diag(ProjectCode.ACCOUNT_MISMATCH,
                          f"invokes a function in account {match['account']}, but the flow is "
                          f"deployed in account {account_id}", Severity.ERROR,
                          "build the ARN from {{ account_id }}"))
    if manifest.function_by_name(region, match["name"]) is None:
        undeployed = _undeployed_function(manifest, match["name"])
        if undeployed is not None:
            found.append(diag(ProjectCode.UNKNOWN_FUNCTION,
                              f"invokes function {match['name']!r} of resource {undeployed}, "
                              "which this toolkit does not deploy", Severity.WARNING,
                              "deploy it another way before the flow runs"))
            return found
        defined = ", ".join(f.function_name for f in manifest.functions) or "none"
        found.append(diag(ProjectCode.UNKNOWN_FUNCTION,
                          f"invokes function {match['name']!r}, which {manifest.path.name} does "
                          f"not define in {region}", Severity.WARNING,
                          f"functions in {manifest.path.name}: {defined}"))
    return found


def _undeployed_function(manifest: Manifest, name: str) -> str | None:
    """The resource key of a function s.yaml lists but this toolkit does not deploy."""
    for item in manifest.undeployed:
        if name in item.names:
            return item.resource
    return None


_LEGACY_FC_ARN = re.compile(r"^acs:fc:(?P<region>[^:]*):(?P<account>[^:]*):")


def cross_reference_steps(manifest: Manifest, steps: StepList, *, region: str,
                          account_id: str) -> list[Diagnostic]:
    """The legacy dialect's :func:`cross_reference`: each function a task calls
    (``services/S/functions/F``, ``functions/F`` or ``!Ref S/F``: function F) against s.yaml;
    a region or account written in the ARN must be the flow's (empty ones are)."""
    found: list[Diagnostic] = []
    for outer, step in walk_steps(steps):
        if not isinstance(step, TaskStep):
            continue
        call = resolve_task(step)
        if not isinstance(call, Integration) or call.kind != "function":
            continue
        entry = step.raw.get("resourceArn")
        pos = entry.value_position if entry is not None else step.position
        where = ".".join((*outer, step.name)) + ".resourceArn"

        def diag(code: str, message: str, severity: Severity, hint: str | None,
                 pos: Any = pos, where: str = where) -> Diagnostic:
            return Diagnostic(code, message, severity, pos.line, pos.column, where, hint)

        written = _LEGACY_FC_ARN.match(call.resource_arn)
        if written is not None and written["region"] not in ("", region):
            found.append(diag(ProjectCode.REGION_MISMATCH, f"invokes a function in "
                              f"{written['region']}, but the flow is deployed in {region}",
                              Severity.ERROR, "leave the region empty or build it from "
                              "{{ region }}"))
        if written is not None and written["account"] not in ("", account_id):
            found.append(diag(ProjectCode.ACCOUNT_MISMATCH, f"invokes a function in account "
                              f"{written['account']}, but the flow is deployed in account "
                              f"{account_id}", Severity.ERROR,
                              "leave the account empty or build it from {{ account_id }}"))
        if manifest.function_by_name(region, call.target) is None:
            defined = ", ".join(f.function_name for f in manifest.functions) or "none"
            found.append(diag(ProjectCode.UNKNOWN_FUNCTION,
                              f"invokes function {call.target!r}, which {manifest.path.name} "
                              f"does not define in {region}", Severity.WARNING,
                              f"functions in {manifest.path.name}: {defined}"))
    return found


def _write_rendered(rendered: RenderedFlow, spec: FlowSpec, rendered_dir: Path) -> Path:
    if not spec.is_template and spec.document is None:
        return spec.definition
    target = rendered_dir / f"{spec.name}.yaml"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rendered.text, encoding="utf-8")
    except OSError:
        return spec.definition  # read-only project: diagnostics still name the template
    return target


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)
