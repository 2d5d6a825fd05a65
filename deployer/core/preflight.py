"""What the target would refuse, found with read-only calls before anything is written.

``deploy up`` (and ``plan``, and ``validate`` against a target) checks that every role a
function or flow names exists and trusts its service — unless this deploy creates it (a flow's
``role``, ``role: auto``) — so a project never fails half-way on a missing role, and says how
to create one: ``deploy roles init`` for the documented default roles. ``vpcConfig: auto`` /
``nasConfig: auto`` are deployed on the emulator only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from deployer.config.outputs import AUTO_ROLE
from deployer.config.specs import Manifest
from deployer.core import roles
from deployer.core.plan_model import Clients
from deployer.core.service_roles import default_role, role_name_of
from deployer.errors import OperationError

__all__ = ["PreflightError", "PreflightProblem", "preflight"]


@dataclass(frozen=True, slots=True)
class PreflightProblem:
    message: str
    hint: str = ""

    def text(self) -> str:
        return f"{self.message}" + (f" ({self.hint})" if self.hint else "")


class PreflightError(OperationError):
    """The target would refuse the deploy; nothing was written (exit 1)."""

    def __init__(self, problems: list[PreflightProblem]) -> None:
        first = problems[0]
        message = first.message if len(problems) == 1 else \
            f"the target would refuse {len(problems)} things; nothing was deployed"
        super().__init__(message, hint=first.hint or None)
        self.problems = problems

    def details(self) -> list[str]:
        return [p.text() for p in self.problems] if len(self.problems) > 1 else []


def trusts(document: str, service: str) -> bool:
    """Whether a trust policy lets ``service`` assume the role."""
    try:
        statements = json.loads(document or "{}").get("Statement") or []
    except (ValueError, AttributeError):
        return False
    for statement in statements if isinstance(statements, list) else []:
        principal = statement.get("Principal") if isinstance(statement, dict) else None
        services = principal.get("Service") if isinstance(principal, dict) else None
        listed = services if isinstance(services, list) else [services]
        if statement.get("Effect") == "Allow" and service in listed:
            return True
    return False


def _missing_role(name: str, account_id: str, service: str, user: str) -> PreflightProblem:
    known = default_role(name)
    hint = (f"create it with `deploy roles init {name}`" if known is not None else
            f"create it in RAM trusting {service}"
            + (", or write role: auto" if service == roles.FUNCTION_COMPUTE_SERVICE else ""))
    return PreflightProblem(f"{user}: role {name} does not exist in account {account_id}", hint)


def _check_role(arn_or_name: str, service: str, user: str, account_id: str,
                clients: Clients, created: set[str]) -> PreflightProblem | None:
    name = role_name_of(arn_or_name)
    if arn_or_name.startswith("acs:ram::") and f"::{account_id}:" not in arn_or_name:
        return None  # another account's role: only that account can tell
    if name.lower() in created:
        return None
    remote = clients.ram.get_role(name)
    if remote is None:
        return _missing_role(name, account_id, service, user)
    if not trusts(remote.trust_policy, service):
        return PreflightProblem(f"{user}: role {name} does not trust {service}",
                       f"add {service} to the role's trust policy")
    return None


def preflight(manifest: Manifest, clients: Clients, *, account_id: str,
              target: str) -> list[PreflightProblem]:
    """Everything the target would refuse (see the module docstring); read-only calls."""
    created = {f.role_name.lower() for f in manifest.flows if f.role_name}
    if any(f.role_auto for f in manifest.functions):
        created.add(AUTO_ROLE)
    problems: list[PreflightProblem] = []
    checked: dict[str, PreflightProblem | None] = {}
    for fn in manifest.functions:
        if fn.role and not fn.role_auto:
            key = fn.role.lower()
            if key not in checked:
                checked[key] = _check_role(fn.role, roles.FUNCTION_COMPUTE_SERVICE,
                                           f"function {fn.function_name}", account_id, clients,
                                           created)
            found = checked[key]
            if found is not None:
                problems.append(found)
    for flow in manifest.flows:
        if flow.role_arn:
            found = _check_role(flow.role_arn, roles.FNF_SERVICE, f"flow {flow.name}",
                                account_id, clients, created)
            if found is not None:
                problems.append(found)
    if target != "local":
        for spec in manifest.functions:
            for flag, prop in ((spec.vpc_auto, "vpcConfig"), (spec.nas_auto, "nasConfig")):
                if flag:
                    problems.append(PreflightProblem(
                        f"function {spec.function_name}: {prop}: auto is deployed on the "
                        "emulator only (this toolkit does not create VPCs or NAS yet)",
                        f"remove {prop} to deploy without it, or deploy to --target local"))
            domain = spec.custom_domain
            if domain is not None and domain["domainName"] == "auto":
                problems.append(PreflightProblem(
                    f"function {spec.function_name}: customDomain.domainName: auto names a "
                    "domain on the emulator only (this toolkit creates no DNS names in the "
                    "cloud)", "give a domain name you own (its CNAME pointing at the "
                    "account's FC endpoint), or deploy to --target local"))
    return list(dict.fromkeys(problems))
