"""The documented default roles of Function Compute and CloudFlow, and creating them.

Projects name these roles without creating them: fc3's ``role: auto`` means
``aliyunfcdefaultrole`` (created by fc3's ``initFcDefaultServiceRole``); templates write
``acs:ram::${config('AccountID')}:role/aliyunfcdefaultrole`` or ``AliyunFCDefaultRole``
(RAM role names ignore case: both are one role); CloudFlow templates ask for
``fnf-execution-default-role``. In the cloud the consoles create them once per account ("one
click authorization"); ``deploy roles init`` does the same on either target, and ``deploy
up`` creates the one ``role: auto`` needs. Each is created with the documented trust and
system policies; an existing one only gets the policies it lacks. They are shared by every
project of the account, so ``deploy down`` never deletes them.

Sources: AliyunFCDefaultRole trusts fc.aliyuncs.com and holds AliyunFCDefaultRolePolicy (the
RAM console's service-role table, CONFIRMED); fnf-execution-default-role trusts
fnf.aliyuncs.com and holds AliyunFCInvocationAccess (devsapp/start-flow-rag publish.yaml,
CONFIRMED for that template); AliyunFnFDefaultRole the same (INFERRED);
aliyunosseventnotificationrole trusts oss.aliyuncs.com with AliyunFCInvocationAccess
(start-flow-rag, CONFIRMED).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from deployer.config.specs import Manifest
from deployer.core import roles
from deployer.core.plan_model import Clients, DesiredServiceRole
from deployer.errors import InvalidInputError

__all__ = ["DEFAULT_ROLES", "RolesInitResult", "default_role", "ensure_service_role",
           "init_default_roles", "referenced_default_roles", "role_name_of"]

DEFAULT_ROLES: dict[str, DesiredServiceRole] = {
    role.name.lower(): role for role in (
        DesiredServiceRole("aliyunfcdefaultrole", roles.FUNCTION_COMPUTE_SERVICE,
                           ("AliyunFCDefaultRolePolicy",),
                           "Function Compute's default role (AliyunFCDefaultRole)"),
        DesiredServiceRole("fnf-execution-default-role", roles.FNF_SERVICE,
                           ("AliyunFCInvocationAccess",),
                           "CloudFlow's default execution role"),
        DesiredServiceRole("AliyunFnFDefaultRole", roles.FNF_SERVICE,
                           ("AliyunFCInvocationAccess",), "CloudFlow's default role"),
        DesiredServiceRole("aliyunosseventnotificationrole", "oss.aliyuncs.com",
                           ("AliyunFCInvocationAccess",),
                           "OSS event notifications invoking Function Compute"),
    )
}


def default_role(name: str) -> DesiredServiceRole | None:
    """The documented default role named ``name`` (any case), or None."""
    return DEFAULT_ROLES.get(name.lower())


def role_name_of(arn_or_name: str) -> str:
    """``acs:ram::1:role/x`` -> ``x``; a bare name as it is."""
    return arn_or_name.rpartition(":role/")[2] if ":role/" in arn_or_name else arn_or_name


def ensure_service_role(role: DesiredServiceRole, clients: Clients) -> tuple[str, int]:
    """Create ``role`` (or attach the policies it lacks); ``(outcome, write calls)``."""
    ram = clients.ram
    writes = 0
    if ram.get_role(role.name) is None:
        ram.create_role(role.name, roles.trust_policy(role.service), role.description)
        writes += 1
        outcome = "created"
    else:
        outcome = "exists"
    attached = {p.name for p in ram.list_role_policies(role.name)}
    for policy in role.policies:
        if policy not in attached:
            ram.attach_policy(role.name, policy, policy_type="System")
            writes += 1
            outcome = "created" if outcome == "created" else "updated"
    return outcome, writes


@dataclass(frozen=True, slots=True)
class RolesInitResult:
    """``deploy roles init``: each role with its ARN and what happened (created, updated:
    policies attached, exists)."""

    account_id: str
    roles: tuple[tuple[str, str, str], ...]  # (name, arn, outcome)
    write_calls: int

    def to_json(self) -> dict[str, object]:
        return {"account_id": self.account_id, "write_calls": self.write_calls,
                "roles": [{"name": n, "arn": a, "outcome": o} for n, a, o in self.roles]}


def referenced_default_roles(manifest: Manifest) -> list[str]:
    """The documented default roles s.yaml's functions and flows name (``role: auto`` too)."""
    found: list[str] = []
    for fn in manifest.functions:
        if fn.role and default_role(role_name_of(fn.role)) is not None:
            found.append(role_name_of(fn.role))
    for flow in manifest.flows:
        if flow.role_arn and default_role(role_name_of(flow.role_arn)) is not None:
            found.append(role_name_of(flow.role_arn))
    return list(dict.fromkeys(n.lower() for n in found))


def init_default_roles(names: Iterable[str], clients: Clients, account_id: str,
                       progress: Callable[[str], None] = lambda message: None
                       ) -> RolesInitResult:
    """Create the default roles ``names`` (see the module docstring); InvalidInputError
    (exit 3) for a name that is not a documented default role, before any call."""
    wanted = list(dict.fromkeys(n.lower() for n in names))
    unknown = [n for n in wanted if n not in DEFAULT_ROLES]
    if unknown:
        raise InvalidInputError(f"not a default role this toolkit knows: {', '.join(unknown)}",
                                hint="known: " + ", ".join(sorted(DEFAULT_ROLES)))
    done: list[tuple[str, str, str]] = []
    writes = 0
    for name in wanted:
        role = DEFAULT_ROLES[name]
        progress(f"ensuring role {role.name} (trusts {role.service}; "
                 f"{', '.join(role.policies)})")
        outcome, calls = ensure_service_role(role, clients)
        writes += calls
        done.append((role.name, roles.role_arn(account_id, role.name.lower()), outcome))
    return RolesInitResult(account_id, tuple(done), writes)
