"""Who is calling, and may they? The router's access hook for every signed cloud request
(docs/runtime.md "RAM authorization and STS": actions and resource names).

The account's own AccessKey is never restricted. A temporary ``STS.`` key must carry the
security token issued with it, unexpired (else a :class:`TokenError`); its role session is
then authorized against its role's RAM policies for the product's action on the resource the
request names, plus ``ram:PassRole`` when it hands a role to FC or CloudFlow. A refusal is a
``NotAuthorized`` domain error, which each product's error table words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from deployer.emulator.api.http import HttpRequest
from deployer.emulator.services.authorization import Authorizer
from deployer.emulator.services.errors import TokenError, TokenProblem
from deployer.emulator.services.security_tokens import RoleSession, SecurityTokenService

__all__ = ["PRODUCTS", "RequestAccess"]

PRODUCTS = {"/2023-03-30/": "fc", "2019-03-15": "cloudflow", "2015-05-01": "ram",
            "2015-04-01": "sts"}
"""Each product's name by its path prefix (ROA) or ``Version`` (RPC)."""
RAM_SERVICES = {"fc": "fc", "cloudflow": "fnf", "ram": "ram"}  # the RAM action's service
PASS_ROLE_SERVICES = {"fc": "fc.aliyuncs.com", "fnf": "fnf.aliyuncs.com"}


@dataclass
class RequestAccess:
    """The hook object the router calls; see the module docstring."""

    account_id: str
    account_secret: Callable[[str], str | None]
    tokens: SecurityTokenService
    authorizer: Authorizer

    def secret_for(self, access_key_id: str) -> str | None:
        """The secret of the account's AccessKey or of an STS key this emulator issues."""
        secret = self.account_secret(access_key_id)
        if secret is None and self.tokens.is_temporary(access_key_id):
            return self.tokens.secret_for(access_key_id)
        return secret

    def caller(self, request: HttpRequest, access_key_id: str,
               params: Mapping[str, str]) -> RoleSession | None:
        """The verified role session of a request (None for the account's own key);
        :class:`~deployer.emulator.services.errors.TokenError` when its token is not
        acceptable."""
        if not self.tokens.is_temporary(access_key_id):
            if request.headers.get("x-acs-security-token") or params.get("SecurityToken"):
                raise TokenError("Specified SecurityToken mismatch with the AccessKey: "
                                 f"{access_key_id} is not a temporary AccessKey.",
                                 TokenProblem.MISMATCH)
            return None
        token = request.headers.get("x-acs-security-token") or params.get("SecurityToken")
        session = self.tokens.session(access_key_id, token)
        if session.account_id != self.account_id:
            raise TokenError("Specified SecurityToken is malformed.", TokenProblem.MALFORMED)
        return session

    def authorize(self, caller: RoleSession | None, api_key: str, request: HttpRequest,
                  params: Mapping[str, str], region: str) -> None:
        """Raise :class:`~deployer.emulator.services.errors.AccessDenied` unless ``caller`` may
        make the call (the product's error table words it)."""
        if caller is None:
            return
        product = RAM_SERVICES.get(PRODUCTS.get(api_key, ""))
        if product is None:  # STS checks sts:AssumeRole itself; GetCallerIdentity is free
            return
        if product == "fc":
            checks = _fc_checks(request, self.account_id, region)
        else:
            checks = _rpc_checks(product, params, self.account_id, region)
        for action, resource, context in checks:
            self.authorizer.check(caller.subject(), action, resource, context)


Check = tuple[str, str, Mapping[str, str]]


def _pass_role(product: str, role: str) -> Check:
    return "ram:PassRole", role.lower(), {"acs:Service": PASS_ROLE_SERVICES[product]}


def _fc_checks(request: HttpRequest, account: str, region: str) -> list[Check]:
    action = request.headers.get("x-acs-action") or ""
    segments = [unquote(s) for s in request.raw_path.split("/")[2:] if s]
    base = f"acs:fc:{region}:{account}:"
    if len(segments) >= 2 and segments[0] == "functions":
        resource = f"{base}functions/{segments[1]}"
    else:
        resource = f"{base}{segments[0] if segments else ''}/*"
    body: Any = {}
    if action in ("CreateFunction", "UpdateFunction"):
        try:
            body = json.loads(request.body or b"{}")
        except (ValueError, UnicodeDecodeError):
            body = {}
        if not isinstance(body, dict):
            body = {}
        if action == "CreateFunction" and isinstance(body.get("functionName"), str):
            resource = f"{base}functions/{body['functionName']}"
    checks: list[Check] = [(f"fc:{action}", resource, {})]
    if isinstance(body.get("role"), str) and body["role"]:
        checks.append(_pass_role("fc", body["role"]))
    return checks


def _rpc_checks(product: str, params: Mapping[str, str], account: str,
                region: str) -> list[Check]:
    action = params.get("Action", "")
    if product == "ram":
        if params.get("RoleName"):
            resource = f"acs:ram::{account}:role/{params['RoleName'].lower()}"
        elif params.get("PolicyName"):
            resource = f"acs:ram::{account}:policy/{params['PolicyName']}"
        else:
            resource = f"acs:ram::{account}:*"
        return [(f"ram:{action}", resource, {})]
    flow = params.get("FlowName") or params.get("Name") or "*"
    resource = f"acs:fnf:{region}:{account}:flow/{flow}"
    if params.get("ExecutionName"):
        resource += f"/execution/{params['ExecutionName']}"
    checks: list[Check] = [(f"fnf:{action}", resource, {})]
    if params.get("RoleArn"):
        checks.append(_pass_role("fnf", params["RoleArn"]))
    return checks
