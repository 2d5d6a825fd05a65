"""HTTP triggers answer at their local URL: the v1 event reaches the function, the trigger's
methods are enforced, and ``authType: function`` takes only requests signed with the
account's key (ACS3, as an Alibaba Cloud SDK signs)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_tea_openapi import utils_models as open_api
from alibabacloud_tea_openapi.exceptions import ClientException
from darabonba.runtime import RuntimeOptions


def _trigger(client, function: str, name: str, auth: str) -> str:
    client.create_trigger(function, fc.CreateTriggerRequest(body=fc.CreateTriggerInput(
        trigger_name=name, trigger_type="http",
        trigger_config=json.dumps({"authType": auth, "methods": ["GET", "POST"]}))))
    return client.get_trigger(function, name).body.http_trigger.url_internet


def _send(url: str, method: str = "GET", body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as failed:
        return failed.code, dict(failed.headers), failed.read()


def test_anonymous_trigger_maps_the_request_and_enforces_methods(cloud, runtime,
                                                                 zip_b64) -> None:
    client = cloud.fc_client()
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="web", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))
    url = _trigger(client, "web", "public", "anonymous")
    status, headers, body = _send(url + "/orders/7?a=1&a=2", "POST", b'{"qty": 2}',
                                  {"Content-Type": "application/json", "X-Trace": "t"})
    event = json.loads(runtime.invoked[-1][1])
    assert status == 200 and body.startswith(b"echo:") and headers["x-fc-request-id"]
    assert (event["version"], event["rawPath"], event["body"]) == ("v1", "/orders/7",
                                                                   '{"qty": 2}')
    assert event["queryParameters"] == {"a": "1,2"} and event["headers"]["X-Trace"] == "t"
    assert event["requestContext"]["http"]["method"] == "POST"
    assert event["requestContext"]["requestId"] == headers["x-fc-request-id"]
    refused, allow, _ = _send(url + "/", "DELETE")
    missing, _, _ = _send(f"http://{cloud.endpoint}/fcapp/nothing-here/")
    assert refused == 405 and allow["Allow"] == "GET, POST" and missing == 404


def test_function_auth_takes_only_signed_requests(cloud, runtime, zip_b64) -> None:
    client = cloud.fc_client()
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="private", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))
    url = _trigger(client, "private", "signed", "function")
    unsigned, _, body = _send(url + "/x")
    assert unsigned == 403 and json.loads(body)["Code"] == "AccessDenied"
    path = urlsplit(url).path + "/x"
    params = open_api.Params(action="HttpTrigger", version="2023-03-30", protocol="HTTP",
                             pathname=path, method="GET", auth_type="AK", style="ROA",
                             req_body_type="json", body_type="string")
    with pytest.raises(ClientException) as forged:
        cloud.fc_client(access_key_secret="not-the-secret").call_api(
            params, open_api.OpenApiRequest(), RuntimeOptions())
    assert forged.value.status_code == 403 and not runtime.invoked
    signed = client.call_api(params, open_api.OpenApiRequest(), RuntimeOptions())
    assert signed["statusCode"] == 200 and signed["body"].startswith("echo:")
    assert json.loads(runtime.invoked[-1][1])["rawPath"] == "/x"


def test_a_custom_domain_routes_requests_by_host_and_path(cloud, runtime, zip_b64) -> None:
    client = cloud.fc_client()
    for name in ("shop", "admin"):
        client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name=name, runtime="python3.10", handler="index.handler",
            code=fc.InputCodeLocation(zip_file=zip_b64))))
        _trigger(client, name, "web", "anonymous")
    client.create_custom_domain(fc.CreateCustomDomainRequest(body=fc.CreateCustomDomainInput(
        domain_name="api.example.com", protocol="HTTP", route_config=fc.RouteConfig(routes=[
            fc.PathConfig(path="/*", function_name="shop"),
            fc.PathConfig(path="/admin/*", function_name="admin", methods=["GET"])]))))
    base = f"http://{cloud.endpoint}"
    shop, _, body = _send(base + "/orders/7?x=1", "POST", b"{}", {"Host": "api.example.com"})
    shop_event = json.loads(runtime.invoked[-1][1])
    admin, _, _ = _send(base + "/admin/users", headers={"Host": "API.example.com:80"})
    admin_spec, admin_event = runtime.invoked[-1][0], json.loads(runtime.invoked[-1][1])
    refused, _, text = _send(base + "/admin/users", "DELETE", headers={"Host": "api.example.com"})
    unknown, _, other = _send(base + "/x", headers={"Host": "other.example.com"})
    assert shop == 200 and body.startswith(b"echo:")
    assert shop_event["rawPath"] == "/orders/7" and shop_event["queryParameters"] == {"x": "1"}
    assert shop_event["requestContext"]["domainName"] == "api.example.com"
    assert admin == 200 and admin_spec.function_name == "admin"
    assert admin_event["rawPath"] == "/admin/users"
    # DELETE /admin/users: the admin route takes GET only, so /* (shop) has it, and shop's
    # HTTP trigger takes GET and POST
    assert refused == 405 and b"trigger 'web'" in text
    # not a custom domain: the cloud APIs answer it (no such path), not the domain routing
    assert unknown >= 400 and b"custom domain" not in other
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="plain", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))
    client.update_custom_domain("api.example.com", fc.UpdateCustomDomainRequest(
        body=fc.UpdateCustomDomainInput(route_config=fc.RouteConfig(routes=[
            fc.PathConfig(path="/plain", function_name="plain")]))))
    no_trigger, _, why = _send(base + "/plain", headers={"Host": "api.example.com"})
    no_route, _, which = _send(base + "/orders/7", headers={"Host": "api.example.com"})
    assert no_trigger == 404 and b"function 'plain', which has no HTTP trigger" in why
    assert no_route == 404 and b"no route of custom domain 'api.example.com' takes GET " \
        b"/orders/7" in which
    client.delete_custom_domain("api.example.com")
    calls = len(runtime.invoked)
    gone, _, _ = _send(base + "/orders/7", headers={"Host": "api.example.com"})
    assert gone >= 400 and len(runtime.invoked) == calls
