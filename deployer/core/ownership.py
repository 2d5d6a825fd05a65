"""Which project owns a deployed resource, written where the cloud keeps it.

Two projects that name the same function, flow or role would otherwise take each other's
over (one switches the other's flow to its role, then deletes that role on ``down``). So
every resource a deploy writes carries its project's name:

* a function: the tag ``cloudflow-deployer-project`` (set by CreateFunction);
* a role and its invoke policy: their description (``... of project <name> (managed by
  cloudflow-deployer)``), which the deployer writes;
* a flow: CloudFlow flows have no tags, so the deployed definition ends with one YAML
  comment line naming the project (plans compare definitions without it).

``deploy up`` refuses to update a resource whose marker names another project, and ``deploy
down`` to delete one, naming the owner; ``--force`` overrides both (a taken-over resource is
recorded as such, and the next ``up`` does not ask again). A resource without a marker —
created by hand or by another tool — is adopted as before and never deleted.
"""

from __future__ import annotations

import re

__all__ = ["PROJECT_TAG", "definition_owner", "description_owner", "mark_definition",
           "policy_description", "role_description"]

PROJECT_TAG = "cloudflow-deployer-project"
_DESCRIPTION = re.compile(r"of project (?P<project>\S+) \(managed by cloudflow-deployer\)")
_MARKER = "# deployed by cloudflow-deployer for project "
_MARKER_LINE = re.compile(r"\n?# deployed by cloudflow-deployer for project (?P<project>\S+)"
                          r"[^\n]*\n?\Z")


def role_description(project: str) -> str:
    return f"Execution role of the CloudFlow flows of project {project} (managed by " \
           "cloudflow-deployer)"


def policy_description(project: str, role: str) -> str:
    return f"Lets role {role} invoke the functions of project {project} (managed by " \
           "cloudflow-deployer)"


def description_owner(description: str) -> str | None:
    """The project a role or policy description names, if it is one the deployer wrote."""
    m = _DESCRIPTION.search(description or "")
    return m["project"] if m else None


def mark_definition(text: str, project: str) -> str:
    """``text`` with the ownership comment as its last line (any earlier one replaced)."""
    body, _ = definition_owner(text)
    return f"{body.rstrip()}\n{_MARKER}{project} (edit the project's source, not this flow)\n"


def definition_owner(text: str) -> tuple[str, str | None]:
    """``(definition without the ownership comment, the project it names or None)``."""
    m = _MARKER_LINE.search(text or "")
    if m is None:
        return text, None
    return text[:m.start()] + ("\n" if text[:m.start()] and not text[:m.start()].endswith(
        "\n") else ""), m["project"]


def function_owner(tags: tuple[tuple[str, str], ...]) -> str | None:
    return next((value for key, value in tags if key == PROJECT_TAG), None)
