"""``deploy up``, ``deploy plan`` and ``deploy down``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from deployer.cli.context import AppContext, CloudSession, pass_app
from deployer.cli.options import TargetOptions, output_option, target_options, yes_option
from deployer.cli.render import Renderer, view
from deployer.core.apply import ResourceResult
from deployer.core.deploy import (
    DeploymentRecord,
    DownResult,
    PlanSummary,
    UpSummary,
    apply_deploy,
    desired_state,
    plan_deploy,
    precheck_flows,
    remove_deployment,
)
from deployer.core.locking import project_lock
from deployer.core.plan import Action, ActionKind, Plan
from deployer.errors import OperationError

if TYPE_CHECKING:
    from rich.text import Text

UP_EPILOG = """\b
Examples:
  deploy up                                    the local emulator (started when needed)
  deploy up --target aliyun --region cn-hangzhou --yes
  deploy up -y --output json | jq '.resources[] | {name, arn, action}'
\b
Packages the functions, renders and checks the flow, plans with read-only calls, then applies.
On a terminal it shows the plan and asks before changing anything; --yes, --output json or a
non-interactive stdin skip the question. Resources that an earlier `deploy up` created but
s.yaml no longer declares are deleted only when confirmed or with --yes; otherwise they are
kept and listed. A second run with nothing changed makes no write call.
"""

PLAN_EPILOG = """\b
Examples:
  deploy plan                                  against the local emulator
  deploy plan --target aliyun --region cn-hangzhou
  deploy plan --output json | jq -e '.changes | not'   CI: fail the step when anything changes
  deploy plan --output json | jq -r '.resources[].diff // empty'
\b
Uses read-only calls only. Each change shows the old and new value of every setting (code by
its CRC-64 checksum) and a unified diff of the flow definition; resources s.yaml no longer
declares are listed as deletions. Exit 0 with or without changes; read .changes from the JSON.
"""

DOWN_EPILOG = """\b
Examples:
  deploy down                                  asks first on a terminal
  deploy down --yes --output json
  deploy down --target aliyun --region cn-hangzhou -y
