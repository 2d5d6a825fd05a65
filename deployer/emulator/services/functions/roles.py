"""How Function Compute uses a function's RAM role: the role must exist and trust
``fc.aliyuncs.com`` (:func:`check_function_role`, at create/update time), and the function's
instances get the role's temporary keys (:class:`RoleCredentials`).
"""

from __future__ import annotations

import logging
import re
import threading

from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import AssumeRoleRefused, InvalidValue, ResourceNotFound
from deployer.emulator.services.ports import TemporaryCredentials
from deployer.emulator.services.security_tokens import (
    FC_SERVICE,
    FC_SESSION_SECONDS,
    SecurityTokenService,
)

__all__ = ["RoleCredentials", "check_function_role"]

log = logging.getLogger("deployer.emulator")


def check_function_role(tokens: SecurityTokenService, account_id: str, role: str) -> None:
    """Raise InvalidValue (field ``role``) unless FC can assume ``role`` through STS: it
    must exist in the account and trust fc.aliyuncs.com. An empty role is always fine."""
    if not role:
        return
    try:
        tokens.check_service_role(account_id, role, FC_SERVICE)
    except ResourceNotFound:
        raise InvalidValue(
            f"role '{role}' cannot be assumed by Function Compute: the role does not exist "
            f"in account {account_id}", field="role") from None
    except AssumeRoleRefused as exc:
        raise InvalidValue(f"role '{role}' cannot be assumed by Function Compute: "
                           f"{exc.message}", field="role") from None


class RoleCredentials:
    """The temporary keys of a function's role, obtained from STS as FC does (valid 36 hours)
    and renewed when less than the function's timeout plus ten minutes remain, so a request
    never runs with keys that expire before it ends, and at once when the role is another one
    (deleted and created again: its keys are bound to the old RoleId). Thread-safe."""

    def __init__(self, tokens: SecurityTokenService, clock: Clock, account_id: str,
                 role_arn: str, function_name: str, timeout: int) -> None:
        self._tokens = tokens
        self._clock = clock
        self._account_id = account_id
        self._role_arn = role_arn
        self._session = re.sub(r"[^A-Za-z0-9.@_-]", "-", f"fc-{function_name}")[:64]
        self._margin = timeout + 600
        self._lock = threading.Lock()
        self._current: TemporaryCredentials | None = None
        self._role_id = ""

    def __call__(self) -> TemporaryCredentials | None:
        with self._lock:
            now = self._clock.now()
            try:
                role = self._tokens.check_service_role(self._account_id, self._role_arn,
                                                       FC_SERVICE)
            except (ResourceNotFound, AssumeRoleRefused) as exc:
                log.warning("no credentials for role %s: %s", self._role_arn, exc.message)
                return None
            if self._current is None or role.role_id != self._role_id or \
                    self._current.expiration - now < self._margin:
                self._current = self._tokens.issue(role, self._session, FC_SESSION_SECONDS)
                self._role_id = role.role_id
            return self._current
