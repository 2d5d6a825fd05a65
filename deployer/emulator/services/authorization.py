"""RAM authorization: does a role's policies allow an action on a resource?

Evaluation follows RAM's documented model: every statement whose ``Action``/``NotAction``,
``Resource``/``NotResource`` and ``Condition`` match the request takes part; one matching
``Deny`` decides (explicit deny); otherwise one matching ``Allow`` allows; otherwise the request
is denied implicitly. A session policy (the ``Policy`` of AssumeRole) narrows a role session:
both the role's policies and the session policy must allow, and a Deny in either denies.

Matching: ``*`` is any run of characters and ``?`` one character. Actions (``fc:InvokeFunction``)
compare case-insensitively, resources (``acs:fc:cn-hangzhou:123:functions/name``) exactly.
Conditions support the string operators (``StringEquals``, ``StringNotEquals``,
``StringEqualsIgnoreCase``, ``StringLike``, ``StringNotLike``) and ``Bool`` over the keys a check
passes in ``context`` (``acs:Service`` for ``ram:PassRole``); a condition on an unknown key or with
another operator does not match, so an Allow that depends on it does not allow.

The account's own AccessKey is never checked here (the account owns everything); callers pass
role sessions only. docs/runtime.md "RAM authorization" lists actions and resource names.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deployer.emulator.services.errors import Decision, NotAuthorized
from deployer.emulator.services.roles import RoleService

__all__ = [
    "Authorizer",
    "PolicyDocument",
    "evaluate_policies",
    "parse_policy",
    "pattern_matches",
]

PolicyDocument = Mapping[str, Any]


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(regex, re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def pattern_matches(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """RAM wildcard match of the whole ``value`` (``*`` any run, ``?`` one character)."""
    if pattern == "*":
        return True
    return _compile(pattern, ignore_case).fullmatch(value) is not None


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


_Test = Callable[[str, str], bool]
_STRING_OPERATORS: dict[str, tuple[bool, _Test]] = {
    "StringEquals": (False, lambda p, v: p == v),
    "StringNotEquals": (True, lambda p, v: p == v),
    "StringEqualsIgnoreCase": (False, lambda p, v: p.lower() == v.lower()),
    "StringNotEqualsIgnoreCase": (True, lambda p, v: p.lower() == v.lower()),
    "StringLike": (False, lambda p, v: pattern_matches(p, v)),
    "StringNotLike": (True, lambda p, v: pattern_matches(p, v)),
    "Bool": (False, lambda p, v: p.lower() == v.lower()),
}


def _conditions_hold(conditions: Any, context: Mapping[str, str]) -> bool:
    if not conditions:
        return True
    if not isinstance(conditions, dict):
        return False
    lowered = {k.lower(): v for k, v in context.items()}
    for operator, clauses in conditions.items():
        spec = _STRING_OPERATORS.get(operator)
        if spec is None or not isinstance(clauses, dict):
            return False
        negated, test = spec
        for key, wanted in clauses.items():
            actual = lowered.get(str(key).lower())
            if actual is None:
                return False
            hit = any(test(p, actual) for p in _strings(wanted))
            if hit == negated:
                return False
    return True


def _matches(statement: Mapping[str, Any], positive: str, negative: str, value: str,
             ignore_case: bool) -> bool:
    if positive in statement:
        return any(pattern_matches(p, value, ignore_case=ignore_case)
                   for p in _strings(statement[positive]))
    if negative in statement:
        return not any(pattern_matches(p, value, ignore_case=ignore_case)
                       for p in _strings(statement[negative]))
    return False


def _statements(document: PolicyDocument) -> Sequence[Mapping[str, Any]]:
    statements = document.get("Statement", [])
    if isinstance(statements, dict):
        return [statements]
    return [s for s in statements if isinstance(s, dict)] if isinstance(statements, list) else []


def evaluate_policies(documents: Iterable[PolicyDocument], action: str, resource: str,
             context: Mapping[str, str] | None = None) -> Decision:
    """The decision of ``documents`` (one principal's policies) for ``action`` on ``resource``.

    A statement without ``Resource``/``NotResource`` matches no resource (RAM requires one).
    """
    allowed = False
    for document in documents:
        for statement in _statements(document):
            if not (_matches(statement, "Action", "NotAction", action, True)
                    and _matches(statement, "Resource", "NotResource", resource, False)
                    and _conditions_hold(statement.get("Condition"), context or {})):
                continue
            if statement.get("Effect") == "Deny":
                return Decision.EXPLICIT_DENY
            if statement.get("Effect") == "Allow":
                allowed = True
    return Decision.ALLOW if allowed else Decision.IMPLICIT_DENY


@functools.lru_cache(maxsize=256)
def parse_policy(text: str) -> PolicyDocument:
    """A policy document as stored (JSON text); an unreadable one grants nothing."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Subject:
    """Who asks: a role of ``account_id`` (by name), optionally narrowed by a session policy.

    ``principal`` is the display form used in errors, e.g. ``role-name:session`` or the
    service name for a service acting with a role.
    """

    account_id: str
    role_name: str
    principal: str
    session_policy: str | None = None
    principal_type: str = "AssumedRoleUser"
    role_id: str | None = None
    """The RoleId a session was issued for: its role's policies apply only while the role of
    that name is still that role (RAM binds sessions to the role's identity, not its name)."""


class Authorizer:
    """Authorizes role sessions against the RAM policies attached to their role."""

    def __init__(self, roles: RoleService) -> None:
        self._roles = roles

    def role_documents(self, account_id: str, role_name: str) -> list[PolicyDocument]:
        """The parsed policies attached to a role now ([] if the role no longer exists)."""
        documents = []
        for policy_type, name in self._roles.attached_policy_names(account_id, role_name):
            text = self._roles.policy_document(account_id, name, policy_type)
            if text is not None:
                documents.append(parse_policy(text))
        return documents

    def role_is_gone(self, subject: Subject) -> bool:
        """Whether ``subject`` is a session whose role was deleted (perhaps re-created under
        the same name, with another RoleId)."""
        if subject.role_id is None:
            return False
        return self._roles.role_id_of(subject.account_id, subject.role_name) != subject.role_id

    def decide(self, subject: Subject, action: str, resource: str,
               context: Mapping[str, str] | None = None) -> Decision:
        if self.role_is_gone(subject):
            return Decision.IMPLICIT_DENY  # no policy of a role that no longer exists applies
        decision = evaluate_policies(self.role_documents(subject.account_id, subject.role_name),
                            action, resource, context)
        if subject.session_policy is None or decision is Decision.EXPLICIT_DENY:
            return decision
        narrowed = evaluate_policies([parse_policy(subject.session_policy)], action, resource,
                                     context)
        if narrowed is not Decision.ALLOW:
            return narrowed
        return decision

    def check(self, subject: Subject, action: str, resource: str,
              context: Mapping[str, str] | None = None) -> None:
        """Raise :class:`NotAuthorized` unless ``subject`` may do ``action`` on ``resource``."""
        decision = self.decide(subject, action, resource, context)
        if decision is Decision.ALLOW:
            return
        why = ("an explicit Deny in its policies" if decision is Decision.EXPLICIT_DENY
               else "no attached policy allows it")
        if self.role_is_gone(subject):
            why = ("the role it was issued for no longer exists (a role deleted and created "
                   "again under the same name is another role, with another RoleId)")
        raise NotAuthorized(
            f"You are not authorized to do action {action} on resource {resource}: "
            f"{subject.principal} is denied by {why} (role {subject.role_name}).",
            action=action, resource=resource, principal=subject.principal, decision=decision,
            principal_type=subject.principal_type, account_id=subject.account_id)
