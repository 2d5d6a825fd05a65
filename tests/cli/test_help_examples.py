"""Every example in every `--help` works: each one runs against the emulator.

Commands are discovered from the root group at collection time, so a command added anywhere
is covered as soon as it is registered. Each command's examples run in order, like lines typed
into one shell session, in a fresh copy of the project: inside mock_cloud() (the local target
and `--target aliyun` both reach that in-process cloud), with the app deployed and one
execution run first (done once per module; each test gets a copy of the project and of that
cloud's state directory). `deploy emulator` and `deploy dev` manage or watch background processes,
which mock_cloud() refuses, so they run as real processes against a background emulator
(virtual clock, a free port), started before the first of them (a command whose examples run
none starts no process). That emulator is shared by the tests of this module (a daemon's
start-up is about 1.5 s of CPU; the `dev` examples get a fresh one, see the test): each
project's `.deploy/emulator` is a link to its state
directory, and after each test it is reset (resources, faults, mocks, throttling, the virtual
clock back to now), or stopped when the test's examples restarted it (the next test starts a
fresh one). The files examples name (`mocks.yaml`, `event.json`, `input.json`, `flow.yaml`,
`legacy.yaml`: a flow in the legacy dialect) exist in the project; the mock file is the sample
printed by `deploy flow test --help`.

An example line is what a user would paste: `a && b` runs both, `| jq ...` pipes stdout into
jq (or, where jq is missing, checks it is JSON), `> FILE` writes stdout to FILE, `eval
"$(...)"` runs the inner command, `cd DIR` and `mkdir DIR` act on the session's directory and
`pytest -q` runs the tests of the directory it is in. Each must exit 0, or with the code its
description names (`exit 5`). Three cannot end by themselves and are driven the way a user
ends them: `--follow` (Ctrl-C at its first wait: exit 130), `deploy dev` (Ctrl-C once it
watches: exit 0) and `emulator start --foreground` (on a free port and a scratch state
directory, Ctrl-C once it listens: exit 0). Paths under /tmp/ and ~/ are moved into the
test's directory.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.core.emulator_faults import set_throttle
from deployer.core.emulator_mocks import clear_mocks
from deployer.emulator import daemon
from deployer.testing import mock_cloud

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[tuple[str, ...]]:
    ctx = click.Context(cli)
    found: list[tuple[str, ...]] = [()]

    def walk(group: click.Group, path: tuple[str, ...]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None:
                continue
            found.append((*path, name))
            if isinstance(command, click.Group):
                walk(command, (*path, name))

    walk(cli, ())
    return found


@functools.cache  # rendered once per command: at collection, then read by the tests
def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    return result.stdout


def _examples(path: tuple[str, ...]) -> list[tuple[str, int]]:
    """The example command lines of a command's help (the description after 2+ spaces cut)
    and the exit code each should give (0, or what its description says: ``exit 5``)."""
    examples = []
    for line in _help(path).splitlines():
        text = line.strip()
        if not text.startswith(("deploy ", "eval ")):
            continue
        command, *description = _outside_quotes(text, "  ")
        code = re.search(r"\bexit (\d+)\b", " ".join(description))
        examples.append((command.strip(), int(code[1]) if code else 0))
    return examples


def _outside_quotes(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` that is not inside single or double quotes."""
    parts, current, quote, i = [], "", "", 0
    while i < len(text):
        char = text[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif text.startswith(separator, i):
            parts.append(current)
            current, i = "", i + len(separator)
            continue
        current += char
        i += 1
    return [*parts, current]


COMMANDS = [path for path in _commands() if _examples(path)]


def test_every_command_has_examples() -> None:
    leaves = [p for p in _commands() if (p and not isinstance(
        cli.get_command(click.Context(cli), p[0]), click.Group)) or len(p) > 1]
    missing = [" ".join(p) for p in leaves if not _examples(p)]
    assert missing == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _mock_sample() -> str:
    lines = _help(("flow", "test")).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "TestCases:")
    end = next(i for i, line in enumerate(lines) if "Entries are keyed" in line)
    lines = [line for line in lines[start:end] if line.strip() and "\b" not in line]
    indent = len(lines[0]) - len(lines[0].lstrip())
    return "\n".join(line[indent:] for line in lines) + "\n"


BACKGROUND = {"emulator", "dev"}  # commands run as real processes, outside mock_cloud()


