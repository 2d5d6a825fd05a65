"""What a legacy task calls: its ``resourceArn`` (or ``action``) and ``pattern`` read as the same
service integration a SpecVersion v1 Task names with ``Action`` and ``TaskMode``.

=====================================================  ==========================  ===========
legacy                                                 v1 ``Action``               parameters
=====================================================  ==========================  ===========
``acs:fc:<r>:<a>:services/S[.q]/functions/F``          ``FC:InvokeFunction``       resourceArn,
``acs:fc:<r>:<a>:functions/F[/q]``, ``!Ref S/F``                                   invocationType
                                                                                   Sync, body
``acs:fnf:<r>:<a>:flow/X`` (or ``flows/X``)            ``FNF:StartExecution``      resourceArn,
                                                                                   input
``acs:mns:<r>:<a>:/topics/T/messages``                 ``MNS:PublishMessage``      TopicName, ...
``acs:mns:<r>:<a>:/queues/Q/messages``                 ``MNS:SendMessage``         QueueName, ...
``action: Service:Operation`` + ``serviceParams``      that action                 serviceParams
=====================================================  ==========================  ===========

``pattern``: ``requestResponse`` -> ``RequestComplete``, ``sync`` -> ``WaitForSystemCallback``
(sub-flows only), ``waitForCallback`` -> ``WaitForCustomCallback``. ``!Ref service/function`` is
what Funcraft and ROS templates write for the function they deploy (docs/fdl-semantics.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deployer.fdl.legacy.ast import TaskStep
from deployer.fdl.syntax.ast import TaskMode
from deployer.fdl.syntax.task_checks import FC_INVOKE

__all__ = ["FC_INVOKE", "FORMS", "PATTERNS", "Integration", "Problem", "resolve_task"]

PATTERNS: dict[str, TaskMode] = {
    "requestResponse": TaskMode.REQUEST_COMPLETE,
    "sync": TaskMode.WAIT_FOR_SYSTEM_CALLBACK,
    "waitForCallback": TaskMode.WAIT_FOR_CUSTOM_CALLBACK,
}
_FC2 = re.compile(r"^acs:fc:([a-z0-9-]*):(\d*):services/([^/.]+)(?:\.[^/]+)?/functions/([^/]+)$")
_FC3 = re.compile(r"^acs:fc:([a-z0-9-]*):(\d*):functions/([^/]+)(?:/[^/]+)?$")
_FLOW = re.compile(r"^acs:fnf:([a-z0-9-]*):(\d*):flows?/([^/]+)$")
_MNS = re.compile(r"^acs:mns:([a-z0-9-]*):(\d*):/(topics|queues)/([^/]+)/messages$")
_REF = re.compile(r"^([^/\s]+)/([^/\s]+)$")
_ACTION = re.compile(r"^[A-Za-z][\w-]*:[A-Za-z][\w-]*$")
FORMS = ("acs:fc:<region>:<account>:services/<service>/functions/<function>, "
         "acs:fc:<region>:<account>:functions/<function>, !Ref <service>/<function>, "
         "acs:fnf:<region>:<account>:flow/<flow>, "
         "acs:mns:<region>:<account>:/topics|queues/<name>/messages")


@dataclass(frozen=True, slots=True)
class Integration:
    """The call a task makes: v1 ``action`` and ``task_mode``; ``kind`` is ``function``,
    ``flow``, ``topic``, ``queue`` or ``action``; ``resource_arn`` is what the call is given
    (the function or flow ARN; "" otherwise) and ``target`` the function, flow, topic or queue
    name."""

    action: str
    task_mode: TaskMode
    kind: str
    resource_arn: str
    target: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a task has no integration: the ``key`` at fault ("" when one is missing), the
    message and a hint."""

    key: str
    message: str
    hint: str | None = None


def resolve_task(step: TaskStep) -> Integration | Problem:
    """The task's integration, or the problem that keeps it from having one."""
    mode = PATTERNS.get(step.pattern)
    if mode is None:
        return Problem("pattern", f"unknown pattern '{step.pattern}'",
                       "one of " + ", ".join(PATTERNS))
    if step.action and step.resource_arn:
        return Problem("action", "give either resourceArn or action, not both")
    if step.action:
        if not _ACTION.match(step.action):
            return Problem("action", f"action '{step.action}' must look like Service:Operation",
                           "e.g. facebody:DetectFace")
        service, _, operation = step.action.partition(":")
        action = f"FNF:{operation}" if service.lower() == "fnf" else step.action
        return Integration(action, mode, "action", "", step.action)
    if not step.resource_arn:
        return Problem("", "a task needs resourceArn (or action with serviceParams)")
    found = _resource(step)
    if isinstance(found, str):
        return Problem("resourceArn", found, "use one of: " + FORMS)
    if mode is TaskMode.WAIT_FOR_SYSTEM_CALLBACK and found.kind != "flow":
        return Problem("pattern", "pattern sync waits for a sub-flow to end; a "
                       f"{found.kind} is called with requestResponse or waitForCallback")
    return Integration(found.action, mode, found.kind, found.resource_arn, found.target)


def _resource(step: TaskStep) -> Integration | str:
    arn = step.resource_arn
    mode = TaskMode.REQUEST_COMPLETE
    if step.ref:
        ref = _REF.match(arn)
        if ref is None:
            return f"!Ref {arn} must name <service>/<function>"
        full = f"acs:fc:::services/{ref.group(1)}/functions/{ref.group(2)}"
        return Integration(FC_INVOKE, mode, "function", full, ref.group(2))
    if (fc := _FC2.match(arn)) is not None:
        return Integration(FC_INVOKE, mode, "function", arn, fc.group(4))
    if (fc := _FC3.match(arn)) is not None:
        return Integration(FC_INVOKE, mode, "function", arn, fc.group(3))
    if (flow := _FLOW.match(arn)) is not None:
        region, account, name = flow.groups()
        return Integration("FNF:StartExecution", mode, "flow",
                           f"acs:fnf:{region}:{account}:flow/{name}", name)
    if (mns := _MNS.match(arn)) is not None:
        what, name = mns.group(3), mns.group(4)
        if what == "topics":
            return Integration("MNS:PublishMessage", mode, "topic", "", name)
        return Integration("MNS:SendMessage", mode, "queue", "", name)
    return f"resourceArn '{arn}' is not a resource a legacy task can call"
