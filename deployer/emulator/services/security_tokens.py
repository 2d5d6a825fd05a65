"""STS: temporary credentials for RAM roles, issued and verified by the emulator.

A role session is ``(AccessKeyId, AccessKeySecret, SecurityToken, Expiration)`` like the
cloud's. Nothing is stored: the security token is the session itself (account, role, session
name, expiry, optional session policy, the AccessKeyId it was issued with) sealed with an HMAC
key derived from the emulator's identity, and the temporary secret is derived from the
AccessKeyId with the same key. Sessions therefore survive restarts and ``reset`` (the identity
stays), and what a session may do is decided when it is used, from the role's policies at that
moment: deleting a role or detaching a policy takes effect at once. A session is bound to its
role's RoleId, as RAM's are: once the role is deleted, no policy applies to it any more, even
after a new role is created under the same name.

Verification (:meth:`SecurityTokenService.session`) is what the cloud checks: the request names an
``STS.`` AccessKeyId, carries a security token, the token is one this emulator issued (intact
MAC), it was issued with that AccessKeyId, and the clock has not passed its expiry. Times come
from the injected clock, so a virtual clock expires tokens in virtual time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.services.authorization import Authorizer, Subject
from deployer.emulator.services.errors import (
    AssumeRoleRefused,
    Resource,
    ResourceNotFound,
    RoleRefusal,
    TokenError,
    TokenProblem,
)
from deployer.emulator.services.ports import TemporaryCredentials
from deployer.emulator.services.roles import RamRole, RoleService, trust_allows

__all__ = [
    "FC_SERVICE",
    "FC_SESSION_SECONDS",
    "STS_KEY_PREFIX",
    "RoleSession",
    "SecurityTokenService",
    "TemporaryCredentials",
]

STS_KEY_PREFIX = "STS."
FC_SERVICE = "fc.aliyuncs.com"
FC_SESSION_SECONDS = 36 * 3600  # FC's role credentials are valid for 36 hours (context docs)
MIN_DURATION = 900
SESSION_NAME_RE = re.compile(r"^[A-Za-z0-9.@_-]{2,64}$")
_TOKEN_PREFIX = "CAIS"
_KEY_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"



@dataclass(frozen=True, slots=True)
class RoleSession:
    """What a verified security token says about its bearer."""

    account_id: str
    role_name: str
    role_id: str
    session_name: str
    expiration: float
    access_key_id: str
    session_policy: str | None = None

    @property
    def arn(self) -> str:
        return f"acs:ram::{self.account_id}:assumed-role/{self.role_name.lower()}/" \
               f"{self.session_name}"

    @property
    def role_arn(self) -> str:
        return f"acs:ram::{self.account_id}:role/{self.role_name.lower()}"

    @property
    def assumed_role_id(self) -> str:
        return f"{self.role_id}:{self.session_name}"

    def subject(self) -> Subject:
        """Who the session acts as: its role, bound to the RoleId it was issued for."""
        return Subject(self.account_id, self.role_name, f"{self.role_name}:{self.session_name}",
                       self.session_policy, role_id=self.role_id)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SecurityTokenService:
    """Issues and verifies role sessions of one emulator identity. Thread-safe (stateless)."""

    def __init__(self, identity_secret: str, clock: Clock, roles: RoleService,
                 authorizer: Authorizer) -> None:
        self._key = hmac.new(identity_secret.encode(), b"deployer-sts-v1", hashlib.sha256).digest()
        self._clock = clock
        self._roles = roles
        self._authorizer = authorizer

    # --- issuing ------------------------------------------------------------------------------

    def issue(self, role: RamRole, session_name: str, duration: float,
              policy: str | None = None) -> TemporaryCredentials:
        """New credentials for ``role`` valid ``duration`` seconds from now (no checks)."""
        access_key_id = STS_KEY_PREFIX + "".join(secrets.choice(_KEY_ALPHABET) for _ in range(28))
        expiration = float(int(self._clock.now() + duration))
        claims: dict[str, Any] = {"k": access_key_id, "a": role.account_id, "r": role.name,
                                  "i": role.role_id, "s": session_name, "e": expiration}
        if policy:
            claims["p"] = policy
        payload = json.dumps(claims, separators=(",", ":")).encode()
        seal = hmac.new(self._key, payload, hashlib.sha256).digest()
        token = f"{_TOKEN_PREFIX}{_b64(payload)}.{_b64(seal)}"
        return TemporaryCredentials(access_key_id, self._secret(access_key_id), token, expiration)

    def check_service_role(self, account_id: str, role_arn: str, service: str) -> RamRole:
        """The role ``service`` would assume; ResourceNotFound (``Resource.ROLE``) when it does not
        exist, :class:`AssumeRoleRefused` (``RoleRefusal.NOT_TRUSTED``) when its trust policy
        does not name the service."""
        role = self._roles.role_named(account_id, role_arn)
        if role is None:
            raise ResourceNotFound(f"The role not exists: {role_arn}.",
                                   Resource.ROLE, name=role_arn)
        if not trust_allows(role.trust_policy, service=service):
            raise AssumeRoleRefused(
                f"the trust policy of role {role_arn} does not allow the service {service} to "
                "assume it (it needs an Allow statement for sts:AssumeRole with Principal "
                f'{{"Service": ["{service}"]}})', RoleRefusal.NOT_TRUSTED)
        return role

    def for_service(self, account_id: str, role_arn: str, service: str,
                    session_name: str, duration: float = FC_SESSION_SECONDS
                    ) -> TemporaryCredentials:
        """Credentials a service (``fc.aliyuncs.com``) obtains for ``role_arn``.

        Raises ResourceNotFound (``Resource.ROLE``) when the role does not exist and
        :class:`AssumeRoleRefused` (``RoleRefusal.NOT_TRUSTED``) when its trust policy does not
        name the service.
        """
        role = self.check_service_role(account_id, role_arn, service)
        return self.issue(role, session_name, duration)

    def assume_role(self, caller: RoleSession | None, account_id: str, role_arn: str,
                    session_name: str, duration: int | None = None,
                    policy: str | None = None) -> tuple[TemporaryCredentials, RoleSession]:
        """The AssumeRole API: ``caller`` is the requesting role session (None: the account's
        own AccessKey, which STS refuses as the cloud does)."""
        if caller is None:
            raise AssumeRoleRefused("Roles may not be assumed by root accounts.",
                                    RoleRefusal.ROOT_CALLER)
        if not SESSION_NAME_RE.match(session_name):
            raise AssumeRoleRefused("The parameter RoleSessionName is wrongly formed.",
                                    RoleRefusal.SESSION_NAME)
        role = self._roles.role_named(account_id, role_arn)
        if role is None:
            raise ResourceNotFound(f"The role not exists: {role_arn}.",
                                   Resource.ROLE, name=role_arn)
        seconds = 3600 if duration is None else duration
        if not MIN_DURATION <= seconds <= role.max_session_duration:
            raise AssumeRoleRefused(
                f"The Min/Max value of DurationSeconds is 15min/{role.max_session_duration}s.",
                RoleRefusal.DURATION)
        if policy is not None:
            self._check_policy(policy)
        self._authorizer.check(caller.subject(), "sts:AssumeRole", role.arn)
        principals = (f"acs:ram::{account_id}:root", caller.role_arn)
        if not trust_allows(role.trust_policy, ram_principals=principals):
            raise AssumeRoleRefused(
                "No permission perform sts:AssumeRole on this Role. Maybe you should check the "
                f"role's trust policy: it must name acs:ram::{account_id}:root or "
                f"{caller.role_arn} as a RAM principal.", RoleRefusal.NOT_TRUSTED)
        creds = self.issue(role, session_name, seconds, policy)
        return creds, self.session(creds.access_key_id, creds.security_token)

    @staticmethod
    def _check_policy(policy: str) -> None:
        try:
            doc = json.loads(policy)
        except ValueError:
            doc = None
        statements = doc.get("Statement") if isinstance(doc, dict) else None
        if not isinstance(statements, list) or not all(
                isinstance(s, dict) and s.get("Effect") in ("Allow", "Deny") for s in statements):
            raise AssumeRoleRefused("The parameter Policy has not passed grammar check.",
                                    RoleRefusal.POLICY)

    # --- verifying ----------------------------------------------------------------------------

    @staticmethod
    def is_temporary(access_key_id: str) -> bool:
        return access_key_id.startswith(STS_KEY_PREFIX)

    def _secret(self, access_key_id: str) -> str:
        digest = hmac.new(self._key, b"secret:" + access_key_id.encode(), hashlib.sha256).digest()
        return base64.b64encode(digest).decode("ascii").rstrip("=").replace("+", "A") \
            .replace("/", "B")[:40]

    def secret_for(self, access_key_id: str) -> str | None:
        """The secret of a temporary AccessKeyId this emulator could have issued."""
        if not self.is_temporary(access_key_id) or len(access_key_id) != 32:
            return None
        return self._secret(access_key_id)

    def session(self, access_key_id: str, token: str | None) -> RoleSession:
        """Verify ``token`` for ``access_key_id``; raises :class:`TokenError`."""
        if not token:
            raise TokenError("SecurityToken is mandatory for this action: the request is "
                             f"signed with the temporary AccessKey {access_key_id} but carries "
                             "no security token.", TokenProblem.MISSING)
        claims = self._claims(token)
        if claims.get("k") != access_key_id:
            raise TokenError("Specified SecurityToken mismatch with the AccessKey.",
                             TokenProblem.MISMATCH)
        if self._clock.now() >= float(claims["e"]):
            raise TokenError("Specified SecurityToken is expired.", TokenProblem.EXPIRED)
        return RoleSession(str(claims["a"]), str(claims["r"]), str(claims["i"]),
                           str(claims["s"]), float(claims["e"]), access_key_id,
                           claims.get("p"))

    def _claims(self, token: str) -> dict[str, Any]:
        malformed = TokenError("Specified SecurityToken is malformed.", TokenProblem.MALFORMED)
        if not token.startswith(_TOKEN_PREFIX) or token.count(".") != 1:
            raise malformed
        payload_text, seal_text = token[len(_TOKEN_PREFIX):].split(".")
        try:
            payload, seal = _unb64(payload_text), _unb64(seal_text)
        except (ValueError, TypeError):
            raise malformed from None
        if not hmac.compare_digest(hmac.new(self._key, payload, hashlib.sha256).digest(), seal):
            raise malformed
        try:
            claims = json.loads(payload)
        except ValueError:
            raise malformed from None
        if not isinstance(claims, dict) or not {"k", "a", "r", "i", "s", "e"} <= claims.keys():
            raise malformed
        return claims
