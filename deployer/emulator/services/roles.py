"""RAM domain logic: roles with trust policies, custom and system policies, attachments.

RAM is global: everything is scoped by account only. Role names are case-insensitive (unique
ignoring case) and the role ARN carries the lower-cased name, ``acs:ram::<account>:role/<name>``,
as the cloud prints it.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import (
    AlreadyAttached,
    AlreadyExists,
    DeleteConflict,
    InvalidValue,
    MalformedPolicy,
    NotAttached,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.store.repos import PolicyRecord, RamRepo, RoleRecord

__all__ = [
    "SYSTEM_POLICIES",
    "Policy",
    "PolicyAttachment",
    "RamRole",
    "RoleService",
    "ram_role_arn",
    "trust_allows",
]

ROLE_NAME_RE = re.compile(r"^[A-Za-z0-9.\-]{1,64}$")
POLICY_NAME_RE = re.compile(r"^[A-Za-z0-9\-]{1,128}$")
POLICY_TYPES = ("System", "Custom")


def _statement(action: str | list[str], resource: str = "*",
               condition: dict[str, Any] | None = None) -> dict[str, Any]:
    st: dict[str, Any] = {"Effect": "Allow", "Action": action, "Resource": resource}
    if condition:
        st["Condition"] = condition
    return st


def _doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "1", "Statement": list(statements)})


def _pass_role(service: str) -> dict[str, Any]:
    return _statement("ram:PassRole", condition={"StringEquals": {"acs:Service": service}})


# System policies by their documented actions (docs/runtime.md "RAM authorization").
SYSTEM_POLICIES: dict[str, tuple[str, str]] = {
    "AliyunFCInvocationAccess": ("Invoke functions of Function Compute",
                                 _doc(_statement("fc:InvokeFunction"))),
    # The policy of FC's default role AliyunFCDefaultRole (role: auto). Its exact statements
    # are not published with the role; these are what a function's default role is used for
    # (INFERRED, docs/emulator.md "Default roles").
    "AliyunFCDefaultRolePolicy": ("Function Compute's default role",
                                  _doc(_statement(["oss:GetObject", "oss:PutObject"]),
                                       _statement("log:PostLogStoreLogs"),
                                       _statement(["mns:SendMessage", "mns:PublishMessage"]),
                                       _statement("fc:InvokeFunction"))),
    "AliyunFCFullAccess": ("Full access to Function Compute",
                           _doc(_statement("fc:*"), _pass_role("fc.aliyuncs.com"))),
    "AliyunFCReadOnlyAccess": ("Read-only access to Function Compute",
                               _doc(_statement(["fc:Get*", "fc:List*"]))),
    "AliyunFnFFullAccess": ("Full access to CloudFlow",
                            _doc(_statement("fnf:*"), _pass_role("fnf.aliyuncs.com"))),
    "AliyunFnFReadOnlyAccess": ("Read-only access to CloudFlow",
                                _doc(_statement(["fnf:Describe*", "fnf:List*",
                                                 "fnf:Get*"]))),
    "AliyunRAMFullAccess": ("Full access to RAM", _doc(_statement("ram:*"))),
    "AliyunRAMReadOnlyAccess": ("Read-only access to RAM",
                                _doc(_statement(["ram:Get*", "ram:List*"]))),
    "AliyunSTSAssumeRoleAccess": ("Assume roles through STS",
                                  _doc(_statement("sts:AssumeRole"))),
    "AliyunLogFullAccess": ("Full access to Simple Log Service", _doc(_statement("log:*"))),
    "AliyunLogReadOnlyAccess": ("Read-only access to Simple Log Service",
                                _doc(_statement(["log:Get*", "log:List*"]))),
}


def ram_role_arn(account_id: str, role_name: str) -> str:
    return f"acs:ram::{account_id}:role/{role_name.lower()}"


@dataclass(frozen=True, slots=True)
class RamRole:
    account_id: str
    name: str
    role_id: str
    trust_policy: str
    description: str
    max_session_duration: int
    created_at: float

    @property
    def arn(self) -> str:
        return ram_role_arn(self.account_id, self.name)


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    policy_type: str
    document: str
    description: str
    created_at: float
    attachment_count: int = 0


@dataclass(frozen=True, slots=True)
class PolicyAttachment:
    name: str
    policy_type: str
    description: str
    attached_at: float


def _role(rec: RoleRecord) -> RamRole:
    return RamRole(rec.account_id, rec.name, rec.role_id, rec.trust_policy, rec.description,
                rec.max_session_duration, rec.created_at)


def parse_policy_document(text: str, *, trust: bool) -> dict[str, Any]:
    """Parse and check a RAM policy document (``trust``: statements need a Principal);
    :class:`MalformedPolicy` when it breaks the grammar."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise MalformedPolicy(f"the policy document is not valid JSON: {exc}") from None
    statements = doc.get("Statement") if isinstance(doc, dict) else None
    if not isinstance(statements, list) or not statements:
        raise MalformedPolicy("the policy document needs a non-empty Statement list")
    for st in statements:
        if not isinstance(st, dict) or st.get("Effect") not in ("Allow", "Deny"):
            raise MalformedPolicy("each Statement needs Effect Allow or Deny")
        if not isinstance(st.get("Action"), (str, list)):
            raise MalformedPolicy("each Statement needs an Action")
        if trust and not isinstance(st.get("Principal"), dict):
            raise MalformedPolicy("each trust policy Statement needs a Principal")
    return dict(doc)


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def trust_allows(trust_policy: str, *, service: str | None = None,
                 ram_principals: tuple[str, ...] = ()) -> bool:
    """Whether a trust policy lets ``service`` (``fc.aliyuncs.com``) or one of the RAM
    principals (``acs:ram::<account>:root``, a role ARN) call ``sts:AssumeRole``.

    An explicit Deny for the principal wins over an Allow.
    """
    try:
        doc = json.loads(trust_policy)
    except (TypeError, ValueError):
        return False
    allowed = False
    statements = doc.get("Statement", []) if isinstance(doc, dict) else []
    for st in statements if isinstance(statements, list) else []:
        if not isinstance(st, dict):
            continue
        actions = [a.lower() for a in _listed(st.get("Action"))]
        if "sts:assumerole" not in actions and "sts:*" not in actions and "*" not in actions:
            continue
        principal = st.get("Principal") or {}
        if not isinstance(principal, dict):
            continue
        services = [s.lower() for s in _listed(principal.get("Service"))]
        rams = [r.lower() for r in _listed(principal.get("RAM"))]
        hit = ((service is not None and service.lower() in services)
               or any(p.lower() in rams for p in ram_principals))
        if hit and st.get("Effect") == "Deny":
            return False
        allowed = allowed or (hit and st.get("Effect") == "Allow")
    return allowed


