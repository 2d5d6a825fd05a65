"""s.yaml (Serverless Devs v3) -> a frozen :class:`Manifest` of FunctionSpecs and FlowSpecs.

Pipeline: parse with ruamel.yaml (keeping line/column, :mod:`deployer.config.document`) ->
check top-level and resource keys -> ``extend`` each resource's props from ``template`` ->
sort the resources: fc3 and fnf/flow ones are deployed, others (other components, functions
using a prop or runtime not deployed yet) are listed with their reasons -> build each deployed
resource in dependency order (:mod:`deployer.config.loader`): resolve its magic variables
(:mod:`deployer.config.variables`; ``${resources.X.output.*}`` builds X first and reads its
output, :mod:`deployer.config.outputs`) and validate its props (:mod:`deployer.config.fc3`,
:mod:`deployer.config.flow_props`) -> ``actions`` (:mod:`deployer.config.actions`). Every
problem is collected; if any is an error, one :class:`ManifestError` lists them all, each as
``s.yaml:LINE:COLUMN: field.path: message`` (or the line of the file a ``yaml(file())`` read).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from deployer.config.actions import Hooks
from deployer.config.document import parse_manifest
from deployer.config.loader import Loader, LoadOptions
from deployer.config.problems import (
    ManifestError,
    ManifestProblem,
    ProblemLog,
    ProblemSeverity,
    SourcePosition,
)
from deployer.config.props import PropReader
from deployer.config.specs import ExecutionMode, FlowSpec, FunctionSpec, Manifest, Undeployed
from deployer.config.values import ExternalValues

__all__ = [
    "ExecutionMode",
    "ExternalValues",
    "FlowSpec",
    "FunctionSpec",
    "Manifest",
    "ManifestError",
    "ManifestProblem",
    "ProblemSeverity",
    "SourcePosition",
    "Undeployed",
    "load_manifest",
]

EDITION = "3.0.0"
TOP_LEVEL = ("edition", "name", "access", "vars", "resources", "template", "actions")
TOP_LEVEL_UNSUPPORTED = {
    "flow": "explicit command ordering is not supported; the deployer orders resources by "
            "their references (dependencies first, then file order)",
}


def load_manifest(
    path: Path,
    *,
    env: Mapping[str, str] | None = None,
    account_id: str | None = None,
    region: str | None = None,
    values: ExternalValues | None = None,
    config: Mapping[str, str] | None = None,
    strict: bool = False,
    lenient: bool = False,
) -> Manifest:
    """Read, resolve and validate the s.yaml at ``path``.

    ``env`` is the environment for ``${env(...)}`` (default: ``os.environ``); ``account_id``
    resolves ``${config('AccountID')}`` (default: ``ALIBABA_CLOUD_ACCOUNT_ID`` from ``env``)
    and names ``auto`` resources; ``config`` holds the other ``config()`` keys; ``region``
    is the deploy's region when it overrides the props'. ``values`` answer references into
    resources this toolkit does not deploy. ``strict`` makes every resource that is not
    deployed an error; ``lenient`` makes a missing ``values`` entry a placeholder text instead
    of an error (for commands that only read names from s.yaml). Relative paths (``code``,
    ``definition``, ``file()``) are resolved against the manifest's directory. File reading
    only, no network. Raises :class:`ManifestError` (exit 3) listing every problem, or
    NotFoundError when the file does not exist.
    """
    env = os.environ if env is None else env
    account_id = account_id or env.get("ALIBABA_CLOUD_ACCOUNT_ID") or None
    document = parse_manifest(path)
    log = ProblemLog(path.name, document)
    _check_keys(log, document, (), TOP_LEVEL, TOP_LEVEL_UNSUPPORTED, "top-level key")
    edition = document.get("edition")
    if str(edition) != EDITION:
        log.error(("edition",), f"must be {EDITION} (Serverless Devs v3); got {edition!r}")
    name = document.get("name")
    if not isinstance(name, str) or not name:
        log.error(("name",), "required: the project name (a non-empty string)")
    options = LoadOptions(env=env, account_id=account_id, region=region,
                          values=values or ExternalValues(),
                          config={**({"AccountID": account_id} if account_id else {}),
                                  **(config or {})}, strict=strict, lenient=lenient)
    loaded = Loader(document, log, path.resolve(), options).run()
    if log.errors:
        raise ManifestError(sorted(log.errors, key=_order(path.name)))
    return Manifest(
        name=str(name),
        edition=EDITION,
        access=str(document["access"]) if document.get("access") is not None else None,
        vars=MappingProxyType(dict(loaded.variables)),
        functions=loaded.functions,
        flows=loaded.flows,
        path=path.resolve(),
        warnings=tuple(log.warnings),
        undeployed=loaded.undeployed,
        order=loaded.order,
        hooks=Hooks(loaded.runs),
        consumed=loaded.consumed,
        outputs=MappingProxyType(loaded.outputs),
        notes=loaded.notes,
    )


def _order(manifest: str):  # type: ignore[no-untyped-def]
    def key(problem: ManifestProblem) -> tuple[bool, str, int, int]:
        where = problem.position
        return where.file != manifest, where.file, where.line, where.column
    return key


def _check_keys(
    log: ProblemLog, node: Mapping[str, object], path: tuple[str, ...],
    allowed: tuple[str, ...], unsupported: Mapping[str, str], kind: str,
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

