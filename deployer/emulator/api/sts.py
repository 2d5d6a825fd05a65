"""STS (API 2015-04-01, RPC style): GetCallerIdentity for the emulator's account."""

from __future__ import annotations

from typing import Any

from deployer.emulator.api.router import POP_AUTH, RpcCall

__all__ = ["StsApi"]


class StsApi:
    version = "2015-04-01"
    host = "sts.aliyuncs.com"
    auth = POP_AUTH

    def __init__(self) -> None:
        self.actions = {"GetCallerIdentity": self.get_caller_identity}

    @staticmethod
    def get_caller_identity(call: RpcCall) -> dict[str, Any]:
        """The caller is the account itself (root AccessKey): IdentityType ``Account``."""
        account = call.context.account_id
        return {"AccountId": account, "UserId": account, "PrincipalId": account,
                "Arn": f"acs:ram::{account}:root", "IdentityType": "Account"}
