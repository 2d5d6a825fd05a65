"""Running a recording's steps against a target, then either comparing the answers with the
recorded ones (replay) or writing them down as the new recording (record).

Both run the same way: the scenario's names get a fresh unique suffix (``parity-fn`` becomes
``parity-fn-1a2b3c4d``), each step's request is expanded and sent, the values a step
``save``s are taken from its answer, and the ``cleanup`` requests run at the end whatever
happened (their errors are collected, never raised), so nothing the scenario created
outlives it.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.parity.calls import Answer, call
from tests.parity.compare import Comparison, Mismatch, compare_answer
from tests.parity.recording import (
    Recording,
    Request,
    Rule,
    Step,
    UnknownVariable,
    expand_all,
    lookup,
    templatize,
)
from tests.parity.schema import SharedRules
from tests.parity.targets import Target, provenance

REDACTED = "<redacted>"
_GONE = re.compile(r"(NotFound|NotExists?)(\.|$)")  # FunctionNotFound, FlowNotExists, ...
GLOBAL_SAVE_LENGTH = 8


class ScenarioError(RuntimeError):
    """A scenario that could not go on (a variable no earlier step produced, an answer the
    SDK could not read while recording)."""


@dataclass
class Run:
    answers: list[Answer] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    saved: dict[str, str] = field(default_factory=dict)
    leftovers: list[str] = field(default_factory=list)  # cleanup calls that failed
    error: str | None = None  # why the steps stopped early (ScenarioError)


def run(rec: Recording, target: Target, suffix: str | None = None) -> Run:
    """Send every step of ``rec`` to ``target``, then its cleanup requests (also when a
    step cannot be sent: ``Run.error`` says why, the later steps are not sent)."""
    suffix = suffix or secrets.token_hex(4)
    result = Run(variables={**rec.files, "region": target.region,
                            "account_id": target.account_id,
                            **{k: f"{v}-{suffix}" for k, v in rec.names.items()}})
    client = target.client(rec.product)
    try:
        for step in rec.steps:
            request = _expanded(step.request, result.variables, f"step {step.name!r}")
            answer = call(client, rec.product, request)
            result.answers.append(answer)
            _save(step, answer, result)
    except ScenarioError as exc:
        result.error = str(exc)
    finally:
        for request in rec.cleanup:
            _clean(client, rec.product, request, result)
    return result


def _expanded(request: Request, variables: Mapping[str, str], where: str) -> Request:
    try:
        return dataclasses.replace(
            request, path=expand_all(request.path, variables),
            query=expand_all(dict(request.query), variables),
            headers=expand_all(dict(request.headers), variables),
            body=expand_all(request.body, variables),
            body_text=expand_all(request.body_text, variables))
    except UnknownVariable as exc:
        raise ScenarioError(f"{where} uses ${{{exc.args[0]}}}, which has no value "
                            "(not a name, a file, region, account_id or a saved value)") from None


def _save(step: Step, answer: Answer, result: Run) -> None:
    document = answer.as_response(step.decode_body)
    for name, path in step.save.items():
        try:
            value = lookup(document, path)
        except KeyError:
            continue  # a later use reports the missing value
        result.variables[name] = result.saved[name] = str(value)


def _clean(client: Any, product: str, request: Request, result: Run) -> None:
    """Send one cleanup request; a Delete* that neither succeeds nor finds the resource gone
    is a leftover (other cleanup requests, such as stopping an execution, may fail)."""
    try:
        expanded = _expanded(request, result.variables, "cleanup")
    except ScenarioError:
        return  # it names something the steps never produced, so never created
    answer = call(client, product, expanded)
    code = answer.failure or str((answer.body or {}).get("Code") or answer.status)
    gone = answer.status < 300 or answer.status == 404 or _GONE.search(code) is not None
    if expanded.action.startswith("Delete") and (answer.failure or not gone):
        result.leftovers.append(f"{expanded.action} {expanded.path} {dict(expanded.query)} "
                                f"{expanded.body or ''}: {code}")


def comparison(rec: Recording, step: Step, shared: SharedRules) -> Comparison:
    rules = [*step.rules, *rec.rules, *shared.rules.get(rec.product, ())]
    return Comparison(rules=rules, exact_keys=rec.keys == "exact", regex=shared.regex)


def replay(rec: Recording, target: Target, shared: SharedRules) -> list[str]:
    """Every difference between ``target``'s answers and the recorded ones, as lines
    ``<step>: <path>: <what differs>`` (empty: the answers match)."""
    result = run(rec, target)
    problems = [result.error] if result.error else []
    for step, answer in zip(rec.steps, result.answers, strict=False):
        problems += [f"{step.name}: {m}" for m in _step_mismatches(rec, step, answer, result,
                                                                    shared)]
    return problems


def _step_mismatches(rec: Recording, step: Step, answer: Answer, result: Run,
                     shared: SharedRules) -> list[Mismatch]:
    if answer.failure:
        return [Mismatch("answer", f"the SDK could not read it: {answer.failure}")]
    out = []
    if answer.typed_problem:
        out.append(Mismatch("body", answer.typed_problem))
    recorded = expand_all(dict(step.response), result.variables)
    return out + compare_answer(recorded, answer.as_response(step.decode_body),
                                comparison(rec, step, shared))


@dataclass
class Recorded:
    recording: Recording
    problems: list[str]  # answers that break the recording's own rules, and the like
    leftovers: list[str]


def record(rec: Recording, target: Target, shared: SharedRules) -> Recorded:
    """Run ``rec`` against ``target`` and build the refreshed recording from the answers:
    ``source: recorded``, exact keys, the documented-only rules dropped, and the run's
    names, account id, region and saved values written back as ``${...}`` variables."""
    result = run(rec, target)
    problems = [f"{s.name}: the SDK could not read the answer: {a.failure}"
                for s, a in zip(rec.steps, result.answers, strict=False) if a.failure]
    if result.error:
        problems.append(result.error)
    if problems:  # an incomplete run is no recording: the file stays as it is
        return Recorded(rec, problems, result.leftovers)
    keep = shared.keep_headers.get(rec.product, ())
    steps = []
    for step, answer in zip(rec.steps, result.answers, strict=False):
        rules = _recorded_rules(step.rules)
        response = _response_to_keep(answer, step.decode_body, keep)
        all_rules = [*rules, *_recorded_rules(rec.rules), *shared.rules.get(rec.product, ())]
        response = _own_items(_redacted(response, all_rules), all_rules, result.variables,
                              rec.names, problems, step.name)
        steps.append(dataclasses.replace(
            step, rules=rules, response=_variables_back(response, step, rec, result)))
    new = dataclasses.replace(rec, source="recorded", provenance=provenance(target),
                              keys="exact", rules=_recorded_rules(rec.rules), steps=tuple(steps))
    problems += _self_check(new, result, shared)
    return Recorded(new, problems, result.leftovers)


def _variables_back(response: dict[str, Any], step: Step, rec: Recording,
                    result: Run) -> dict[str, Any]:
    """``response`` with the run's values written back as ``${...}``: names, region and
    account id wherever they appear, and so are saved values of at least
    ``GLOBAL_SAVE_LENGTH`` characters (a generated execution name); a shorter saved value
    (a version number "1") only in the field it was saved from."""
    short = {k: v for k, v in result.saved.items() if len(v) < GLOBAL_SAVE_LENGTH}
    variables = {k: v for k, v in result.variables.items()
                 if k not in rec.files and k not in short}
    out: dict[str, Any] = templatize(response, variables)
    for name, path in step.save.items():
        if name in short:
            _set_path(out, path, "${" + name + "}")
    return out


def _set_path(document: Any, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = document
    try:
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        elif last in node:
            node[last] = value
    except (KeyError, IndexError, ValueError, TypeError):
        pass  # the answer has no such field: nothing was saved from it


def _recorded_rules(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    return tuple(r for r in rules if r.scope != "documented")


def _response_to_keep(answer: Answer, decode: str, keep: Sequence[str]) -> dict[str, Any]:
    response = answer.as_response(decode)
    response["headers"] = {k: v for k, v in sorted(response["headers"].items())
                           if any(fnmatch.fnmatchcase(k, p) for p in keep)}
    return response


def _redacted(response: dict[str, Any], rules: Sequence[Rule]) -> dict[str, Any]:
    from tests.parity.compare import path_matches

    def walk(node: Any, path: list[str]) -> Any:
        if any(r.redact and path_matches(r.path.split("."), path) for r in rules):
            return REDACTED
        if isinstance(node, Mapping):
            return {k: walk(v, [*path, k]) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, [*path, str(i)]) for i, v in enumerate(node)]
        return node

    return {k: walk(v, [k]) for k, v in response.items()}


def _own_items(response: dict[str, Any], rules: Sequence[Rule], variables: Mapping[str, str],
               names: Mapping[str, str], problems: list[str], step: str) -> dict[str, Any]:
    """Lists compared with ``contains`` keep only the scenario's own items: a real account
    holds other flows, which a recording must neither show nor depend on."""
    from tests.parity.compare import path_matches

    own = {variables[n] for n in names}
    for rule in rules:
        if rule.compare != "contains":
            continue
        parts = rule.path.split(".")
        if parts[0] != "body" or not isinstance(response.get("body"), dict):
            continue
        for key, items in list(response["body"].items()):
            if path_matches(parts, ["body", key]) and isinstance(items, list):
                mine = [i for i in items if isinstance(i, Mapping) and i.get(rule.key) in own]
                if not mine:
                    problems.append(f"{step}: none of the scenario's resources is in "
                                    f"body.{key} (a later page?)")
                response["body"][key] = mine
    return response


def _self_check(new: Recording, result: Run, shared: SharedRules) -> list[str]:
    """The recorded answers must satisfy the recording's own rules (a pattern the cloud's
    value breaks is a wrong rule, to be fixed before the file is committed)."""
    problems = []
    for step, answer in zip(new.steps, result.answers, strict=True):
        problems += [f"{step.name}: the recorded answer breaks a rule: {m}"
                     for m in _step_mismatches(new, step, answer, result, shared)]
    return problems
