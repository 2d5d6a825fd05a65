"""Serverless Devs magic variables (``${...}``) in an s.yaml document (docs/manifest.md).

Supported, as Serverless Devs v3 documents them: ``${vars.a.b}``; ``${env('X')}``,
``${env('X', 'default')}`` and ``${env.X}``; ``${config('AccountID')}`` and the other
``config`` keys; ``${file('p')}`` (the text), ``${json(...)}`` and ``${yaml(...)}`` (a parsed
document, usually of ``file(...)``; the magic variables inside it are resolved too, as
Serverless Devs compiles every string of the result); ``${path('p')}`` (absolute path);
``${this.name}``, ``${this.props.x}``, ``${this.access}``, ``${this.component}`` (and
``${this.output.x}`` in actions); ``${resources.X.props.*}`` (another resource's props) and
``${resources.X.output.*}`` / ``${resources.X.info.*}`` (what deploying X yields, answered by
the loader: :class:`VariableScope`'s ``resource_result``).

A string that is exactly one ``${...}`` takes the value with its type (an int stays an int, a
map stays a map); one embedded in a longer string is interpolated as text. Values are resolved
lazily and memoised per path, so a reference cycle is found and reported with its chain; a
problem is reported once, where it is written, and what depends on it becomes
:data:`BROKEN` without a second report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from deployer.config.expressions import (
    MagicCall,
    MagicExpression,
    MagicMember,
    MagicString,
    MagicSyntaxError,
    find_magic,
    parse_magic,
    reference_path,
)
from deployer.config.loaded import (
    FileProblem,
    LoadedDocument,
    LoadedDocuments,
    parse_json,
    parse_yaml,
    read_text_file,
)
from deployer.config.paths import BROKEN, DOC, Path_, VariableProblem, format_path
from deployer.digits import is_decimal

__all__ = [
    "BROKEN",
    "CONFIG_KEYS",
    "SECRET_CONFIG_KEYS",
    "Path_",
    "Resolver",
    "VariableProblem",
    "VariableScope",
    "format_path",
]

#: ``${config('<key>')}``: the keys of ``s config get`` (the access alias's credential).
CONFIG_KEYS = ("AccountID", "AccessKeyID", "AccessKeySecret", "SecurityToken")
#: Config keys whose values are secrets: allowed only in a function's environment variables
#: (the one place whose values this toolkit never prints).
SECRET_CONFIG_KEYS = ("AccessKeySecret", "SecurityToken")
FUNCTIONS = ("env", "config", "file", "json", "yaml", "path")
ROOTS = ("vars", "env", "resources", "this")

ResourceAnswer = Callable[[Path_, str, str, str, list[str | int]], Any]


@dataclass
class VariableScope:
    """What magic variables can reach: the document, the environment, the ``config`` values,
    the files beside s.yaml, each resource's props node (after ``extend``), and the loader's
    answer for ``output``/``info`` references."""

    document: Mapping[str, Any]
    env: Mapping[str, str]
    config: Mapping[str, str]
    base_dir: Path
    props: Mapping[str, Any] = field(default_factory=dict)  # resource -> merged props node
    resource_result: ResourceAnswer | None = None
    loaded: LoadedDocuments = field(default_factory=LoadedDocuments)
    config_hint: str = "pass --account-id or set ALIBABA_CLOUD_ACCOUNT_ID"


class _Poisoned(Exception):
    """A value depends on one whose problem was already reported."""


class Resolver:
    """Resolves the magic variables of one parsed document (a tree of maps, lists, scalars).

    ``report`` receives every problem once, at the path where it was written. ``secrets``
    collects the paths where a secret ``config`` key was used.
    """

    def __init__(self, scope: VariableScope, report: Callable[[VariableProblem], None]) -> None:
        self.scope = scope
        self._report = report
        self._done: dict[Path_, Any] = {}
        self._failed: set[Path_] = set()
        self._stack: list[Path_] = []
        self.secrets: list[Path_] = []

    def resolve(self, path: Path_, node: Any) -> Any:
        """The value of ``node`` (found at ``path``) with every magic variable substituted:
        plain dicts and lists; a leaf that cannot be resolved becomes :data:`BROKEN`."""
        try:
            return self._node(path, node)
        except _Poisoned:
            return BROKEN

    def lookup(self, start: Path_, keys: list[str | int], path: Path_, shown: str) -> Any:
        """The value at ``keys`` below the document node at ``start`` (``vars``, a resource's
        props), resolving what lies on the way; VariableProblem at ``path`` when missing."""
        node: Any = self._start_node(start)
        where: Path_ = start
        raw = True  # still inside the document, not inside an already substituted value
        for key in keys:
            if raw and isinstance(node, str) and "${" in node:
                node, raw = self._string(where, node), False
            step = _step(node, key)
            if step is None:
                known = [str(k) for k in node] if isinstance(node, Mapping) else []
                raise VariableProblem(path, f"{shown}: {format_path((*where, key))} is not "
                                            f"defined{_did_you_mean(str(key), known)}")
            node = node[step]
            where = (*where, step)
        return self._node(where, node) if raw else node

    def _start_node(self, start: Path_) -> Any:
        if start[:1] == ("resources",) and len(start) == 3 and start[2] == "props":
            return self.scope.props.get(str(start[1]))
        node: Any = self.scope.document
        for key in start:
            node = node.get(key) if isinstance(node, Mapping) else None
        return node

    # -- tree walking --------------------------------------------------------------------------

    def _node(self, path: Path_, node: Any) -> Any:
        if isinstance(node, Mapping):
            return {k: self._leaf_or_node((*path, k), v) for k, v in node.items()}
        if isinstance(node, list):
            return [self._leaf_or_node((*path, i), v) for i, v in enumerate(node)]
        if isinstance(node, str) and "${" in node:
            return self._string(path, node)
        return node

    def _leaf_or_node(self, path: Path_, node: Any) -> Any:
        try:
            return self._node(path, node)
        except _Poisoned:
            return BROKEN

    def _string(self, path: Path_, text: str) -> Any:
        if path in self._done:
            return self._done[path]
        if path in self._failed:
            raise _Poisoned
        if path in self._stack:
            chain = [*self._stack[self._stack.index(path):], path]
            raise VariableProblem(self._stack[-1], "reference cycle: "
                                  + " -> ".join(format_path(p) for p in chain))
        self._stack.append(path)
        try:
            value = self._substitute(path, text)
        except VariableProblem as problem:
            self._failed.update((problem.path, path))
            self._report(problem)
            raise _Poisoned from None
        except _Poisoned:
            self._failed.add(path)
            raise
        finally:
            self._stack.pop()
        self._done[path] = value
        return value

    def _substitute(self, path: Path_, text: str) -> Any:
        try:
            segments = list(find_magic(text))
        except MagicSyntaxError as exc:
            raise VariableProblem(path, exc.message) from None
        if len(segments) == 1 and segments[0].expression is not None:
            return _known(self.evaluate(path, segments[0].expression))
        parts = []
        for segment in segments:
            if segment.expression is None:
                parts.append(segment.text)
            else:
                value = _known(self.evaluate(path, segment.expression))
                parts.append(_as_text(path, segment.shown, value))
        return "".join(parts)

    # -- expressions ---------------------------------------------------------------------------

    def evaluate(self, path: Path_, source: str) -> Any:
        """The value of the expression ``source`` written at ``path``."""
        shown = "${" + source + "}"
        if source == "":
            raise VariableProblem(path, "empty magic variable ${}")
        try:
            expr = parse_magic(source)
        except MagicSyntaxError as exc:
            raise VariableProblem(path, f"{shown} is not a valid magic variable: {exc.message} "
                                        f"(column {exc.column})") from None
        return self._expr(path, shown, expr)

    def _expr(self, path: Path_, shown: str, expr: MagicExpression) -> Any:
        if isinstance(expr, MagicString):
            return expr.value
        if isinstance(expr, MagicCall):
            return self._call(path, shown, expr)
        keys = reference_path(expr)
        if keys is None:  # a member of a call's result: json(file('a.json')).name
            assert isinstance(expr, MagicMember)
            target = self._expr(path, shown, expr.target)
            step = _step(target, expr.key)
            if step is None:
                raise VariableProblem(path, f"{shown}: the value has no {expr.key!r}")
            return target[step]
        return self._reference(path, shown, list(keys))

    def _reference(self, path: Path_, shown: str, keys: list[str | int]) -> Any:
        root, rest = str(keys[0]), keys[1:]
        if root == "vars":
            return self.lookup(("vars",), rest, path, shown)
        if root == "env":
            if len(rest) != 1:
                raise VariableProblem(path, f"{shown}: write ${{env.NAME}} or ${{env('NAME')}}")
            return self._env(path, shown, str(rest[0]), None)
        if root == "resources":
            return self._resource(path, shown, rest)
        if root == "this":
            return self._this(path, shown, rest)
        hint = _did_you_mean(root, [*ROOTS, *FUNCTIONS])
        raise VariableProblem(path, f"{shown}: unknown magic variable {root!r}{hint}")

    def _env(self, path: Path_, shown: str, name: str, default: Any) -> Any:
        if name in self.scope.env:
            return self.scope.env[name]
        if default is not None:
            return default
        raise VariableProblem(path, f"{shown}: environment variable {name} is not set and "
                                    "has no default")

    def _resource(self, path: Path_, shown: str, keys: list[str | int]) -> Any:
        resources = self.scope.document.get("resources")
        known = [str(k) for k in resources] if isinstance(resources, Mapping) else []
        name = str(keys[0]) if keys else ""
        if name not in known:
            raise VariableProblem(path, f"{shown}: no resource named {name!r}"
                                        f"{_did_you_mean(name, known)}")
        kind = str(keys[1]) if len(keys) > 1 else ""
        if kind == "props":
            return self.lookup(("resources", name, "props"), keys[2:], path, shown)
        if kind in ("output", "info") and self.scope.resource_result is not None:
            return self.scope.resource_result(path, shown, name, kind, keys[2:])
        raise VariableProblem(path, f"{shown}: use resources.{name}.props.<key>, "
                                    f"resources.{name}.output.<key> or resources.{name}.info.<key>")

    def _this(self, path: Path_, shown: str, keys: list[str | int]) -> Any:
        owner = self.owner(path)
        if owner is None:
            raise VariableProblem(path, f"{shown}: ${{this.*}} means the resource it is "
                                        "written in; here there is none")
        resource = self.scope.document["resources"][owner]
        what = str(keys[0]) if keys else ""
        if what == "name" and len(keys) == 1:
            return owner
        if what == "component" and len(keys) == 1:
            return resource.get("component") if isinstance(resource, Mapping) else None
        if what == "access" and len(keys) == 1:
            access = resource.get("access") if isinstance(resource, Mapping) else None
            return access or self.scope.document.get("access")
        if what == "props":
            return self.lookup(("resources", owner, "props"), keys[1:], path, shown)
        if what == "output" and self.scope.resource_result is not None:
            if path[2:3] != ("actions",):
                raise VariableProblem(path, f"{shown}: a resource's own output is known only "
                                            "in its actions (after it is deployed)")
            return self.scope.resource_result(path, shown, owner, "output", keys[1:])
        raise VariableProblem(path, f"{shown}: this has name, component, access, props "
                                    "(and output in actions)")

    def owner(self, path: Path_) -> str | None:
        """The resource ``path`` is written in (through the document that loaded it)."""
        if path[:1] == (DOC,):
            loaded = self.scope.loaded.get(int(path[1]))
            return self.owner(loaded.loader) if loaded is not None else None
        if path[:1] == ("resources",) and len(path) > 1:
            return str(path[1])
        return None

    # -- functions -----------------------------------------------------------------------------

    def _call(self, path: Path_, shown: str, call: MagicCall) -> Any:
        name, args = call.function, call.arguments
        if name not in FUNCTIONS:
            hint = _did_you_mean(name, list(FUNCTIONS))
            why = " (regex() is for action hook names)" if name == "regex" else hint
            raise VariableProblem(path, f"{shown}: unknown function {name}(){why}")
        values = [self._expr(path, shown, a) for a in args]
        if name == "env":
            _arity(path, shown, values, 1, 2)
            return self._env(path, shown, _text(path, shown, values[0]),
                             values[1] if len(values) > 1 else None)
        _arity(path, shown, values, 1, 1)
        if name == "config":
            return self._config(path, shown, _text(path, shown, values[0]))
        if name == "path":
            return str((self.scope.base_dir / _text(path, shown, values[0])).resolve())
        if name == "file":
            try:
                return read_text_file(self.scope.base_dir, _text(path, shown, values[0]))[1]
            except FileProblem as exc:
                raise VariableProblem(path, f"{shown}: {exc}") from None
        return self._parsed(path, shown, name, call, values[0])

    def _parsed(self, path: Path_, shown: str, kind: str, call: MagicCall, text: Any) -> Any:
        """``json(...)`` / ``yaml(...)``: the parsed document, its magic variables resolved."""
        if not isinstance(text, str):
            return text  # already structured (json of a map): nothing to parse
        argument = call.arguments[0]
        source: Path | None = None
        label = "the text"
        if isinstance(argument, MagicCall) and argument.function == "file" and argument.arguments:
            name = self._expr(path, shown, argument.arguments[0])
            label = str(name)
            source = (self.scope.base_dir / label).resolve()
        try:
            tree = parse_yaml(text, label) if kind == "yaml" else parse_json(text, label)
        except FileProblem as exc:
            raise VariableProblem(path, f"{shown}: {exc}") from None
        number = self.scope.loaded.add(LoadedDocument(tree, label, source, path, text))
        value = self._node((DOC, number), tree)
        if _contains_broken(value):
            raise _Poisoned
        return value

    def _config(self, path: Path_, shown: str, key: str) -> str:
        if key not in CONFIG_KEYS:
            raise VariableProblem(path, f"{shown}: unknown config key {key!r}; the keys are "
                                        + ", ".join(CONFIG_KEYS))
        value = self.scope.config.get(key)
        if not value and key == "AccountID":
            raise VariableProblem(path, f"{shown} needs the account id: "
                                        f"{self.scope.config_hint}")
        if not value:
            raise VariableProblem(path, f"{shown} needs the {key} of the target's credentials, "
                                        "which only commands that connect to it know")
        if key in SECRET_CONFIG_KEYS:
            self.secrets.append(path)
        return value


def _known(value: Any) -> Any:
    """``value``, unless it depends on a problem already reported (then: poisoned)."""
    if value is BROKEN:
        raise _Poisoned
    return value


def _step(node: Any, key: str | int) -> str | int | None:
    if isinstance(node, list):
        index = key if isinstance(key, int) else int(key) if is_decimal(str(key)) else None
        return index if index is not None and -len(node) <= index < len(node) else None
    if isinstance(node, Mapping):
        if key in node:
            return key
        if isinstance(key, int) and str(key) in node:
            return str(key)
    return None


def _arity(path: Path_, shown: str, values: list[Any], low: int, high: int) -> None:
    if not low <= len(values) <= high:
        wanted = str(low) if low == high else f"{low} or {high}"
        raise VariableProblem(path, f"{shown}: takes {wanted} argument(s), got {len(values)}")


def _text(path: Path_, shown: str, value: Any) -> str:
    if isinstance(value, (Mapping, list)) or value is None or value is BROKEN:
        raise VariableProblem(path, f"{shown}: the argument must be a string")
    return str(value)


def _contains_broken(value: Any) -> bool:
    if value is BROKEN:
        return True
    if isinstance(value, Mapping):
        return any(_contains_broken(v) for v in value.values())
    if isinstance(value, list):
        return any(_contains_broken(v) for v in value)
    return False


def _as_text(path: Path_, shown: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (Mapping, list)):
        kind = "map" if isinstance(value, Mapping) else "list"
        raise VariableProblem(path, f"{shown} is a {kind} and cannot be embedded in a string")
    return str(value)


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