class Background:
    """The background emulator of this module's tests: one state directory and port; the
    daemon is started when a test first needs it and kept for the next test while it is the
    one started here."""

    def __init__(self, state_dir: Path, port: int) -> None:
        self.state_dir, self.port = state_dir, port
        self.pid: int | None = None  # the daemon started here, while it may be reused

    def ensure(self, *, fresh: bool = False) -> None:
        """The daemon running; ``fresh``: one no earlier test has used."""
        current = daemon.status(self.state_dir)
        if current.running and current.pid == self.pid and not fresh:
            return
        if current.running:
            daemon.stop(self.state_dir)
        self.pid = daemon.start_daemon(self.state_dir, port=self.port, clock="virtual").pid

    def release(self) -> None:
        """After a test: the daemon started here is reset for the next test (resources, faults,
        mocks, throttling, the virtual clock); one the test's
        examples started instead (`stop && start --mocks ...`) is stopped."""
        current = daemon.status(self.state_dir)
        if current.running and current.pid == self.pid:
            daemon.reset(self.state_dir)
            clear_mocks(self.state_dir)  # configuration: a reset keeps them
            set_throttle(self.state_dir, "off")  # as started
            return
        self.pid = None
        if current.running:
            daemon.stop(self.state_dir)


@pytest.fixture(scope="module")
def background(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Background]:
    shared = Background(tmp_path_factory.mktemp("background") / "emulator", _free_port())
    try:
        yield shared
    finally:
        if daemon.status(shared.state_dir).running:
            daemon.stop(shared.state_dir)


