"""Log Service's wire contract (SLS, ``2020-12-30``): GetLogs over the emulator's invocation logs,
and the projects and logstores ``logConfig: auto`` creates (docs/emulator.md "Log Service").

Served (:data:`SLS_ROUTES`): CreateProject, GetProject, CreateLogStore, GetLogStore, GetLogs
and GetLogsV2 (``{meta, data}``, compressed when asked), and the classic GetLogs (``?type=log``:
a JSON array with ``x-log-count`` and ``x-log-progress``). The project is the first label of
the ``Host``, or ``x-deployer-sls-project`` for a client that must send the bare loopback host.
Requests are signed as SLS signs them (``LOG <AccessKeyId>:<signature>``, HMAC-SHA1 or
-SHA256, a fresh ``Date``); errors are SLS's ``{"errorCode", "errorMessage"}``. Role sessions
are authorized against RAM (``log:GetLogStoreLogs`` and the project actions; docs/emulator.md
"Log Service authorization"): a refusal is ``401 Unauthorized`` naming why.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, unquote

from deployer.emulator.api import errors as e
from deployer.emulator.api.access import RequestAccess
from deployer.emulator.api.contract import ErrorTable, RequestContext, Routes, cases, json_object
from deployer.emulator.api.errors import Style, error_response
from deployer.emulator.api.freshness import RequestFreshness
from deployer.emulator.api.http import HttpRequest, HttpResponse, hostname, json_response
from deployer.emulator.api.router import REGION_HEADER
from deployer.emulator.api.signing import SignatureError, SignatureFailure
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import Resource, ServiceError, TokenError
from deployer.emulator.services.logs import LogQuery, LogResult, LogService
from deployer.emulator.services.security_tokens import RoleSession

__all__ = ["GET_LOGS_ACTION", "SLS_ERRORS", "SLS_PROJECT_HEADER", "SLS_ROUTES", "SlsApi",
           "sls_signature"]

SLS_PROJECT_HEADER = "x-deployer-sls-project"
GET_LOGS_ACTION = "log:GetLogStoreLogs"  # GetLogs and GetLogsV2 (docs: "RAM authorization")
_SLS_HOST = re.compile(r"^(?P<project>[a-z0-9][a-z0-9-]*)\.(?P<region>[a-z0-9-]+?)"
                       r"(?:-intranet|-share)?\.(?:log|sls)\.aliyuncs\.com$")
_SLS_REGION_HOST = re.compile(r"^(?P<region>[a-z0-9-]+?)(?:-intranet|-share)?\.(?:log|sls)"
                              r"\.aliyuncs\.com$")  # CreateProject: no project in the host
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$")
_LOOPBACK_HOST = re.compile(r"^(?P<project>[a-z0-9][a-z0-9-]*)\.(?:127\.\d+\.\d+\.\d+|localhost)$")

SLS_ROUTES: Routes[Callable[..., HttpResponse]] = Routes()


def _token_refused(exc: TokenError) -> e.ApiError:
    return e.SlsUnauthorized(f"{e.TOKEN_ERRORS[(TokenError, exc.problem)].code}: {exc.message}")


def _ram_refused(exc: svc.NotAuthorized) -> e.ApiError:
    return e.SlsUnauthorized(f"denied by sts or ram, action: {exc.action}, "
                             f"resource: {exc.resource}")


SLS_ERRORS = ErrorTable({
    svc.TokenError: _token_refused,
    svc.NotAuthorized: _ram_refused,
    **cases(svc.ResourceNotFound, {Resource.PROJECT: e.ProjectNotExist,
                           Resource.LOGSTORE: e.LogStoreNotExist}),
    svc.ResourceNotFound: e.NotFound,
    **cases(svc.AlreadyExists, {Resource.PROJECT: e.ProjectAlreadyExist,
                                Resource.LOGSTORE: e.LogStoreAlreadyExist}),
    svc.InvalidValue: e.ParameterInvalid,
}, e.InternalServerError)
"""Log Service's wire error for each domain error: a refused security token or RAM
authorization is ``401 Unauthorized`` naming why."""


def sls_signature(method: str, path: str, query: dict[str, str], headers: dict[str, str],
                  secret: str, algorithm: str = "sha1") -> str:
    """The base64 SLS v1 signature of a request (header names lower-cased)."""
    lines = [method, headers.get("content-md5", ""), headers.get("content-type", ""),
             headers.get("date", "")]
    canonical = "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)
                        if k.startswith(("x-log-", "x-acs-")))
    resource = path
    if query:
        resource += "?" + "&".join(f"{k}={query[k]}" for k in sorted(query))
    text = "\n".join(lines) + "\n" + canonical + resource
    digest = hashlib.sha256 if algorithm == "sha256" else hashlib.sha1
    return base64.b64encode(hmac.new(secret.encode(), text.encode(), digest).digest()).decode()


def _request_id() -> str:
    return secrets.token_hex(12).upper()


def _query(project: str, logstore: str, values: dict[str, Any]) -> LogQuery:
    def number(key: str, default: int | None = None) -> int:
        value = values.get(key, default)
        if value is None:
            raise e.ParameterInvalid(f"parameter {key} is required")
        text = str(value)
        if isinstance(value, bool) or not (text.isascii() and text.lstrip("-").isdigit()):
            raise e.ParameterInvalid(f"parameter {key} must be an integer, got {value!r}")
        return int(value)

    reverse = values.get("reverse", False)
    if isinstance(reverse, str):
        reverse = reverse.lower() == "true"
    return LogQuery(project, logstore, number("from"), number("to"),
                    query=str(values.get("query") or ""), line=number("line", 100),
                    offset=number("offset", 0), reverse=bool(reverse),
                    topic=str(values.get("topic") or ""))


def _logs_v2(request: HttpRequest, result: LogResult, query: LogQuery,
             rid: str) -> HttpResponse:
    """GetLogsV2's ``{meta, data}``, compressed as SLS compresses it when asked."""
    meta = {"progress": "Complete", "count": len(result.entries),
            "processedRows": len(result.entries), "elapsedMillisecond": 0,
            "hasSQL": False, "whereQuery": query.query, "aggQuery": "",
            "isAccurate": True, "keys": result.keys, "cpuSec": 0, "cpuCores": 0,
            "limited": 0}
    response = json_response(200, {"meta": meta, "data": result.entries},
                             {"x-log-requestid": rid})
    wanted = [w.strip() for w in (request.headers.get("accept-encoding") or "").split(",")]
    for kind in ("gzip", "deflate"):
        if kind in wanted:
            raw = response.body  # SLS's "gzip" and "deflate" are both zlib streams
            response.body = zlib.compress(raw, 6)
            response.headers.update({"x-log-compresstype": kind,
                                     "x-log-bodyrawsize": str(len(raw))})
            break
    return response