\b
Removes only what `deploy up` recorded in .deploy/state/ (nothing it adopted); a second run
says there is nothing to remove.
"""

SYMBOLS = {ActionKind.CREATE: ("+", "green"), ActionKind.UPDATE: ("~", "yellow"),
           ActionKind.NO_CHANGE: ("=", "dim"), ActionKind.DELETE: ("-", "red")}
DONE = {ActionKind.CREATE: "created", ActionKind.UPDATE: "updated",
        ActionKind.NO_CHANGE: "unchanged", ActionKind.DELETE: "deleted"}


def _details(text: Text, item: Action | ResourceResult) -> None:
    """The settings (old -> new) and the document diff under a resource line."""
    for setting in item.settings:
        if setting.name != "code" or setting.old is not None:
            text.append(f"      {setting.text()}\n")
    for note in getattr(item, "notes", ()):
        text.append(f"      {note}\n", style="dim")
    for line in item.diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else \
            "cyan" if line.startswith("@@") else "dim"
        text.append(f"      {line}\n", style=style)


def _action_lines(items: Sequence[Action | ResourceResult], *, done: bool,
                  details: bool) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    text = Text()
    width = max((len(i.name) for i in items), default=0)
    kind_width = max((len(i.resource.value) for i in items), default=8) + 1
    for item in items:
        kind = item.kind if isinstance(item, Action) else item.action
        symbol, style = SYMBOLS[kind]
        label = DONE[kind] if done else kind.value
        outcome = getattr(item, "outcome", "")
        if outcome and outcome != "deleted":
            label, style = outcome.split(":")[0], "yellow"
        text.append(f"  {symbol} {label:<10}", style=style)
        detail = outcome if outcome.startswith("kept") else item.arn
        line = f"{item.resource.value:<{kind_width}}{item.name:<{width + 2}}{detail}"
        text.append(line.rstrip() + "\n")
        if details and kind is not ActionKind.NO_CHANGE:
            _details(text, item)
    return text


def _counts(kinds: Sequence[ActionKind], *, done: bool) -> str:
    words = ("created", "updated", "deleted") if done else ("to create", "to update",
                                                             "to delete")
    counts = [sum(k is kind for k in kinds) for kind in
              (ActionKind.CREATE, ActionKind.UPDATE, ActionKind.DELETE)]
    parts = [f"{n} {w}" for n, w in zip(counts, words, strict=True)
             if n or w not in ("deleted", "to delete")]
    return ", ".join(parts) + f", {kinds.count(ActionKind.NO_CHANGE)} unchanged"


@view(PlanSummary)
def _plan_view(summary: PlanSummary) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    plan = summary.plan
    text = Text(f"Plan for {summary.target}, region {plan.region}, account "
                f"{plan.account_id}:\n")
    text.append_text(_action_lines(plan.actions, done=False, details=True))
    if not plan.has_changes:
        text.append("No changes: everything is up to date.")
    else:
        text.append(f"Plan: {_counts([a.kind for a in plan.actions], done=False)}.")
    return text


@view(UpSummary)
def _up_view(summary: UpSummary) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    r = summary.result
    applied = [x for x in r.resources if not x.outcome.startswith("kept")]
    if not r.changed and not r.kept:
        text = Text(f"No changes: all {len(applied)} resources are up to date (0 write calls).\n")
    else:
        counts = _counts([x.action for x in applied], done=True)
        text = Text(f"Deployed: {counts} ({r.write_calls} write calls).\n")
    text.append_text(_action_lines(r.resources, done=True, details=False))
    if r.kept:
        text.append(f"Kept {len(r.kept)} resource(s) that s.yaml no longer declares; "
                    "`deploy up --yes` removes them.\n", style="yellow")
    text.append("Next: deploy execute --delay 30", style="dim")
    return text


@view(DownResult)
def _down_view(result: DownResult) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

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


def _connect(app: AppContext, target: TargetOptions) -> CloudSession:
    """Check the templates (no network, placeholder account), then connect: a broken flow
    fails before any emulator is started or any cloud call is made."""
    manifest = app.manifest()
    precheck_flows(manifest, region=target.region, rendered_dir=app.deploy_dir / "rendered")
    return app.cloud(target)


def _prepare(app: AppContext, session: CloudSession, record: DeploymentRecord) -> Plan:
    manifest = app.manifest(session.account_id)
    state = desired_state(manifest, region=session.settings.region,
                          account_id=session.account_id, build_dir=app.deploy_dir / "build",
                          rendered_dir=app.deploy_dir / "rendered",
                          progress=app.renderer.progress)
    app.renderer.progress("Planning (read-only calls)")
    return plan_deploy(state, session.clients, record)


@click.command("plan", epilog=PLAN_EPILOG)
@target_options
@output_option
@pass_app
def plan(app: AppContext, target: TargetOptions, output: str) -> None:
    """Show what `deploy up` would change, changing nothing (exit 0 either way)."""
    app.use_output(output)
    session = _connect(app, target)
    planned = _prepare(app, session, _record(app, session))
    app.render(PlanSummary(session.settings.target.value, planned))


@click.command("up", epilog=UP_EPILOG)
@target_options
@yes_option("Apply without asking (and delete what s.yaml no longer declares).")
@output_option
@pass_app
def up(app: AppContext, target: TargetOptions, yes: bool, output: str) -> None:
    """Package, plan and deploy the functions, the flow's role and the flow."""
    renderer = app.use_output(output)
    session = _connect(app, target)
    with project_lock(app.deploy_dir, "up"):
        record = _record(app, session)
        planned = _prepare(app, session, record)
        label = session.settings.target.value
        prune = yes
        if planned.has_changes and _interactive(renderer, yes):
            renderer.result(PlanSummary(label, planned))
            if not click.confirm("Apply these changes?", default=False):
                raise OperationError("cancelled: nothing was changed")
            prune = True
        elif planned.deletions and not yes:
            names = ", ".join(f"{a.resource.value} {a.name}" for a in planned.deletions)
            renderer.warn(f"s.yaml no longer declares {names}; keeping it (pass --yes to "
                          "delete it)")
        result = apply_deploy(planned, session.clients, record, prune=prune,
                              progress=renderer.progress)
    app.render(UpSummary(label, result, record.path))


@click.command("down", epilog=DOWN_EPILOG)
@target_options
@yes_option("Remove without asking.")
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