class RoleService:
    """RAM roles and policies of the emulator's accounts."""

    def __init__(self, repo: RamRepo, clock: Clock) -> None:
        self._repo = repo
        self._clock = clock

    def create_role(self, account_id: str, name: str, trust_policy: str, *,
                    description: str = "", max_session_duration: int = 3600) -> RamRole:
        """Create a role; InvalidValue for bad names/documents, AlreadyExists on duplicates."""
        if not ROLE_NAME_RE.match(name):
            raise InvalidValue(f"invalid RoleName '{name}': 1-64 letters, digits, '.' or '-'",
                               field="RoleName")
        parse_policy_document(trust_policy, trust=True)
        if not 3600 <= max_session_duration <= 43200:
            raise InvalidValue("MaxSessionDuration must be between 3600 and 43200",
                               field="MaxSessionDuration")
        if len(description) > 1024:
            raise InvalidValue("Description must be at most 1024 characters",
                               field="Description")
        rec = RoleRecord(account_id, name, "3" + "".join(secrets.choice("0123456789")
                                                          for _ in range(18)),
                         trust_policy, description, max_session_duration, self._clock.now())
        if not self._repo.insert_role(rec):
            raise AlreadyExists(f"The role {name} already exists.", Resource.ROLE, name=name)
        return _role(rec)

    def get_role(self, account_id: str, name: str) -> RamRole:
        rec = self._repo.get_role(account_id, name)
        if rec is None:
            raise ResourceNotFound(f"The role not exists: {name}.", Resource.ROLE, name=name)
        return _role(rec)

    def update_trust_policy(self, account_id: str, name: str, trust_policy: str) -> RamRole:
        """Replace the role's trust policy (UpdateRole); ResourceNotFound / InvalidValue."""
        self.get_role(account_id, name)
        parse_policy_document(trust_policy, trust=True)
        self._repo.update_trust_policy(account_id, name, trust_policy)
        return self.get_role(account_id, name)

    def delete_role(self, account_id: str, name: str) -> None:
        """Delete a role; DeleteConflict while policies are attached."""
        self.get_role(account_id, name)
        if self._repo.attachments_of_role(account_id, name):
            raise DeleteConflict(f"The role {name} still has policies attached.", Resource.ROLE,
                                 name=name)
        self._repo.delete_role(account_id, name)

    def role_named(self, account_id: str, arn: str) -> RamRole | None:
        """The role an ARN ``acs:ram::<account>:role/<name>`` names in ``account_id``, if any."""
        prefix = f"acs:ram::{account_id}:role/"
        if not arn.lower().startswith(prefix):
            return None
        rec = self._repo.get_role(account_id, arn[len(prefix):])
        return _role(rec) if rec is not None else None

    def role_id_of(self, account_id: str, name: str) -> str | None:
        """The RoleId of the role ``name`` now (None when there is none)."""
        rec = self._repo.get_role(account_id, name)
        return rec.role_id if rec is not None else None

    def role_trusts(self, account_id: str, arn: str, service: str = "fnf.aliyuncs.com") -> bool:
        """True when the role ``arn`` exists and its trust policy lets ``service`` assume it."""
        role = self.role_named(account_id, arn)
        return role is not None and trust_allows(role.trust_policy, service=service)

    def attached_policy_names(self, account_id: str, role: str) -> list[tuple[str, str]]:
        """(policy type, policy name) of every policy attached to ``role`` ([] if none)."""
        return [(t, n) for t, n, _ in self._repo.attachments_of_role(account_id, role)]

    def policy_document(self, account_id: str, name: str, policy_type: str) -> str | None:
        """The document of a system or custom policy, None when it does not exist."""
        if policy_type == "System":
            entry = SYSTEM_POLICIES.get(name)
            return entry[1] if entry else None
        rec = self._repo.get_policy(account_id, name)
        return rec.document if rec is not None else None

    # --- policies -----------------------------------------------------------------------------

    def create_policy(self, account_id: str, name: str, document: str,
                      description: str = "") -> Policy:
        if not POLICY_NAME_RE.match(name):
            raise InvalidValue(f"invalid PolicyName '{name}': 1-128 letters, digits or '-'",
                               field="PolicyName")
        parse_policy_document(document, trust=False)
        if name in SYSTEM_POLICIES:
            raise AlreadyExists(f"The policy {name} already exists.", Resource.POLICY, name=name)
        rec = PolicyRecord(account_id, name, document, description, self._clock.now())
        if not self._repo.insert_policy(rec):
            raise AlreadyExists(f"The policy {name} already exists.", Resource.POLICY, name=name)
        return Policy(name, "Custom", document, description, rec.created_at)

    def get_policy(self, account_id: str, name: str, policy_type: str) -> Policy:
        self._check_type(policy_type)
        if policy_type == "System":
            if name not in SYSTEM_POLICIES:
                raise ResourceNotFound(f"The policy not exists: {name}.",
                                       Resource.POLICY, name=name)
            description, document = SYSTEM_POLICIES[name]
            return Policy(name, "System", document, description, 0.0,
                          self._repo.roles_with_policy(account_id, "System", name))
        rec = self._repo.get_policy(account_id, name)
        if rec is None:
            raise ResourceNotFound(f"The policy not exists: {name}.", Resource.POLICY, name=name)
        return Policy(name, "Custom", rec.document, rec.description, rec.created_at,
                      self._repo.roles_with_policy(account_id, "Custom", name))

    def delete_policy(self, account_id: str, name: str) -> None:
        policy = self.get_policy(account_id, name, "Custom")
        if policy.attachment_count:
            raise DeleteConflict(f"The policy {name} is still attached to roles.",
                                 Resource.POLICY, name=name)
        self._repo.delete_policy(account_id, name)

    def attach(self, account_id: str, role: str, policy_type: str, policy: str) -> None:
        self.get_role(account_id, role)
        self.get_policy(account_id, policy, policy_type)
        if not self._repo.attach(account_id, role, policy_type, policy, self._clock.now()):
            raise AlreadyAttached(f"The policy {policy} is already attached to role {role}.")

    def detach(self, account_id: str, role: str, policy_type: str, policy: str) -> None:
        self.get_role(account_id, role)
        self.get_policy(account_id, policy, policy_type)
        if not self._repo.detach(account_id, role, policy_type, policy):
            raise NotAttached(f"The policy {policy} is not attached to role {role}.")

    def policies_for_role(self, account_id: str, role: str) -> list[PolicyAttachment]:
        self.get_role(account_id, role)
        out = []
        for policy_type, name, at in self._repo.attachments_of_role(account_id, role):
            policy = self.get_policy(account_id, name, policy_type)
            out.append(PolicyAttachment(name, policy_type, policy.description, at))
        return out

    @staticmethod
    def _check_type(policy_type: str) -> None:
        if policy_type not in POLICY_TYPES:
            raise InvalidValue(f"PolicyType must be System or Custom, got '{policy_type}'",
                               field="PolicyType")
