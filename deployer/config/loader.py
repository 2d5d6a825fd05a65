"""Building the resources of one s.yaml in dependency order (see :mod:`.manifest`).

Each deployed resource is built on demand: resolving its props may meet
``${resources.Y.output.k}``, which builds Y first (a resource already being built is a cycle,
reported with its chain) and reads Y's output as :mod:`deployer.config.outputs` computes it.
A reference into a resource this toolkit does not deploy takes its value from ``--var`` /
``--values`` (:mod:`deployer.config.values`) or is an error naming it. The order in which
builds finish — dependencies first, then file order — is the deploy order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from deployer.config.actions import ComponentStep, RunStep, parse_actions
from deployer.config.fc3 import FunctionContext, build_function, pending_reasons
from deployer.config.flow_props import FlowContext, build_flow
from deployer.config.outputs import flow_output, function_output
from deployer.config.paths import BROKEN, Path_, VariableProblem, format_path
from deployer.config.problems import ProblemLog
from deployer.config.props import PropReader, type_name
from deployer.config.releases import fc3_release
from deployer.config.specs import ConsumedValue, FlowSpec, FunctionSpec, Undeployed
from deployer.config.values import ExternalValues
from deployer.config.variables import Resolver, VariableScope

__all__ = ["LoadOptions", "Loaded", "Loader"]

FUNCTION_COMPONENTS = ("fc3",)
FLOW_COMPONENTS = ("fnf", "flow")
RESOURCE_KEYS = ("component", "props", "actions", "extend", "access")
Spec = FunctionSpec | FlowSpec


@dataclass(frozen=True)
class LoadOptions:
    env: Mapping[str, str]
    account_id: str | None
    region: str | None
    values: ExternalValues
    config: Mapping[str, str]
    strict: bool = False
    lenient: bool = False  # a missing value is a placeholder, not an error (see load_manifest)


@dataclass
class Loaded:
    variables: Mapping[str, Any] = field(default_factory=dict)
    functions: tuple[FunctionSpec, ...] = ()
    flows: tuple[FlowSpec, ...] = ()
    undeployed: tuple[Undeployed, ...] = ()
    order: tuple[str, ...] = ()
    runs: tuple[RunStep, ...] = ()
    consumed: tuple[ConsumedValue, ...] = ()
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


class Loader:
    """One load of one document; :meth:`run` reports every problem to the log."""

    def __init__(self, document: Mapping[str, Any], log: ProblemLog, path: Path,
                 options: LoadOptions) -> None:
        self.document, self.log, self.path, self.options = document, log, path, options
        self.base_dir = path.parent
        self.scope = VariableScope(document, options.env, options.config, self.base_dir,
                           loaded=log.loaded, resource_result=self._result)
        self.resolver = Resolver(self.scope, lambda p: log.error(p.path, p.message))
        self.components: dict[str, str] = {}
        self.deployable: list[str] = []
        self.undeployed: dict[str, Undeployed] = {}
        self.specs: dict[str, Spec | None] = {}
        self.building: list[str] = []
        self.order: list[str] = []
        self.outputs: dict[str, dict[str, Any]] = {}
        self.consumed: list[ConsumedValue] = []

    # --- the pipeline -------------------------------------------------------------------------

    def run(self) -> Loaded:
        variables = self.resolver.resolve(("vars",), self.document.get("vars") or {})
        if variables is BROKEN:
            variables = {}
        elif not isinstance(variables, Mapping):
            self.log.error(("vars",), f"must be a map (got {type_name(variables)})")
            variables = {}
        resources = self.document.get("resources")
        if not isinstance(resources, Mapping) or not resources:
            self.log.error(("resources",), "required: a map of resource name -> {component, "
                                           "props}")
            return Loaded(variables)
        for name, resource in resources.items():
            self._collect(str(name), resource)
        for name in list(self.components):
            self._classify(name)
        for name in self.deployable:
            self._build(name)
        runs = self._actions()
        self._checks()
        specs = [self.specs[n] for n in self.order]
        return Loaded(
            variables=variables,
            functions=tuple(s for s in specs if isinstance(s, FunctionSpec)),
            flows=tuple(s for s in specs if isinstance(s, FlowSpec)),
            undeployed=tuple(self.undeployed.values()), order=tuple(self.order),
            runs=tuple(runs), consumed=tuple(self.consumed), outputs=self.outputs,
            notes=tuple(self._notes()))

    def _collect(self, name: str, resource: Any) -> None:
        where: Path_ = ("resources", name)
        if not isinstance(resource, Mapping):
            self.log.error(where, f"must be a map with component and props (got "
                                  f"{type_name(resource)})")
            return
        _unknown_keys(self.log, resource, where, RESOURCE_KEYS, "resource key")
        component = resource.get("component")
        if not isinstance(component, str) or not component:
            self.log.error((*where, "component"), "required: the component's name (fc3, fnf, "
                                                  "flow, or another Serverless Devs component)")
            return
        props = self._extended(name, resource)
        if props is None:
            return
        self.components[name] = component
        self.scope.props = {**self.scope.props, name: props}

    def _classify(self, name: str) -> None:
        where: Path_ = ("resources", name)
        component, props = self.components[name], self.scope.props[name]
        reasons = self._reasons(name, component, props)
        if reasons:
            self.undeployed[name] = Undeployed(name, component, tuple(reasons),
                                               self.log.position(where),
                                               self._names(name, props))
        else:
            self.deployable.append(name)

    def _reasons(self, name: str, component: str, props: Mapping[str, Any]) -> list[str]:
        if component in FLOW_COMPONENTS:
            return []
        if component not in FUNCTION_COMPONENTS:
            return [f"component {component} is not deployed by this toolkit (it deploys fc3, "
                    "fnf and flow)"]
        runtime = props.get("runtime")
        if isinstance(runtime, str) and "${" in runtime:
            runtime = self.resolver.resolve(("resources", name, "props", "runtime"), runtime)
        return pending_reasons(props, runtime)

    def _names(self, name: str, props: Mapping[str, Any]) -> tuple[str, ...]:
        """The function or flow name of a resource that is not deployed, if it resolves
        (its problems are not this toolkit's to report)."""
        quiet = Resolver(self.scope, lambda problem: None)
        found = []
        for key in ("functionName", "name"):
            value = quiet.resolve(("resources", name, "props", key), props.get(key))
            if isinstance(value, str):
                found.append(value)
        return tuple(found)

    def _extended(self, name: str, resource: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The resource's props, merged over its ``extend`` template (positions aliased)."""
        props = resource.get("props")
        where: Path_ = ("resources", name)
        if props is None:
            props = {}
        if not isinstance(props, Mapping):
            self.log.error((*where, "props"), f"must be a map of props (got {type_name(props)})")
            return None
        extend = resource.get("extend")
        if extend is None:
            return props
        base = self._template(extend, (*where, "extend"))
        if base is None:  # reported; its props alone would only add follow-on problems
            return None
        template, key = base
        merged, inherited = _merge(template, props, ("template", key))
        for logical, physical in inherited:
            logical_path = (*where, "props", *logical)
            self.log.aliases[logical_path] = physical
        return merged

    def _template(self, extend: Any, where: Path_) -> tuple[Mapping[str, Any], str] | None:
        templates = self.document.get("template")
        if not isinstance(extend, Mapping) or not isinstance(extend.get("name"), str):
            self.log.error(where, "must be {name: <template>, ignore: [props]}")
            return None
        name, ignore = extend["name"], extend.get("ignore") or []
        unknown = set(extend) - {"name", "ignore"}
        if unknown:
            self.log.error((*where, sorted(map(str, unknown))[0]), "extend takes name and ignore")
        known = list(templates) if isinstance(templates, Mapping) else []
        if name not in known:
            close = get_close_matches(name, [str(k) for k in known], n=1)
            self.log.error((*where, "name"), f"no template named {name!r} under the top-level "
                           "template:" + (f" (did you mean {close[0]!r}?)" if close else ""))
            return None
        if not isinstance(ignore, list) or not all(isinstance(i, str) for i in ignore):
            self.log.error((*where, "ignore"), "must be a list of prop names")
            ignore = []
        body = templates[name] if isinstance(templates, Mapping) else None
        if not isinstance(body, Mapping):
            self.log.error(("template", name), "must be a map of props")
            return None
        return {k: v for k, v in body.items() if k not in ignore}, name

    # --- building ------------------------------------------------------------------------------

    def _build(self, name: str) -> Spec | None:
        if name in self.specs:
            return self.specs[name]
        self.building.append(name)
        try:
            spec = self._make(name)
        finally:
            self.building.pop()
        self.specs[name] = spec
        if spec is not None:
            self.order.append(name)
        return spec

    def _make(self, name: str) -> Spec | None:
        where: Path_ = ("resources", name, "props")
        node = self.scope.props[name]
        props = self.resolver.resolve(where, node)
        if props is BROKEN or not isinstance(props, Mapping):
            return None
        reader = PropReader(props, where, self.log)
        account = self.options.account_id or "0000000000000000"
        component = self.components[name]
        if component in FUNCTION_COMPONENTS:
            function = build_function(name, reader, FunctionContext(
                self.base_dir, account, self.options.region))
            if function is not None:
                self.outputs[name] = function_output(
                    function, account_id=account, region=self.options.region or function.region)
            return function
        raw = node.get("definition") if isinstance(node, Mapping) else None
        flow = build_flow(name, reader, FlowContext(self.base_dir, self.path,
                                                    self.log.loaded, raw))
        if flow is not None:
            self.outputs[name] = flow_output(flow, account_id=account,
                                             region=self.options.region or flow.region)
        return flow

    def _result(self, path: Path_, shown: str, resource: str, kind: str,
                keys: list[str | int]) -> Any:
        """The value of ``resources.<resource>.<kind>.<keys>`` (VariableScope.resource_result)."""
        consumer = self.resolver.owner(path)
        if resource in self.deployable:
            if resource in self.building and resource == consumer:
                raise VariableProblem(path, f"{shown}: a resource's own {kind} is known only "
                                            "in its actions (after it is deployed)")
            if resource in self.building:
                chain = [*self.building[self.building.index(resource):], resource]
                raise VariableProblem(path, f"{shown}: reference cycle between resources: "
                                            + " -> ".join(chain))
            if self._build(resource) is None:
                return BROKEN
            value = _walk(self.outputs[resource], keys)
            if value is _MISSING:
                have = ", ".join(sorted(self.outputs[resource]))
                raise VariableProblem(path, f"{shown}: the {kind} of {resource} has no "
                                            f"{format_path(tuple(keys))} (it has: {have})")
            if consumer is not None and consumer != resource:
                self.consumed.append(ConsumedValue(consumer, resource, kind, tuple(keys), value))
            return value
        found, value = self.options.values.get(resource, kind, keys)
        if found:
            return value
        tail = ".".join(str(k) for k in keys) or "<key>"
        if self.options.lenient:
            return f"<resources.{resource}.{kind}.{tail}: not given>"
        component = self.components.get(resource, "?")
        why = f"component {component}" if component not in FUNCTION_COMPONENTS else \
            self.undeployed[resource].reasons[0] if resource in self.undeployed else "not built"
        raise VariableProblem(path, f"{shown} needs a value: {resource} is not deployed by "
                                    f"this toolkit ({why}); give it with --var resources."
                                    f"{resource}.{kind}.{tail}=VALUE or in a values file "
                                    "(--values FILE)")

    # --- actions and checks --------------------------------------------------------------------

    def _actions(self) -> list[RunStep]:
        runs, _ = parse_actions(self.document.get("actions"), ("actions",),
                                resolver=self.resolver, log=self.log, base_dir=self.base_dir,
                                resource=None)
        for name in self.order:
            resource = self.document["resources"][name]
            where: Path_ = ("resources", name, "actions")
            mine, components = parse_actions(resource.get("actions"), where,
                                             resolver=self.resolver, log=self.log,
                                             base_dir=self.base_dir, resource=name)
            runs += mine
            self._components(name, components)
        return runs

    def _components(self, name: str, steps: list[ComponentStep]) -> None:
        spec = self.specs[name]
        publish = [(s.where, s.command) for s in steps if s.hook == "success"]
        for step in steps:
            if step.hook != "success" or not isinstance(spec, FunctionSpec):
                self.log.error((*step.where, "component"), "only an fc3 resource's "
                               "success-deploy steps `component: fc3 version publish` and "
                               "`component: fc3 alias publish ...` are carried out")
                return
        if isinstance(spec, FunctionSpec) and publish:
            import dataclasses

            self.specs[name] = dataclasses.replace(spec, release=fc3_release(publish, self.log))

    def _checks(self) -> None:
        _check_unique(self.log, [s for s in self.specs.values() if s is not None])
        for path in self.resolver.secrets:
            if path[3:4] != ("environmentVariables",) or path[2:3] != ("props",):
                self.log.error(path, "config('AccessKeySecret') and config('SecurityToken') are "
                                     "secrets: use them only in a function's "
                                     "environmentVariables (whose values are never printed)")
        for name in self.options.values.resources():
            if name in self.deployable:
                self.log.error(("resources", name), f"{self.options.values.source}: a value "
                               f"is given for {name}, which this toolkit deploys (its output "
                               "comes from the deploy)")
            elif name not in self.components:
                self.log.error(("resources",), f"{self.options.values.source}: no resource "
                               f"named {name!r} in s.yaml")
        if self.options.strict:
            for item in self.undeployed.values():
                self.log.error(("resources", item.resource), f"--strict: {item.resource} is not "
                               f"deployed: {'; '.join(item.reasons)}")

    def _notes(self) -> list[str]:
        notes = []
        for spec in self.specs.values():
            if isinstance(spec, FunctionSpec) and spec.vpc_auto:
                notes.append(f"{spec.resource}: vpcConfig: auto — on the emulator the "
                             "function runs on this machine's network; no VPC is created")
            if isinstance(spec, FunctionSpec) and spec.nas_auto:
                notes.append(f"{spec.resource}: nasConfig: auto — on the emulator nothing is "
                             f"mounted at /mnt/{spec.function_name}")
        return notes


_MISSING = object()


def _walk(node: Any, keys: list[str | int]) -> Any:
    for key in keys:
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, Mapping) and str(key) in node:
            node = node[str(key)]
        elif isinstance(node, list) and isinstance(key, int) and -len(node) <= key < len(node):
            node = node[key]
        else:
            return _MISSING
    return node


def _merge(base: Mapping[str, Any], top: Mapping[str, Any], origin: Path_
           ) -> tuple[dict[str, Any], list[tuple[Path_, Path_]]]:
    """``top`` deep-merged over ``base`` (maps merge, anything else is replaced, as
    Serverless Devs' extend2 does); and the keys taken from ``base``, with where they are."""
    merged: dict[str, Any] = dict(top)
    inherited: list[tuple[Path_, Path_]] = []
    for key, value in base.items():
        if key not in top:
            merged[key] = value
            inherited.append(((key,), (*origin, key)))
        elif isinstance(value, Mapping) and isinstance(top[key], Mapping):
            merged[key], below = _merge(value, top[key], (*origin, key))
            inherited += [((key, *a), b) for a, b in below]
    return merged, inherited


def _unknown_keys(log: ProblemLog, node: Mapping[str, Any], where: Path_,
                  allowed: tuple[str, ...], kind: str) -> None:
    for key in node:
        if key not in allowed:
            close = get_close_matches(str(key), allowed, n=1)
            log.error((*where, key), f"unknown {kind}" + (f" (did you mean {close[0]!r}?)"
                                                          if close else ""))


def _check_unique(log: ProblemLog, specs: list[Spec]) -> None:
    seen: dict[tuple[str, str, str], str] = {}
    for spec in specs:
        kind, prop, name = ("function", "functionName", spec.function_name) \
            if isinstance(spec, FunctionSpec) else ("flow", "name", spec.name)
        key = (kind, spec.region, name)
        if key in seen:
            log.error(("resources", spec.resource, "props", prop),
                      f"{kind} {name!r} is already defined by resource {seen[key]!r}"
                      + (f" in {spec.region}" if kind == "function" else ""))
        seen.setdefault(key, spec.resource)
