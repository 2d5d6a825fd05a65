"""``deploy dev``: deploy once, then keep the deployment in step with the files as they are saved.

Pipeline::

    DevSession.deploy_all()      the whole project, as `deploy up --yes` (package, check, plan,
                                 apply); again whenever s.yaml changes
    for each batch of changed paths from a ChangeSource (file events, or a test's script):
        classify   s.yaml -> the whole project; a file under a function's code directory ->
                   that function; a file beside a flow's definition -> that flow
        function   compile-check its Python files, package it alone, plan + apply a desired
                   state holding only it -> UpdateFunction (FC retires its warm instances)
        flow       render + check it alone, plan + apply it with its role by ARN -> UpdateFlow

Every update goes through the same ``plan_deploy`` / ``apply_deploy`` as ``deploy up``, so only
what differs from the cloud is written. A broken edit (invalid s.yaml or flow, a missing
handler, a Python syntax error) yields a :class:`DevUpdate` carrying the error and its
diagnostics; nothing is applied and the last good deployment keeps running. The loop never
prints: each update goes to a callback.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from deployer.config.manifest import load_manifest
from deployer.config.specs import FlowSpec, FunctionSpec, Manifest
from deployer.config.values import ExternalValues
from deployer.core import roles
from deployer.core.apply import DeployResult, ResourceResult
from deployer.core.deploy import (
    DeploymentRecord,
    Progress,
    apply_deploy,
    desired_state,
    plan_deploy,
)
from deployer.core.locking import project_lock
from deployer.core.packaging import collect_files
from deployer.core.plan import Clients, DesiredState
from deployer.core.watching import ChangeSource, WatchRoot
from deployer.errors import DeployerError, InvalidInputError

__all__ = ["DevSession", "DevTarget", "DevUpdate", "run_dev_loop"]

def _quiet(message: str) -> None:
    """The default progress sink: discards the message."""


@dataclass(frozen=True, slots=True)
class DevTarget:
    """Where ``deploy dev`` deploys: clients of one connection, region, account, and the
    directory for build output, rendered flows and the deployment record."""

    clients: Clients
    region: str
    account_id: str
    target: str
    deploy_dir: Path


@dataclass(frozen=True, slots=True)
class DevUpdate:
    """One round of ``deploy dev``: what triggered it and what it wrote (or why not).

    ``kind`` is ``deploy`` (the whole project), ``update`` (single resources), ``unchanged``
    (files changed but the cloud already matched) or ``error`` (nothing applied).
    """

    kind: str
    trigger: tuple[str, ...]
    resources: tuple[ResourceResult, ...] = ()
    write_calls: int = 0
    seconds: float = 0.0
    error: str | None = None
    details: tuple[str, ...] = ()
    hint: str | None = None
    at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    warnings: tuple[str, ...] = ()  # what the target said it cannot do exactly as asked

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def written(self) -> tuple[ResourceResult, ...]:
        """The resources this round created or updated."""
        return tuple(r for r in self.resources if r.action.value != "no-change")

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "at": self.at, "trigger": list(self.trigger),
                "seconds": round(self.seconds, 3), "write_calls": self.write_calls,
                "resources": [{"type": r.resource.value, "name": r.name, "arn": r.arn,
                               "action": r.action.value, "changes": list(r.changes)}
                              for r in self.written],
                "error": None if self.ok else {"message": self.error,
                                               "details": list(self.details),
                                               "hint": self.hint}}


def check_python_syntax(spec: FunctionSpec, base: Path) -> None:
    """Compile every Python file the package of ``spec`` would hold; InvalidInputError naming
    ``file:line:column`` (relative to ``base``) of the first syntax error. A ready .zip
    package is deployed as it is (nothing to compile)."""
    if spec.code_is_zip:
        return
    for name, path in collect_files(spec.code_dir).items():
        if not name.endswith(".py"):
            continue
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            shown = f"{_shown(path, base)}:{exc.lineno or 1}:{exc.offset or 1}"
            raise InvalidInputError(f"{shown}: {exc.msg} (function {spec.function_name})",
                                    hint="fix it and save again") from None


class DevSession:
    """The project being developed and the state of its last good deployment."""

    def __init__(self, manifest_file: Path, target: DevTarget,
                 progress: Progress = _quiet, values: ExternalValues | None = None) -> None:
        self.manifest_file = manifest_file
        self.values = values
        self.target = target
        self.progress = progress
        self.manifest: Manifest | None = None
        self._full_deploy_pending = True  # until the whole project deployed cleanly

    # --- what to watch and what a change means --------------------------------------------

    def load(self) -> None:
        """Read s.yaml, so :meth:`roots` names what it declares (errors wait for the deploy)."""
        try:
            self.manifest = load_manifest(self.manifest_file, account_id=self.target.account_id,
                                          values=self.values)
        except DeployerError:
            return

    def roots(self) -> list[WatchRoot]:
        """s.yaml's directory (alone), each code directory (with subdirectories) and each
        flow definition's directory (alone)."""
        found = [WatchRoot(self.manifest_file.parent, recursive=False)]
        if self.manifest is not None:
            found += [WatchRoot(f.code_dir.parent, recursive=False) if f.code_is_zip
                      else WatchRoot(f.code_dir, recursive=True)
                      for f in self.manifest.functions]
            found += [WatchRoot(f.definition.parent, recursive=False)
                      for f in self.manifest.flows]
        return list(dict.fromkeys(found))

    def classify(self, paths: Iterable[Path]
                 ) -> tuple[bool, list[FunctionSpec], list[FlowSpec], list[Path]]:
        """(s.yaml changed, functions changed, flows changed, the relevant paths)."""
        manifest_changed, functions, flows, relevant = False, [], [], []
        for path in sorted(set(paths)):
            hit = False
            if path == self.manifest_file:
                manifest_changed = hit = True
            for spec in self.manifest.functions if self.manifest else ():
                if path == spec.code_dir or path.is_relative_to(spec.code_dir):
                    hit = True
                    if spec not in functions:
                        functions.append(spec)
            for flow in self.manifest.flows if self.manifest else ():
                if path.parent == flow.definition.parent and (
                        path == flow.definition or path.suffix in (".j2", ".yaml", ".yml")):
                    hit = True
                    if flow not in flows:
                        flows.append(flow)
            if hit:
                relevant.append(path)
        return manifest_changed, functions, flows, relevant

    # --- rounds ----------------------------------------------------------------------------

    def deploy_all(self, trigger: tuple[str, ...] = ("start",)) -> DevUpdate:
        """(Re)load s.yaml and deploy the whole project, as ``deploy up --yes`` does."""
        started = time.monotonic()
        try:
            manifest = load_manifest(self.manifest_file, account_id=self.target.account_id,
                                     values=self.values)
            self.manifest = manifest  # watch what it names, even before it deploys cleanly
            for spec in manifest.functions:
                check_python_syntax(spec, self.manifest_file.parent)
            result = self._apply(manifest, None)
        except DeployerError as exc:
            self._full_deploy_pending = True
            return _failed(exc, trigger, started)
        self._full_deploy_pending = False
        return _done("deploy", trigger, result, started)

    def apply_changes(self, paths: Iterable[Path]) -> DevUpdate | None:
        """Bring the deployment in step with the changed ``paths``; None when none of them is
        part of the project (a README, a scratch file)."""
        manifest_changed, functions, flows, relevant = self.classify(paths)
        if not relevant:
            return None
        trigger = tuple(_shown(p, self.manifest_file.parent) for p in relevant)
        if manifest_changed or self._full_deploy_pending or self.manifest is None:
            return self.deploy_all(trigger)
        started = time.monotonic()
        manifest = self.manifest
        try:
            for spec in functions:
                check_python_syntax(spec, self.manifest_file.parent)
            only = frozenset([*(f.resource for f in functions), *(f.resource for f in flows)])
            result = self._apply(manifest, only)
        except DeployerError as exc:
            return _failed(exc, trigger, started)
        return _done("update", trigger, result, started)

    def _apply(self, manifest: Manifest, only: frozenset[str] | None) -> DeployResult:
        """Deploy ``only`` these resources (None: all); flows are checked against the whole
        project, so a flow edited alone still sees every function s.yaml defines."""
        t = self.target
        state = desired_state(manifest, region=t.region, account_id=t.account_id,
                              build_dir=t.deploy_dir / "build",
                              rendered_dir=t.deploy_dir / "rendered", progress=self.progress,
                              only=only)
        if only is not None:
            state = _without_roles(state)
        planned = plan_deploy(state, t.clients)
        with project_lock(t.deploy_dir, "dev"):
            record = DeploymentRecord.load(t.deploy_dir / "state", manifest.name, t.target,
                                           t.account_id, t.region)
            return apply_deploy(planned, t.clients, record, progress=self.progress)


