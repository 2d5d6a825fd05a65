"""The recorded-answer format: one YAML file per scenario under ``tests/parity/recordings/``.

A recording is a sequence of steps. Each step holds the request as the official SDK sends it
(product, action, method, path, query, caller headers, body) and the answer (status, the
headers that matter, body), plus the rules that say how volatile fields are compared. Strings
may hold ``${name}`` variables: the scenario's resource names (given a unique suffix on every
run), ``region``, ``account_id``, the payloads under ``files`` and the values steps ``save``
from earlier answers; ``$$`` is a literal ``$``. docs/parity.md describes every field.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

PARITY_DIR = Path(__file__).resolve().parent
RECORDINGS_DIR = PARITY_DIR / "recordings"
RULES_FILE = PARITY_DIR / "rules.yaml"

FORMAT = 1
COMPARES = ("equal", "present", "absent", "type", "pattern", "contains", "prefix", "ignore")
SOURCES = ("documented", "recorded")
BUILTIN_VARIABLES = ("region", "account_id")
_VARIABLE = re.compile(r"\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)\})")
_NEEDS_ESCAPE = re.compile(r"\$(?=[{$])")


class FormatError(ValueError):
    """A recording (or rules.yaml) that does not follow the format; names file and place."""


class UnknownVariable(KeyError):
    """A ``${name}`` with no value (a typo, or a value an earlier step did not save)."""


@dataclass(frozen=True)
class Rule:
    """How the fields at ``path`` are compared (instead of ``equal``)."""

    path: str
    compare: str
    pattern: str | None = None
    key: str | None = None
    why: str = ""
    scope: str = "always"  # "documented": dropped when the file is recorded from the cloud
    redact: bool = False  # the recorder writes "<redacted>" instead of the value


@dataclass(frozen=True)
class Request:
    action: str
    method: str
    path: str = "/"
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None  # JSON body (FC) or form parameters (RPC)
    body_text: str | None = None  # raw bytes, as UTF-8 text (InvokeFunction)


@dataclass(frozen=True)
class Step:
    name: str
    request: Request
    response: Mapping[str, Any]  # status, headers, and body or body_text
    save: Mapping[str, str] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    decode_body: str = "text"  # how a raw (binary) answer is kept: "text" or "json"
    evidence: str = ""


@dataclass(frozen=True)
class Recording:
    path: Path
    scenario: str
    product: str
    description: str
    source: str
    provenance: Mapping[str, Any]
    keys: str  # "exact": the answer has exactly the recorded keys; "subset": at least them
    names: Mapping[str, str]
    files: Mapping[str, str]
    rules: tuple[Rule, ...]
    steps: tuple[Step, ...]
    cleanup: tuple[Request, ...]


# --- variables ---------------------------------------------------------------------------

def expand(text: str, variables: Mapping[str, str]) -> str:
    """``text`` with every ``${name}`` replaced by its value and ``$$`` by ``$``."""

    def one(match: re.Match[str]) -> str:
        name = match.group(2)
        if name is None:
            return "$"
        if name not in variables:
            raise UnknownVariable(name)
        return variables[name]

    return _VARIABLE.sub(one, text)


def expand_all(value: Any, variables: Mapping[str, str]) -> Any:
    """``value`` (nested dicts, lists, strings) with :func:`expand` applied to every string."""
    if isinstance(value, str):
        return expand(value, variables)
    if isinstance(value, Mapping):
        return {key: expand_all(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_all(item, variables) for item in value]
    return value


def escape(text: str) -> str:
    """``text`` written so that :func:`expand` gives it back unchanged."""
    return _NEEDS_ESCAPE.sub("$$", text)


def templatize(value: Any, variables: Mapping[str, str]) -> Any:
    """The inverse of :func:`expand_all`: every occurrence of a variable's value becomes
    ``${name}`` (longest values first), everything else is escaped."""
    pairs = sorted(((v, k) for k, v in variables.items() if v), key=lambda p: -len(p[0]))
    if not pairs:
        return _map_strings(value, escape)
    names = dict(pairs)
    finder = re.compile("|".join(re.escape(v) for v, _ in pairs))

    def one(text: str) -> str:
        out, last = [], 0
        for match in finder.finditer(text):
            out.append(escape(text[last:match.start()]))
            out.append("${" + names[match.group(0)] + "}")
            last = match.end()
        out.append(escape(text[last:]))
        return "".join(out)

    return _map_strings(value, one)


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, Mapping):
        return {key: _map_strings(item, fn) for key, item in value.items()}
    if isinstance(value, list):
        return [_map_strings(item, fn) for item in value]
    return value


def lookup(document: Any, path: str) -> Any:
    """The value at dotted ``path`` (list items by index); KeyError when there is none."""
    node = document
    for part in path.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isascii() and part.isdigit() \
                and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(path)
    return node


# --- YAML --------------------------------------------------------------------------------

def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 4096  # no folding: a folded plain scalar leaves trailing spaces
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = False
    return yaml


def read_yaml(path: Path) -> Any:
    try:
        return _plain(YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8")))
    except Exception as exc:  # ruamel's parser errors carry line and column
        raise FormatError(f"{path}: not valid YAML: {exc}") from None


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def dump_yaml(document: Any, header: str = "") -> str:
    """YAML text of ``document``: block style, multi-line strings as literal blocks."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    def styled(value: Any) -> Any:
        if isinstance(value, str) and "\n" in value and _literal_safe(value):
            return LiteralScalarString(value)
        if isinstance(value, Mapping):
            return {k: styled(v) for k, v in value.items()}
        if isinstance(value, list):
            return [styled(v) for v in value]
        return value

    out = io.StringIO()
    out.write(header)
    _yaml().dump(styled(document), out)
    return out.getvalue()


def _literal_safe(text: str) -> bool:
    lines = text.split("\n")
    return all(line == line.rstrip() and line.isprintable() for line in lines) \
        and not text.startswith((" ", "\n"))
