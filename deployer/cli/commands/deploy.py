"""``deploy up``, ``deploy plan`` and ``deploy down``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click
from rich.text import Text

from deployer.cli.context import AppContext, CloudSession, pass_app
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import Renderer, view
from deployer.core.deploy import (
    DeploymentRecord,
    DownResult,
    PlannedDeploy,
    PlanSummary,
    UpSummary,
    apply_deploy,
    desired_state,
    plan_deploy,
    remove_deployment,
)
from deployer.core.locking import project_lock
from deployer.core.plan import ActionKind
from deployer.errors import OperationError

UP_EPILOG = """\b
Examples:
  deploy up                                    the local emulator (started when needed)
  deploy up --target aliyun --region cn-hangzhou --yes
  deploy up --target aliyun --output json | jq '.resources[] | {name, arn, action}'
\b
Packages the functions, renders the flow, plans with read-only calls, then applies. On a
terminal it asks before changing anything; --yes, --output json or a non-interactive stdin
skip the question. A second run with nothing changed makes no write call.
"""

PLAN_EPILOG = """\b
Examples:
  deploy plan                                  against the local emulator
  deploy plan --target aliyun --region cn-hangzhou
  deploy plan --output json | jq -e '.changes'     CI: fail the step when there are changes
\b
Uses read-only calls only. Exit 0 with or without changes; read .changes from the JSON.
"""

DOWN_EPILOG = """\b
Examples:
  deploy down                                  asks first on a terminal
  deploy down --yes --output json
  deploy down --target aliyun --region cn-hangzhou --yes