class Shell:
    """Runs example lines like one shell session: `deploy` in-process (Click's runner), or as
    a process for :data:`BACKGROUND` commands; jq and pytest as processes."""

    def __init__(self, project: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch,
                 shared: Background) -> None:
        self.project, self.tmp, self.monkeypatch = project, tmp, monkeypatch
        self.cwd = project
        self.shared = shared
        self.used = False  # whether an example reached the background emulator
        self.fresh = False  # whether its examples get a daemon no earlier test used

    def background(self) -> None:
        """The background emulator the :data:`BACKGROUND` commands reach, running before the
        first of them (then the examples own it: `stop` stops it): the project's
        `.deploy/emulator` is the shared state directory."""
        if not self.used:
            self.used = True
            link = self.project / ".deploy" / "emulator"
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(self.shared.state_dir, target_is_directory=True)
            self.shared.ensure(fresh=self.fresh)

    def close(self) -> None:
        if self.used:
            self.shared.release()

    def deploy(self, args: list[str], expect: int = 0) -> str:
        result = CliRunner().invoke(cli, ["-C", str(self.cwd), *args], input="y\n",
                                    catch_exceptions=False)
        assert result.exit_code == expect, (args, result.stdout, result.stderr)
        return result.stdout

    def run(self, line: str, expect: int = 0) -> None:
        for part in _outside_quotes(line, "&&"):
            self._pipeline(part.strip(), expect)

    def _path(self, text: str) -> Path:
        text = text.replace("/tmp/", f"{self.tmp}/").replace("~/", f"{self.tmp}/home/")
        return self.cwd / text

    def _pipeline(self, text: str, expect: int) -> None:
        stages = [shlex.split(stage) for stage in _outside_quotes(text, "|")]
        first, redirect = stages[0], None
        if ">" in first:
            at = first.index(">")
            first, redirect = first[:at], self._path(first[at + 1])
        if first[0] == "cd":
            self.cwd = self._path(first[1]).resolve()
            return
        if first[0] == "mkdir":
            self._path(first[-1]).mkdir(parents=True, exist_ok=True)
            return
        if first[0] == "pytest":
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                                   *first[1:]], cwd=self.cwd, capture_output=True, text=True,
                                  check=False, timeout=300)
            assert done.returncode == expect, (self.cwd, done.stdout[-3000:], done.stderr)
            return
        if first[0] == "eval":  # the inner command prints shell code: variables, completion
            inner = re.fullmatch(r"\$\((.*)\)", first[1])
            assert inner, text
            code = self._deploy(shlex.split(inner[1])[1:], 0)
            assert code.strip() and "Error" not in code, code
            return
        args = [a.replace("/tmp/", f"{self.tmp}/") for a in first[1:]]
        if "--foreground" in args:
            return self._foreground(args)
        if "--follow" in args or "-f" in args:
            def ctrl_c(seconds: float) -> None:
                raise KeyboardInterrupt

            self.monkeypatch.setattr("deployer.core.functions._sleep", ctrl_c)
            self.monkeypatch.setattr("deployer.core.functions._receive",  # a log stream
                                     lambda stream: ctrl_c(0))
            out = self.deploy(args, expect=130)
        else:
            out = self._deploy(args, expect)
        if redirect is not None:
            redirect.parent.mkdir(parents=True, exist_ok=True)
            redirect.write_text(out)
            out = ""
        for stage in stages[1:]:
            assert stage[0] == "jq"
            if shutil.which("jq") is None:
                for line in out.splitlines():  # one document, or JSON Lines
                    json.loads(line)
                continue
            done = subprocess.run(stage, input=out, capture_output=True, text=True,
                                  check=False)
            assert done.returncode == 0, (stage, out, done.stderr)
            out = done.stdout

    def _deploy(self, args: list[str], expect: int) -> str:
        if args and args[0] in BACKGROUND:
            self.background()
            return self._process(args, expect)
        return self.deploy(args, expect)

    def _command(self, args: list[str]) -> list[str]:
        return [sys.executable, "-c", "from deployer.cli.main import main; main()", "-C",
                str(self.cwd), *args]

    def _process(self, args: list[str], expect: int) -> str:
        """A `deploy` process outside the in-process mock; `deploy dev` gets Ctrl-C once it
        watches (it never ends by itself)."""
        if args[0] != "dev":
            done = subprocess.run(self._command(args), input="y\n", capture_output=True,
                                  text=True, check=False, timeout=120)
            assert done.returncode == expect, (args, done.stdout, done.stderr)
            return done.stdout
        # faulthandler: a process that does not end after Ctrl-C is sent SIGABRT, which makes
        # it print every thread's stack — the failure then says where it was stuck
        proc = subprocess.Popen(self._command(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONFAULTHANDLER": "1"})
        try:
            assert proc.stderr is not None
            seen = []
            for line in proc.stderr:  # blocks until it watches (or ends)
                seen.append(line)
                if line.startswith("Watching "):
                    break
            proc.send_signal(signal.SIGINT)
            try:
                out, _ = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)
                _, stacks = proc.communicate(timeout=30)
                pytest.fail(f"{args} still running 60 s after Ctrl-C:\n{''.join(seen)}{stacks}")
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == expect, (args, "".join(seen))
        return out

    def _foreground(self, args: list[str]) -> None:
        self.background()
        scratch = self.tmp / "foreground"
        command = [*self._command(args), "--port", str(_free_port()), "--state-dir",
                   str(scratch)]
        proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            for line in proc.stderr:  # blocks until it says it listens
                if "listening on" in line:
                    break
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


CLEAN_ENV = ("DEPLOY_OUTPUT", "DEPLOY_TARGET", "ALIBABA_CLOUD_ACCOUNT_ID")


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The project, rendered, deployed to both targets with one execution each, and the
    state directory of the in-process cloud that holds it (stopped): each test copies both."""
    root = tmp_path_factory.mktemp("deployed")
    project, state = root / "app", root / "cloud"
    project.mkdir()
    shutil.copy(ROOT / "s.yaml", project / "s.yaml")
    shutil.copytree(ROOT / "functions", project / "functions")
    shutil.copytree(ROOT / "templates", project / "templates")
    (project / "mocks.yaml").write_text(_mock_sample())
    (project / "event.json").write_text('{"job_id": "j-1", "delay": 5}\n')
    (project / "input.json").write_text('{"delay": 20}\n')
    shutil.copy(ROOT / "tests" / "fixtures" / "flows" / "legacy" / "approval.yaml",
                project / "legacy.yaml")
    with pytest.MonkeyPatch.context() as env:
        for name in CLEAN_ENV:
            env.delenv(name, raising=False)
        with mock_cloud(state_dir=state):
            for args in (["render", "-o", "flow.yaml"],
                         *([*command, "--target", target]
                           for target in ("local", "aliyun")
                           for command in (["up", "--yes"], ["execute", "--delay", "5"]))):
                result = CliRunner().invoke(cli, ["-C", str(project), *args],
                                            catch_exceptions=False)
                assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return project, state


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, background: Background,
          deployed: tuple[Path, Path]):
    project, state = tmp_path / "app", tmp_path / "cloud"
    shutil.copytree(deployed[0], project, symlinks=True)
    shutil.copytree(deployed[1], state, symlinks=True)
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(background.port))
    for name in CLEAN_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SHELL", "/bin/bash")  # as an interactive session has it (CI has none)
    sh = Shell(project, tmp_path, monkeypatch, background)
    try:  # the cloud-like latency model `deploy emulator start` runs with by default
        # (docs/runtime.md): the seed's `deploy execute` (delay 30) ends as on the cloud
        with mock_cloud(state_dir=state, cold_start=1.0, step_latency=0.1):
            yield sh
    finally:
        sh.close()


@pytest.mark.slow
@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "deploy")
def test_help_examples_work(shell: Shell, path: tuple[str, ...]) -> None:
    # `deploy dev --execute` runs the flow after every update and must end on Ctrl-C: on a
    # daemon earlier tests had used and reset, a full-suite run once saw it still running 60 s
    # after Ctrl-C; its examples keep a daemon of their own, as before the sharing
    shell.fresh = path == ("dev",)
    for example, code in _examples(path):
        shell.run(example, code)
