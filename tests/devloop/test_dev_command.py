"""`deploy dev` as a user runs it: a new process with real file events, against a background
emulator on a free port (real clock; the flow's Wait is shortened to 1 s through s.yaml)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from deployer.core.watching import FileWatcher, WatchRoot, is_ignored
from tests.devloop.support import free_port

DEADLINE = 60.0  # seconds any one expected line may take on a loaded machine


@pytest.fixture
def app(app: Path) -> Path:
    """The seed app with a 1 s Wait (the real clock runs here)."""
    manifest = app / "s.yaml"
    manifest.write_text(manifest.read_text().replace("wait_seconds: 10", "wait_seconds: 1"))
    return app


class Lines:
    """The process's stdout lines, read in a thread so a test can wait for one with a bound."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(proc,), daemon=True).start()

    def _pump(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.queue.put(line)
        self.queue.put(None)

    def next_event(self, event: str) -> dict:
        while True:
            line = self.queue.get(timeout=DEADLINE)
            assert line is not None, f"deploy dev ended early; stdout so far: {self.seen}"
            self.seen.append(line)
            doc = json.loads(line)
            if doc["event"] == event:
                return doc


@pytest.mark.slow
def test_deploy_dev_updates_a_saved_handler_runs_the_flow_and_leaves_all_deployed_on_ctrl_c(app):
    env = {**os.environ, "DEPLOY_EMULATOR_PORT": str(free_port()), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from deployer.cli.main import main; main()", "-C", str(app),
         "dev", "--output", "json", "--execute", '{"delay": 0}'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = Lines(proc)
        start = lines.next_event("deploy")
        first_run = lines.next_event("execution")
        handler = app / "functions" / "get_job_status" / "index.py"
        handler.write_text(handler.read_text().replace(
            '"try_count":try_count}', '"try_count":try_count, "edited": True}'))
        update = lines.next_event("update")
        second_run = lines.next_event("execution")
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert start["write_calls"] == 6 and start["error"] is None
    assert first_run["status"] == "Succeeded" and "edited" not in first_run["output"]
    assert update["trigger"] == ["functions/get_job_status/index.py"]
    assert [(r["name"], r["action"], r["changes"]) for r in update["resources"]] == [
        ("GetJobStatus", "update", ["code"])]
    assert second_run["status"] == "Succeeded" and second_run["output"]["edited"] is True
    assert proc.returncode == 0, stderr
    assert "Watching s.yaml, functions/start_job/, functions/get_job_status/, templates/" in stderr
    assert "Everything stays deployed" in stderr
    invoked = subprocess.run(
        [sys.executable, "-c", "from deployer.cli.main import main; main()", "-C", str(app),
         "invoke", "GetJobStatus", "--event", '{"job_id": "j"}', "--output", "json"],
        capture_output=True, text=True, env=env, timeout=DEADLINE)
    assert invoked.returncode == 0, invoked.stderr  # still deployed after Ctrl-C


def test_the_file_watcher_batches_a_save_and_skips_scratch_files(tmp_path):
    watched = tmp_path / "code"
    (watched / "pkg").mkdir(parents=True)
    watcher = FileWatcher(settle=0.5)
    batches: queue.Queue[frozenset[Path] | None] = queue.Queue()
    watcher.watch([WatchRoot(watched, recursive=True)])
    reader = threading.Thread(target=lambda: [batches.put(watcher.next_batch())
                                              for _ in range(2)], daemon=True)
    reader.start()
    try:
        (watched / "pkg" / "__pycache__").mkdir()
        (watched / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")
        (watched / ".index.py.swp").write_text("scratch")
        (watched / "pkg" / "mod.py").write_text("A = 1\n")
        (watched / "index.py").write_text("B = 2\n")
        batch = batches.get(timeout=DEADLINE)
    finally:
        watcher.close()
    reader.join(timeout=DEADLINE)
    assert batch == {watched / "pkg" / "mod.py", watched / "index.py"}
    assert batches.get(timeout=DEADLINE) is None  # closed


def test_scratch_and_cache_paths_are_ignored():
    assert is_ignored(Path("/p/functions/f/__pycache__/index.cpython-311.pyc"))
    assert is_ignored(Path("/p/functions/f/.index.py.swp"))
    assert is_ignored(Path("/p/functions/f/index.py~"))
    assert is_ignored(Path("/p/.deploy/build/StartJob.zip"))
    assert not is_ignored(Path("/p/functions/f/index.py"))
