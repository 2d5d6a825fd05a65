"""The documents of the flow's execution role: who may assume it, and what it may do."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deployer.core.plan_model import DesiredRole, DesiredState

FNF_SERVICE = "fnf.aliyuncs.com"
FUNCTION_COMPUTE_SERVICE = "fc.aliyuncs.com"


def trust_policy(service: str = FNF_SERVICE) -> str:
    """A RAM trust policy letting ``service`` assume the role (ecosystem.md §3.1)."""
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": "sts:AssumeRole",
                    "Principal": {"Service": [service]},
                }
            ],
        },
        separators=(",", ":"),
    )


def invoke_policy(function_arns: Iterable[str]) -> str:
    """A custom policy allowing ``fc:InvokeFunction`` on exactly these functions (any qualifier)."""
    resources: list[str] = []
    for arn in sorted(set(function_arns)):
        resources += [arn, f"{arn}/*"]
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {"Effect": "Allow", "Action": ["fc:InvokeFunction"], "Resource": resources}
            ],
        },
        separators=(",", ":"),
    )


def invoke_policy_for(role: DesiredRole, state: DesiredState) -> str:
    """The invoke policy of a flow role: exactly the functions (and qualifiers) its flows
    name (each function's ARN, and the ARN with each qualifier used); every function of the
    project, any qualifier, when a flow computes its function ARN at run time."""
    if role.resources is None:
        return invoke_policy(state.function_arns())
    return json.dumps(
        {"Version": "1", "Statement": [{"Effect": "Allow", "Action": ["fc:InvokeFunction"],
                                        "Resource": sorted(set(role.resources))}]},
        separators=(",", ":"))


def same_document(a: str, b: str) -> bool:
    """Whether two policy documents are the same JSON (formatting and key order aside)."""
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return a.strip() == b.strip()


def role_arn(account_id: str, role_name: str) -> str:
    return f"acs:ram::{account_id}:role/{role_name}"


def function_arn(region: str, account_id: str, name: str) -> str:
    return f"acs:fc:{region}:{account_id}:functions/{name}"


def flow_arn(region: str, account_id: str, name: str) -> str:
    return f"acs:fnf:{region}:{account_id}:flow/{name}"


def policy_arn(account_id: str, policy_name: str) -> str:
    return f"acs:ram::{account_id}:policy/{policy_name}"
