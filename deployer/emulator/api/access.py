"""Who is calling, and may they? The router's access hook for every signed cloud request.

After the signature is verified the router hands the AccessKeyId to :class:`RequestAccess`:

1. the account's own AccessKey → the caller is the account (``None``), never restricted;
2. a temporary ``STS.`` AccessKey → the request must carry the security token issued with it,
   before its expiry (``x-acs-security-token`` for ACS3, ``SecurityToken`` for RPC v1; both are
   signed), else ``MissingSecurityToken`` / ``InvalidSecurityToken.*``;
3. a role session is then authorized against its role's RAM policies: the product's action
   (``fc:InvokeFunction``, ``fnf:StartExecution``, ``ram:GetRole``) on the resource the request
   names, plus ``ram:PassRole`` when it hands a role to FC or CloudFlow. A refusal is the
   product's AccessDenied-style error with the ``AccessDeniedDetail`` the SDKs expose.

Action and resource names: docs/runtime.md "RAM authorization".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from deployer.emulator.api.errors import ApiError
from deployer.emulator.api.http import HttpRequest
from deployer.emulator.services.authorization import AccessDenied, Authorizer
from deployer.emulator.services.security_tokens import (
    RoleSession,
    SecurityTokenService,
    TokenError,
)

__all__ = ["FC_PRODUCT", "RequestAccess", "access_denied_error"]

FC_PRODUCT = "/2023-03-30/"
RPC_PRODUCTS = {"2019-03-15": "fnf", "2015-05-01": "ram", "2015-04-01": "sts"}
PASS_ROLE_SERVICES = {"fc": "fc.aliyuncs.com", "fnf": "fnf.aliyuncs.com"}


def _error(code: str, status: int) -> type[ApiError]:
    return type(code.replace(".", ""), (ApiError,),
                {"code": code, "http_status": status, "__module__": __name__})


MissingSecurityToken = _error("MissingSecurityToken", 403)
InvalidSecurityTokenMalformed = _error("InvalidSecurityToken.Malformed", 403)
InvalidSecurityTokenMismatch = _error("InvalidSecurityToken.MismatchWithAccessKey", 403)
InvalidSecurityTokenExpired = _error("InvalidSecurityToken.Expired", 403)
AccessDeniedError = _error("AccessDenied", 403)
NoPermission = _error("NoPermission", 403)

_TOKEN_ERRORS = {"missing": MissingSecurityToken, "malformed": InvalidSecurityTokenMalformed,
                 "mismatch": InvalidSecurityTokenMismatch, "expired": InvalidSecurityTokenExpired}


def access_denied_error(exc: AccessDenied, product: str) -> ApiError:
    """The wire error of a refused request: FC and CloudFlow answer ``AccessDenied``, RAM and
    STS ``NoPermission``; every one carries ``AccessDeniedDetail``."""
    detail = {
        "AuthAction": exc.action, "AuthResource": exc.resource,
        "AuthPrincipalType": exc.principal_type, "AuthPrincipalDisplayName": exc.principal,
        "AuthPrincipalOwnerId": exc.account_id, "NoPermissionType": exc.decision.value,
        "PolicyType": "AccountLevelIdentityBasedPolicy",
    }
    if product in ("ram", "sts"):
        message = ("You are not authorized to do this action. You should be authorized by "
                   f"RAM. {exc.message}")
        err: ApiError = NoPermission(message)
    else:
        err = AccessDeniedError(exc.message)
    err.extra = {"AccessDeniedDetail": detail}
    return err


def _product(api_key: str) -> str:
    return "fc" if api_key == FC_PRODUCT else RPC_PRODUCTS.get(api_key, "")


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
        """The verified role session of a request (None for the account's own key)."""
        if not self.tokens.is_temporary(access_key_id):
            if request.headers.get("x-acs-security-token") or params.get("SecurityToken"):
                raise InvalidSecurityTokenMismatch(
                    "Specified SecurityToken mismatch with the AccessKey: "
                    f"{access_key_id} is not a temporary AccessKey.")
            return None
        token = request.headers.get("x-acs-security-token") or params.get("SecurityToken")
        try:
            session = self.tokens.session(access_key_id, token)
        except TokenError as exc:
            raise _TOKEN_ERRORS[exc.kind](exc.message) from None
        if session.account_id != self.account_id:
            raise InvalidSecurityTokenMalformed("Specified SecurityToken is malformed.")
        return session

    def authorize(self, caller: RoleSession | None, api_key: str, request: HttpRequest,
                  params: Mapping[str, str], region: str) -> None:
        """Raise the product's AccessDenied-style error unless ``caller`` may make the call."""
        if caller is None:
            return
        product = _product(api_key)
        if product in ("", "sts"):  # STS checks sts:AssumeRole itself; GetCallerIdentity is free
            return
        if product == "fc":
            checks = _fc_checks(request, self.account_id, region)
        else:
            checks = _rpc_checks(product, params, self.account_id, region)
        try:
            for action, resource, context in checks:
                self.authorizer.check(caller.subject(), action, resource, context)
        except AccessDenied as exc:
            raise access_denied_error(exc, product) from None


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
