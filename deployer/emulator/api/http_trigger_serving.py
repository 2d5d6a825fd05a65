"""HTTP triggers served at their local URL: ``<endpoint>/fcapp/<url prefix>/<path>`` (the URL
CreateTrigger answers in ``httpTrigger.urlInternet``, and ``deploy up`` prints), and at any
path of a custom domain routing to their function: a request whose Host is the domain
(``curl -H 'Host: api.example.com' <endpoint>/path``; the router asks :meth:`serves_host`).

A request reaches the trigger's function (its qualifier) as FC 3.0 delivers it to an event
handler (:mod:`services.http_triggers`: the ``v1`` event in, ``{statusCode, headers, body}``
out). The trigger's ``methods`` are the only ones answered (``405`` otherwise). With
``authType: function`` the request must be signed as an Alibaba Cloud SDK signs
(ACS3-HMAC-SHA256, the FC docs' "Configure signature authentication for HTTP triggers";
CONFIRMED) with a key of the account: an unsigned request is ``403 AccessDenied`` (FC docs,
"Signature authentication": no Authorization header or a bad one is 403), a badly signed one
FC's signature errors; ``anonymous`` triggers take any request. Every answer carries
``x-fc-request-id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from deployer.emulator.api import errors as e
from deployer.emulator.api.fc import FC_AUTH, FC_ERRORS
from deployer.emulator.api.fc_triggers import HTTP_TRIGGER_PATH
from deployer.emulator.api.http import HttpRequest, HttpResponse, hostname
from deployer.emulator.api.router import AuthScheme, fc_request_id
from deployer.emulator.clock import Clock
from deployer.emulator.services.http_triggers import (
    HttpTriggerRequest,
    event_for,
    response_for,
)
from deployer.emulator.services.ports import HttpCall

__all__ = ["HttpTriggerApi"]


class HttpTriggerApi:
    """The ``/fcapp/`` surface: finds the trigger by its URL prefix, checks the method and
    the signature its ``authType`` asks for, and runs the function."""

    prefix = HTTP_TRIGGER_PATH
    errors = FC_ERRORS

    def __init__(self, triggers: Any, functions: Any, clock: Clock,
                 authenticate: Callable[[HttpRequest, AuthScheme], str],
                 domains: Any = None) -> None:
        self._domains = domains  # services.custom_domains.CustomDomainService
        self._triggers = triggers
        self._functions = functions
        self._clock = clock
        self._authenticate = authenticate

    def handle(self, request: HttpRequest) -> HttpResponse:
        url_prefix, _, rest = request.raw_path[len(self.prefix):].partition("/")
        row = self._triggers.by_url(url_prefix)
        if row is None:
            raise e.TriggerNotFound(f"no HTTP trigger is served at {self.prefix}{url_prefix}")
        return self._serve(request, row, "/" + rest, "")

    def serves_host(self, host: str) -> bool:
        """Whether ``host`` (a Host header, port and case aside) names a custom domain."""
        return self._domains is not None and self._domains.is_domain(_domain_name(host))

    def handle_domain(self, request: HttpRequest) -> HttpResponse:
        """A request sent to a custom domain (its Host): the domain's route for the path and
        method picks the function and qualifier, whose HTTP trigger serves it as at its own
        URL (the path as sent; the event's ``domainName`` is the custom domain)."""
        name = _domain_name(request.headers.get("host") or "")
        found = self._domains.find(name)
        path = request.raw_path.split("?", 1)[0] or "/"
        route = found[2].route(unquote(path), request.method) if found else None
        if found is None or route is None:
            raise e.NotFound(f"no route of custom domain '{name}' takes "
                             f"{request.method.upper()} {unquote(path)}")
        account_id, region, _ = found
        row = self._triggers.http_trigger_of(account_id, region, route.function_name,
                                             route.qualifier)
        if row is None:
            raise e.NotFound(f"custom domain '{name}' routes {unquote(path)} to function "
                             f"'{route.function_name}', which has no HTTP trigger")
        return self._serve(request, row, path, name, route.qualifier)

    def _serve(self, request: HttpRequest, row: Any, path: str, domain: str,
               qualifier: str | None = None) -> HttpResponse:
        url_prefix = row.url_prefix
        rid = fc_request_id(self._clock.now())
        methods = [str(m).upper() for m in row.config.get("methods") or ()]
        method = request.method.upper()
        if methods and method not in methods and not (method == "HEAD" and "GET" in methods):
            raise e.MethodNotAllowed(f"method {method} is not allowed by trigger '{row.name}' "
                                     f"(it takes {', '.join(methods)})",
                                     headers={"Allow": ", ".join(methods)})
        if row.config.get("authType") == "function":
            if not request.headers.get("authorization"):
                raise e.AccessDenied(f"trigger '{row.name}' takes signed requests only "
                                     "(authType function): the Authorization header is "
                                     "missing")
            self._authenticate(request, FC_AUTH)
        query = request.raw_query
        forwarded = self._functions.invoke_http(
            row.account_id, row.region, row.function_name,
            HttpCall(method, path, query, request.headers.items, request.body),
            request_id=rid, qualifier=qualifier or row.qualifier)
        if forwarded is not None:  # a custom runtime's own server answers
            return self._forwarded(forwarded.result, rid)
        event = event_for(
            HttpTriggerRequest(method, path, query, request.headers.items,
                               request.body),
            account_id=row.account_id, region=row.region, url_prefix=url_prefix,
            request_id=rid, now=self._clock.now(), domain=domain)
        out = self._functions.invoke(row.account_id, row.region, row.function_name, event,
                                     request_id=rid, qualifier=qualifier or row.qualifier)
        answer = response_for(out.result.payload, out.result.error_type)
        headers = dict(answer.headers)
        headers["x-fc-request-id"] = rid
        return HttpResponse(answer.status, answer.body, headers)

    @staticmethod
    def _forwarded(result: Any, rid: str) -> HttpResponse:
        if result.error_type or result.http_status is None:
            answer = response_for(result.payload, result.error_type or "UnhandledInvocationError")
            return HttpResponse(answer.status, answer.body,
                                {**dict(answer.headers), "x-fc-request-id": rid})
        headers = {k: v for k, v in result.http_headers
                   if k.lower() not in ("content-length", "transfer-encoding", "connection")}
        headers["x-fc-request-id"] = rid
        return HttpResponse(result.http_status, result.payload, headers)


def _domain_name(host: str) -> str:
    return hostname(host).rstrip(".")
