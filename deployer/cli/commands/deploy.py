"""``deploy up``, ``deploy plan`` and ``deploy down``."""

from __future__ import annotations

import sys

import click

from deployer.cli.commands import deploy_views  # noqa: F401 (registers the result views)
from deployer.cli.context import AppContext, CloudSession, pass_app
from deployer.cli.options import (
    TargetOptions,
    force_option,
    output_option,
    strict_option,
    target_options,
    yes_option,
)
from deployer.cli.render import Renderer
from deployer.config.specs import Manifest
from deployer.core.deploy import (
    DeploymentRecord,
    PlanSummary,
    UpSummary,
    apply_deploy,
    desired_state,
    plan_deploy,
    precheck_flows,
    project_next_steps,
    remove_deployment,
)
from deployer.core.hooks import HookRunner
from deployer.core.locking import project_lock
from deployer.core.plan import Plan
from deployer.core.preflight import PreflightError, preflight
from deployer.errors import DeployerError, ExitCode, OperationError

UP_EPILOG = """\b
Examples:
  deploy up                                    the local emulator (started when needed)
  deploy up --target aliyun --region cn-hangzhou --yes
  deploy up -y --output json | jq '.resources[] | {name, arn, action}'
  deploy up --strict --yes                     CI: fail when s.yaml holds resources not deployed
\b
Runs the pre-deploy actions, packages the functions, renders and checks the flows, plans
with read-only calls, then applies in dependency order (each resource's success-deploy
actions right after it). On a terminal it shows the plan and asks before changing anything;
--yes, --output json or a non-interactive stdin skip the question. Resources that an earlier
`deploy up` created but s.yaml no longer declares are deleted only when confirmed or with
--yes; a function a flow still invokes needs its own confirmation (under --yes: --force).
Resources another project owns are not taken over without --force. Resources of other
components are listed as not deployed (--strict: an error). A second run with nothing
changed makes no write call.
"""

PLAN_EPILOG = """\b
Examples:
  deploy plan                                  against the local emulator
  deploy plan --target aliyun --region cn-hangzhou
  deploy plan --output json | jq -e '.changes | not'   CI: fail the step when anything changes
  deploy plan --output json | jq -r '.resources[].diff // empty'
\b
Uses read-only calls only and runs no actions. Each change shows the old and new value of
every setting (code by its CRC-64 checksum) and a unified diff of the flow definition;
resources s.yaml no longer declares are listed as deletions (with the flows that still invoke
a deleted function), resources another project owns with their owner, and resources this
toolkit does not deploy with the reason. Exit 0 with or without changes; read .changes from
the JSON; exit 1 when the target would refuse the deploy (a missing role).
"""

DOWN_EPILOG = """\b
Examples:
  deploy down                                  asks first on a terminal
  deploy down --yes --output json
  deploy down --target aliyun --region cn-hangzhou -y
\b
Removes only what `deploy up` recorded in .deploy/state/ (nothing it adopted, nothing another
project owns now unless --force), running the pre-/success-/fail-/complete-remove actions
of s.yaml around it; a second run says there is nothing to remove.
"""


class DeployInterrupted(DeployerError):
    """Ctrl-C during ``deploy up``/``down``: what was done is recorded (exit 130)."""

    exit_code = ExitCode.INTERRUPTED


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
    manifest = app.manifest(complete=True)
    precheck_flows(manifest, region=target.region, rendered_dir=app.deploy_dir / "rendered")
    return app.cloud(target)


def _manifest(app: AppContext, session: CloudSession, target: TargetOptions) -> Manifest:
    return app.manifest(session.account_id, target.region, complete=True)


def _preflight(session: CloudSession, manifest: Manifest) -> None:
    """What the target would refuse, before anything runs or is written (exit 1)."""
    problems = preflight(manifest, session.clients, account_id=session.account_id,
                         target=session.settings.target.value)
    if problems:
        raise PreflightError(problems)


def _prepare(app: AppContext, session: CloudSession, record: DeploymentRecord,
             manifest: Manifest) -> Plan:
    state = desired_state(manifest, region=session.settings.region,
                          account_id=session.account_id, build_dir=app.deploy_dir / "build",
                          rendered_dir=app.deploy_dir / "rendered",
                          progress=app.renderer.progress)
    app.renderer.progress("Planning (read-only calls)")
    return plan_deploy(state, session.clients, record)


@click.command("plan", epilog=PLAN_EPILOG)
@target_options
@strict_option
@output_option
@pass_app
def plan(app: AppContext, target: TargetOptions, strict: bool, output: str) -> None:
    """Show what `deploy up` would change, changing nothing (exit 0 either way)."""
    app.use_output(output)
    app.strict = strict
    session = _connect(app, target)
    manifest = _manifest(app, session, target)
    _preflight(session, manifest)
    planned = _prepare(app, session, _record(app, session), manifest)
    app.render(PlanSummary(session.settings.target.value, planned))


def _guard(planned: Plan, renderer: Renderer, yes: bool, force: bool) -> bool:
    """Whether to prune; refuses (before any write) to take over another project's resources
    without ``force``, or to delete a function a flow still invokes under --yes without it."""
    if planned.conflicts and not force:
        names = ", ".join(f"{a.resource.value} {a.name} (project {a.owner})"
                          for a in planned.conflicts)
        raise OperationError(f"these resources belong to another project: {names}; nothing "
                             "was changed", hint="rename them in s.yaml (deploy init names "
                             "them after the project), or pass --force to take them over")
    breaking = planned.breaking_deletions
    if breaking and _interactive(renderer, yes):
        for action in breaking:
            if not click.confirm(f"Delete function {action.name} although flow "
                                 f"{', '.join(action.invoked_by)} still invokes it?",
                                 default=False):
                raise OperationError("cancelled: nothing was changed")
        return True
    if breaking and yes and not force:
        names = "; ".join(f"{a.name} (invoked by flow {', '.join(a.invoked_by)})"
                          for a in breaking)
        raise OperationError(f"refusing to delete functions a flow still invokes: {names}; "
                             "nothing was changed", hint="keep them in s.yaml, change the "
                             "flow first, or pass --force to delete them anyway")
    return yes


