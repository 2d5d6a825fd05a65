"""The fnf / flow components' props: one table entry per prop (:data:`FLOW_PROPS`).

``definition`` takes every form of :mod:`deployer.config.definitions`; ``role`` (a role this
toolkit creates, trusting CloudFlow and allowed to invoke exactly the functions the flow
calls), ``definitionVars``, ``publishVersion``, ``aliases``, ``schedules`` and
``executionInput`` are this toolkit's extensions (docs/manifest.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from deployer.config.definitions import Definition, read_definition
from deployer.config.loaded import LoadedDocuments
from deployer.config.paths import BROKEN
from deployer.config.props import PropReader, type_name
from deployer.config.releases import flow_release, flow_schedules
from deployer.config.schema import ROLE_ARN, ROLE_NAME, check_region
from deployer.config.specs import ExecutionMode, FlowSpec

__all__ = ["FLOW_PROPS", "FlowContext", "build_flow"]

FLOW_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,127}"


@dataclass(frozen=True, slots=True)
class FlowContext:
    base_dir: Path
    manifest: Path
    loaded: LoadedDocuments
    raw_definition: Any  # the definition prop as written (for its file and lines)


_Values = dict[str, Any]
_Read = Callable[[PropReader, _Values, FlowContext], Any]


def _region(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return check_region(r)


def _name(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return r.string("name", required=True, pattern=FLOW_NAME,
                    what="must start with a letter or _ and use letters, digits, _ and - "
                    "(1-128 chars)")


def _definition(r: PropReader, v: _Values, c: FlowContext) -> Definition | None:
    value = r.props.get("definition")
    if value is BROKEN:  # its magic variable failed; that problem is already reported
        return None
    if value is None:
        r.error("definition", "required prop 'definition' is missing")
        return None
    found = read_definition(value, c.raw_definition, (*r.path, "definition"),
                            base_dir=c.base_dir, manifest=c.manifest, loaded=c.loaded)
    if isinstance(found, str):
        r.error("definition", found)
        return None
    return found


def _type(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return r.one_of("type", ("FDL",), default="FDL")


def _mode(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return ExecutionMode(r.one_of("executionMode", [m.value for m in ExecutionMode],
                                  default="Standard"))


def _description(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return r.string("description", default="") or ""


def _vars(r: PropReader, v: _Values, c: FlowContext) -> Any:
    found = r.mapping("definitionVars")
    return MappingProxyType(dict(found)) if found is not None else MappingProxyType({})


def _role(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return r.string("role", pattern=ROLE_NAME, what="must be a RAM role name (1-64 letters, "
                    "digits, . and -); use roleArn for an ARN")


def _role_arn(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return r.string("roleArn", pattern=ROLE_ARN,
                    what="must look like acs:ram::<account-id>:role/<name>")


def _release(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return flow_release(r)


def _schedules(r: PropReader, v: _Values, c: FlowContext) -> Any:
    return flow_schedules(r)


def _input(r: PropReader, v: _Values, c: FlowContext) -> Any:
    value = r.props.get("executionInput")
    if value is None or isinstance(value, Mapping):
        return None if value is None else dict(value)
    r.error("executionInput", f"must be a map: the execution input (got {type_name(value)})")
    return None


FLOW_PROPS: dict[str, tuple[_Read, str]] = {
    "region": (_region, "region"),
    "name": (_name, "name"),
    "definition": (_definition, "definition"),
    "type": (_type, "type"),
    "executionMode": (_mode, "execution_mode"),
    "description": (_description, "description"),
    "definitionVars": (_vars, "definition_vars"),
    "role": (_role, "role_name"),
    "roleArn": (_role_arn, "role_arn"),
    "publishVersion": (_release, "release"),
    "aliases": (_release, "release"),
    "schedules": (_schedules, "schedules"),
    "executionInput": (_input, "execution_input"),
}
FLOW_REFUSED = {"endpoint": "endpoints come from --target (aliyun: the region's public "
                            "endpoints; local: the emulator); remove it"}


def build_flow(resource: str, reader: PropReader, ctx: FlowContext) -> FlowSpec | None:
    """A FlowSpec from resolved fnf props, or None after reporting problems."""
    before = len(reader.log.errors)
    reader.check_keys(tuple(FLOW_PROPS), FLOW_REFUSED, "fnf")
    values: _Values = {}
    for read, field in dict.fromkeys(FLOW_PROPS.values()):
        values[field] = read(reader, values, ctx)
    if "role" in reader.props and "roleArn" in reader.props:
        reader.error("roleArn", "give either role (a role to create) or roleArn, not both")
    elif values["role_name"] is None and values["role_arn"] is None \
            and len(reader.log.errors) == before:
        reader.warning("role", "no execution role: the flow cannot invoke functions in the cloud")
    definition: Definition | None = values.pop("definition")
    if len(reader.log.errors) > before or not (values["region"] and values["name"]
                                                and definition):
        return None
    region, name = values.pop("region"), values.pop("name")
    return FlowSpec(resource, region, name, definition.path, document=definition.document,
                    document_map=definition.line_map,
                    position=reader.log.position(reader.path[:2]), **values)
