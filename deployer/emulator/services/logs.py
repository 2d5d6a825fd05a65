"""Log Service (SLS) domain logic: the emulator's functions' invocation logs, queried by time.

A function whose ``logConfig`` names ``{project, logstore}`` writes its invocations there, as
Function Compute 3.0 does: one log entry per line its invocation logged (``message``,
``functionName``, ``qualifier``, ``requestId``, ...) and, with ``enableRequestMetrics`` (the
default), one request-metrics entry per invocation (``operation: InvokeFunction``,
``invocationType``, ``durationMs``, ``hasFunctionError``, ``errorType``). In the emulator a
project and a logstore exist when CreateProject / CreateLogStore made them (``logConfig:
auto`` does) or when some function's ``logConfig`` names them.

Entries are derived from the stored invocation records when queried (the logstore is the
function's *current* ``logConfig``). ``get_logs`` follows GetLogs: the half-open time range
``[from, to)`` in seconds, ``line`` (0-100) entries after skipping ``offset``, oldest first
unless ``reverse``, and a query of ``and``-joined terms: ``*``, ``field: value`` (``value*`` for a
prefix) and bare words searched in every field; an analytic ``| SELECT ...`` part is refused.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from deployer.emulator.records import InvocationRecord
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.store.log_repos import InvocationLogRepo, LogStoreRepo
from deployer.emulator.store.repos import FunctionRecord, FunctionRepo

__all__ = ["LogQuery", "LogResult", "LogService"]

MAX_LINES = 100
_TERM = re.compile(r'^(?P<key>[A-Za-z_][\w.]*)\s*:\s*(?P<value>"[^"]*"|\S+)$')
Entry = dict[str, str]


@dataclass(frozen=True, slots=True)
class LogQuery:
    project: str
    logstore: str
    start: int  # ``from``, Unix seconds, inclusive
    end: int  # ``to``, exclusive
    query: str = ""
    line: int = MAX_LINES
    offset: int = 0
    reverse: bool = False
    topic: str = ""


@dataclass(frozen=True, slots=True)
class LogResult:
    entries: list[Entry]
    keys: list[str]


def _log_config(rec: FunctionRecord) -> dict[str, Any]:
    opaque = rec.config.get("opaque") or {}
    value = opaque.get("logConfig") if isinstance(opaque, dict) else None
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class _Term:
    """One search term: ``key`` None searches every field for ``value``."""

    key: str | None
    value: str
    prefix: bool = False

    def matches(self, entry: Entry) -> bool:
        if self.key is None:
            return any(self.value in v for v in entry.values())
        found = entry.get(self.key)
        if found is None:
            return False
        return found.startswith(self.value) if self.prefix else found == self.value


def _terms(query: str) -> list[_Term]:
    """The terms of a GetLogs search query (see the module docstring)."""
    text = query.strip()
    if "|" in text:
        raise InvalidValue("the emulated Log Service supports search queries only; an "
                           "analytic statement after '|' is not emulated", field="query")
    terms: list[_Term] = []
    for term in (t.strip() for t in re.split(r"\s+and\s+", text, flags=re.IGNORECASE)):
        if term in ("", "*"):
            continue
        m = _TERM.match(term)
        if m:
            value = m["value"].strip('"')
            prefix = value.endswith("*")
            terms.append(_Term(m["key"], value[:-1] if prefix else value, prefix))
        elif re.fullmatch(r'"[^"]*"|[^\s:"()]+', term):
            terms.append(_Term(None, term.strip('"')))
        else:
            raise InvalidValue(f"cannot parse the query term {term!r}: use *, field: value "
                               "or words joined by and", field="query")
    return terms


def invocation_entries(rec: InvocationRecord, config: dict[str, Any]) -> list[Entry]:
    """The log entries Function Compute writes for one invocation, in writing order."""
    base = {"__time__": str(int(rec.invoked_at)), "__source__": "",
            "functionName": rec.function_name, "qualifier": "LATEST", "versionId": "",
            "requestId": rec.request_id}
    entries = [{**base, "__topic__": f"FCLogs:{rec.function_name}", "message": line}
               for line in rec.log.splitlines()]
    if config.get("enableRequestMetrics", True) is not False and rec.invocation_type in (
            "Sync", "Async"):  # a preStop hook's log has no request metrics
        metrics = {**base, "__topic__": f"FCRequestMetrics:{rec.function_name}",
                   "operation": "InvokeFunction",
                   "invocationType": rec.invocation_type,
                   "durationMs": f"{rec.duration_ms:.2f}" if rec.duration_ms is not None else "",
                   "hasFunctionError": "true" if rec.status == "Failed" else "false"}
        if rec.error_type:
            metrics["errorType"] = rec.error_type
        entries.append(metrics)
    return entries


class LogService:
    """GetLogs over the invocation records of the functions that log to a logstore."""

    def __init__(self, functions: FunctionRepo, invocations: InvocationLogRepo,
                 stores: LogStoreRepo | None = None, clock: Callable[[], float] = time.time
                 ) -> None:
        self._functions = functions
        self._invocations = invocations
        self._stores = stores
        self._now = clock

    # --- projects and logstores (CreateProject, GetProject, CreateLogStore, GetLogStore) -----

    def _created(self, account_id: str, region: str, project: str, logstore: str = "") -> bool:
        return self._stores is not None and self._stores.exists(account_id, region, project,
                                                                logstore)

    def _named(self, account_id: str, region: str, project: str,
               logstore: str | None = None) -> bool:
        try:
            self._writers(account_id, region, project, logstore or "", created=False)
        except ResourceNotFound as exc:
            return logstore is None and exc.resource is Resource.LOGSTORE
        return True

    def project_exists(self, account_id: str, region: str, project: str) -> bool:
        return self._created(account_id, region, project) or self._named(
            account_id, region, project)

    def create_project(self, account_id: str, region: str, project: str) -> None:
        """CreateProject: AlreadyExists (``ProjectAlreadyExist``) when it exists."""
        if self.project_exists(account_id, region, project) or self._stores is None or \
                not self._stores.add(account_id, region, project, "", self._now()):
            raise AlreadyExists(f"Project {project} already exist", Resource.PROJECT,
                                name=project)

    def get_project(self, account_id: str, region: str, project: str) -> None:
        if not self.project_exists(account_id, region, project):
            raise ResourceNotFound(f"Project {project} does not exist", Resource.PROJECT,
                                   name=project)

    def logstore_exists(self, account_id: str, region: str, project: str,
                        logstore: str) -> bool:
        return self._created(account_id, region, project, logstore) or self._named(
            account_id, region, project, logstore)

    def create_logstore(self, account_id: str, region: str, project: str,
                        logstore: str) -> None:
        """CreateLogStore: ResourceNotFound for the project, AlreadyExists for the logstore."""
        self.get_project(account_id, region, project)
        if self.logstore_exists(account_id, region, project, logstore) or \
                self._stores is None or \
                not self._stores.add(account_id, region, project, logstore, self._now()):
            raise AlreadyExists(f"logstore {logstore} already exist", Resource.LOGSTORE,
                                name=logstore)

    def get_logstore(self, account_id: str, region: str, project: str, logstore: str) -> None:
        self.get_project(account_id, region, project)
        if not self.logstore_exists(account_id, region, project, logstore):
            raise ResourceNotFound(f"Logstore {logstore} does not exist", Resource.LOGSTORE,
                                   name=logstore)

    def _writers(self, account_id: str, region: str, project: str, logstore: str, *,
                 created: bool = True) -> dict[str, dict[str, Any]]:
        """``{function name: logConfig}`` of the functions writing to ``project/logstore``;
        ResourceNotFound (``Resource.PROJECT`` / ``Resource.LOGSTORE``) when neither a function
        names them nor (``created``) were they created."""
        in_project: dict[str, dict[str, Any]] = {}
        start = ""
        while True:
            page = self._functions.list(account_id, region, start=start, limit=500)
            for rec in page:
                config = _log_config(rec)
                if config.get("project") == project:
                    in_project[rec.name] = config
            if len(page) < 500:
                break
            start = page[-1].name + "\x00"
        if not in_project and not (created and self._created(account_id, region, project)):
            raise ResourceNotFound(f"Project {project} does not exist",
                                   Resource.PROJECT, name=project)
        writers = {n: c for n, c in in_project.items() if c.get("logstore") == logstore}
        if not writers and not (created and self._created(account_id, region, project,
                                                          logstore)):
            raise ResourceNotFound(f"Logstore {logstore} does not exist", Resource.LOGSTORE,
                                   name=logstore)
        return writers

    def get_logs(self, account_id: str, region: str, query: LogQuery) -> LogResult:
        """Entries of ``query`` (see the module docstring). Raises ResourceNotFound for an unknown
        project or logstore and InvalidValue for a bad range, line, offset or query."""
        if query.start >= query.end:
            raise InvalidValue("from must be less than to (the range is [from, to))",
                                  field="from")
        if not 0 <= query.line <= MAX_LINES:
            raise InvalidValue(f"line must be between 0 and {MAX_LINES}", field="line")
        if query.offset < 0:
            raise InvalidValue("offset must not be negative", field="offset")
        terms = _terms(query.query)
        writers = self._writers(account_id, region, query.project, query.logstore)
        found: list[Entry] = []
        skipped = 0
        for entry in self._entries(account_id, region, writers, query):
            if not all(t.matches(entry) for t in terms) or (
                    query.topic and entry.get("__topic__") != query.topic):
                continue
            if skipped < query.offset:
                skipped += 1
                continue
            if len(found) >= query.line:
                break
            found.append(entry)
        keys = sorted({k for e in found for k in e if not k.startswith("__")})
        return LogResult(found, keys)

    def _entries(self, account_id: str, region: str, writers: dict[str, dict[str, Any]],
                 query: LogQuery) -> Iterator[Entry]:
        after: tuple[float, int] | None = None
        while True:
            rows = self._invocations.page(account_id, region, sorted(writers),
                                          start=query.start, end=query.end,
                                          descending=query.reverse, after=after)
            for row in rows:
                entries = invocation_entries(row.record, writers[row.record.function_name])
                yield from (reversed(entries) if query.reverse else entries)
            if len(rows) < 200:
                return
            after = (rows[-1].record.invoked_at, rows[-1].seq)