\b
Removes only what `deploy up` recorded in .deploy/state/ (nothing it adopted); a second run
says there is nothing to remove.
"""

SYMBOLS = {ActionKind.CREATE: ("+", "green"), ActionKind.UPDATE: ("~", "yellow"),
           ActionKind.NO_CHANGE: ("=", "dim"), ActionKind.DELETE: ("-", "red")}


def _action_lines(rows: Sequence[tuple[str, str, ActionKind, str, Sequence[str]]],
                  verb: bool) -> Text:
    text = Text()
    width = max((len(r[1]) for r in rows), default=0)
    kind_width = max((len(r[0]) for r in rows), default=8) + 1
    for kind, name, action, arn, changes in rows:
        symbol, style = SYMBOLS[action]
        label = {ActionKind.CREATE: "created", ActionKind.UPDATE: "updated",
                 ActionKind.NO_CHANGE: "unchanged"}.get(action, action.value) if verb \
            else action.value
        detail = ", ".join(changes) if action is ActionKind.UPDATE else arn
        text.append(f"  {symbol} {label:<10}", style=style)
        text.append(f"{kind:<{kind_width}}{name:<{width + 2}}{detail}".rstrip() + "\n")
    return text


def _counts(actions: Sequence[ActionKind]) -> str:
    created = sum(a is ActionKind.CREATE for a in actions)
    updated = sum(a is ActionKind.UPDATE for a in actions)
    deleted = sum(a is ActionKind.DELETE for a in actions)
    removal = f"{deleted} to delete, " if deleted else ""
    return f"{created} to create, {updated} to update, {removal}" \
           f"{len(actions) - created - updated - deleted} unchanged"


@view(PlanSummary)
def _plan_view(summary: PlanSummary) -> Text:
    plan = summary.plan
    rows = [(a.resource.value, a.name, a.kind, a.arn, a.changes) for a in plan.actions]
    text = Text(f"Plan for {summary.target}, region {plan.region}, account "
                f"{plan.account_id}:\n")
    text.append_text(_action_lines(rows, verb=False))
    if not plan.has_changes:
        text.append("No changes: everything is up to date.")
    else:
        text.append(f"Plan: {_counts([a.kind for a in plan.actions])}.")
    return text


@view(UpSummary)
def _up_view(summary: UpSummary) -> Text:
    r = summary.result
    rows = [(x.resource.value, x.name, x.action, x.arn, x.changes) for x in r.resources]
    if not r.changed:
        text = Text(f"No changes: all {len(rows)} resources are up to date (0 write calls).\n")
    else:
        counts = _counts([x.action for x in r.resources]).replace("to create", "created")
        counts = counts.replace("to update", "updated").replace("to delete", "deleted")
        text = Text(f"Deployed: {counts} ({r.write_calls} write calls).\n")
    text.append_text(_action_lines(rows, verb=True))
    text.append("Next: deploy execute --delay 20", style="dim")
    return text


@view(DownResult)
def _down_view(result: DownResult) -> Text:
    if not result.resources:
        return Text(f"Nothing to remove: {result.record.name} lists no resources created by "
                    "`deploy up`.")
    text = Text(f"Removed what `deploy up` created ({result.write_calls} write calls):\n")
    for item in result.resources:
        style = "yellow" if item.outcome.startswith("kept") else "green"
        text.append(f"  {item.outcome:<13}", style=style)
        text.append(f"{item.resource.value:<9}{item.name}\n")
    return text


def _interactive(renderer: Renderer, yes: bool) -> bool:
    return not yes and not renderer.is_json and sys.stdin.isatty() and sys.stdout.isatty()


def _record(app: AppContext, session: CloudSession) -> DeploymentRecord:
    project = app.manifest(session.account_id).name
    return DeploymentRecord.load(app.deploy_dir / "state", project,
                                 session.settings.target.value, session.account_id,
                                 session.settings.region)


def _prepare(app: AppContext, session: CloudSession) -> PlannedDeploy:
    manifest = app.manifest(session.account_id)
    state = desired_state(manifest, region=session.settings.region,
                          account_id=session.account_id, build_dir=app.deploy_dir / "build",
                          rendered_dir=app.deploy_dir / "rendered",
                          progress=app.renderer.progress)
    app.renderer.progress("Planning (read-only calls)")
    return plan_deploy(state, session.clients)


@click.command("plan", epilog=PLAN_EPILOG)
@target_options
@output_option
@pass_app
def plan(app: AppContext, target: TargetOptions, output: str) -> None:
    """Show what `deploy up` would change, changing nothing (exit 0 either way)."""
    app.use_output(output)
    session = app.cloud(target)
    planned = _prepare(app, session)
    app.render(PlanSummary(session.settings.target.value, planned.plan))


@click.command("up", epilog=UP_EPILOG)
@target_options
@click.option("-y", "--yes", is_flag=True, help="Apply without asking.")
@output_option
@pass_app
def up(app: AppContext, target: TargetOptions, yes: bool, output: str) -> None:
    """Package, plan and deploy the functions, the flow's role and the flow."""
    renderer = app.use_output(output)
    session = app.cloud(target)
    with project_lock(app.deploy_dir, "up"):
        planned = _prepare(app, session)
        label = session.settings.target.value
        if planned.plan.has_changes and _interactive(renderer, yes):
            renderer.result(PlanSummary(label, planned.plan))
            if not click.confirm("Apply these changes?", default=False):
                raise OperationError("cancelled: nothing was changed")
        record = _record(app, session)
        result = apply_deploy(planned, session.clients, record, progress=renderer.progress)
    app.render(UpSummary(label, result, record.path))


@click.command("down", epilog=DOWN_EPILOG)
@target_options
@click.option("-y", "--yes", is_flag=True, help="Remove without asking.")
@output_option
@pass_app
def down(app: AppContext, target: TargetOptions, yes: bool, output: str) -> None:
    """Remove the flow, functions, policy and role that `deploy up` created (nothing else)."""
    renderer = app.use_output(output)
    session = app.cloud(target)
    with project_lock(app.deploy_dir, "down"):
        record = _record(app, session)
        if record.resources and _interactive(renderer, yes):
            names = ", ".join(f"{r.resource.value} {r.name}" for r in record.resources)
            if not click.confirm(f"Remove {names}?", default=False):
                raise OperationError("cancelled: nothing was removed")
        result = remove_deployment(record, session.clients, progress=renderer.progress)
    app.render(result)
