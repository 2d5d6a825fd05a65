"""The Node.js runtimes (nodejs12-20) run by the process runtime on this machine's node, in the
sandbox: handler forms, event and context, results and errors, logs, hooks, time, limits."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Iterator

import pytest
from runtime_support import ACCOUNT, REGION, call, make_spec, payload_json

from deployer.emulator.clock import SystemClock, VirtualClock
from deployer.emulator.runtime import ProcessRuntime, RuntimeNotEmulated

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessRuntime]:
    rt = ProcessRuntime(tmp_path_factory.mktemp("node") / "work", SystemClock())
    yield rt
    rt.close()


FORMS = """
let calls = 0;
exports.asyncForm = async (event, context) => ({ kind: 'async', event: event.toString(),
  isBuffer: Buffer.isBuffer(event), calls: ++calls });
exports.callbackForm = (event, context, callback) => {
  setTimeout(() => callback(null, { kind: 'callback', length: event.length }), 5);
};
exports.asyncWithCallback = async function (event, context, callback) {
  callback(null, 'hello world');
};
exports.text = async () => 'plain text';
exports.bytes = async () => Buffer.from([0, 1, 2, 255]);
exports.nothing = async () => undefined;
exports.nil = (event, context, callback) => callback(null, null);
"""


@pytest.mark.parametrize(("handler", "expected"), [
    ("index.asyncForm", {"kind": "async", "event": '{"k":"v"}', "isBuffer": True, "calls": 1}),
    ("index.callbackForm", {"kind": "callback", "length": 9}),
])
def test_async_and_callback_handlers_answer_json(runtime, tmp_path, handler, expected):
    spec = make_spec(tmp_path, {"index.js": FORMS}, runtime="nodejs20", handler=handler)
    result = call(runtime, spec, b'{"k":"v"}')
    assert result.error_type is None, result.payload
    assert payload_json(result) == expected


@pytest.mark.parametrize(("handler", "payload"), [
    ("index.asyncWithCallback", b"hello world"),  # Node.js 16's documented form
    ("index.text", b"plain text"),
    ("index.bytes", b"\x00\x01\x02\xff"),
    ("index.nothing", b""),
    ("index.nil", b"null"),
])
def test_strings_and_buffers_are_sent_as_they_are(runtime, tmp_path, handler, payload):
    spec = make_spec(tmp_path, {"index.js": FORMS}, runtime="nodejs16", handler=handler)
    result = call(runtime, spec)
    assert (result.error_type, result.payload) == (None, payload)


def test_warm_instance_keeps_module_state(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": FORMS}, runtime="nodejs20", handler="index.asyncForm")
    results = [call(runtime, spec, rid=f"r{i}") for i in range(3)]
    assert [payload_json(r)["calls"] for r in results] == [1, 2, 3]
    assert [r.cold_start for r in results] == [True, False, False]


def test_es_module_handlers_from_nodejs18(runtime, tmp_path):
    esm = {"index.mjs": "export const handler = async (event) => `esm:${event}`;\n"}
    spec = make_spec(tmp_path, esm, runtime="nodejs18")
    assert call(runtime, spec, b"x").payload == b"esm:x"
    typed = {"package.json": '{"type": "module"}',
             "index.js": "export const handler = async () => 'typed module';\n"}
    assert call(runtime, make_spec(tmp_path, typed, runtime="nodejs20")).payload \
        == b"typed module"
    old = call(runtime, make_spec(tmp_path, esm, runtime="nodejs16"))
    assert old.error_type == "UnhandledInvocationError"
    assert json.loads(old.payload)["errorType"] == "ImportModuleError"


ERRORS = """
class QuotaError extends Error { constructor(m) { super(m); this.name = 'QuotaError'; } }
exports.thrown = async () => { throw new QuotaError('over quota'); };
exports.callbackError = (event, context, callback) => callback(new TypeError('bad type'));
exports.callbackString = (event, context, callback) => callback('something is wrong');
exports.rejected = () => Promise.reject({ code: 42 });
exports.circular = async () => { const a = {}; a.self = a; return a; };
exports.later = (event, context, callback) => {
  setTimeout(() => { throw new RangeError('late'); }, 1);
};
exports.exit = () => process.exit(3);
"""


@pytest.mark.parametrize(("handler", "message", "error_type"), [
    ("index.thrown", "over quota", "QuotaError"),
    ("index.callbackError", "bad type", "TypeError"),
    ("index.circular", None, "TypeError"),
    ("index.later", "late", "RangeError"),
])
def test_errors_are_function_errors_with_message_type_and_stack(runtime, tmp_path, handler,
                                                                message, error_type):
    spec = make_spec(tmp_path, {"index.js": ERRORS}, runtime="nodejs20", handler=handler)
    result = call(runtime, spec, rid="e-1")
    assert result.error_type == "UnhandledInvocationError"
    body = json.loads(result.payload)
    assert body["errorType"] == error_type
    if message is not None:
        assert body["errorMessage"] == message
    assert body["stackTrace"][0].startswith(f"{error_type}: ")
    assert not any("nodejs_runtime.js" in line for line in body["stackTrace"])
    assert result.log_text.endswith(
        "FC Invoke End RequestId: e-1, Error: Unhandled function error\n")
    assert result.payload.decode() in result.log_text  # the error body is logged


def test_values_that_are_not_errors_become_the_message(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": ERRORS}, runtime="nodejs20")
    as_string = call(runtime, dataclasses.replace(spec, handler="index.callbackString"))
    assert json.loads(as_string.payload) == {"errorMessage": "something is wrong"}
    rejected = call(runtime, dataclasses.replace(spec, handler="index.rejected"))
    assert json.loads(rejected.payload) == {"errorMessage": '{"code":42}'}


def test_an_uncaught_exception_discards_the_instance(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": ERRORS}, runtime="nodejs20", handler="index.later")
    first = call(runtime, spec)
    assert first.error_type == "UnhandledInvocationError"
    assert call(runtime, spec).cold_start


def test_process_exit_is_a_crash(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": ERRORS}, runtime="nodejs20", handler="index.exit")
    result = call(runtime, spec)
    assert result.error_type == "UnhandledInvocationError"
    assert re.match(rb'^\{"errorMessage": "Process exited unexpectedly before completing '
                    rb'request \(duration: \d+ms, maxMemoryUsage: \d+\.\d\dMB\)"\}$',
                    result.payload)


def test_missing_handler_and_bad_handler_names(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": ERRORS}, runtime="nodejs20")
    missing = json.loads(call(runtime, dataclasses.replace(spec, handler="index.nope")).payload)
    assert missing["errorType"] == "HandlerNotFound"
    assert missing["errorMessage"] == "Handler 'nope' is missing on module 'index'"
    no_file = json.loads(call(runtime, dataclasses.replace(spec, handler="other.x")).payload)
    assert no_file["errorType"] == "ImportModuleError"
    syntax = make_spec(tmp_path, {"index.js": "exports.handler = async () => {\n"},
                       runtime="nodejs20")
    assert json.loads(call(runtime, syntax).payload)["errorType"] == "SyntaxError"


CONTEXT = """
exports.handler = async (event, context) => ({
  keys: Object.keys(context).sort(), requestId: context.requestId,
  fn: context.function, service: context.service, region: context.region,
  accountId: context.accountId, credentials: context.credentials,
  env: Object.keys(process.env).filter((k) => k.startsWith('FC_')).sort(),
  mine: process.env.MINE, cwd: process.cwd() === process.env.FC_FUNC_CODE_PATH.slice(0, -1),
});
"""


def test_context_and_environment(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": CONTEXT}, runtime="nodejs20", memory_size=256,
                     timeout=7, environment={"MINE": "yes"})
    body = payload_json(call(runtime, spec, rid="ctx-1"))
    assert body["keys"] == ["accountId", "credentials", "function", "logger", "region",
                            "requestId", "retryCount", "service", "tracing"]
    assert body["requestId"] == "ctx-1"
    assert body["fn"] == {"name": "fn", "handler": "index.handler", "memory": 256, "timeout": 7,
                          "initializer": "", "initializationTimeout": 0}
    assert body["service"] == {"name": "", "logProject": "", "logStore": "",
                               "qualifier": "LATEST", "versionId": "LATEST"}
    assert (body["region"], body["accountId"]) == (REGION, ACCOUNT)
    assert body["credentials"] == {"accessKeyId": "", "accessKeySecret": "",
                                   "securityToken": ""}
    assert "FC_RUNTIME" not in body["env"] and "FC_TIMEOUT" not in body["env"]
    assert {"FC_FUNCTION_NAME", "FC_FUNC_CODE_PATH", "FC_INSTANCE_ID", "FC_REGION"} \
        <= set(body["env"])
    assert body["mine"] == "yes" and body["cwd"] is True


LOGS = """
exports.handler = async (event, context) => {
  console.log('log %s', 'formatted', { a: 1 });
  console.info('info');
  console.debug('debug');
  console.warn('warn');
  console.error('error');
  context.logger.info('from the logger');
  process.stdout.write('raw\\n');
  return 'ok';
};
"""
MODERN = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (\S+) \[(\w+)\] (.*)$")
OLD = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\S+) \[(\w+)\] (.*)$")


def test_console_lines_carry_time_request_id_and_level(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": LOGS}, runtime="nodejs20")
    lines = call(runtime, spec, rid="log-1").log_text.splitlines()
    assert lines[0] == "FC Invoke Start RequestId: log-1"
    assert lines[-1] == "FC Invoke End RequestId: log-1"
    parsed = [MODERN.match(line).groups() for line in lines[1:7]]
    assert parsed == [("log-1", "info", "log formatted { a: 1 }"), ("log-1", "info", "info"),
                      ("log-1", "debug", "debug"), ("log-1", "warn", "warn"),
                      ("log-1", "error", "error"), ("log-1", "info", "from the logger")]
    assert lines[7] == "raw"


def test_log_level_variable_and_older_runtimes_format(runtime, tmp_path):
    quiet = make_spec(tmp_path, {"index.js": LOGS}, runtime="nodejs18",
                      environment={"ALIYUN_FC_LOG_LEVEL": "warn"})
    levels = [MODERN.match(line).group(2) for line in call(runtime, quiet).log_text.splitlines()
              if MODERN.match(line)]
    assert levels == ["warn", "error"]
    old = make_spec(tmp_path, {"index.js": LOGS}, runtime="nodejs14",
                    environment={"ALIYUN_FC_LOG_LEVEL": "warn"})  # 18+ only
    levels = [OLD.match(line).group(2) for line in call(runtime, old).log_text.splitlines()
              if OLD.match(line)]
    assert levels == ["silly", "info", "debug", "warn", "error", "info"]


HOOKS = """
let initialized = 0;
exports.initialize = (context, callback) => {
  initialized += 1;
  console.log('initializing', context.requestId);
  callback(null, 'ignored');
};
exports.failingInit = async () => { throw new Error('no database'); };
exports.handler = async () => ({ initialized });
"""


def test_initializer_runs_once_per_instance(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": HOOKS}, runtime="nodejs20",
                     initializer_handler="index.initialize", initializer_timeout=5)
    first = call(runtime, spec, rid="i-1")
    assert payload_json(first) == {"initialized": 1}
    assert "FC Initialize Start RequestId: i-1" in first.log_text
    assert "FC Initialize" not in first.log_tail.decode()  # hook logs are not the request's
    assert payload_json(call(runtime, spec, rid="i-2")) == {"initialized": 1}


def test_failing_initializer_is_an_initialization_error(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": HOOKS}, runtime="nodejs20",
                     initializer_handler="index.failingInit")
    result = call(runtime, spec, rid="f-1")
    assert result.error_type == "InitializationError"
    assert json.loads(result.payload)["errorMessage"] == "no database"
    assert "FC Initialize End RequestId: f-1, Error: Unhandled function error" \
        in result.log_tail.decode()
    assert call(runtime, spec).cold_start  # the instance was discarded


def test_timeout_stops_the_instance(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.js": "exports.handler = () => new Promise(() => {});\n"},
                     runtime="nodejs20", timeout=1)
    result = call(runtime, spec, rid="t-1")
    assert result.payload == b'{"errorMessage": "Function timed out after 1 seconds"}'
    assert result.log_text.endswith(
        "FC Invoke End RequestId: t-1, Error: Unhandled function error\n")
    assert call(runtime, spec).cold_start


def test_memory_size_is_enforced(runtime, tmp_path):
    hog = "exports.handler = async () => { const a = []; " \
          "for (;;) a.push(Buffer.alloc(1 << 20, 1)); };\n"
    result = call(runtime, make_spec(tmp_path, {"index.js": hog}, runtime="nodejs20",
                                     memory_size=128, timeout=20))
    assert result.error_type == "UnhandledInvocationError"
    assert b"Process exited unexpectedly" in result.payload
    assert result.max_memory_mb is not None and result.max_memory_mb >= 128


def test_the_sandbox_hides_the_emulator_state(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "identity.json").write_text("secret")
    probe = f"""
    const fs = require('fs');
    exports.handler = async () => {{
      try {{ return fs.readFileSync({json.dumps(str(state / 'identity.json'))}, 'utf8'); }}
      catch (err) {{ return err.code; }}
    }};
    """
    rt = ProcessRuntime(state / "runtime", SystemClock(), private_dirs=[state])
    try:
        result = call(rt, make_spec(tmp_path, {"index.js": probe}, runtime="nodejs20"))
    finally:
        rt.close()
    assert result.payload in (b"EACCES", b"EPERM", b"ENOENT")


def test_virtual_time_is_what_handlers_see(tmp_path):
    clock = VirtualClock(1_700_000_000)
    rt = ProcessRuntime(tmp_path / "work", clock, sandbox=False, cold_start=5.0)
    code = {"index.js": "const loaded = Date.now();\n"
                        "exports.handler = async () => ({ loaded, now: Date.now(),"
                        " iso: new Date().toISOString(), same: new Date() instanceof Date });\n"}
    try:
        body = payload_json(call(rt, make_spec(tmp_path, code, runtime="nodejs20")))
    finally:
        rt.close()
    assert abs(body["loaded"] - 1_700_000_000_000) < 2_000  # module loaded at the virtual now
    assert body["now"] - body["loaded"] >= 5_000  # the cold start, spent on the virtual clock
    assert body["iso"].startswith("2023-11-14T22:13:2") and body["same"] is True
    assert clock.now() >= 1_700_000_005


def test_a_runtime_newer_than_the_local_node_is_refused(tmp_path):
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\necho v16.20.0\n")
    fake.chmod(0o755)
    rt = ProcessRuntime(tmp_path / "work", SystemClock(), node=str(fake))
    try:
        with pytest.raises(RuntimeNotEmulated, match=re.escape(
                "needs Node.js 18 or later; this machine has v16.20.0")):
            call(rt, make_spec(tmp_path, {"index.js": FORMS}, runtime="nodejs18"))
    finally:
        rt.close()
