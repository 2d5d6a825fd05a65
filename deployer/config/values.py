"""Values for references into resources this toolkit does not deploy.

A resource of another component (``rds``, ``model``, ``oss``, ...) or one this toolkit cannot
deploy yet has no output here, so ``${resources.db.output.host}`` needs its value from the
user: ``--var resources.db.output.host=10.0.0.5`` (repeatable) or a values file,
``--values values.yaml``, holding the same paths as YAML::

    resources:
      db:
        output:
          host: 10.0.0.5
      llm:
        output:
          urlIntranet: http://127.0.0.1:8000

``--var`` wins over the file. A value given for a resource this toolkit deploys is an error
(its output comes from the deploy itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deployer.config.expressions import MagicSyntaxError, parse_magic, reference_path
from deployer.config.loaded import FileProblem, parse_yaml, read_text_file
from deployer.errors import InvalidInputError

__all__ = ["ExternalValues", "parse_var", "read_values_file"]

REFERENCE_KINDS = ("output", "info")


@dataclass(frozen=True)
class ExternalValues:
    """``resources.<name>.<output|info>...`` -> value, from ``--var`` and ``--values``."""

    tree: Mapping[str, Any] = field(default_factory=dict)  # resource -> {output: ..., info: ...}
    source: str = ""  # where they came from, for messages

    def get(self, resource: str, kind: str, keys: list[str | int]) -> tuple[bool, Any]:
        """``(found, value)`` of ``resources.<resource>.<kind>.<keys...>``."""
        node: Any = self.tree.get(resource)
        for key in (kind, *keys):
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, Mapping) and str(key) in node:
                node = node[str(key)]
            elif isinstance(node, list) and isinstance(key, int) and -len(node) <= key < len(node):
                node = node[key]
            else:
                return False, None
        return True, node

    def resources(self) -> tuple[str, ...]:
        return tuple(self.tree)

    def merged(self, other: ExternalValues) -> ExternalValues:
        """These values with ``other``'s on top."""
        return ExternalValues(_merge(self.tree, other.tree),
                              " and ".join(s for s in (self.source, other.source) if s))


def _merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _plain(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def read_values_file(path: Path) -> ExternalValues:
    """The values in the YAML file ``path``; InvalidInputError (exit 3) naming the file,
    line and the path for a file that cannot be read or has anything but
    ``resources.<name>.<output|info>``."""
    try:
        _, text = read_text_file(path.parent, path.name)
        tree = parse_yaml(text, str(path))
    except FileProblem as exc:
        raise InvalidInputError(f"--values: {exc}") from None
    if tree is None:
        tree = {}
    if not isinstance(tree, Mapping) or set(tree) - {"resources"}:
        raise InvalidInputError(f"{path}:1:1: a values file holds one key, resources: "
                                "{<name>: {output: {...}}}")
    resources = tree.get("resources") or {}
    if not isinstance(resources, Mapping):
        raise InvalidInputError(f"{path}: resources must be a map of resource names")
    for name, entry in resources.items():
        line = entry.lc.line + 1 if hasattr(entry, "lc") else 1
        if not isinstance(entry, Mapping) or not entry or set(entry) - set(REFERENCE_KINDS):
            raise InvalidInputError(f"{path}:{line}: resources.{name} must hold output and/or "
                                    "info (the values of ${resources.<name>.output.<key>})")
    return ExternalValues(_plain(resources), str(path))


def parse_var(text: str) -> ExternalValues:
    """``resources.<name>.output.<key>=VALUE`` (one ``--var``); the value is YAML, so numbers,
    booleans and ``{...}`` keep their type and anything else is text. InvalidInputError
    (exit 3) naming the option otherwise."""
    name, eq, raw = text.partition("=")
    example = "--var resources.db.output.host=10.0.0.5"
    if not eq:
        raise InvalidInputError(f"--var {text!r}: expected PATH=VALUE", hint=f"e.g. {example}")
    try:
        keys = reference_path(parse_magic(name.strip()))
    except MagicSyntaxError:
        keys = None
    if keys is None or len(keys) < 4 or keys[0] != "resources" or keys[2] not in REFERENCE_KINDS:
        raise InvalidInputError(f"--var {name!r}: expected resources.<name>.output.<key> (or "
                                "info)", hint=f"e.g. {example}")
    try:
        value = _plain(parse_yaml(raw, "--var")) if raw.strip() else ""
    except FileProblem:
        value = raw
    node: Any = value
    for key in reversed(keys[2:]):
        node = {str(key): node}
    return ExternalValues({str(keys[1]): node}, "--var")
