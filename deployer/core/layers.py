"""Layers published from local directories by a deploy.

A ``layers`` entry of s.yaml that names a directory (beside the ARNs of published versions) is
packaged like a function's code (deterministic zip, ``.fcignore``) and compared with the
newest version of the layer named after the directory: the same CRC-64 means that version is
used; otherwise ``deploy up`` publishes a new version (CreateLayerVersion, compatible with the
runtimes of the functions naming it) before the functions, and the functions name it. The plan
shows the version it expects (the newest plus one); should another publisher take that number
first, apply stops with an error instead of pointing the functions at someone else's version.
Layer versions are never deleted by a deploy (FC never reuses a version number, and other
functions may use them).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from deployer.checksums import crc64_ecma182
from deployer.cloud.fc_layer_versions import LayerVersionClient
from deployer.core.changes import SettingChange
from deployer.core.packaging import build_zip, collect_files
from deployer.core.plan_model import Action, Clients, DesiredLayer, DesiredState
from deployer.core.resources import ActionKind, ResourceType
from deployer.errors import OperationError

__all__ = ["is_local_layer", "layer_name", "plan_layers", "publish_layer"]


def is_local_layer(entry: str) -> bool:
    """Whether a ``layers`` entry is a local directory (an absolute path once read)."""
    return entry.startswith("/")


def layer_name(path: Path) -> str:
    """The layer a directory is published as: its name in FC's alphabet (letters, digits,
    ``_`` and ``-``, starting with a letter or ``_``; at most 64 characters)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "-", path.name)
    if not re.match(r"[A-Za-z_]", name):
        name = "layer-" + name
    return name[:64]


def _layer_arn(state: DesiredState, name: str, version: int) -> str:
    return f"acs:fc:{state.region}:{state.account_id}:layers/{name}/versions/{version}"


def plan_layers(state: DesiredState, clients: Clients) -> tuple[DesiredState, list[Action]]:
    """``state`` with each local layer directory replaced by a version ARN in its functions'
    configurations, and the layer actions (read-only calls)."""
    paths = sorted({entry for fn in state.functions for entry in fn.config.layers
                    if is_local_layer(entry)})
    if not paths:
        return state, []
    client = LayerVersionClient(clients.fc.connection)
    arns: dict[str, str] = {}
    actions: list[Action] = []
    layers: list[DesiredLayer] = []
    for entry in paths:
        path = Path(entry)
        data = build_zip(collect_files(path))
        crc, name = crc64_ecma182(data), layer_name(path)
        runtimes = tuple(sorted({fn.config.runtime for fn in state.functions
                                 if entry in fn.config.layers}))
        newest = client.latest(name)
        if newest is not None and newest.code_checksum == crc:
            arns[entry] = newest.arn
            actions.append(Action(ResourceType.LAYER, name, ActionKind.NO_CHANGE, newest.arn))
            continue
        version = (newest.version if newest else 0) + 1
        arns[entry] = _layer_arn(state, name, version)
        layers.append(DesiredLayer(name, path, data, crc, runtimes, version))
        actions.append(Action(ResourceType.LAYER, name, ActionKind.CREATE, arns[entry], (
            SettingChange("code", newest.code_checksum if newest else None, crc),),
            notes=(f"version {version} from {path}",)))
    functions = tuple(dataclasses.replace(fn, config=dataclasses.replace(
        fn.config, layers=tuple(arns.get(e, e) for e in fn.config.layers)))
        for fn in state.functions)
    return dataclasses.replace(state, functions=functions, layers=tuple(layers)), actions


def publish_layer(action: Action, state: DesiredState, clients: Clients) -> str:
    """Publish the planned version of layer ``action.name``; its ARN."""
    layer = next(x for x in state.layers if x.name == action.name)
    published = LayerVersionClient(clients.fc.connection).publish(
        layer.name, layer.zip_bytes, layer.runtimes, f"published by deploy up from {layer.path}")
    if published.version != layer.version:
        raise OperationError(
            f"layer {layer.name} was published as version {published.version}, not "
            f"{layer.version} as planned (another version was published meanwhile); the "
            "functions were not changed",
            hint="run `deploy up` again: it plans with the newest version")
    return published.arn
