"""Reading and writing recordings: YAML documents <-> :class:`~tests.parity.recording.Recording`.

Every mistake in a file is a :class:`FormatError` naming the file, the step and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.parity.recording import (
    BUILTIN_VARIABLES,
    COMPARES,
    FORMAT,
    RECORDINGS_DIR,
    RULES_FILE,
    SOURCES,
    FormatError,
    Recording,
    Request,
    Rule,
    Step,
    dump_yaml,
    read_yaml,
)

PRODUCTS = ("fc", "cloudflow", "sts", "ram")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOP = {"format", "scenario", "product", "description", "source", "documented", "recorded",
        "keys", "names", "files", "rules", "steps", "cleanup"}
_STEP = {"name", "request", "response", "save", "rules", "decode_body", "evidence"}
_REQUEST = {"action", "method", "path", "query", "headers", "body", "body_text"}
_RESPONSE = {"status", "headers", "body", "body_text"}
_RULE = {"path", "compare", "pattern", "key", "why", "scope", "redact"}


@dataclass(frozen=True)
class SharedRules:
    """rules.yaml: named patterns, and per product the headers kept and the common rules."""

    patterns: Mapping[str, str]
    keep_headers: Mapping[str, tuple[str, ...]]
    rules: Mapping[str, tuple[Rule, ...]]

    def regex(self, pattern: str) -> str:
        return self.patterns.get(pattern, pattern)


def load_shared_rules(path: Path = RULES_FILE) -> SharedRules:
    doc = read_yaml(path)
    where = str(path)
    products = _mapping(doc.get("products"), f"{where}: products")
    keep: dict[str, tuple[str, ...]] = {}
    rules: dict[str, tuple[Rule, ...]] = {}
    for product, spec in products.items():
        spec = _mapping(spec, f"{where}: products.{product}")
        keep[product] = tuple(str(h) for h in spec.get("keep_headers") or ())
        rules[product] = _rules(spec.get("rules"), f"{where}: products.{product}.rules")
    patterns = {str(k): str(v) for k, v in _mapping(doc.get("patterns"), where).items()}
    for name, regex in patterns.items():
        _check_regex(regex, f"{where}: patterns.{name}")
    return SharedRules(patterns, keep, rules)


def recording_paths(root: Path = RECORDINGS_DIR) -> list[Path]:
    return sorted(root.rglob("*.yaml"))


def label(path: Path) -> str:
    """``fc/errors.yaml`` for a committed recording (the test ids), else the file name."""
    return path.relative_to(RECORDINGS_DIR).as_posix() \
        if path.is_relative_to(RECORDINGS_DIR) else path.name


def load_recording(path: Path) -> Recording:
    """The recording in ``path``; FormatError naming the place of the first mistake."""
    doc = _mapping(read_yaml(path), str(path))
    where = str(path)
    _only(doc, _TOP, where)
    if doc.get("format") != FORMAT:
        raise FormatError(f"{where}: format must be {FORMAT}, got {doc.get('format')!r}")
    source = doc.get("source")
    if source not in SOURCES:
        raise FormatError(f"{where}: source must be one of {SOURCES}, got {source!r}")
    product = doc.get("product")
    if product not in PRODUCTS:
        raise FormatError(f"{where}: product must be one of {PRODUCTS}, got {product!r}")
    keys = doc.get("keys", "subset" if source == "documented" else "exact")
    if keys not in ("exact", "subset"):
        raise FormatError(f"{where}: keys must be exact or subset, got {keys!r}")
    names = _strings(doc.get("names"), f"{where}: names")
    files = _strings(doc.get("files"), f"{where}: files")
    _check_variable_names([*names, *files], where)
    steps = tuple(_step(raw, f"{where}: steps[{i}]")
                  for i, raw in enumerate(_list(doc.get("steps"), f"{where}: steps")))
    if not steps:
        raise FormatError(f"{where}: steps is empty")
    cleanup = tuple(_request(raw, f"{where}: cleanup[{i}]")
                    for i, raw in enumerate(_list(doc.get("cleanup"), f"{where}: cleanup")))
    return Recording(
        path=path, scenario=_text(doc.get("scenario"), f"{where}: scenario"),
        product=product, description=str(doc.get("description") or ""), source=source,
        provenance=_mapping(doc.get(source), f"{where}: {source}"), keys=keys,
        names=names, files=files, rules=_rules(doc.get("rules"), f"{where}: rules"),
        steps=steps, cleanup=cleanup)


def _step(raw: Any, where: str) -> Step:
    raw = _mapping(raw, where)
    _only(raw, _STEP, where)
    name = _text(raw.get("name"), f"{where}: name")
    where = f"{where} ({name})"
    response = _mapping(raw.get("response"), f"{where}: response")
    _only(response, _RESPONSE, f"{where}: response")
    if not isinstance(response.get("status"), int):
        raise FormatError(f"{where}: response.status must be an HTTP status number")
    if "body" in response and "body_text" in response:
        raise FormatError(f"{where}: response has both body and body_text")
    decode = raw.get("decode_body", "text")
    if decode not in ("text", "json"):
        raise FormatError(f"{where}: decode_body must be text or json, got {decode!r}")
    save = _strings(raw.get("save"), f"{where}: save")
    _check_variable_names(list(save), where)
    return Step(name=name, request=_request(raw.get("request"), f"{where}: request"),
                response={"headers": {}, **response}, save=save,
                rules=_rules(raw.get("rules"), f"{where}: rules"), decode_body=decode,
                evidence=str(raw.get("evidence") or ""))


def _request(raw: Any, where: str) -> Request:
    raw = _mapping(raw, where)
    _only(raw, _REQUEST, where)
    method = _text(raw.get("method"), f"{where}: method").upper()
    if method not in ("GET", "POST", "PUT", "DELETE"):
        raise FormatError(f"{where}: method must be GET, POST, PUT or DELETE, got {method!r}")
    body_text = raw.get("body_text")
    if body_text is not None and ("body" in raw or not isinstance(body_text, str)):
        raise FormatError(f"{where}: body_text must be a string, without body")
    path = raw.get("path", "/")
    if not isinstance(path, str) or not path.startswith("/"):
        raise FormatError(f"{where}: path must be a string starting with '/', got {path!r}")
    return Request(action=_text(raw.get("action"), f"{where}: action"), method=method,
                   path=path,
                   query=_strings(raw.get("query"), f"{where}: query"),
                   headers=_strings(raw.get("headers"), f"{where}: headers"),
                   body=raw.get("body"), body_text=body_text)


def _rules(raw: Any, where: str) -> tuple[Rule, ...]:
    out = []
    for i, item in enumerate(_list(raw, where)):
        here = f"{where}[{i}]"
        item = _mapping(item, here)
        _only(item, _RULE, here)
        compare = item.get("compare")
        if compare not in COMPARES:
            raise FormatError(f"{here}: compare must be one of {COMPARES}, got {compare!r}")
        if compare == "pattern" and not isinstance(item.get("pattern"), str):
            raise FormatError(f"{here}: compare: pattern needs a pattern")
        if compare == "pattern":
            _check_regex(item["pattern"], f"{here}: pattern")
        if compare == "contains" and not isinstance(item.get("key"), str):
            raise FormatError(f"{here}: compare: contains needs the key that matches items")
        if item.get("redact") and compare in ("equal", "contains", "prefix"):
            raise FormatError(f"{here}: redact needs a compare that does not read the "
                              "recorded value (present, type, pattern, ignore)")
        scope = item.get("scope", "always")
        if scope not in ("always", "documented"):
            raise FormatError(f"{here}: scope must be always or documented, got {scope!r}")
        out.append(Rule(path=_text(item.get("path"), f"{here}: path"), compare=compare,
                        pattern=item.get("pattern"), key=item.get("key"),
                        why=str(item.get("why") or ""), scope=scope,
                        redact=bool(item.get("redact", False))))
    return tuple(out)


def _check_regex(regex: str, where: str) -> None:
    try:
        re.compile(regex)
    except re.error as exc:
        raise FormatError(f"{where}: not a regular expression: {exc}") from None


def _check_variable_names(names: list[str], where: str) -> None:
    for name in names:
        if not _NAME.fullmatch(name) or name in BUILTIN_VARIABLES:
            raise FormatError(f"{where}: {name!r} cannot name a variable")
    if len(set(names)) != len(names):
        raise FormatError(f"{where}: a variable is defined twice in {names}")


def _only(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise FormatError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(allowed)}")


def _mapping(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FormatError(f"{where}: must be a mapping, got {type(raw).__name__}")
    return dict(raw)


def _list(raw: Any, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FormatError(f"{where}: must be a list, got {type(raw).__name__}")
    return raw


def _strings(raw: Any, where: str) -> dict[str, str]:
    out = _mapping(raw, where)
    for key, value in out.items():
        if not isinstance(value, str):
            raise FormatError(f"{where}.{key}: must be a string, got {value!r}")
    return out


def _text(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise FormatError(f"{where}: must be a non-empty string, got {raw!r}")
    return raw


# --- writing -----------------------------------------------------------------------------

HEADER = ("# Parity recording (docs/parity.md): requests as the official SDK sends them and the\n"
          "# answers, with the rules for volatile fields. Refresh with `pytest tests/parity\n"
          "# --real-cloud`; review the diff before committing it.\n")


def to_document(rec: Recording) -> dict[str, Any]:
    """The YAML document of ``rec`` (what :func:`load_recording` reads back)."""
    doc: dict[str, Any] = {"format": FORMAT, "scenario": rec.scenario, "product": rec.product}
    if rec.description:
        doc["description"] = rec.description
    doc["source"] = rec.source
    doc[rec.source] = dict(rec.provenance)
    doc["keys"] = rec.keys
    for name in ("names", "files"):
        if getattr(rec, name):
            doc[name] = dict(getattr(rec, name))
    if rec.rules:
        doc["rules"] = [_rule_doc(r) for r in rec.rules]
    doc["steps"] = [_step_doc(s) for s in rec.steps]
    if rec.cleanup:
        doc["cleanup"] = [_request_doc(r) for r in rec.cleanup]
    return doc


def write_recording(rec: Recording, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_yaml(to_document(rec), HEADER), encoding="utf-8")


def _step_doc(step: Step) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": step.name}
    if step.evidence:
        doc["evidence"] = step.evidence
    doc["request"] = _request_doc(step.request)
    if step.decode_body != "text":
        doc["decode_body"] = step.decode_body
    response = {k: v for k, v in step.response.items() if not (k == "headers" and not v)}
    doc["response"] = response
    if step.save:
        doc["save"] = dict(step.save)
    if step.rules:
        doc["rules"] = [_rule_doc(r) for r in step.rules]
    return doc


def _request_doc(req: Request) -> dict[str, Any]:
    doc: dict[str, Any] = {"action": req.action, "method": req.method, "path": req.path}
    for name in ("query", "headers"):
        if getattr(req, name):
            doc[name] = dict(getattr(req, name))
    if req.body is not None:
        doc["body"] = req.body
    if req.body_text is not None:
        doc["body_text"] = req.body_text
    return doc


def _rule_doc(rule: Rule) -> dict[str, Any]:
    doc: dict[str, Any] = {"path": rule.path, "compare": rule.compare}
    for name in ("pattern", "key"):
        if getattr(rule, name) is not None:
            doc[name] = getattr(rule, name)
    if rule.scope != "always":
        doc["scope"] = rule.scope
    if rule.redact:
        doc["redact"] = True
    if rule.why:
        doc["why"] = rule.why
    return doc