def _without_roles(state: DesiredState) -> DesiredState:
    """Flows that keep the role they have (by ARN): updating one flow alone must not re-plan
    the role's policy over a subset of the functions."""
    flows = tuple(
        dataclasses.replace(f, role=None, role_arn=roles.role_arn(state.account_id, f.role.name))
        if f.role is not None else f for f in state.flows)
    return dataclasses.replace(state, flows=flows, flow_roles=(), service_roles=(),
                               log_stores=())


def _done(kind: str, trigger: tuple[str, ...], result: DeployResult, started: float
          ) -> DevUpdate:
    return DevUpdate(kind if result.changed or kind == "deploy" else "unchanged", trigger,
                     result.resources, result.write_calls, time.monotonic() - started,
                     warnings=result.warnings)


def _failed(exc: DeployerError, trigger: tuple[str, ...], started: float) -> DevUpdate:
    return DevUpdate("error", trigger, seconds=time.monotonic() - started, error=exc.message,
                     details=tuple(exc.details()), hint=exc.hint)


def _shown(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def run_dev_loop(session: DevSession, changes: ChangeSource,
                 on_update: Callable[[DevUpdate], None]) -> None:
    """Deploy the project, then apply every batch of changes until ``changes`` closes.

    Blocks; returns when the change source is closed (``KeyboardInterrupt`` propagates). What
    was deployed stays deployed either way. When an update changes what is watched (s.yaml
    named new code directories or templates), the source is told the new roots.
    """
    session.load()
    roots = session.roots()
    changes.watch(roots)  # before deploying, so a save during the first deploy is not lost
    on_update(session.deploy_all())
    while True:
        if session.roots() != roots:
            roots = session.roots()
            changes.watch(roots)
        batch = changes.next_batch()
        if batch is None:
            return
        update = session.apply_changes(batch)
        if update is not None:
            on_update(update)
