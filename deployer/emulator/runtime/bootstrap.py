"""Worker process of one function instance: FC's python3 runtime locally, and the start of
every other family's instance.

Run by path (``python -S bootstrap.py REQUEST_FD RESPONSE_FD [CONTROL_FD]``) with the code root
as working directory. It imports only the standard library and its sibling modules
(``frames`` — the protocol below —, ``python_results``, ``context``, ``routing``,
``cloud_access``, ``own_network``, ``sandbox``, ``layer_paths``, ``custom_supervisor``; loaded
by path under private names), so user code sees no emulator modules; ``-S`` skips the host's
site-packages.
Before user code runs it enters the sandbox (``sandbox.py``), sets ``sys.path`` to the code
root, the layers' paths, the standard library and FC's built-in packages (``packages.py``),
keeps only FC's safe ``FC_*`` variables, injects the role credentials and installs the cloud
routing (``cloud_access.py`` over ``routing.py``). The config's ``family`` then decides: a
Python instance stays here; a Node.js one becomes ``node nodejs_runtime.js`` (``execve``: same
process, same sandbox); a custom runtime's starts and relays the function's own HTTP server
(``custom_supervisor.py``).

Protocol with the parent (``frames.py``), both directions: frames of ``>II`` (header length,
body length), a JSON header, then raw body bytes. The parent first sends the instance config;
the worker answers ``{"ok": true}`` when ready. Each later frame is one ``initializer``,
``invoke`` or ``pre_stop`` request answered by one frame ``{"ok": bool, "duration_ms": float}``
+ body; a request may carry renewed ``credentials``. The first request of a new instance may
carry ``cold_start`` (seconds): the instance's initialisation, spent after its module is
imported and before the handler is called (slept on the real clock; on a virtual clock the
call's ``now`` moves on by it), reported back as ``cold_start`` and left out of
``duration_ms``. EOF on the request pipe ends the process (exit 0).

Logs (fd 1 and 2, one pipe to the parent) carry FC's markers; semantics in docs/runtime.md and
reference fc3-api.md §8.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

MAX_LOG_WRITE = 128 * 1024  # FC truncates one write to the log at 128 KB
LOG_FORMAT = "%(asctime)s.%(msecs)03dZ %(fc_request_id)s [%(levelname)s] %(message)s"
ERROR_SUFFIX = ", Error: Unhandled function error"


# ---------------------------------------------------------------- framing (shared with parent)


def _sibling(name: str) -> Any:
    """Load ``<this dir>/<name>.py`` under a private module name (user code cannot import it)."""
    import importlib.util

    if f"_fc_emulator_{name}" in sys.modules:  # loaded before the sandbox hid this directory
        return sys.modules[f"_fc_emulator_{name}"]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_fc_emulator_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


if __package__:  # imported by the parent as deployer.emulator.runtime.bootstrap
    from deployer.emulator.runtime import frames
    from deployer.emulator.runtime import python_results as results
else:  # run by path in the worker
    frames = _sibling("frames")
    results = _sibling("python_results")
encode_frame, read_frame, write_all = frames.encode_frame, frames.read_frame, frames.write_all
RuntimeFailure, error_body = results.RuntimeFailure, results.error_body
handler_stack, exception_only_stack = results.handler_stack, results.exception_only_stack
serialize_result = results.serialize_result


# ---------------------------------------------------------------- logging (§8.7)


class FlushWriter(io.TextIOWrapper):
    """stdout/stderr of user code: every write goes straight to the log, capped at 128 KB."""

    def write(self, text: str) -> int:
        written = super().write(text[:MAX_LOG_WRITE])
        self.flush()
        return written


class _RequestIdFilter(logging.Filter):
    request_id = ""

    def filter(self, record: logging.LogRecord) -> bool:
        record.fc_request_id = self.request_id
        return True


def setup_logging() -> _RequestIdFilter:
    sys.stdout = FlushWriter(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace")
    sys.stderr = FlushWriter(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace")
    request_filter = _RequestIdFilter()
    formatter = logging.Formatter(LOG_FORMAT, "%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter)
    handler.addFilter(request_filter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(os.environ.get("FC_SERVER_LOG_LEVEL", "INFO").upper())
    return request_filter


def log_line(text: str) -> None:
    sys.stdout.write(text + "\n")


def _dump_and_exit(signum: int, frame: Any) -> None:
    """SIGTERM after a timeout: log the thread stacks, as FC's runtime does, and exit 143."""
    log_line("Dumping stack trace after function timeout")
    for thread_id, thread_frame in sys._current_frames().items():
        log_line(f"Thread {thread_id}:")
        sys.stdout.write("".join(traceback.format_stack(thread_frame)))
    os._exit(143)


