"""Which functions a flow invokes: the ``resourceArn`` of each ``FC:InvokeFunction`` Task.

The flow's execution role is granted exactly these (:func:`deployer.core.roles.invoke_policy_for`)
and a plan refuses, by default, to delete a function one of them names. ARNs with an empty
region or account (``acs:fc:::functions/name/LATEST``, as Serverless Devs' CloudFlow
templates write them) mean the flow's own, as CloudFlow reads them. A Task that computes its
ARN (``resourceArn.$``) makes the set unknown (``dynamic``), and so does a flow in CloudFlow's
legacy dialect (``steps``): its role then may invoke every function of the project.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FC_ARN", "Invocations", "flow_invocations", "normalize_function_arn"]

FC_ARN = re.compile(
    r"^acs:fc:(?P<region>[^:]*):(?P<account>[^:]*):functions/(?P<name>[^/]+)(?:/(?P<q>[^/]+))?$")


@dataclass(frozen=True, slots=True)
class Invocations:
    arns: tuple[str, ...] = ()  # full ARNs, with the qualifier when the Task names one
    dynamic: bool = False


def normalize_function_arn(arn: str, region: str, account_id: str) -> str | None:
    """``arn`` with an empty region/account filled in; None when it is no FC 3.0 ARN."""
    m = FC_ARN.match(arn)
    if m is None:
        return None
    base = f"acs:fc:{m['region'] or region}:{m['account'] or account_id}:functions/{m['name']}"
    return f"{base}/{m['q']}" if m["q"] else base


def flow_invocations(text: str, *, region: str, account_id: str) -> Invocations:
    """The functions the flow ``text`` invokes (nothing when it does not parse)."""
    from deployer.fdl import LegacyFlow, MapState, ParallelState, TaskState, Template, read_flow

    result = read_flow(text)
    if result.flow is None:
        return Invocations()
    if isinstance(result.flow, LegacyFlow):  # the legacy dialect (steps): not read here
        return Invocations((), dynamic=True)
    arns: list[str] = []
    dynamic = False
    scopes = [result.flow.scope]
    while scopes:
        scope = scopes.pop()
        for state in scope.states:
            if isinstance(state, ParallelState):
                scopes.extend(state.branches)
            elif isinstance(state, MapState) and state.processor is not None:
                scopes.append(state.processor)
            elif isinstance(state, TaskState) and state.action == "FC:InvokeFunction":
                params = state.parameters
                fields = params.fields if isinstance(params, Template) else ()
                entry = next((f for f in fields if f.key == "resourceArn"), None)
                arn = normalize_function_arn(entry.value, region, account_id) \
                    if entry is not None and isinstance(entry.value, str) else None
                if arn is None:
                    dynamic = True
                elif arn not in arns:
                    arns.append(arn)
    return Invocations(tuple(arns), dynamic)
