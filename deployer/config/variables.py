"""Serverless Devs magic variables (``${...}``) in an s.yaml document.

Supported (see docs/manifest.md):

* ``${vars.a.b}``: an entry of the top-level ``vars`` map (itself may use magic variables);
* ``${env('NAME')}`` / ``${env('NAME', 'default')}``: an environment variable;
* ``${resources.<name>.props.<key>...}``: another resource's (resolved) props;
* ``${config('AccountID')}``: the account id given to the loader (flag or environment).

Everything else (``file()``, ``json()``, ``path()``, ``this.*``, ``resources.*.output.*``,
other ``config()`` keys, typos) is refused with a message naming the expression.

A string that is exactly one ``${...}`` takes the referenced value with its type (an int stays
an int, a map stays a map); a reference embedded in a longer string is interpolated as text.
References are resolved lazily and memoised per document path, so a reference cycle is found
and reported with its whole chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from difflib import get_close_matches
from typing import Any

from deployer.digits import is_decimal

__all__ = ["BROKEN", "Path_", "Resolver", "VariableProblem", "format_path"]

Path_ = tuple[str | int, ...]

_MAGIC = re.compile(r"\$\{([^{}]*)\}")
_ENV = re.compile(
    r"""^env\(\s*(['"])(?P<name>[^'"]*)\1\s*(?:,\s*(['"])(?P<default>[^'"]*)\3\s*)?\)$"""
)
_CONFIG = re.compile(r"""^config\(\s*(['"])(?P<key>[^'"]*)\1\s*\)$""")
_CALL = re.compile(r"^(?P<fn>[A-Za-z_][\w-]*)\s*\(")
_DOTTED = re.compile(r"^[A-Za-z_][\w-]*(\.[\w-]+)*$")

_REFUSED_CALLS = {
    "file": "reading files from s.yaml is not supported; put the value in vars or the file",
    "json": "reading JSON files from s.yaml is not supported; put the value in vars",
    "path": "path() is not supported; give paths relative to s.yaml",
    "regex": "regex() keys (flow/actions) are not supported",
}


def format_path(path: Path_) -> str:
    """``('resources', 'a', 'props', 'tags', 0)`` -> ``resources.a.props.tags[0]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class VariableProblem(Exception):
    """A magic variable that cannot be resolved; ``path`` is where it was written."""

    def __init__(self, path: Path_, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class _Broken:
    """The value of a leaf whose magic variable could not be resolved (already reported)."""

    def __repr__(self) -> str:
        return "BROKEN"


BROKEN = _Broken()


class _Poisoned(Exception):
    """A value depends on one whose problem was already reported."""


class Resolver:
    """Resolves the magic variables of one parsed document (a tree of maps, lists, scalars).

    ``report`` receives every problem once, at the path where it was written; resolving a value
    that depends on a broken one yields ``None`` without a second report.
    """

    def __init__(
        self,
        document: Mapping[str, Any],
        *,
        env: Mapping[str, str],
        account_id: str | None,
        report: Callable[[VariableProblem], None],
    ) -> None:
        self._doc = document
        self._env = env
        self._account_id = account_id
        self._report = report
        self._done: dict[Path_, Any] = {}
        self._failed: set[Path_] = set()
        self._stack: list[Path_] = []

    def resolve(self, path: Path_, node: Any) -> Any:
        """The value of ``node`` (found at ``path``) with every magic variable substituted.

        Returns plain dicts/lists. Problems go to ``report``; a leaf that cannot be resolved
        becomes :data:`BROKEN`, so later checks can skip it instead of reporting it again.
        """
        try:
            return self._node(path, node)
        except _Poisoned:
            return BROKEN

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
            raise VariableProblem(
                self._stack[-1],
                "reference cycle: " + " -> ".join(format_path(p) for p in chain),
            )
        self._stack.append(path)
        try:
            value = self._substitute(path, text)
        except VariableProblem as problem:
            self._failed.add(problem.path)
            self._failed.add(path)
            self._report(problem)
            raise _Poisoned from None
        finally:
            self._stack.pop()
        self._done[path] = value
        return value

    def _substitute(self, path: Path_, text: str) -> Any:
        whole = _MAGIC.fullmatch(text)
        if whole:
            return self._expression(path, whole.group(1).strip())
        parts: list[str] = []
        last = 0
        for match in _MAGIC.finditer(text):
            parts.append(text[last:match.start()])
            value = self._expression(path, match.group(1).strip())
            parts.append(_as_text(path, match.group(0), value))
            last = match.end()
        rest = text[last:]
        if "${" in rest:
            raise VariableProblem(path, f"unterminated magic variable in {text!r}")
        parts.append(rest)
        return "".join(parts)

    # -- expressions ---------------------------------------------------------------------------

    def _expression(self, path: Path_, expr: str) -> Any:
        shown = "${" + expr + "}"
        if m := _ENV.match(expr):
            name, default = m.group("name"), m.group("default")
            if name in self._env:
                return self._env[name]
            if default is not None:
                return default
            raise VariableProblem(
                path, f"{shown}: environment variable {name} is not set and has no default"
            )
        if m := _CONFIG.match(expr):
            return self._config(path, shown, m.group("key"))
        if m := _CALL.match(expr):
            fn = m.group("fn")
            why = _REFUSED_CALLS.get(fn, f"unknown function {fn}()")
            raise VariableProblem(path, f"{shown} is not supported: {why}")
        if not _DOTTED.match(expr):
            raise VariableProblem(path, f"{shown} is not a valid magic variable")
        keys = expr.split(".")
        if keys[0] == "vars":
            return self._lookup(path, shown, ("vars",), keys[1:])
        if keys[0] == "resources":
            return self._resource(path, shown, keys[1:])
        if keys[0] == "this":
            raise VariableProblem(
                path, f"{shown} is not supported: name the value in vars and use ${{vars.x}}"
            )
        hint = _did_you_mean(keys[0], ["vars", "resources", "env", "config"])
        raise VariableProblem(path, f"{shown}: unknown magic variable {keys[0]!r}{hint}")

    def _config(self, path: Path_, shown: str, key: str) -> str:
        if key != "AccountID":
            raise VariableProblem(
                path, f"{shown} is not supported: only config('AccountID') can be resolved"
            )
        if not self._account_id:
            raise VariableProblem(
                path,
                f"{shown} needs the account id: pass --account-id or set "
                "ALIBABA_CLOUD_ACCOUNT_ID",
            )
        return self._account_id

    def _resource(self, path: Path_, shown: str, keys: list[str]) -> Any:
        resources = self._doc.get("resources")
        if not keys or not isinstance(resources, Mapping) or keys[0] not in resources:
            name = keys[0] if keys else ""
            known = list(resources) if isinstance(resources, Mapping) else []
            raise VariableProblem(
                path, f"{shown}: no resource named {name!r}{_did_you_mean(name, known)}"
            )
        if len(keys) < 2 or keys[1] != "props":
            what = keys[1] if len(keys) > 1 else "(nothing)"
            extra = (
                " (deploy outputs are not known before the deploy; reference props such as"
                " functionName and let the flow template build the ARN)"
                if what == "output"
                else ""
            )
            raise VariableProblem(
                path, f"{shown} is not supported: only resources.<name>.props.<key>{extra}"
            )
        return self._lookup(path, shown, ("resources", keys[0], "props"), keys[2:])

    def _lookup(self, path: Path_, shown: str, start: Path_, keys: list[str]) -> Any:
        """Walk ``keys`` from the document node at ``start``, resolving strings on the way."""
        node: Any = self._doc
        for key in start:
            node = node.get(key) if isinstance(node, Mapping) else None
        where: Path_ = start
        raw = True  # still inside the document (not inside an already substituted value)
        for key in keys:
            if raw and isinstance(node, str) and "${" in node:
                node, raw = self._string(where, node), False
            step: str | int = key
            if isinstance(node, list) and is_decimal(key) and int(key) < len(node):
                step = int(key)
            elif not (isinstance(node, Mapping) and key in node):
                known = list(node) if isinstance(node, Mapping) else []
                raise VariableProblem(
                    path,
                    f"{shown}: {format_path((*where, key))} is not defined"
                    f"{_did_you_mean(key, [str(k) for k in known])}",
                )
            node = node[step]
            where = (*where, step)
        if raw:
            return self._node(where, node)
        return node


def _as_text(path: Path_, shown: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (Mapping, list)):
        raise VariableProblem(
            path, f"{shown} is a {type(value).__name__} and cannot be embedded in a string"
        )
    return str(value)


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
