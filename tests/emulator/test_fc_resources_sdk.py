"""FC 3.0's triggers, layers, asynchronous invocation, concurrency and custom domains through
the official SDK against the emulator."""

from __future__ import annotations

import base64
import json

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_tea_openapi.exceptions import ClientException
from darabonba.runtime import RuntimeOptions


def _function(client, name: str, zip_b64: str) -> None:
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))


def _error(exc: pytest.ExceptionInfo) -> tuple[str, int]:
    return exc.value.code, exc.value.status_code


def test_triggers_crud_and_the_http_url(cloud, zip_b64) -> None:
    client = cloud.fc_client()
    _function(client, "api", zip_b64)
    http = client.create_trigger("api", fc.CreateTriggerRequest(body=fc.CreateTriggerInput(
        trigger_name="web", trigger_type="http", qualifier="LATEST",
        trigger_config=json.dumps({"authType": "anonymous", "methods": ["GET", "POST"]})))).body
    timer = client.create_trigger("api", fc.CreateTriggerRequest(body=fc.CreateTriggerInput(
        trigger_name="nightly", trigger_type="timer",
        trigger_config=json.dumps({"cronExpression": "0 0 2 * * *", "enable": True,
                                   "payload": "tick"})))).body
    assert http.trigger_type == "http" and http.status == "Success"
    assert http.http_trigger.url_internet.startswith(f"http://{cloud.endpoint}/fcapp/")
    assert json.loads(http.trigger_config)["methods"] == ["GET", "POST"]
    assert timer.target_arn.endswith(":functions/api") and timer.http_trigger is None

    updated = client.update_trigger("api", "nightly", fc.UpdateTriggerRequest(
        body=fc.UpdateTriggerInput(description="2am", trigger_config=json.dumps(
            {"cronExpression": "0 0 3 * * *", "enable": False})))).body
    assert updated.description == "2am" and json.loads(updated.trigger_config)["enable"] is False
    listed = client.list_triggers("api", fc.ListTriggersRequest(limit=1)).body
    assert [t.trigger_name for t in listed.triggers] == ["nightly"] and listed.next_token == "web"
    assert client.get_trigger("api", "web").body.trigger_id == http.trigger_id

    with pytest.raises(ClientException) as dup:
        client.create_trigger("api", fc.CreateTriggerRequest(body=fc.CreateTriggerInput(
            trigger_name="web", trigger_type="http",
            trigger_config='{"authType": "anonymous", "methods": ["GET"]}')))
    with pytest.raises(ClientException) as bad:
        client.create_trigger("api", fc.CreateTriggerRequest(body=fc.CreateTriggerInput(
            trigger_name="odd", trigger_type="http", trigger_config="{not json")))
    client.delete_trigger("api", "web")
    with pytest.raises(ClientException) as gone:
        client.get_trigger("api", "web")
    assert _error(dup) == ("TriggerAlreadyExists", 409)
    assert _error(bad)[1] == 400 and "triggerConfig" in bad.value.message
    assert _error(gone) == ("TriggerNotFound", 404)


def test_layer_versions_acl_and_arn(cloud, make_zip) -> None:
    client = cloud.fc_client()
    code = base64.b64encode(make_zip({"python/shared.py": "X = 1\n"})).decode()
    first = client.create_layer_version("deps", fc.CreateLayerVersionRequest(
        body=fc.CreateLayerVersionInput(code=fc.InputCodeLocation(zip_file=code),
                                        compatible_runtime=["python3.10"],
                                        description="shared", license="MIT"))).body
    client.create_layer_version("deps", fc.CreateLayerVersionRequest(
        body=fc.CreateLayerVersionInput(code=fc.InputCodeLocation(zip_file=code))))
    arn = f"acs:fc:cn-hangzhou:{cloud.account_id}:layers/deps/versions/1"
    assert (first.version, first.layer_version_arn, first.acl) == (1, arn, "0")
    assert first.compatible_runtime == ["python3.10"] and first.code.location.endswith(".zip")
    assert client.get_layer_version("deps", "2").body.version == 2
    assert client.get_layer_version_by_arn(arn).body.description == "shared"
    versions = client.list_layer_versions("deps", fc.ListLayerVersionsRequest(limit=1)).body
    assert [v.version for v in versions.layers] == [1] and versions.next_version == 2
    client.put_layer_acl("deps", fc.PutLayerACLRequest(public="true"))
    public = client.list_layers(fc.ListLayersRequest(public="true")).body.layers
    assert [(x.layer_name, x.version, x.acl) for x in public] == [("deps", 2, "1")]
    client.delete_layer_version("deps", "2")
    with pytest.raises(ClientException) as gone:
        client.get_layer_version("deps", "2")
    with pytest.raises(ClientException) as official:
        client.get_layer_version_by_arn(
            "acs:fc:cn-hangzhou:official:layers/Python310/versions/1")
    assert _error(gone) == ("LayerNotFound", 404)
    assert _error(official)[1] == 404 and "official" in official.value.message


