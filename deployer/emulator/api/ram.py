"""RAM's wire contract (API 2015-05-01, RPC): roles and policies in the SDK models' shapes.

In this module: the action table (:data:`RAM_ACTIONS`), RAM's wording of parameter errors
(:data:`POP_PARAMS`), the shapes and the error table (:data:`RAM_ERRORS`); the domain is
:mod:`services.roles`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, ErrorTable, ParamErrors, Routes, RpcCall, cases
from deployer.emulator.api.router import AuthScheme
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import Resource
from deployer.emulator.services.roles import Policy, PolicyAttachment, RamRole, RoleService
from deployer.timestamps import iso_seconds

__all__ = ["POP_AUTH", "POP_PARAMS", "RAM_ACTIONS", "RAM_ERRORS", "RamApi"]

POP_AUTH = AuthScheme.words(
    e.Style.RPC, missing=e.IncompleteSignature, malformed=e.IncompleteSignature,
    unknown_key=e.InvalidAccessKeyIdNotFound, mismatch=e.SignatureDoesNotMatch,
    time_missing=e.MissingParameter, time_format=e.InvalidTimeStampFormat,
    expired=e.InvalidTimeStampExpired, nonce_used=e.PopSignatureNonceUsed)
"""How RAM and STS (POP, the RPC gateway) name authentication failures."""
RAM_ACTIONS: Routes[Callable[[Any, RpcCall], Body | None]] = Routes()

POP_PARAMS = ParamErrors(
    lambda name: e.MissingParameter(
        f'The input parameter "{name}" that is mandatory for processing this request is not '
        "supplied."),
    e.InvalidParameter,
    lambda action: e.InvalidActionNotFound(
        f"Specified api is not found, please check your url and method: {action!r}"),
    lambda version: e.InvalidVersion(f"Specified parameter Version is not valid: {version!r}"),
    prefix="The parameter ")
"""RAM's and STS's wording of a missing or malformed parameter, an unknown action and a
Version they do not serve (the POP gateway's)."""

RAM_ERRORS = ErrorTable({
    **e.TOKEN_ERRORS,
    **cases(svc.ResourceNotFound, {Resource.ROLE: e.EntityNotExistRole,
                           Resource.POLICY: e.EntityNotExistPolicy}),
    **cases(svc.AlreadyExists, {Resource.ROLE: e.EntityAlreadyExistsRole,
                                Resource.POLICY: e.EntityAlreadyExistsPolicy}),
    **cases(svc.DeleteConflict, {Resource.ROLE: e.DeleteConflictRolePolicy,
                                 Resource.POLICY: e.DeleteConflictPolicyRole}),
    svc.AlreadyAttached: e.EntityAlreadyExistsRolePolicy,
    svc.NotAttached: e.EntityNotExistRolePolicy,
    svc.MalformedPolicy: e.MalformedPolicyDocument,
    svc.InvalidValue: e.InvalidParameter,
    svc.NotAuthorized: e.RAM_DENIED,
}, e.InternalServerError)


def _role(role: RamRole) -> Body:
    return {"RoleId": role.role_id, "RoleName": role.name, "Arn": role.arn,
            "Description": role.description, "AssumeRolePolicyDocument": role.trust_policy,
            "MaxSessionDuration": role.max_session_duration,
            "CreateDate": iso_seconds(role.created_at)}


def _policy(policy: Policy) -> Body:
    return {"PolicyName": policy.name, "PolicyType": policy.policy_type,
            "Description": policy.description, "DefaultVersion": "v1",
            "CreateDate": iso_seconds(policy.created_at),
            "UpdateDate": iso_seconds(policy.created_at),
            "AttachmentCount": policy.attachment_count}


def _attached(p: PolicyAttachment) -> Body:
    return {"PolicyName": p.name, "PolicyType": p.policy_type, "Description": p.description,
            "DefaultVersion": "v1", "AttachDate": iso_seconds(p.attached_at)}


class RamApi:
    """The RAM product registered with the router: :data:`RAM_ACTIONS` over ``roles``."""

    version = "2015-05-01"
    auth = POP_AUTH
    params = POP_PARAMS
    errors = RAM_ERRORS

    def __init__(self, roles: RoleService) -> None:
        self._svc = roles
        self.actions = RAM_ACTIONS.actions()

    @RAM_ACTIONS.action("CreateRole")
    def create_role(self, c: RpcCall) -> Body:
        return {"Role": _role(self._svc.create_role(
            c.account_id, c.required("RoleName"), c.required("AssumeRolePolicyDocument"),
            description=c.text("Description"),
            max_session_duration=c.integer("MaxSessionDuration", 3600)))}

    @RAM_ACTIONS.action("GetRole")
    def get_role(self, c: RpcCall) -> Body:
        return {"Role": _role(self._svc.get_role(c.account_id, c.required("RoleName")))}

    @RAM_ACTIONS.action("UpdateRole")
    def update_role(self, c: RpcCall) -> Body:
        name, document = c.required("RoleName"), c.text("NewAssumeRolePolicyDocument")
        role = (self._svc.update_trust_policy(c.account_id, name, document) if document
                else self._svc.get_role(c.account_id, name))
        return {"Role": _role(role)}

    @RAM_ACTIONS.action("DeleteRole")
    def delete_role(self, c: RpcCall) -> None:
        self._svc.delete_role(c.account_id, c.required("RoleName"))

    @RAM_ACTIONS.action("AttachPolicyToRole")
    def attach_policy_to_role(self, c: RpcCall) -> None:
        self._svc.attach(c.account_id, c.required("RoleName"), c.required("PolicyType"),
                         c.required("PolicyName"))

    @RAM_ACTIONS.action("DetachPolicyFromRole")
    def detach_policy_from_role(self, c: RpcCall) -> None:
        self._svc.detach(c.account_id, c.required("RoleName"), c.required("PolicyType"),
                         c.required("PolicyName"))

    @RAM_ACTIONS.action("ListPoliciesForRole")
    def list_policies_for_role(self, c: RpcCall) -> Body:
        policies = self._svc.policies_for_role(c.account_id, c.required("RoleName"))
        return {"Policies": {"Policy": [_attached(p) for p in policies]}}

    @RAM_ACTIONS.action("CreatePolicy")
    def create_policy(self, c: RpcCall) -> Body:
        body = _policy(self._svc.create_policy(c.account_id, c.required("PolicyName"),
                                               c.required("PolicyDocument"),
                                               c.text("Description")))
        return {"Policy": {k: body[k] for k in ("PolicyName", "PolicyType", "Description",
                                                "DefaultVersion", "CreateDate")}}

    @RAM_ACTIONS.action("GetPolicy")
    def get_policy(self, c: RpcCall) -> Body:
        policy = self._svc.get_policy(c.account_id, c.required("PolicyName"),
                                      c.required("PolicyType"))
        return {"Policy": _policy(policy), "DefaultPolicyVersion": {
            "VersionId": "v1", "IsDefaultVersion": True, "PolicyDocument": policy.document,
            "CreateDate": iso_seconds(policy.created_at)}}

    @RAM_ACTIONS.action("DeletePolicy")
    def delete_policy(self, c: RpcCall) -> None:
        self._svc.delete_policy(c.account_id, c.required("PolicyName"))
