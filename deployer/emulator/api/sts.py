"""STS's wire contract (API 2015-04-01, RPC): GetCallerIdentity and AssumeRole.

AssumeRole follows the cloud's rules (docs/runtime.md "STS"): the account's own AccessKey may
not assume roles (``NoPermission``: "Roles may not be assumed by root accounts."); a role session
may, when its policies allow ``sts:AssumeRole`` on the role and the role's trust policy names the
account (``acs:ram::<account>:root``) or the calling role as a RAM principal.

In this module: the action table (:data:`STS_ACTIONS`), the shapes and the error table
(:data:`STS_ERRORS`); parameters are worded as RAM words them (:data:`.ram.POP_PARAMS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, ErrorTable, Routes, RpcCall, cases
from deployer.emulator.api.ram import POP_AUTH, POP_PARAMS
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import Resource, RoleRefusal
from deployer.emulator.services.security_tokens import RoleSession, SecurityTokenService
from deployer.timestamps import iso_seconds

__all__ = ["STS_ACTIONS", "STS_ERRORS", "StsApi"]

STS_ACTIONS: Routes[Callable[[Any, RpcCall], Body]] = Routes()

STS_ERRORS = ErrorTable({
    **e.TOKEN_ERRORS,
    **cases(svc.AssumeRoleRefused, {RoleRefusal.ROOT_CALLER: e.NoPermission,
                                    RoleRefusal.NOT_TRUSTED: e.NoPermission,
                                    RoleRefusal.SESSION_NAME: e.InvalidRoleSessionName,
                                    RoleRefusal.DURATION: e.InvalidDurationSeconds,
                                    RoleRefusal.POLICY: e.InvalidPolicyGrammar}),
    svc.NotAuthorized: e.RAM_DENIED,
    (svc.ResourceNotFound, Resource.ROLE): e.EntityNotExistRole,
    svc.ResourceNotFound: e.NotFound,
    svc.InvalidValue: e.InvalidParameter,
}, e.InternalServerError)


class StsApi:
    """The STS product registered with the router: :data:`STS_ACTIONS` over ``tokens``."""

    version = "2015-04-01"
    auth = POP_AUTH
    params = POP_PARAMS
    errors = STS_ERRORS

    def __init__(self, tokens: SecurityTokenService) -> None:
        self._tokens = tokens
        self.actions = STS_ACTIONS.actions()

    @STS_ACTIONS.action("GetCallerIdentity")
    def get_caller_identity(self, c: RpcCall) -> Body:
        """The account itself (IdentityType ``Account``) or the role session that signed."""
        account = c.account_id
        session: RoleSession | None = c.context.caller
        if session is None:
            return {"AccountId": account, "UserId": account, "PrincipalId": account,
                    "Arn": f"acs:ram::{account}:root", "IdentityType": "Account"}
        return {"AccountId": account, "UserId": session.assumed_role_id,
                "PrincipalId": session.assumed_role_id, "Arn": session.arn,
                "IdentityType": "AssumedRoleUser", "RoleId": session.role_id}

    @STS_ACTIONS.action("AssumeRole")
    def assume_role(self, c: RpcCall) -> Body:
        raw_duration = c.text("DurationSeconds")
        if raw_duration and not is_decimal(raw_duration):
            raise e.InvalidDurationSeconds(f"DurationSeconds must be an integer, got "
                                           f"{raw_duration!r}.")
        creds, session = self._tokens.assume_role(
            c.context.caller, c.account_id, c.required("RoleArn"),
            c.required("RoleSessionName"), int(raw_duration) if raw_duration else None,
            c.text("Policy") or None)
        return {
            "AssumedRoleUser": {"Arn": session.arn, "AssumedRoleId": session.assumed_role_id},
            "Credentials": {"AccessKeyId": creds.access_key_id,
                            "AccessKeySecret": creds.access_key_secret,
                            "SecurityToken": creds.security_token,
                            "Expiration": iso_seconds(creds.expiration)},
        }