def _logs_v1(result: LogResult, rid: str) -> HttpResponse:
    """The classic GetLogs answer: a JSON array with its count and progress headers."""
    count = str(len(result.entries))
    return json_response(200, result.entries, {
        "x-log-requestid": rid, "x-log-count": count, "x-log-progress": "Complete",
        "x-log-processed-rows": count, "x-log-elapsed-millisecond": "0"})


class SlsApi:
    """HTTP in and out for GetLogs; authentication is SLS's own (``auth`` is None, so the
    router leaves it to :meth:`handle`), with the router's ``access`` hook: the account's
    key and STS keys are known, and role sessions are authorized against RAM."""

    prefix = "/logstores"
    auth = None
    errors = SLS_ERRORS
    serves_root = True  # CreateProject / GetProject are ``/`` (told apart by ``LOG`` signing)

    def __init__(self, logs: LogService, access: RequestAccess,
                 freshness: RequestFreshness) -> None:
        self._logs = logs
        self._access = access
        self._freshness = freshness

    def handle(self, ctx: RequestContext) -> HttpResponse:
        rid = _request_id()
        request = ctx.request
        try:
            key = self._verify(request)
            caller = self._access.caller(request, key, {})
            handler, args = SLS_ROUTES.find(request.method, request.raw_path,
                                            " by the emulated Log Service")
            return handler(self, ctx, rid, caller, **args)
        except e.ApiError as exc:
            return error_response(exc, rid, Style.SLS)
        except ServiceError as exc:
            return error_response(SLS_ERRORS.wire(exc), rid, Style.SLS)

    @SLS_ROUTES.route("POST", "/logstores/{logstore}/logs")
    def get_logs_v2(self, ctx: RequestContext, rid: str, caller: RoleSession | None,
                    logstore: str) -> HttpResponse:
        project, region = self._authorized(ctx, caller, f"/logstore/{logstore}")
        query = _query(project, logstore, json_object(ctx.request.body, e.PostBodyInvalid))
        return _logs_v2(ctx.request, self._logs.get_logs(ctx.account_id, region, query),
                        query, rid)

    @SLS_ROUTES.route("GET", "/logstores/{logstore}")
    def get_logs(self, ctx: RequestContext, rid: str, caller: RoleSession | None,
                 logstore: str) -> HttpResponse:
        """The classic GetLogs (``?type=log``), else GetLogStore."""
        params = ctx.request.query_params()
        if params.get("type") != "log":
            return self.get_logstore(ctx, rid, caller, logstore)
        project, region = self._authorized(ctx, caller, f"/logstore/{logstore}")
        query = _query(project, logstore, params)
        return _logs_v1(self._logs.get_logs(ctx.account_id, region, query), rid)

    def get_logstore(self, ctx: RequestContext, rid: str, caller: RoleSession | None,
                     logstore: str) -> HttpResponse:
        project, region = self._authorized(ctx, caller, f"/logstore/{logstore}",
                                           "log:GetLogStore")
        self._logs.get_logstore(ctx.account_id, region, project, logstore)
        return json_response(200, {"logstoreName": logstore, "ttl": 30, "shardCount": 2},
                             {"x-log-requestid": rid})

    @SLS_ROUTES.route("POST", "/")
    def create_project(self, ctx: RequestContext, rid: str,
                       caller: RoleSession | None) -> HttpResponse:
        request = ctx.request
        project = str(json_object(request.body, e.PostBodyInvalid).get("projectName") or "")
        if not _NAME.match(project) or "_" in project:
            raise e.ParameterInvalid(f"invalid projectName {project!r}: 3-63 lowercase "
                                     "letters, digits and -")
        host = _SLS_REGION_HOST.match((request.headers.get("host") or "").split(":")[0])
        region = request.headers.get(REGION_HEADER) or (host["region"] if host else "") \
            or ctx.region
        self._check(caller, "log:CreateProject",
                    f"acs:log:{region}:{ctx.account_id}:project/{project}")
        self._logs.create_project(ctx.account_id, region, project)
        return HttpResponse(200, b"", {"x-log-requestid": rid})

    @SLS_ROUTES.route("GET", "/")
    def get_project(self, ctx: RequestContext, rid: str,
                    caller: RoleSession | None) -> HttpResponse:
        project, region = self._authorized(ctx, caller, "", "log:GetProject")
        self._logs.get_project(ctx.account_id, region, project)
        return json_response(200, {"projectName": project, "region": region,
                                   "status": "Normal", "description": ""},
                             {"x-log-requestid": rid})

    @SLS_ROUTES.route("POST", "/logstores")
    def create_logstore(self, ctx: RequestContext, rid: str,
                        caller: RoleSession | None) -> HttpResponse:
        body = json_object(ctx.request.body, e.PostBodyInvalid)
        logstore = str(body.get("logstoreName") or "")
        if not _NAME.match(logstore):
            raise e.ParameterInvalid(f"invalid logstoreName {logstore!r}: 3-63 lowercase "
                                     "letters, digits, _ and -")
        project, region = self._authorized(ctx, caller, f"/logstore/{logstore}",
                                           "log:CreateLogStore")
        self._logs.create_logstore(ctx.account_id, region, project, logstore)
        return HttpResponse(200, b"", {"x-log-requestid": rid})

    def _authorized(self, ctx: RequestContext, caller: RoleSession | None, within: str,
                    action: str = GET_LOGS_ACTION) -> tuple[str, str]:
        """The request's project and region, once the caller may do ``action`` on the
        project (``within`` "") or on ``within`` it (``/logstore/<name>``)."""
        project, region = _where(ctx)
        self._check(caller, action, f"acs:log:{region}:{ctx.account_id}:project/{project}"
                                    f"{within}")
        return project, region

    def _check(self, caller: RoleSession | None, action: str, resource: str) -> None:
        if caller is not None:
            self._access.authorizer.check(caller.subject(), action, resource)

    def _verify(self, request: HttpRequest) -> str:
        """Check the SLS signature (and the Date's freshness); the AccessKeyId that signed."""
        auth = request.headers.get("authorization") or ""
        m = re.fullmatch(r"LOG ([^:\s]+):(\S+)", auth)
        if not auth:
            raise e.SlsUnauthorized("the request has no Authorization header")
        if m is None:
            raise e.SlsUnauthorized("the Authorization header is not 'LOG <AccessKeyId>:"
                                    "<signature>'")
        secret = self._access.secret_for(m[1])
        if secret is None:
            raise e.SlsUnauthorized(f"AccessKeyId not found: {m[1]}")
        headers = {k.lower(): v for k, v in request.headers.items}
        if request.body and "content-md5" in headers:
            md5 = hashlib.md5(request.body).hexdigest().upper()
            if headers["content-md5"].upper() != md5:
                raise e.SlsSignatureNotMatch("Content-MD5 does not match the request body")
        method = headers.get("x-log-signaturemethod", "hmac-sha1").lower()
        if method not in ("hmac-sha1", "hmac-sha256"):
            raise e.SlsUnauthorized(f"unsupported x-log-signaturemethod {method!r}")
        query = dict(parse_qsl(request.raw_query, keep_blank_values=True))
        expected = sls_signature(request.method, unquote(request.raw_path), query, headers,
                                 secret, "sha256" if method == "hmac-sha256" else "sha1")
        if not hmac.compare_digest(expected, m[2]):
            raise e.SlsSignatureNotMatch("signature " + m[2] + " not match")
        try:
            self._freshness.check_sls(request, m[1])
        except SignatureError as exc:
            cls = (e.SlsRequestTimeExpired if exc.reason is SignatureFailure.EXPIRED
                   else e.SlsInvalidRequestTime)
            raise cls(exc.detail) from None
        return m[1]


def _where(ctx: RequestContext) -> tuple[str, str]:
    """The project (the Host's first label, or the project header) and the region."""
    headers = ctx.request.headers
    name = hostname(headers.get("host") or "")
    m = _SLS_HOST.match(name)
    if m:
        return m["project"], m["region"]
    m = _LOOPBACK_HOST.match(name)
    project = m["project"] if m else (headers.get(SLS_PROJECT_HEADER) or "")
    if not project:
        raise e.ProjectNotExist("the request names no project: send it to "
                                "<project>.<endpoint> (or name it in "
                                f"{SLS_PROJECT_HEADER})")
    return project, headers.get(REGION_HEADER) or ctx.region
