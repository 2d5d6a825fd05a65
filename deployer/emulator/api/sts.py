"""STS (API 2015-04-01, RPC style): GetCallerIdentity and AssumeRole.

AssumeRole follows the cloud's rules (docs/runtime.md "STS"): the account's own AccessKey may
not assume roles (``NoPermission``: "Roles may not be assumed by root accounts."); a role session
may, when its policies allow ``sts:AssumeRole`` on the role and the role's trust policy names the
account (``acs:ram::<account>:root``) or the calling role as a RAM principal.
"""

from __future__ import annotations

from typing import Any

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.access import NoPermission, access_denied_error
from deployer.emulator.api.errors import ApiError
from deployer.emulator.api.http import wire_time
from deployer.emulator.api.router import POP_AUTH, RpcCall
from deployer.emulator.services.authorization import AccessDenied
from deployer.emulator.services.security_tokens import (
    AssumeRoleRefused,
    RoleSession,
    SecurityTokenService,
)

__all__ = ["StsApi"]


def _invalid(code: str) -> type[ApiError]:
    return type(code.replace(".", ""), (ApiError,),
                {"code": code, "http_status": 400, "__module__": __name__})


_REFUSALS: dict[str, type[ApiError]] = {
    "root_caller": NoPermission,
    "not_trusted": NoPermission,
    "session_name": _invalid("InvalidParameter.RoleSessionName"),
    "duration": _invalid("InvalidParameter.DurationSeconds"),
    "policy": _invalid("InvalidParameter.PolicyGrammar"),
}


def _required(call: RpcCall, name: str) -> str:
    value = call.params.get(name)
    if not value:
        raise e.MissingParameter(
            f'The input parameter "{name}" that is mandatory for processing this request '
            "is not supplied.")
    return value


class StsApi:
    version = "2015-04-01"
    host = "sts.aliyuncs.com"
    auth = POP_AUTH

    def __init__(self, tokens: SecurityTokenService | None = None) -> None:
        self._tokens = tokens
        self.actions = {"GetCallerIdentity": self.get_caller_identity}
        if tokens is not None:
            self.actions["AssumeRole"] = self.assume_role

    @staticmethod
    def get_caller_identity(call: RpcCall) -> dict[str, Any]:
        """The account itself (IdentityType ``Account``) or the role session that signed."""
        account = call.context.account_id
        session: RoleSession | None = call.context.caller
        if session is None:
            return {"AccountId": account, "UserId": account, "PrincipalId": account,
                    "Arn": f"acs:ram::{account}:root", "IdentityType": "Account"}
        return {"AccountId": account, "UserId": session.assumed_role_id,
                "PrincipalId": session.assumed_role_id, "Arn": session.arn,
                "IdentityType": "AssumedRoleUser", "RoleId": session.role_id}

    def assume_role(self, call: RpcCall) -> dict[str, Any]:
        assert self._tokens is not None
        raw_duration = call.params.get("DurationSeconds") or ""
        if raw_duration and not is_decimal(raw_duration):
            raise _REFUSALS["duration"](f"DurationSeconds must be an integer, got "
                                        f"{raw_duration!r}.")
        try:
            creds, session = self._tokens.assume_role(
                call.context.caller, call.context.account_id, _required(call, "RoleArn"),
                _required(call, "RoleSessionName"),
                int(raw_duration) if raw_duration else None, call.params.get("Policy") or None)
        except AssumeRoleRefused as exc:
            raise _REFUSALS[exc.kind](exc.message) from None
        except AccessDenied as exc:
            raise access_denied_error(exc, "sts") from None
        return {
            "AssumedRoleUser": {"Arn": session.arn, "AssumedRoleId": session.assumed_role_id},
            "Credentials": {"AccessKeyId": creds.access_key_id,
                            "AccessKeySecret": creds.access_key_secret,
                            "SecurityToken": creds.security_token,
                            "Expiration": wire_time(creds.expiration)},
        }
