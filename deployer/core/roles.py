"""The documents of the flow's execution role: who may assume it, and what it may do."""

from __future__ import annotations

import json
from collections.abc import Iterable

FNF_SERVICE = "fnf.aliyuncs.com"


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
