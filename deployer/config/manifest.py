"""s.yaml (Serverless Devs v3) -> a frozen :class:`Manifest` of FunctionSpecs and FlowSpecs.

Pipeline: parse with ruamel.yaml (keeping line/column) -> check top-level and resource keys ->
resolve magic variables (:mod:`deployer.config.variables`) -> validate each resource's props
and apply fc3 defaults (:mod:`deployer.config.schema`). Every problem is collected; if any is
an error, one :class:`ManifestError` lists them all, each as
``s.yaml:LINE:COLUMN: field.path: message``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from deployer.config.problems import (
    ManifestError,
    ManifestProblem,
    ProblemLog,
    ProblemSeverity,
    SourcePosition,
)
from deployer.config.props import PropReader, type_name
from deployer.config.releases import fc3_release
from deployer.config.schema import build_flow, build_function
from deployer.config.specs import ExecutionMode, FlowSpec, FunctionSpec, Manifest
from deployer.config.variables import BROKEN, Resolver, VariableProblem

__all__ = [
    "ExecutionMode",
    "FlowSpec",
    "FunctionSpec",
    "Manifest",
    "ManifestError",
    "ManifestProblem",
    "ProblemSeverity",
    "SourcePosition",
    "load_manifest",
]

EDITION = "3.0.0"
TOP_LEVEL = ("edition", "name", "access", "vars", "resources")
TOP_LEVEL_UNSUPPORTED = {
    "template": "resource templates (extend) are not supported; write the props out",
    "flow": "explicit command ordering is not supported; the deployer orders resources itself",
    "actions": "hooks are not run by this deployer",
}
RESOURCE_KEYS = ("component", "props")
FUNCTION_COMPONENTS = ("fc3",)
FLOW_COMPONENTS = ("fnf", "flow")


def load_manifest(
    path: Path,
    *,
    env: Mapping[str, str] | None = None,
    account_id: str | None = None,
) -> Manifest:
    """Read, resolve and validate the s.yaml at ``path``.

    ``env`` is the environment for ``${env(...)}`` (default: ``os.environ``); ``account_id``
    resolves ``${config('AccountID')}`` (default: ``ALIBABA_CLOUD_ACCOUNT_ID`` from ``env``).
    Relative paths (``code``, ``definition``) are resolved against the manifest's directory.
    Pure file reading, no network. Raises :class:`ManifestError` (exit 3) listing every
    problem, or NotFoundError when the file does not exist.
    """
    env = os.environ if env is None else env
    account_id = account_id or env.get("ALIBABA_CLOUD_ACCOUNT_ID") or None
    document = _parse(path)
    log = ProblemLog(path.name, document)
    _check_keys(log, document, (), TOP_LEVEL, TOP_LEVEL_UNSUPPORTED, "top-level key")
    edition = document.get("edition")
    if str(edition) != EDITION:
        log.error(("edition",), f"must be {EDITION} (Serverless Devs v3); got {edition!r}")
    name = document.get("name")
    if not isinstance(name, str) or not name:
        log.error(("name",), "required: the project name (a non-empty string)")

    def report(problem: VariableProblem) -> None:
        log.error(problem.path, problem.message)

    resolver = Resolver(document, env=env, account_id=account_id, report=report)
    variables = resolver.resolve(("vars",), document.get("vars") or {})
    if variables is BROKEN:
        variables = {}
    elif not isinstance(variables, Mapping):
        log.error(("vars",), f"must be a map (got {type_name(variables)})")
        variables = {}
    functions, flows = _resources(log, document, resolver, path.parent.resolve())
    _check_unique(log, functions, flows)
    if log.errors:
        raise ManifestError(sorted(log.errors, key=lambda p: (p.position.line, p.position.column)))
    return Manifest(
        name=str(name),
        edition=EDITION,
        access=str(document["access"]) if document.get("access") is not None else None,
        vars=MappingProxyType(dict(variables)),
        functions=tuple(functions),
        flows=tuple(flows),
        path=path.resolve(),
        warnings=tuple(log.warnings),
    )


def _parse(path: Path) -> Any:
    from deployer.errors import NotFoundError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(
            f"manifest {path} does not exist",
            hint="run in the project directory, or pass -C <dir> / -t <file>",
        ) from None
    except IsADirectoryError:
        raise ManifestError([_problem(path, 1, 1, "", "is a directory, not a file")]) from None
    except UnicodeDecodeError as exc:
        data = path.read_bytes()
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ManifestError([_problem(path, line, column, "",
                                      f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save "
                                      "the file as UTF-8")]) from None
    except OSError as exc:
        raise ManifestError([_problem(path, 1, 1, "", f"cannot read the file: {exc.strerror}")]
                            ) from None
    try:
        document = _yaml_document(text)
    except RecursionError:
        line, column = _deep_position(text)
        raise ManifestError([_problem(path, line, column, "",
                                      f"nests more than {MAX_NESTING} levels deep; s.yaml "
                                      "holds a few levels of maps and lists")]) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise ManifestError([_problem(path, line, column, "", f"invalid YAML: {message}")]) \
            from None
    except YAMLError as exc:
        raise ManifestError([_problem(path, 1, 1, "", f"invalid YAML: {exc}")]) from None
    if not isinstance(document, Mapping):
        raise ManifestError(
            [_problem(path, 1, 1, "", "must be a YAML map with edition, name and resources")]
        )
    _check_expansion(path, document)
    return document


@functools.lru_cache(maxsize=2)
def _yaml_document(text: str) -> Any:
    """The parsed YAML of ``text``; a command loads s.yaml once per account id, and the same
    text is parsed once (the loader only reads the document; a YAML error is not cached)."""
    return YAML(typ="rt").load(text)


#: The most values s.yaml may hold once its aliases are expanded (a real one has a few hundred).
MAX_EXPANDED_VALUES = 100_000

#: How deep s.yaml may nest when the YAML reader's own recursion gives up (reported where).
MAX_NESTING = 64


def _deep_position(text: str) -> tuple[int, int]:
    """Where ``text`` first nests deeper than :data:`MAX_NESTING` (read as a flat stream of
    YAML events, which needs no recursion); (1, 1) if it does not."""
    depth = 0
    try:
        for event in YAML(typ="rt").parse(text):
            kind = type(event).__name__
            if kind in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                if depth > MAX_NESTING:
                    mark = event.start_mark
                    return mark.line + 1, mark.column + 1
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
    except (YAMLError, RecursionError):
        pass
    return 1, 1


def _check_expansion(path: Path, document: Mapping[str, Any]) -> None:
    """Refuse a document whose aliases (``*name``) expand to more than
    :data:`MAX_EXPANDED_VALUES` values (an "alias bomb"), or refer to themselves.

    The parser shares an aliased node rather than copying it, so this counts each distinct node
    once (time linear in the file) while summing what an expansion would produce.
    """
    sizes: dict[int, int] = {}
    for key, value in document.items():
        size = _expanded_size(value, sizes, set())
        if size is None or size > MAX_EXPANDED_VALUES:
            line, column = _key_position(document, key)
            what = ("contains a YAML alias that refers to itself" if size is None else
                    f"expands its YAML aliases to more than {MAX_EXPANDED_VALUES:,} values")
            raise ManifestError([_problem(path, line, column, str(key),
                                          f"{what}; write the values out (or use fewer "
                                          "nested aliases)")])


def _expanded_size(node: Any, sizes: dict[int, int], open_nodes: set[int]) -> int | None:
    """How many values ``node`` holds with every alias expanded; None for a cycle. Stops
    counting once the limit is passed."""
    if not isinstance(node, (Mapping, list)):
        return 1
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        return None
    open_nodes.add(key)
    total = 1
    children = [*node.keys(), *node.values()] if isinstance(node, Mapping) else node
    for child in children:
        size = _expanded_size(child, sizes, open_nodes)
        if size is None:
            return None
        total += size
        if total > MAX_EXPANDED_VALUES:
            break
    open_nodes.discard(key)
    sizes[key] = total
    return total


def _key_position(document: Mapping[str, Any], key: Any) -> tuple[int, int]:
    try:
        line, column = document.lc.key(key)  # type: ignore[attr-defined]
        return int(line) + 1, int(column) + 1
    except (AttributeError, KeyError, TypeError):
        return 1, 1


def _problem(path: Path, line: int, column: int, field: str, message: str) -> ManifestProblem:
    return ManifestProblem(SourcePosition(path.name, line, column), field, message)


def _check_keys(
    log: ProblemLog, node: Mapping[str, Any], path: tuple[str, ...], allowed: tuple[str, ...],
    unsupported: Mapping[str, str], kind: str,
) -> None:
    reader = PropReader(node, path, log)
    for key in node:
        if key in unsupported:
            reader.error(key, f"not supported: {unsupported[key]}")
        elif key not in allowed:
            from difflib import get_close_matches

            close = get_close_matches(str(key), allowed, n=1)
            reader.error(key, f"unknown {kind}" + (f" (did you mean {close[0]!r}?)" if close
                                                   else ""))


def _resources(
    log: ProblemLog, document: Mapping[str, Any], resolver: Resolver, base_dir: Path
) -> tuple[list[FunctionSpec], list[FlowSpec]]:
    functions: list[FunctionSpec] = []
    flows: list[FlowSpec] = []
    resources = document.get("resources")
    if not isinstance(resources, Mapping) or not resources:
        log.error(("resources",), "required: a map of resource name -> {component, props}")
        return functions, flows
    for name, resource in resources.items():
        where = ("resources", name)
        if not isinstance(resource, Mapping):
            log.error(where, f"must be a map with component and props (got {type_name(resource)})")
            continue
        component = resource.get("component")
        unsupported = {"actions": TOP_LEVEL_UNSUPPORTED["actions"],
                       "extend": TOP_LEVEL_UNSUPPORTED["template"]}
        keys: tuple[str, ...] = RESOURCE_KEYS
        if component in FUNCTION_COMPONENTS:  # fc3 version/alias publish steps (releases.py)
            keys = (*RESOURCE_KEYS, "actions")
            del unsupported["actions"]
        _check_keys(log, resource, where, keys, unsupported, "resource key")
        if component not in (*FUNCTION_COMPONENTS, *FLOW_COMPONENTS):
            log.error((*where, "component"),
                      f"unsupported component {component!r}: this deployer handles fc3 "
                      "(functions) and fnf or flow (CloudFlow flows)")
            continue
        props = resolver.resolve((*where, "props"), resource.get("props"))
        if props is BROKEN:
            continue
        if not isinstance(props, Mapping):
            log.error((*where, "props"), f"required: a map of props (got {type_name(props)})")
            continue
        reader = PropReader(props, (*where, "props"), log)
        if component in FUNCTION_COMPONENTS:
            function = build_function(str(name), reader, base_dir)
            release = fc3_release(resource.get("actions"), (*where, "actions"), log)
            if function:
                functions.append(dataclasses.replace(function, release=release))
        else:
            flow = build_flow(str(name), reader, base_dir)
            if flow:
                flows.append(flow)
    return functions, flows


def _check_unique(log: ProblemLog, functions: list[FunctionSpec], flows: list[FlowSpec]) -> None:
    seen: dict[tuple[str, str], str] = {}
    for function in functions:
        key = (function.region, function.function_name)
        if key in seen:
            log.error(("resources", function.resource, "props", "functionName"),
                      f"function {function.function_name!r} is already defined by resource "
                      f"{seen[key]!r} in {function.region}")
        seen.setdefault(key, function.resource)
    seen.clear()
    for flow in flows:
        key = (flow.region, flow.name)
        if key in seen:
            log.error(("resources", flow.resource, "props", "name"),
                      f"flow {flow.name!r} is already defined by resource {seen[key]!r}")
        seen.setdefault(key, flow.resource)
