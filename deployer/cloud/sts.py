"""Typed client over the STS SDK (``alibabacloud_sts20150401``)."""

from __future__ import annotations

from dataclasses import dataclass

from deployer.cloud.connection import CloudConnection


@dataclass(frozen=True, slots=True)
class CallerIdentity:
    account_id: str
    arn: str
    identity_type: str


def get_caller_identity(connection: CloudConnection) -> CallerIdentity:
    """Who the connection's credentials belong to (STS GetCallerIdentity)."""

    body = connection.call(
        "STS", "GetCallerIdentity", lambda: connection.sts.get_caller_identity()
    ).body
    return CallerIdentity(
        account_id=str(body.account_id or ""),
        arn=body.arn or "",
        identity_type=body.identity_type or "",
    )
