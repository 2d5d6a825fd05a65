"""ProcessRuntime: handler resolution, event, context, results, error bodies, environment."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_support import ACCOUNT, REGION, call, fc_json, make_spec, payload_json

from deployer.emulator.clock import SystemClock
from deployer.emulator.runtime import (
    ContainerImageNotSupported,
    ProcessRuntime,
    RuntimeNotEmulated,
    RuntimeUnavailableError,
)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[ProcessRuntime]:
    rt = ProcessRuntime(tmp_path / "work", SystemClock())
    yield rt
    rt.close()


def code_root(tmp_path: Path, checksum: str) -> Path:
    return tmp_path / "work" / "code" / checksum


ECHO = """
def handler(event, context):
    return {"type": type(event).__name__, "event": event.decode("latin-1")}
"""


@pytest.mark.parametrize("event", [b"", b'{"a": 1}', b"\x00\xffraw"])
def test_event_is_the_exact_request_bytes(runtime, tmp_path, event):
    result = call(runtime, make_spec(tmp_path, {"index.py": ECHO}), event)
    assert result.error_type is None
    assert payload_json(result) == {"type": "bytes", "event": event.decode("latin-1")}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("return 'héllo'", "héllo".encode()),
        ("return b'\\x00\\x01'", b"\x00\x01"),
        (
            "return {'b': 1, 'a': [1, 2]}",
            b'{\n    "a": [\n        1,\n        2\n    ],\n    "b": 1\n}',
        ),
        ("return None", b"null"),
        ("return 1", b"1"),
        ("return True", b"true"),
        ("import decimal; return decimal.Decimal('1.5')", b"1.5"),
        ("import datetime; return {'d': datetime.date(2024, 1, 2)}", fc_json({"d": "2024-01-02"})),
        (
            "class X:\n        def to_json(self): return {'x': 1}\n    return [X()]",
            fc_json([{"x": 1}]),
        ),
    ],
)
def test_return_values_are_serialised_like_fc(runtime, tmp_path, source, expected):
    spec = make_spec(tmp_path, {"index.py": f"def handler(event, context):\n    {source}\n"})
    result = call(runtime, spec)
    assert result.error_type is None
    assert result.payload == expected


def test_unserialisable_return_is_a_type_error(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": "def handler(event, context):\n    return {1, 2}\n"})
    result = call(runtime, spec)
    assert result.error_type == "UnhandledInvocationError"
    assert result.payload == fc_json(
        {"errorMessage": "{1, 2} is not JSON serializable", "errorType": "TypeError"}
    )


def test_raised_exception_body_and_stack_trace(runtime, tmp_path):
    files = {
        "index.py": """
            import helper
            def handler(event, context):
                return helper.fail('something is wrong')
            """,
        "helper.py": """
            class JobError(Exception):
                pass
            def fail(message):
                raise JobError(message)
            """,
    }
    spec = make_spec(tmp_path, files)
    result = call(runtime, spec)
    root = code_root(tmp_path, spec.code_checksum)
    assert result.error_type == "UnhandledInvocationError"
    assert result.payload == fc_json(
        {
            "errorMessage": "something is wrong",
            "errorType": "JobError",
            "stackTrace": [
                [
                    f'File "{root}/index.py"',
                    "line 3",
                    "in handler",
                    "return helper.fail('something is wrong')",
                ],
                [f'File "{root}/helper.py"', "line 4", "in fail", "raise JobError(message)"],
            ],
        }
    )


@pytest.mark.parametrize(
    ("handler", "files", "error_type", "message"),
    [
        ("index", {"index.py": ECHO}, "InvalidHandleName", "Invalid handler 'index'"),
        (
            "missing.handler",
            {"index.py": ECHO},
            "ImportModuleError",
            "Unable to import module 'missing'",
        ),
        (
            "index.handler",
            {"index.py": "import no_such_library\n"},
            "ImportModuleError",
            "Unable to import module 'index'",
        ),
        (
            "index.handler",
            {"index.py": "x = 1 / 0\n"},
            "UserCodeError",
            "Module initialization error: 'division by zero'",
        ),
        (
            "index.other",
            {"index.py": ECHO},
            "HandlerNotFound",
            "Handler 'other' is missing on module 'index'",
        ),
    ],
)
def test_runtime_level_failures(runtime, tmp_path, handler, files, error_type, message):
    result = call(runtime, make_spec(tmp_path, files, handler=handler))
    assert result.error_type == "UnhandledInvocationError"
    body = payload_json(result)
    assert (body["errorType"], body["errorMessage"]) == (error_type, message)
    assert result.payload == fc_json(body)


def test_import_failures_carry_format_exception_only_stack(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": "import no_such_library\n"})
    assert payload_json(call(runtime, spec))["stackTrace"] == [
        "ModuleNotFoundError: No module named 'no_such_library'"
    ]
    spec = make_spec(tmp_path, {"index.py": "x = 1 / 0\n"})
    assert payload_json(call(runtime, spec))["stackTrace"] == [
        "ZeroDivisionError: division by zero"
    ]
    assert "stackTrace" not in payload_json(
        call(runtime, make_spec(tmp_path, {"index.py": ECHO}, handler="index"))
    )


def test_syntax_error_stack_splits_file_and_line(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": "def handler(event, context)\n    return 1\n"})
    body = payload_json(call(runtime, spec))
    root = code_root(tmp_path, spec.code_checksum)
    assert body["errorType"] == "UserCodeSyntaxError"
    assert body["errorMessage"] == "Syntax error in module 'index'"
    assert body["stackTrace"][:3] == [
        f'File "{root}/index.py"',
        "line 1",
        "def handler(event, context)",
    ]
    assert body["stackTrace"][-1].startswith("SyntaxError: ")


@pytest.mark.parametrize(
    ("handler", "path"),
    [
        ("index.handler", "index.py"),
        ("pkg.mod.handler", "pkg/mod.py"),
        ("src/main.handler", "src/main.py"),
    ],
)
def test_handler_resolution_forms(runtime, tmp_path, handler, path):
    files = {path: "def handler(event, context):\n    return __name__\n"}
    if handler.startswith("pkg."):
        files["pkg/__init__.py"] = ""
    result = call(runtime, make_spec(tmp_path, files, handler=handler))
    assert result.error_type is None
    assert result.payload == handler.rsplit(".", 1)[0].rsplit("/", 1)[-1].encode()


def test_working_directory_and_sys_path(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        import importlib.util, os, sys
        def handler(event, context):
            return {"cwd": os.getcwd(), "path0": sys.path[0],
                    "runtime_dir_hidden": not any(p.endswith("emulator/runtime") for p in sys.path),
                    "emulator_hidden": importlib.util.find_spec("deployer") is None,
                    "exit_builtin": callable(exit),
                    "data": open("data.txt").read()}
        """,
            "data.txt": "payload",
        },
    )
    root = str(code_root(tmp_path, spec.code_checksum))
    assert payload_json(call(runtime, spec)) == {
        "cwd": root,
        "path0": root,
        "runtime_dir_hidden": True,
        "emulator_hidden": True,
        "exit_builtin": True,
        "data": "payload",
    }