def _confirm(planned: Plan, renderer: Renderer, label: str, yes: bool, prune: bool) -> bool:
    if planned.has_changes and _interactive(renderer, yes):
        renderer.result(PlanSummary(label, planned))
        if not click.confirm("Apply these changes?", default=False):
            raise OperationError("cancelled: nothing was changed")
        return True
    if planned.deletions and not prune:
        names = ", ".join(f"{a.resource.value} {a.name}" for a in planned.deletions)
        renderer.warn(f"s.yaml no longer declares {names}; keeping it (pass --yes to "
                      "delete it)")
    return prune


class _ResourceHooks:
    """success-/fail-/complete-deploy of each resource, as apply finishes it."""

    def __init__(self, hooks: HookRunner) -> None:
        self.hooks = hooks

    def resource_done(self, resource: str) -> None:
        self.hooks.run("success", resource)
        self.hooks.run("complete", resource)

    def resource_failed(self, resource: str, error: BaseException) -> None:
        if isinstance(error, KeyboardInterrupt):
            return
        self.hooks.run("fail", resource)
        self.hooks.run("complete", resource)


def _interrupted(record: DeploymentRecord, last: list[str]) -> DeployInterrupted:
    doing = f" while {last[-1]}" if last else ""
    return DeployInterrupted(
        f"interrupted{doing}; what was created so far is recorded in {record.path}",
        hint="run `deploy up` again: it plans from what is deployed and finishes the job")


@click.command("up", epilog=UP_EPILOG)
@target_options
@yes_option("Apply without asking (and delete what s.yaml no longer declares).")
@force_option("Take over resources another project owns, and (with --yes) delete functions "
              "a flow still invokes.")
@strict_option
@output_option
@pass_app
def up(app: AppContext, target: TargetOptions, yes: bool, force: bool, strict: bool,
       output: str) -> None:
    """Package, plan and deploy the project's functions and flows (with their roles)."""
    renderer = app.use_output(output)
    app.strict = strict
    session = _connect(app, target)
    manifest = _manifest(app, session, target)
    _preflight(session, manifest)
    label = session.settings.target.value
    last: list[str] = []

    def progress(message: str) -> None:
        last.append(message)
        renderer.progress(message)

    hooks = HookRunner(manifest.hooks, "deploy", renderer.progress)
    with project_lock(app.deploy_dir, "up"):
        record = _record(app, session)
        try:
            hooks.run("pre")
            hooks.run_each("pre", manifest.resource_names())
            planned = _prepare(app, session, record, manifest)
            prune = _confirm(planned, renderer, label, yes, _guard(planned, renderer, yes,
                                                                    force))
            result = apply_deploy(planned, session.clients, record, prune=prune,
                                  progress=progress, events=_ResourceHooks(hooks))
        except KeyboardInterrupt:
            raise _interrupted(record, last) from None
        except BaseException:
            hooks.run("fail")
            hooks.run("complete")
            raise
        hooks.run("success")
        hooks.run("complete")
    for warning in result.warnings:
        renderer.warn(warning)
    app.render(UpSummary(label, result, record.path, planned.state,
                         project_next_steps(manifest, planned.state)))


def _remove_hooks(app: AppContext, session: CloudSession) -> tuple[HookRunner, tuple[str, ...]]:
    """The remove hooks of s.yaml (none when it cannot be loaded: down works from the
    record alone)."""
    from deployer.config.actions import Hooks

    try:
        manifest = app.manifest(session.account_id)
    except DeployerError as exc:
        if app.manifest_file.exists():
            app.renderer.warn(f"s.yaml does not load ({exc.message}); its remove actions "
                              "are not run")
        return HookRunner(Hooks(), "remove", app.renderer.progress), ()
    return HookRunner(manifest.hooks, "remove", app.renderer.progress), \
        manifest.resource_names()


@click.command("down", epilog=DOWN_EPILOG)
@target_options
@yes_option("Remove without asking.")
@force_option("Also delete recorded resources whose marker now names another project.")
@output_option
@pass_app
def down(app: AppContext, target: TargetOptions, yes: bool, force: bool, output: str) -> None:
    """Remove the flows, functions, policies and roles that `deploy up` created (nothing else)."""
    renderer = app.use_output(output)
    session = app.cloud(target)
    hooks, resources = _remove_hooks(app, session)
    with project_lock(app.deploy_dir, "down"):
        record = _record(app, session)
        if record.resources and _interactive(renderer, yes):
            names = ", ".join(f"{r.resource.value} {r.name}" for r in record.resources)
            if not click.confirm(f"Remove {names}?", default=False):
                raise OperationError("cancelled: nothing was removed")
        try:
            hooks.run("pre")
            hooks.run_each("pre", resources)
            result = remove_deployment(record, session.clients, progress=renderer.progress,
                                       force=force)
        except KeyboardInterrupt:
            raise DeployInterrupted(f"interrupted; what was removed so far is recorded in "
                                    f"{record.path}", hint="run `deploy down` again") from None
        except BaseException:
            hooks.run_each("fail", resources)
            hooks.run("fail")
            hooks.run("complete")
            raise
        hooks.run_each("success", resources)
        hooks.run_each("complete", resources)
        hooks.run("success")
        hooks.run("complete")
    app.render(result)
