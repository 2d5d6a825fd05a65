"""FC 3.0 actions through the official SDK (sync and async) against the emulator."""

from __future__ import annotations

import asyncio
import base64

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_tea_openapi.exceptions import ClientException
from darabonba.runtime import RuntimeOptions

from deployer.checksums import crc64_decimal


def _create(client, name: str, zip_b64: str, **kw) -> fc.CreateFunctionResponse:
    body = fc.CreateFunctionInput(function_name=name, runtime=kw.pop("runtime", "python3.10"),
                                  handler=kw.pop("handler", "index.handler"),
                                  code=fc.InputCodeLocation(zip_file=zip_b64), **kw)
    return client.create_function(fc.CreateFunctionRequest(body=body))


def _code(exc: pytest.ExceptionInfo) -> tuple[str, int]:
    return exc.value.code, exc.value.status_code


def test_create_get_update_delete(cloud, runtime, zip_b64, make_zip) -> None:
    client = cloud.fc_client()
    from deployer.emulator.services.layers import LayerInput

    cloud.server.emulator.layers.create_version(cloud.account_id, "cn-hangzhou", "l",
                                                LayerInput(base64.b64decode(zip_b64)))
    created = _create(client, "hello", zip_b64, description="demo",
                      environment_variables={"K": "V"}, tags=[fc.Tag(key="k", value="v")],
                      layers=[f"acs:fc:cn-hangzhou:{cloud.account_id}:layers/l/versions/1"]).body
    raw = base64.b64decode(zip_b64)
    assert created.function_arn == f"acs:fc:cn-hangzhou:{cloud.account_id}:functions/hello"
    assert created.code_checksum == crc64_decimal(raw) and created.code_size == len(raw)
    assert (created.memory_size, created.cpu, created.disk_size, created.timeout) == (
        512, 0.35, 512, 3)
    assert created.state == "Active" and created.last_update_status == "Successful"
    assert created.tags[0].key == "k" and created.layers[0].arn.endswith("versions/1")
    assert len(created.created_time) == 20 and created.created_time.endswith("Z")

    got = client.get_function("hello", fc.GetFunctionRequest(qualifier="LATEST")).body
    assert got.function_id == created.function_id and got.environment_variables == {"K": "V"}

    cloud.advance(5)
    new_zip = make_zip({"index.py": "def handler(e, c):\n    return 1\n"})
    updated = client.update_function("hello", fc.UpdateFunctionRequest(
        body=fc.UpdateFunctionInput(memory_size=1024, code=fc.InputCodeLocation(
            zip_file=base64.b64encode(new_zip).decode())))).body
    assert updated.memory_size == 1024 and updated.description == "demo"
    assert updated.code_checksum == crc64_decimal(new_zip)
    assert updated.last_modified_time > updated.created_time
    assert (cloud.account_id, "cn-hangzhou", "hello") in runtime.retired

    code = client.get_function_code("hello", fc.GetFunctionCodeRequest()).body
    assert code.checksum == updated.code_checksum
    import urllib.request
    with urllib.request.urlopen(code.url) as resp:
        assert resp.read() == new_zip

    deleted = client.delete_function("hello")
    assert deleted.status_code == 204
    with pytest.raises(ClientException) as info:
        client.get_function("hello", fc.GetFunctionRequest())
    assert _code(info) == ("FunctionNotFound", 404)
    assert "function 'hello' does not exist" in info.value.message


def test_list_functions_paginates_by_name(cloud, zip_b64) -> None:
    client = cloud.fc_client()
    for name in ("b-fn", "a-fn", "c-fn", "other"):
        _create(client, name, zip_b64)
    page1 = client.list_functions(fc.ListFunctionsRequest(limit=2, prefix="")).body
    assert [f.function_name for f in page1.functions] == ["a-fn", "b-fn"]
    page2 = client.list_functions(fc.ListFunctionsRequest(limit=2,
                                                          next_token=page1.next_token)).body
    assert [f.function_name for f in page2.functions] == ["c-fn", "other"]
    assert not page2.next_token
    pref = client.list_functions(fc.ListFunctionsRequest(prefix="b")).body
    assert [f.function_name for f in pref.functions] == ["b-fn"]
    with pytest.raises(ClientException) as info:
        client.list_functions(fc.ListFunctionsRequest(limit=101))
    assert _code(info) == ("InvalidArgument", 400)


@pytest.mark.parametrize(("overrides", "text"), [
    ({"function_name": "1bad"}, "invalid function name"),
    ({"function_name": "x" * 65}, "invalid function name"),
    ({"memory_size": 200}, "multiple of 64"),
    ({"memory_size": 64}, "memorySize"),
    ({"runtime": "python2.7"}, "runtime 'python2.7' is not supported"),
    ({"timeout": 0}, "timeout"),
    ({"handler": "nodot"}, "invalid handler"),
    ({"environment_variables": {"FC_X": "1"}}, "reserved"),
    ({"disk_size": 1000}, "diskSize"),
    ({"role": "not-an-arn"}, "invalid role"),
])
def test_validation_errors(cloud, zip_b64, overrides, text) -> None:
    name = overrides.pop("function_name", "valid")
    with pytest.raises(ClientException) as info:
        _create(cloud.fc_client(), name, zip_b64, **overrides)
    assert _code(info) == ("InvalidArgument", 400)
    assert text in info.value.message


