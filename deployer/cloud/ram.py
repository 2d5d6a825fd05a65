"""Typed client over the RAM SDK (``alibabacloud_ram20150501``): roles and custom policies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudClientError, CloudNotFoundError


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    arn: str
    trust_policy: str
    description: str


@dataclass(frozen=True, slots=True)
class AttachedPolicy:
    name: str
    type: str  # "System" | "Custom"


def _role(body_role: Any) -> Role:
    return Role(
        name=body_role.role_name or "",
        arn=body_role.arn or "",
        trust_policy=body_role.assume_role_policy_document or "",
        description=body_role.description or "",
    )


class RamClient(ServiceClient):
    """Roles and policies, with idempotent helpers (already-exists / not-found are data)."""

    SERVICE = "RAM"

    def get_role(self, name: str) -> Role | None:
        from alibabacloud_ram20150501 import models

        try:
            body = self._call(
                "GetRole", lambda: self._conn.ram.get_role(models.GetRoleRequest(role_name=name))
            ).body
        except CloudNotFoundError:
            return None
        return _role(body.role)

    def create_role(self, name: str, trust_policy: str, description: str) -> Role:
        from alibabacloud_ram20150501 import models

        request = models.CreateRoleRequest(
            role_name=name, assume_role_policy_document=trust_policy, description=description
        )
        body = self._call("CreateRole", lambda: self._conn.ram.create_role(request)).body
        return _role(body.role)

    def update_trust_policy(self, name: str, trust_policy: str) -> None:
        from alibabacloud_ram20150501 import models

        request = models.UpdateRoleRequest(
            role_name=name, new_assume_role_policy_document=trust_policy
        )
        self._call("UpdateRole", lambda: self._conn.ram.update_role(request))

    def delete_role(self, name: str) -> bool:
        from alibabacloud_ram20150501 import models

        try:
            self._call(
                "DeleteRole",
                lambda: self._conn.ram.delete_role(models.DeleteRoleRequest(role_name=name)),
            )
        except CloudNotFoundError:
            return False
        return True

    def get_policy_document(self, name: str) -> str | None:
        """The default version's document of custom policy ``name``, or None if absent."""
        from alibabacloud_ram20150501 import models

        request = models.GetPolicyRequest(policy_name=name, policy_type="Custom")
        try:
            body = self._call("GetPolicy", lambda: self._conn.ram.get_policy(request)).body
        except CloudNotFoundError:
            return None
        version = body.default_policy_version
        return (version.policy_document if version else "") or ""

    def create_policy(self, name: str, document: str, description: str) -> None:
        from alibabacloud_ram20150501 import models

        request = models.CreatePolicyRequest(
            policy_name=name, policy_document=document, description=description
        )
        self._call("CreatePolicy", lambda: self._conn.ram.create_policy(request))

    def delete_policy(self, name: str) -> bool:
        from alibabacloud_ram20150501 import models

        request = models.DeletePolicyRequest(policy_name=name)
        try:
            self._call("DeletePolicy", lambda: self._conn.ram.delete_policy(request))
        except CloudNotFoundError:
            return False
        return True

    def attach_policy(self, role: str, policy: str, policy_type: str = "Custom") -> None:
        """Attach ``policy`` to ``role``; already attached is fine."""
        from alibabacloud_ram20150501 import models

        request = models.AttachPolicyToRoleRequest(
            role_name=role, policy_name=policy, policy_type=policy_type
        )
        try:
            self._call("AttachPolicyToRole", lambda: self._conn.ram.attach_policy_to_role(request))
        except CloudClientError as exc:
            if exc.code != "EntityAlreadyExists.Role.Policy":
                raise

    def detach_policy(self, role: str, policy: str, policy_type: str = "Custom") -> bool:
        from alibabacloud_ram20150501 import models

        request = models.DetachPolicyFromRoleRequest(
            role_name=role, policy_name=policy, policy_type=policy_type
        )
        try:
            self._call(
                "DetachPolicyFromRole", lambda: self._conn.ram.detach_policy_from_role(request)
            )
        except CloudNotFoundError:
            return False
        return True

    def list_role_policies(self, role: str) -> list[AttachedPolicy]:
        from alibabacloud_ram20150501 import models

        request = models.ListPoliciesForRoleRequest(role_name=role)
        body = self._call(
            "ListPoliciesForRole", lambda: self._conn.ram.list_policies_for_role(request)
        ).body
        policies = body.policies.policy if body.policies and body.policies.policy else []
        return [
            AttachedPolicy(name=p.policy_name or "", type=p.policy_type or "") for p in policies
        ]