# ---------------------------------------------------------------- the instance


@contextlib.contextmanager
def virtual_time(instant: float | None) -> Iterator[None]:
    """Make time.time(), datetime.now(), ... start at ``instant`` and tick in real time."""
    if instant is None:
        yield
        return
    with _time_machine().travel(instant, tick=True):
        yield


def _time_machine() -> Any:
    """Import time_machine without its optional pytest plugin (which would cost ~200 ms)."""
    if "time_machine" in sys.modules:
        return sys.modules["time_machine"]
    block = "pytest" not in sys.modules
    if block:
        sys.modules["pytest"] = None  # type: ignore[assignment]
    try:
        import time_machine
    finally:
        if block:
            del sys.modules["pytest"]
    return time_machine


# FC's runtime deletes every other FC_*/_FC_* variable before user code runs (§8.6)
SAFE_FC_VARIABLES = frozenset((
    "FC_FUNC_CODE_PATH", "FC_FUNCTION_MEMORY_SIZE", "FC_RUNTIME_VERSION", "FC_ACCOUNT_ID",
    "FC_FUNCTION_HANDLER", "FC_FUNCTION_NAME", "FC_SERVICE_NAME", "FC_VER_ID", "FC_QUALIFIER",
    "FC_REGION", "FC_INSTANCE_ID", "FC_SNAPSHOT_FLAG", "FC_FUNCTION_VERSION",
))
CREDENTIAL_VARIABLES = {"access_key_id": "ALIBABA_CLOUD_ACCESS_KEY_ID",
                        "access_key_secret": "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                        "security_token": "ALIBABA_CLOUD_SECURITY_TOKEN"}


HOOK_PHASES = {"initializer": "Initialize", "pre_stop": "PreStop"}  # request kind -> marker


class HandlerCall(NamedTuple):
    """One request's function: a handler string and the arguments it gets; a hook's result is
    not serialised."""

    handler: str
    args: tuple[Any, ...]
    initialize: bool


class WorkerInstance:
    def __init__(self, config: dict[str, Any], request_filter: _RequestIdFilter,
                 contexts: Any) -> None:
        self.config = config
        self.request_filter = request_filter
        self.contexts = contexts
        self.code_root = os.getcwd()
        self.functions: dict[str, Callable[..., Any]] = {}
        self.credentials: dict[str, str] | None = None
        self.use_credentials(config.get("credentials"))

    def use_credentials(self, credentials: dict[str, str] | None) -> None:
        """Take (renewed) role credentials: into the environment unless FC's
        ``disableInjectCredentials`` says ``Env``/``All``, into requests unless
        ``Request``/``All``."""
        if credentials is None:
            return
        mode = self.config.get("disable_inject_credentials", "None")
        if mode not in ("Env", "All"):
            for key, variable in CREDENTIAL_VARIABLES.items():
                os.environ[variable] = credentials.get(key, "")
        if mode not in ("Request", "All"):
            self.credentials = credentials
    def resolve(self, handler: str) -> Callable[..., Any]:
        """Handler string -> function, importing its module once per instance (§8.1)."""
        cached = self.functions.get(handler)
        if cached is not None:
            return cached
        if "." not in handler:
            raise RuntimeFailure("InvalidHandleName", f"Invalid handler '{handler}'", [])
        module_path, function_name = handler.rsplit(".", 1)
        module_name = module_path
        if "/" in module_path:
            directory, module_name = module_path.rsplit("/", 1)
            path = os.path.join(self.code_root, directory)
            if path not in sys.path:
                sys.path.insert(0, path)
        module = self._import(module_name)
        function = getattr(module, function_name, None)
        if function is None:
            raise RuntimeFailure(
                "HandlerNotFound",
                f"Handler '{function_name}' is missing on module '{module_name}'",
                [],
            )
        self.functions[handler] = function
        return function  # type: ignore[no-any-return]

    @staticmethod
    def _import(module_name: str) -> Any:
        try:
            return importlib.import_module(module_name)
        except SyntaxError as exc:
            message = f"Syntax error in module '{module_name}'"
            raise RuntimeFailure("UserCodeSyntaxError", message, exception_only_stack(exc)) from exc
        except ImportError as exc:
            message = f"Unable to import module '{module_name}'"
            raise RuntimeFailure("ImportModuleError", message, exception_only_stack(exc)) from exc
        except Exception as exc:
            message = f"Module initialization error: '{exc}'"
            raise RuntimeFailure("UserCodeError", message, exception_only_stack(exc)) from exc

    def serve(self, header: dict[str, Any], event: bytes) -> tuple[bool, bytes, float]:
        """Run one request (``invoke``, or the ``initialize``/``pre_stop`` hook); returns (ok,
        body, seconds of cold start it spent). Logs the FC markers around it."""
        request_id = header["request_id"]
        kind = header["kind"]
        phase = HOOK_PHASES.get(kind, "Invoke")
        self.request_filter.request_id = request_id
        self.use_credentials(header.get("credentials"))
        log_line(f"FC {phase} Start RequestId: {request_id}")
        context = self.contexts.make_context(self.config, request_id, self.credentials)
        if kind in HOOK_PHASES:
            call = HandlerCall(self.config[kind], (context,), initialize=True)
        else:
            call = HandlerCall(self.config["handler"], (event, context), initialize=False)
        ok, body, waited = self._call(call, header.get("now"),
                                      float(header.get("cold_start") or 0.0))
        if not ok:
            log_line(body.decode("utf-8", "replace"))
        log_line(f"FC {phase} End RequestId: {request_id}" + ("" if ok else ERROR_SUFFIX))
        return ok, body, waited

    def _call(self, call: HandlerCall, now: float | None,
              cold_start: float) -> tuple[bool, bytes, float]:
        """Import (once), spend the instance's cold start, then call. On a virtual clock
        (``now`` given) the cold start is not slept: the call sees ``now`` moved on by it."""
        begun = time.perf_counter()
        with virtual_time(now):
            try:
                function = self.resolve(call.handler)
            except RuntimeFailure as failure:
                return False, error_body(failure.error_type, failure.message, failure.stack), 0.0
        if cold_start > 0 and now is None:
            time.sleep(cold_start)
        if now is not None:
            now += cold_start + (time.perf_counter() - begun)
        with virtual_time(now):
            try:
                result = function(*call.args)
            except Exception as exc:
                body = error_body(type(exc).__name__, str(exc), handler_stack(exc))
                return False, body, cold_start
        if call.initialize:
            return True, b"", cold_start
        try:
            return True, serialize_result(result), cold_start
        except (TypeError, ValueError) as exc:  # ValueError: circular reference
            return False, error_body(type(exc).__name__, str(exc), []), cold_start


def _layer_search_paths(config: dict[str, Any]) -> dict[str, str]:
    """The layer tree's search paths for this runtime: at ``/opt`` when the sandbox mounted it
    there, else where the tree is (docs/runtime.md, "Layers")."""
    layers = config.get("layers")
    if not layers:
        return {}
    opt = layers["tree"]
    with contextlib.suppress(OSError):
        if os.path.samefile("/opt", opt):
            opt = "/opt"
    version = layers.get("python_version")
    return dict(_sibling("layer_paths").search_paths(
        opt, config.get("family", "python"), tuple(version) if version else None))


def prepare(config: dict[str, Any]) -> list[str]:
    """Everything between the config frame and the first request (see the module docstring);
    returns what the sandbox could not apply."""
    # siblings are loaded before the sandbox, which may hide this directory (the private /tmp
    # does when the emulator is installed below /tmp)
    access = None
    if config.get("cloud_endpoint") and config.get("family", "python") == "python":
        _sibling("routing")  # the SDK routing, which cloud_access builds on
        access = _sibling("cloud_access")
    _sibling("layer_paths")
    if config.get("family") == "custom":
        _sibling("custom_supervisor")
    _sibling("own_network")  # which sandbox builds on
    report = _sibling("sandbox").enter_sandbox(config.get("sandbox", {}))
    layer_paths = _layer_search_paths(config)
    stdlib = [p for p in sys.path if p and os.path.abspath(p) != os.path.dirname(
        os.path.abspath(__file__))]
    layer_python = [p for p in layer_paths.pop("python", "").split(os.pathsep) if p]
    sys.path[:] = [os.getcwd(), *layer_python, *stdlib, *config.get("packages", [])]
    for variable, value in layer_paths.items():  # /opt/bin, /opt/lib, NODE_PATH first
        os.environ[variable] = os.pathsep.join(
            p for p in (value, os.environ.get(variable, "")) if p)
    if config.get("virtual_time"):
        sys.path.extend(config.get("emulator_packages", []))
        _time_machine()
        del sys.path[len(sys.path) - len(config.get("emulator_packages", [])):]
    for name in list(os.environ):
        if name.startswith(("FC_", "_FC_")) and name not in SAFE_FC_VARIABLES:
            del os.environ[name]
    if access is not None:
        access.install_cloud_routing(
            config["cloud_endpoint"], internet_access=config.get("internet_access", True))
    return list(report)


def main(argv: list[str]) -> int:
    request_fd, response_fd = int(argv[1]), int(argv[2])
    control_fd = int(argv[3]) if len(argv) > 3 else -1  # custom runtimes: the relay socket
    import site  # run with -S (no .pth processing, fast start); keep exit()/quit()

    site.setquit()
    for fd in (request_fd, response_fd, control_fd):
        if fd >= 0:
            os.set_inheritable(fd, False)  # processes the handler starts do not get them
    request_filter = setup_logging()
    signal.signal(signal.SIGTERM, _dump_and_exit)
    first = read_frame(request_fd)
    if first is None:
        return 0
    config = first[0]
    family = config.get("family", "python")
    if family == "python":
        log_line("FunctionCompute python3 runtime inited.")
    contexts = _sibling("context") if family == "python" else None
    report = prepare(config)
    if family == "nodejs":
        return _exec_node(config, request_fd, response_fd, report)
    if family == "custom":
        supervisor = _sibling("custom_supervisor")
        return int(supervisor.run(config, request_fd, response_fd, control_fd, report))
    instance = WorkerInstance(config, request_filter, contexts)
    write_all(response_fd, encode_frame({"ok": True, "sandbox": report}))  # ready
    while True:
        frame = read_frame(request_fd)
        if frame is None:
            return 0
        started = time.perf_counter()
        ok, body, waited = instance.serve(*frame)
        elapsed = time.perf_counter() - started
        answer: dict[str, Any] = {"ok": ok, "duration_ms": max(elapsed - waited, 0.0) * 1000.0}
        if waited:
            answer["cold_start"] = waited  # not part of the invocation's duration
        write_all(response_fd, encode_frame(answer, body))


def _exec_node(config: dict[str, Any], request_fd: int, response_fd: int,
               report: list[str]) -> int:
    """Become ``node nodejs_runtime.js`` in the sandbox just entered: the instance config (with
    the sandbox report) travels in an anonymous file (a pipe may hold as little as one page
    when the user's pipe quota is spent), the request and response pipes stay open."""
    data = json.dumps({**config, "sandbox_report": report}).encode("utf-8")
    read_end = os.memfd_create("fc-instance-config")
    write_all(read_end, data)
    os.lseek(read_end, 0, os.SEEK_SET)
    for fd in (request_fd, response_fd, read_end):
        os.set_inheritable(fd, True)
    node, script = config["node"], config["node_script"]
    sys.stdout.flush()
    os.execve(node, [node, script, str(request_fd), str(response_fd), str(read_end)],
              dict(os.environ))
    return 70  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv))