def test_bad_zip_checksum_mismatch_and_duplicates(cloud, zip_b64) -> None:
    client = cloud.fc_client()
    with pytest.raises(ClientException) as info:
        _create(client, "f", base64.b64encode(b"not a zip").decode())
    assert _code(info) == ("InvalidArgument", 400) and "not a valid zip" in info.value.message
    body = fc.CreateFunctionInput(function_name="f", runtime="python3.10", handler="i.h",
                                  code=fc.InputCodeLocation(zip_file=zip_b64, checksum="123"))
    with pytest.raises(ClientException) as info:
        client.create_function(fc.CreateFunctionRequest(body=body))
    assert "does not match" in info.value.message
    checksum = crc64_decimal(base64.b64decode(zip_b64))
    body.code.checksum = checksum
    created = client.create_function(fc.CreateFunctionRequest(body=body)).body
    assert created.code_checksum == checksum
    with pytest.raises(ClientException) as info:
        client.create_function(fc.CreateFunctionRequest(body=body))
    assert _code(info) == ("FunctionAlreadyExists", 409)
    with pytest.raises(ClientException) as info:
        client.get_function("f", fc.GetFunctionRequest(qualifier="3"))
    assert _code(info) == ("VersionNotFound", 404)
    with pytest.raises(ClientException) as info:
        client.update_function("missing", fc.UpdateFunctionRequest(
            body=fc.UpdateFunctionInput(timeout=5)))
    assert _code(info) == ("FunctionNotFound", 404)


def test_invoke_sync_tail_error_and_async(cloud, runtime, zip_b64) -> None:
    client = cloud.fc_client()
    _create(client, "echo", zip_b64)
    resp = client.invoke_function_with_options(
        "echo", fc.InvokeFunctionRequest(body=b'{"a":1}'),
        fc.InvokeFunctionHeaders(x_fc_log_type="Tail"), RuntimeOptions())
    assert resp.status_code == 200 and resp.body.read() == b'echo:{"a":1}'
    rid = resp.headers["x-fc-request-id"]
    assert rid in base64.b64decode(resp.headers["x-fc-log-result"]).decode()
    assert "x-fc-error-type" not in resp.headers
    assert resp.headers["x-fc-code-checksum"] == crc64_decimal(base64.b64decode(zip_b64))

    failed = client.invoke_function("echo", fc.InvokeFunctionRequest(body=b"fail"))
    assert failed.status_code == 200
    assert failed.headers["x-fc-error-type"] == "UnhandledInvocationError"
    assert "x-fc-log-result" not in failed.headers

    runtime.done.clear()
    accepted = client.invoke_function_with_options(
        "echo", fc.InvokeFunctionRequest(body=b"later"),
        fc.InvokeFunctionHeaders(x_fc_invocation_type="Async", x_fc_async_task_id="task-1"),
        RuntimeOptions())
    assert accepted.status_code == 202 and accepted.body.read() == b""
    assert accepted.headers["x-fc-async-task-id"] == "task-1"
    assert runtime.done.wait(10)
    records = cloud.invocations("echo")
    assert records[-1].request_id == rid and records[-1].status == "Succeeded"
    assert any(r.status == "Failed" and r.error_type == "UnhandledInvocationError"
               for r in records)

    with pytest.raises(ClientException) as info:
        client.invoke_function_with_options(
            "echo", fc.InvokeFunctionRequest(body=b"x" * (128 * 1024 + 1)),
            fc.InvokeFunctionHeaders(x_fc_invocation_type="Async"), RuntimeOptions())
    assert _code(info) == ("EntityTooLarge", 400)
    with pytest.raises(ClientException) as info:
        client.invoke_function_with_options(
            "echo", fc.InvokeFunctionRequest(body=b"x"),
            fc.InvokeFunctionHeaders(x_fc_invocation_type="Async", x_fc_async_task_id="1bad"),
            RuntimeOptions())
    assert _code(info) == ("InvalidArgument", 400)
    with pytest.raises(ClientException) as info:
        client.invoke_function("nope", fc.InvokeFunctionRequest(body=b""))
    assert _code(info) == ("FunctionNotFound", 404)


def test_async_client(cloud, zip_b64) -> None:
    async def scenario() -> None:
        client = cloud.fc_client()
        body = fc.CreateFunctionInput(function_name="aio", runtime="python3.10",
                                      handler="index.handler",
                                      code=fc.InputCodeLocation(zip_file=zip_b64))
        created = await client.create_function_async(fc.CreateFunctionRequest(body=body))
        assert created.body.function_name == "aio"
        listed = await client.list_functions_async(fc.ListFunctionsRequest())
        assert [f.function_name for f in listed.body.functions] == ["aio"]
        resp = await client.invoke_function_async("aio", fc.InvokeFunctionRequest(body=b"hi"))
        assert resp.body.read() == b"echo:hi"
        with pytest.raises(ClientException) as info:
            await client.get_function_async("zzz", fc.GetFunctionRequest())
        assert info.value.code == "FunctionNotFound"
        assert (await client.delete_function_async("aio")).status_code == 204

    asyncio.run(scenario())


def test_wrong_secret_and_unknown_key(cloud) -> None:
    wrong = cloud.fc_client(access_key_secret="wrong")
    with pytest.raises(ClientException) as info:
        wrong.list_functions(fc.ListFunctionsRequest())
    assert _code(info) == ("SignatureNotMatch", 403)
    unknown = cloud.fc_client(access_key_id="LTAIunknown")
    with pytest.raises(ClientException) as info:
        unknown.list_functions(fc.ListFunctionsRequest())
    assert _code(info) == ("InvalidAccessKeyID", 403)
    assert "LTAIunknown" in info.value.message