def test_context_fields(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        def handler(event, context):
            c = context
            return {
                "request_id": c.request_id, "requestId": c.requestId,
                "credentials": [c.credentials.access_key_id, c.credentials.accessKeySecret,
                                c.credentials.security_token],
                "function": [c.function.name, c.function.handler, c.function.memory,
                             c.function.timeout],
                "service": [c.service.name, c.service.qualifier, c.service.log_project,
                            c.service.log_store, c.service.version_id],
                "region": c.region, "account_id": c.account_id, "retry_count": c.retry_count,
                "tracing": [c.tracing.span_context, c.tracing.jaeger_endpoint,
                            c.tracing.span_baggages],
            }
        """
        },
        function_name="StartJob",
        memory_size=256,
        timeout=7,
    )
    assert payload_json(call(runtime, spec, rid="1-abc")) == {
        "request_id": "1-abc",
        "requestId": "1-abc",
        "credentials": ["", "", ""],
        "function": ["StartJob", "index.handler", 256, 7],
        "service": ["", "LATEST", "", "", "LATEST"],
        "region": REGION,
        "account_id": ACCOUNT,
        "retry_count": 0,
        "tracing": ["", "", {}],
    }


def test_environment_holds_only_function_and_fc_variables(runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "host-secret-id")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "host-secret")
    monkeypatch.setenv("HOST_ONLY_VARIABLE", "leak")
    spec = make_spec(
        tmp_path,
        {"index.py": "import os\ndef handler(event, context):\n    return dict(os.environ)\n"},
        environment={"JOB_API": "http://127.0.0.1:1", "DEBUG": "1"},
        function_name="GetJobStatus",
    )
    result = call(runtime, spec)
    env = payload_json(result)
    assert "host-secret" not in result.payload.decode()
    assert set(env) - {"LC_CTYPE"} == {
        "PATH",
        "LANG",
        "JOB_API",
        "DEBUG",
        "FC_FUNC_CODE_PATH",
        "FC_FUNCTION_NAME",
        "FC_FUNCTION_HANDLER",
        "FC_FUNCTION_MEMORY_SIZE",
        "FC_REGION",
        "FC_ACCOUNT_ID",
        "FC_INSTANCE_ID",
        "FC_QUALIFIER",
        "FC_VER_ID",
        "TMPDIR",
    }
    assert env["JOB_API"] == "http://127.0.0.1:1"
    assert env["FC_FUNCTION_NAME"] == "GetJobStatus"
    assert env["FC_FUNC_CODE_PATH"] == f"{code_root(tmp_path, spec.code_checksum)}/"
    assert env["FC_INSTANCE_ID"] == result.instance_id
    # FC's runtime deletes FC_RUNTIME / FC_TIMEOUT before user code (only its safe list stays)
    assert (env["FC_QUALIFIER"], env["FC_VER_ID"], env["TMPDIR"]) == ("LATEST", "LATEST", "/tmp")
    assert (env["FC_REGION"], env["FC_ACCOUNT_ID"], env["FC_FUNCTION_MEMORY_SIZE"]) == (
        REGION,
        ACCOUNT,
        "128",
    )


def test_result_metadata(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": ECHO})
    result = call(runtime, spec, rid="r-42")
    assert result.request_id == "r-42"
    assert result.code_checksum == spec.code_checksum
    assert result.instance_id.startswith("c-")
    assert result.duration_ms >= 0
    assert json.loads(result.payload)["type"] == "bytes"


@pytest.mark.parametrize("name", ["java11", "go1", "php7.2", "dotnetcore3.1"])
def test_runtime_without_a_local_runtime_is_refused_by_name(runtime, tmp_path, name):
    spec = make_spec(tmp_path, {"index.js": "exports.handler = () => 1"}, runtime=name)
    with pytest.raises(RuntimeNotEmulated, match=f"runtime '{re.escape(name)}' of function 'fn'"):
        call(runtime, spec)
    assert runtime.instance_count(ACCOUNT, REGION, "fn") == 0


def test_custom_container_is_refused_as_an_image_needing_a_container_engine(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": ECHO}, runtime="custom-container")
    with pytest.raises(ContainerImageNotSupported, match="needs a container engine") as caught:
        call(runtime, spec)
    assert isinstance(caught.value, RuntimeUnavailableError) and caught.value.hint
