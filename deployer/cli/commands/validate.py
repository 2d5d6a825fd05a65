"""``deploy render`` and ``deploy validate``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
from rich.text import Text

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import (
    TargetOptions,
    account_id_option,
    output_option,
    region_option,
    strict_option,
)
from deployer.cli.render import view
from deployer.config.manifest import load_manifest
from deployer.config.settings import Target, require_cloudflow_region
from deployer.core.preflight import preflight
from deployer.core.rendering import RenderedFlow, WrittenFlow, render_flow
from deployer.core.validation import PLACEHOLDER_ACCOUNT_ID, ValidationReport, validate_project
from deployer.errors import OperationError

RENDER_EPILOG = """\b
Examples:
  deploy render                                the local emulator's account
  deploy render --region cn-hangzhou --account-id 1234567890123456
  deploy render -o build/flow.yaml
  deploy render --flow MyWorkFlow --output json | jq -r .definition
\b
Without --account-id (or ALIBABA_CLOUD_ACCOUNT_ID) the ARNs use the account of the local
target's emulator (.deploy/emulator/, which need not be running), as `deploy up` would.
"""

VALIDATE_EPILOG = f"""\b
Examples:
  deploy validate
  deploy validate --account-id 1234567890123456 --output json
  deploy validate --strict                     resources not deployed here are errors (CI)
  deploy validate --target local               also ask the emulator (started if needed)
  deploy -C . -t s.yaml validate               another project directory / manifest
\b
Without --account-id (or ALIBABA_CLOUD_ACCOUNT_ID) the ARNs are checked with the
placeholder account {PLACEHOLDER_ACCOUNT_ID}. When this project's emulator runs (or with
--target) the roles s.yaml names are also checked there, as `deploy up` would before any
write. Exit 3 when anything is an error.
"""


def local_account_id(state_dir: Path) -> str:
    """The account of the local target's emulator (its identity is created in ``state_dir``
    if it does not exist yet, as its first start would; the emulator need not run)."""
    from deployer.emulator.store.identity import load_or_create_identity

    return load_or_create_identity(state_dir).account_id


@view(RenderedFlow)
def _rendered_view(result: RenderedFlow) -> Text:
    return Text(result.text.rstrip("\n"))


@view(WrittenFlow)
def _written_view(result: WrittenFlow) -> Text:
    return Text(f"Wrote flow {result.flow} to {result.path}")


@view(ValidationReport)
def _report_view(report: ValidationReport) -> Text:
    lines = [p.format() for p in report.problems]
    for flow in report.flows:
        lines += flow.lines()
        mocks = flow.mock_line()
        if mocks is not None:
            lines.append(mocks)
    if report.manifest is not None:
        m = report.manifest
        flows = ", ".join(f"{f.name} ({'ok' if f.ok else 'invalid'})" for f in report.flows)
        lines.append(f"{m.path.name}: {len(m.functions)} function(s), flows: {flows or 'none'}")
        lines += [f"not deployed: {u.text()}" for u in m.undeployed]
        lines += [f"note: {n}" for n in m.notes]
    if report.target:
        lines += [f"{report.target}: {p}" for p in report.target_problems] or \
            [f"{report.target}: what s.yaml names is in place"]
    lines.append("OK" if report.ok else "INVALID")
    return Text("\n".join(lines))


@click.command("render", epilog=RENDER_EPILOG)
@region_option
@account_id_option
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the definition to FILE instead of stdout.")
@click.option("--flow", "flow_name", help="Flow name or resource (when s.yaml has several).")
@output_option
@pass_app
def render(app: AppContext, region: str | None, account_id: str | None, out: Path | None,
           flow_name: str | None, output: str) -> None:
    """Print the flow definition rendered from its Jinja2 template."""
    account_id = account_id or local_account_id(app.deploy_dir / "emulator")
    manifest = load_manifest(app.manifest_file, account_id=account_id, region=region,
                             values=app.external_values())
    spec = manifest.flow(flow_name)
    result = render_flow(spec, region=require_cloudflow_region(region) if region else spec.region,
                         account_id=account_id, project_dir=app.project_dir)
    if out is not None:
        _write(app.resolve(out), result.text)
        app.render(WrittenFlow(result.flow, app.resolve(out)), output)
        return
    app.render(result, output)


@click.command("validate", epilog=VALIDATE_EPILOG)
@region_option
@account_id_option
@click.option("--target", type=click.Choice([t.value for t in Target]), default=None,
              help="Also check against this target (default: this project's emulator when it "
                   "runs).")
@click.option("--profile", envvar="ALIBABA_CLOUD_PROFILE", help="CLI profile (aliyun target).")
@strict_option
@output_option
@pass_app
def validate(app: AppContext, region: str | None, account_id: str | None, target: str | None,
             profile: str | None, strict: bool, output: str) -> None:
    """Check s.yaml, the rendered flow definitions and their function references."""
    app.use_output(output)
    report = validate_project(app.manifest_file, region=region, account_id=account_id,
                              rendered_dir=app.deploy_dir / "rendered",
                              values=app.external_values(), strict=strict)
    options = _target(app, target, region, profile, account_id)
    if options is not None and report.ok:
        app.strict = strict
        session = app.cloud(options)
        problems = preflight(app.manifest(session.account_id, region, complete=True),
                             session.clients,
                             account_id=session.account_id,
                             target=session.settings.target.value)
        report = replace(report, target=f"target {session.settings.target.value}",
                         target_problems=tuple(p.text() for p in problems))
    app.render(report, output)


def _target(app: AppContext, target: str | None, region: str | None, profile: str | None,
            account_id: str | None) -> TargetOptions | None:
    """Where to check besides the files: ``--target``, else this project's emulator when it
    runs (never started for validate alone), else nowhere."""
    if target is None:
        from deployer.emulator import daemon

        running = app.in_process is not None or daemon.status(
            app.deploy_dir / "emulator").running
        if not running:
            return None
        # the emulator decides its account; --account-id only shapes the offline ARN checks
        return TargetOptions(Target.LOCAL, region, profile, None)
    return TargetOptions(Target(target), region, profile, account_id)


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OperationError(f"cannot write {path}: {exc}") from None