def test_async_config_tasks_and_concurrency(cloud, zip_b64) -> None:
    client = cloud.fc_client()
    _function(client, "worker", zip_b64)
    config = client.put_async_invoke_config("worker", fc.PutAsyncInvokeConfigRequest(
        body=fc.PutAsyncInvokeConfigInput(max_async_retry_attempts=1,
                                          max_async_event_age_in_seconds=60))).body
    assert config.max_async_retry_attempts == 1 and config.function_arn.endswith("/worker")
    listed = client.list_async_invoke_configs(
        fc.ListAsyncInvokeConfigsRequest(function_name="worker")).body.configs
    assert [c.max_async_event_age_in_seconds for c in listed] == [60]

    sent = client.invoke_function_with_options(
        "worker", fc.InvokeFunctionRequest(body=b'{"n": 1}'),
        fc.InvokeFunctionHeaders(x_fc_invocation_type="Async", x_fc_async_task_id="job-1"),
        RuntimeOptions())
    assert sent.status_code == 202
    cloud.wait_for_async_invocations()
    task = client.get_async_task("worker", "job-1", fc.GetAsyncTaskRequest()).body
    assert (task.task_id, task.status, task.task_payload) == ("job-1", "Succeeded", '{"n": 1}')
    tasks = client.list_async_tasks("worker", fc.ListAsyncTasksRequest(
        include_payload=True)).body.tasks
    assert [t.task_id for t in tasks] == ["job-1"]
    with pytest.raises(ClientException) as ended:
        client.stop_async_task("worker", "job-1", fc.StopAsyncTaskRequest())
    assert _error(ended)[1] == 400

    client.delete_async_invoke_config("worker", fc.DeleteAsyncInvokeConfigRequest())
    with pytest.raises(ClientException) as no_config:
        client.get_async_invoke_config("worker", fc.GetAsyncInvokeConfigRequest())
    assert _error(no_config) == ("AsyncConfigNotExists", 404)

    reserved = client.put_concurrency_config("worker", fc.PutConcurrencyConfigRequest(
        body=fc.PutConcurrencyInput(reserved_concurrency=0))).body
    assert reserved.reserved_concurrency == 0
    with pytest.raises(ClientException) as stopped:
        client.invoke_function("worker", fc.InvokeFunctionRequest(body=b"{}"))
    assert _error(stopped) == ("ResourceExhausted", 429)
    assert [c.function_arn for c in client.list_concurrency_configs(
        fc.ListConcurrencyConfigsRequest()).body.configs] == [reserved.function_arn]
    client.delete_concurrency_config("worker")
    with pytest.raises(ClientException) as no_reservation:
        client.get_concurrency_config("worker")
    assert _error(no_reservation) == ("ConcurrencyConfigNotFound", 404)


def test_custom_domains(cloud, zip_b64) -> None:
    client = cloud.fc_client()
    _function(client, "api", zip_b64)
    routes = fc.RouteConfig(routes=[fc.PathConfig(path="/api/*", function_name="api")])
    created = client.create_custom_domain(fc.CreateCustomDomainRequest(
        body=fc.CreateCustomDomainInput(domain_name="shop.example.com", protocol="HTTP",
                                        route_config=routes))).body
    assert created.domain_name == "shop.example.com"
    assert created.route_config.routes[0].function_name == "api"
    client.update_custom_domain("shop.example.com", fc.UpdateCustomDomainRequest(
        body=fc.UpdateCustomDomainInput(route_config=fc.RouteConfig(routes=[
            fc.PathConfig(path="/v2/*", function_name="api", qualifier="LATEST")]))))
    got = client.get_custom_domain("shop.example.com").body
    assert got.route_config.routes[0].path == "/v2/*"
    assert [d.domain_name for d in client.list_custom_domains(
        fc.ListCustomDomainsRequest()).body.custom_domains] == ["shop.example.com"]
    with pytest.raises(ClientException) as dup:
        client.create_custom_domain(fc.CreateCustomDomainRequest(
            body=fc.CreateCustomDomainInput(domain_name="shop.example.com")))
    client.delete_custom_domain("shop.example.com")
    with pytest.raises(ClientException) as gone:
        client.get_custom_domain("shop.example.com")
    assert _error(dup) == ("DomainNameAlreadyExists", 409)
    assert _error(gone) == ("DomainNameNotFound", 404)
