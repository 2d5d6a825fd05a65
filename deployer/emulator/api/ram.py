"""RAM (API 2015-05-01, RPC style): role and policy actions in the SDK models' wire shapes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.http import wire_time
from deployer.emulator.api.router import POP_AUTH, RpcCall
from deployer.emulator.services.roles import AttachedPolicy, Policy, Role, RoleService

__all__ = ["RamApi"]




def _required(call: RpcCall, name: str) -> str:
    value = call.params.get(name)
    if value is None or value == "":
        raise e.MissingParameter(
            f'The input parameter "{name}" that is mandatory for processing this request '
            "is not supplied.")
    return value


def _int(call: RpcCall, name: str, default: int) -> int:
    raw = call.params.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.lstrip("-").isdigit()):
        raise e.InvalidParameter(f"The parameter {name} must be an integer, got {raw!r}.")
    return int(raw)


def _role(role: Role) -> dict[str, Any]:
    return {"RoleId": role.role_id, "RoleName": role.name, "Arn": role.arn,
            "Description": role.description, "AssumeRolePolicyDocument": role.trust_policy,
            "MaxSessionDuration": role.max_session_duration,
            "CreateDate": wire_time(role.created_at)}


def _policy(policy: Policy) -> dict[str, Any]:
    return {"PolicyName": policy.name, "PolicyType": policy.policy_type,
            "Description": policy.description, "DefaultVersion": "v1",
            "CreateDate": wire_time(policy.created_at), "UpdateDate": wire_time(policy.created_at),
            "AttachmentCount": policy.attachment_count}


def _attached(p: AttachedPolicy) -> dict[str, Any]:
    return {"PolicyName": p.name, "PolicyType": p.policy_type, "Description": p.description,
            "DefaultVersion": "v1", "AttachDate": wire_time(p.attached_at)}


class RamApi:
    version = "2015-05-01"
    host = "ram.aliyuncs.com"
    auth = POP_AUTH

    def __init__(self, roles: RoleService) -> None:
        self._svc = roles
        self.actions: Mapping[str, Callable[[RpcCall], dict[str, Any]]] = {
            "CreateRole": self.create_role, "GetRole": self.get_role,
            "DeleteRole": self.delete_role,
            "UpdateRole": self.update_role, "AttachPolicyToRole": self.attach,
            "DetachPolicyFromRole": self.detach, "ListPoliciesForRole": self.list_for_role,
            "CreatePolicy": self.create_policy, "GetPolicy": self.get_policy,
            "DeletePolicy": self.delete_policy,
        }

    def create_role(self, call: RpcCall) -> dict[str, Any]:
        role = self._svc.create_role(
            call.context.account_id, _required(call, "RoleName"),
            _required(call, "AssumeRolePolicyDocument"),
            description=call.params.get("Description", ""),
            max_session_duration=_int(call, "MaxSessionDuration", 3600))
        return {"Role": _role(role)}

    def get_role(self, call: RpcCall) -> dict[str, Any]:
        return {"Role": _role(self._svc.get_role(call.context.account_id,
                                                 _required(call, "RoleName")))}

    def update_role(self, call: RpcCall) -> dict[str, Any]:
        account, name = call.context.account_id, _required(call, "RoleName")
        document = call.params.get("NewAssumeRolePolicyDocument")
        role = (self._svc.update_trust_policy(account, name, document) if document
                else self._svc.get_role(account, name))
        return {"Role": _role(role)}

    def delete_role(self, call: RpcCall) -> dict[str, Any]:
        self._svc.delete_role(call.context.account_id, _required(call, "RoleName"))
        return {}

    def attach(self, call: RpcCall) -> dict[str, Any]:
        self._svc.attach(call.context.account_id, _required(call, "RoleName"),
                         _required(call, "PolicyType"), _required(call, "PolicyName"))
        return {}

    def detach(self, call: RpcCall) -> dict[str, Any]:
        self._svc.detach(call.context.account_id, _required(call, "RoleName"),
                         _required(call, "PolicyType"), _required(call, "PolicyName"))
        return {}

    def list_for_role(self, call: RpcCall) -> dict[str, Any]:
        policies = self._svc.policies_for_role(call.context.account_id,
                                               _required(call, "RoleName"))
        return {"Policies": {"Policy": [_attached(p) for p in policies]}}

    def create_policy(self, call: RpcCall) -> dict[str, Any]:
        policy = self._svc.create_policy(
            call.context.account_id, _required(call, "PolicyName"),
            _required(call, "PolicyDocument"), call.params.get("Description", ""))
        body = _policy(policy)
        return {"Policy": {k: body[k] for k in
                           ("PolicyName", "PolicyType", "Description", "DefaultVersion",
                            "CreateDate")}}

    def get_policy(self, call: RpcCall) -> dict[str, Any]:
        policy = self._svc.get_policy(call.context.account_id, _required(call, "PolicyName"),
                                      _required(call, "PolicyType"))
        return {"Policy": _policy(policy), "DefaultPolicyVersion": {
            "VersionId": "v1", "IsDefaultVersion": True, "PolicyDocument": policy.document,
            "CreateDate": wire_time(policy.created_at)}}

    def delete_policy(self, call: RpcCall) -> dict[str, Any]:
        self._svc.delete_policy(call.context.account_id, _required(call, "PolicyName"))
        return {}
