"""Apply a plan: the only code in a deploy that changes anything in the cloud.

Each action is applied in plan order (the default roles and logstores ``auto`` needs, each
resource of s.yaml in dependency order, versions and aliases, then the deletions), so a
failure part-way leaves resources that the next ``deploy up`` converges from. Creations and
removals are reported to a :class:`CreationLog` right after they happen, so ``deploy down``
removes exactly what ``deploy up`` created and nothing else. Everything written carries the
project's ownership marker (:mod:`deployer.core.ownership`).

After each resource of s.yaml is applied, the values its dependents were built with
(``${resources.X.output...}``) are checked against what the service answered, before any
dependent is touched; and :class:`ApplyEvents` hears that the resource is done (or failed),
which is when its ``success-deploy`` / ``fail-deploy`` actions run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from deployer.cloud.fc import RemoteFunction
from deployer.core import ownership, roles
from deployer.core.changes import SettingChange
from deployer.core.custom_domains import apply_custom_domain
from deployer.core.invocation_settings import SETTING_TYPES, apply_invocation_setting
from deployer.core.layers import publish_layer
from deployer.core.plan_model import Action, Clients, DesiredFlow, DesiredRole, Plan
from deployer.core.record import CreationLog
from deployer.core.releases import RELEASE_TYPES, ReleaseApplier
from deployer.core.removal import forget_gone, remove_resource
from deployer.core.resources import ActionKind, ResourceType
from deployer.core.service_roles import ensure_service_role
from deployer.core.triggers import apply_trigger
from deployer.errors import OperationError

__all__ = ["ApplyEvents", "DeployResult", "ResourceResult", "apply_plan"]

#: The outcome of a deletion the user did not confirm.
KEPT_UNCONFIRMED = "kept: not confirmed (deploy up --yes removes it)"


@dataclass(frozen=True, slots=True)
class ResourceResult:
    resource: ResourceType
    name: str
    arn: str
    action: ActionKind
    changes: tuple[str, ...]
    settings: tuple[SettingChange, ...] = ()
    diff: str = ""
    outcome: str = ""  # for deletions: deleted | already gone | kept: <reason>
    url: str = ""  # an HTTP trigger's URL


@dataclass(frozen=True, slots=True)
class DeployResult:
    region: str
    account_id: str
    resources: tuple[ResourceResult, ...]
    write_calls: int
    warnings: tuple[str, ...] = ()  # what the target said it cannot do exactly as asked

    @property
    def changed(self) -> bool:
        return self.write_calls > 0

    @property
    def kept(self) -> tuple[ResourceResult, ...]:
        """Deletions that were planned but not carried out."""
        return tuple(r for r in self.resources if r.outcome.startswith("kept"))


class ApplyEvents(Protocol):
    """Told when all actions of one s.yaml resource are applied, or one of them failed."""

    def resource_done(self, resource: str) -> None: ...

    def resource_failed(self, resource: str, error: BaseException) -> None: ...


class _Applier:
    def __init__(self, plan: Plan, clients: Clients, log: CreationLog | None,
                 progress: Callable[[str], None]) -> None:
        self.plan, self.state, self.clients = plan, plan.state, clients
        self.log, self.progress = log, progress
        self.writes = 0
        self.role_arns: dict[str, str] = {}
        self.warnings: list[str] = []
        self.outputs: dict[str, dict[str, Any]] = {}

    def _created(self, action: Action, arn: str) -> None:
        if self.log is not None:
            self.log.created(action.resource, action.name, arn)

    def _claimed(self, action: Action) -> None:
        """A resource taken over from another project with --force."""
        if action.owner and self.log is not None:
            self.log.taken_over(action.resource, action.name, action.arn, action.owner)

    def function(self, action: Action) -> str:
        desired = next(f for f in self.state.functions if f.name == action.name)
        fc = self.clients.fc
        if action.kind is ActionKind.CREATE:
            self.progress(f"creating function {action.name}")
            tags = dict(desired.tags)
            if self.state.project:
                tags[ownership.PROJECT_TAG] = self.state.project
            remote = fc.create_function(action.name, desired.config, desired.zip_bytes,
                                        tags or None)
            self.writes += 1
            self._created(action, remote.arn)
        else:
            code = action.changed("code")
            config = any(s.name not in ("code", "tags") for s in action.settings)
            self.progress(f"updating function {action.name} ({', '.join(action.changes)})")
            if code or config:
                remote = fc.update_function(
                    action.name, config=desired.config if config else None,
                    zip_bytes=desired.zip_bytes if code else None)
                self.writes += 1
            if action.changed("tags"):
                self._retag(action, dict(desired.tags))
            if not (code or config):
                remote = fc.get_function(action.name) or _missing(action.name)
            self._claimed(action)
        if action.kind is ActionKind.CREATE or action.changed("runtime"):  # said once
            self.warnings += [w for w in remote.warnings if w not in self.warnings]
        self._output(desired.resource, remote)
        return remote.arn

    def _retag(self, action: Action, tags: dict[str, str]) -> None:
        """Bring the function's tags to ``tags`` (the project's marker stays)."""
        change = next(s for s in action.settings if s.name == "tags")
        gone = [k for k in (change.old or {}) if k not in tags]
        if gone:
            self.clients.fc.untag_function(action.arn, gone)
            self.writes += 1
        if tags:
            self.clients.fc.tag_function(action.arn, tags)
            self.writes += 1

    def _output(self, resource: str, remote: RemoteFunction) -> None:
        self.outputs[resource] = _remote_output(remote, self.state.region)

    def role(self, action: Action, role: DesiredRole) -> str:
        ram = self.clients.ram
        if action.kind is ActionKind.CREATE:
            self.progress(f"creating role {role.name}")
            created = ram.create_role(role.name, roles.trust_policy(),
                                      ownership.role_description(self.state.project))
            self.writes += 1
            self._created(action, created.arn)
            arn = created.arn
        else:
            self.progress(f"updating the trust policy of role {role.name}")
            ram.update_trust_policy(role.name, roles.trust_policy())
            self.writes += 1
            self._claimed(action)
            arn = action.arn
        self.role_arns[role.name] = arn
        return arn

    def policy(self, action: Action, role: DesiredRole) -> None:
        ram = self.clients.ram
        document = roles.invoke_policy_for(role, self.state)
        if action.kind is ActionKind.CREATE or action.diff:
            if action.kind is not ActionKind.CREATE:
                self.progress(f"replacing policy {role.policy_name}")
                self.writes += int(ram.detach_policy(role.name, role.policy_name))
                self.writes += int(ram.delete_policy(role.policy_name))
            else:
                self.progress(f"creating policy {role.policy_name}")
            ram.create_policy(role.policy_name, document,
                              ownership.policy_description(self.state.project, role.name))
            self.writes += 1
            if action.kind is ActionKind.CREATE:
                self._created(action, action.arn)
        self.progress(f"attaching policy {role.policy_name} to role {role.name}")
        ram.attach_policy(role.name, role.policy_name)
        self.writes += 1

    def flow(self, action: Action, flow: DesiredFlow) -> str:
        role_arn = flow.role_arn
        if flow.role is not None:
            role_arn = self.role_arns.get(flow.role.name) or self._role_arn(flow.role)
        flows = self.clients.flows
        definition = ownership.mark_definition(flow.definition, self.state.project) \
            if self.state.project else flow.definition
        if action.kind is ActionKind.CREATE:
            self.progress(f"creating flow {flow.name}")
            flows.create_flow(flow.name, definition, description=flow.description,
                              role_arn=role_arn, execution_mode=flow.execution_mode)
            self.writes += 1
            self._created(action, action.arn)
            return action.arn
        if action.changed("executionMode"):
            raise OperationError(
                f"flow {flow.name}: the execution mode of an existing flow cannot be changed",
                hint="run `deploy down` and then `deploy up` to re-create the flow",
            )
        self.progress(f"updating flow {flow.name} ({', '.join(action.changes)})")
        flows.update_flow(flow.name, definition, description=flow.description,
                          role_arn=role_arn)
        self.writes += 1
        self._claimed(action)
        return action.arn

    def service_role(self, action: Action) -> None:
        from deployer.core.service_roles import default_role

        role = next((r for r in self.state.service_roles if r.name == action.name), None) \
            or default_role(action.name)
        if role is None:  # pragma: no cover - plans name only known roles
            return
        self.progress(f"ensuring role {role.name} (role: auto; trusts {role.service})")
        _, calls = ensure_service_role(role, self.clients)
        self.writes += calls

    def log_store(self, action: Action) -> None:
        admin = self.clients.logs
        project, _, logstore = action.name.partition("/")
        if admin is None:
            raise OperationError("this target has no Log Service client to create "
                                 f"{action.name} (logConfig: auto)")
        self.progress(f"creating Log Service project {project} and logstore {logstore} "
                      "(logConfig: auto)")
        if not admin.project_exists(project):
            admin.create_project(project, f"Logs of project {self.state.project} "
                                          "(logConfig: auto, managed by cloudflow-deployer)")
            self.writes += 1
        if not admin.logstore_exists(project, logstore):
            admin.create_logstore(project, logstore)
            self.writes += 1

    def delete(self, action: Action, prune: bool) -> str:
        if not prune:
            return KEPT_UNCONFIRMED
        item = next(r for r in self.plan.recorded
                    if r.resource is action.resource and r.name == action.name)
        self.progress(f"removing {action.resource.value} {action.name} (no longer in s.yaml)")
        outcome, calls = remove_resource(item, self.plan.recorded, self.clients)
        self.writes += calls
        if self.log is not None and not outcome.startswith("kept"):
            self.log.forget(action.resource, action.name)
        return outcome

    def _role_arn(self, role: DesiredRole) -> str:
        remote = self.clients.ram.get_role(role.name)
        return remote.arn if remote else roles.role_arn(self.state.account_id, role.name)

    def verify(self, resource: str) -> None:
        """The values dependents of ``resource`` were built with are what it yielded."""
        actual = self.outputs.get(resource)
        if actual is None:
            return
        for used in self.state.consumed:
            if used.resource != resource:
                continue
            value: Any = actual
            for key in used.keys:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None and value != used.value:
                raise OperationError(
                    f"{used.reference} (used by {used.consumer}) was planned as "
                    f"{used.value!r} but deploying {resource} yielded {value!r}; nothing "
                    f"after {resource} was applied",
                    hint="run `deploy up` again: it plans with the deployed values")


def _missing(name: str) -> RemoteFunction:
    raise OperationError(f"function {name} disappeared while it was being updated",
                         hint="run `deploy up` again")


def _remote_output(remote: RemoteFunction, region: str) -> dict[str, Any]:
    """What fc3's deploy output holds for the function the service answered with (the keys
    :func:`deployer.config.outputs.function_output` plans with)."""
    c = remote.config
    out: dict[str, Any] = {
        "region": region, "functionName": remote.name, "functionArn": remote.arn,
        "description": c.description, "runtime": c.runtime, "handler": c.handler,
        "memorySize": c.memory_size, "timeout": c.timeout, "cpu": c.cpu,
        "diskSize": c.disk_size, "instanceConcurrency": c.instance_concurrency,
        "internetAccess": c.internet_access,
        "environmentVariables": dict(c.environment_variables)}
    if c.role:
        out["role"] = c.role
    log = c.log_config
    if log is not None:
        out["logConfig"] = {"project": log.project, "logstore": log.logstore,
                            "enableRequestMetrics": log.enable_request_metrics,
                            "enableInstanceMetrics": log.enable_instance_metrics,
                            **({"logBeginRule": log.log_begin_rule}
                               if log.log_begin_rule else {})}
    return out


def _dispatch(applier: _Applier, action: Action, prune: bool,
              releases: ReleaseApplier) -> tuple[str, str]:
    """Apply one action; ``(arn, outcome)``."""
    state = applier.state
    if action.resource is ResourceType.LAYER:
        if action.is_write:
            applier.writes += 1
            applier.progress(f"publishing layer {action.name}")
            return publish_layer(action, state, applier.clients), ""
        return action.arn, ""
    if action.resource in SETTING_TYPES:
        if action.is_write:
            applier.writes += 1
            apply_invocation_setting(action, state, applier.clients, applier.progress)
        return action.arn, "deleted" if action.kind is ActionKind.DELETE else ""
    if action.resource in (ResourceType.TRIGGER, ResourceType.CUSTOM_DOMAIN):
        if action.is_write:
            applier.writes += 1
            apply = apply_trigger if action.resource is ResourceType.TRIGGER else \
                apply_custom_domain
            url = apply(action, state, applier.clients, applier.progress)
            return action.arn, "deleted" if action.kind is ActionKind.DELETE else url
        return action.arn, action.url
    if action.kind is ActionKind.DELETE and action.resource not in RELEASE_TYPES:
        return action.arn, applier.delete(action, prune)
    if not action.is_write:
        if action.resource is ResourceType.ROLE:
            applier.role_arns[action.name] = action.arn
        applier._claimed(action)  # taken over with --force although nothing changes
        return action.arn, ""
    if action.resource in RELEASE_TYPES:
        releases.apply(action)
    elif action.resource is ResourceType.FUNCTION:
        return applier.function(action), ""
    elif action.resource is ResourceType.ROLE:
        return applier.role(action, state.roles()[action.name]), ""
    elif action.resource is ResourceType.POLICY:
        role = next(r for r in state.roles().values() if r.policy_name == action.name)
        applier.policy(action, role)
    elif action.resource is ResourceType.SERVICE_ROLE:
        applier.service_role(action)
    elif action.resource is ResourceType.LOG_STORE:
        applier.log_store(action)
    else:
        return applier.flow(action, next(f for f in state.flows if f.name == action.name)), ""
    return action.arn, ""


def apply_plan(
    plan: Plan,
    clients: Clients,
    *,
    log: CreationLog | None = None,
    prune: bool = False,
    progress: Callable[[str], None] = lambda message: None,
    events: ApplyEvents | None = None,
) -> DeployResult:
    """Carry out every write action of ``plan``; return what each resource ended as.

    Deletions (resources the record holds but s.yaml no longer declares) run only with
    ``prune``; otherwise they are reported as kept. Recorded resources that are already gone
    are forgotten from ``log``. Raises :class:`~deployer.cloud.errors.CloudError` on the first
    failed call (after telling ``events`` which resource failed), and OperationError when a
    resource yields another output than its dependents were built with; resources handled
    before stay as they are (the next run converges).
    """
    applier = _Applier(plan, clients, log, progress)
    releases = ReleaseApplier(plan.state, clients, progress)
    results: list[ResourceResult] = []
    current = ""
    for action in plan.actions:
        if action.origin != current and current:
            applier.verify(current)
            if events is not None:
                events.resource_done(current)
        current = action.origin
        try:
            arn, outcome = _dispatch(applier, action, prune, releases)
        except BaseException as exc:
            if events is not None and current:
                events.resource_failed(current, exc)
            raise
        url = ""
        if action.resource in (ResourceType.TRIGGER, ResourceType.CUSTOM_DOMAIN) and \
                outcome != "deleted":
            url, outcome = outcome, ""
        results.append(ResourceResult(action.resource, action.name, arn, action.kind,
                                      action.changes, action.settings, action.diff, outcome,
                                      url))
    if current:
        applier.verify(current)
        if events is not None:
            events.resource_done(current)
    if log is not None:
        forget_gone(plan, log)
    return DeployResult(plan.region, plan.account_id, tuple(results),
                        applier.writes + releases.writes, tuple(applier.warnings))
