"""The `deploy dev` loop (deployer.core.dev) on the in-process emulator, driven by a scripted change
source instead of file events: each step edits files and reports them, as a watcher would."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from deployer.cli.context import AppContext
from deployer.cli.options import TargetOptions
from deployer.config.settings import Target
from deployer.core.dev import DevSession, DevTarget, DevUpdate, run_dev_loop
from deployer.core.watching import FileWatcher, WatchRoot
from deployer.testing import mock_cloud


class ScriptedChanges:
    """A ChangeSource whose batches come from ``steps`` (each edits files, returns their paths)."""

    def __init__(self, steps: Sequence[Callable[[], list[Path]]]) -> None:
        self.steps = list(steps)
        self.watched: list[list[WatchRoot]] = []

    def watch(self, roots: Sequence[WatchRoot]) -> None:
        self.watched.append(list(roots))

    def next_batch(self) -> frozenset[Path] | None:
        return frozenset(self.steps.pop(0)()) if self.steps else None

    def close(self) -> None:
        self.steps = []


@pytest.fixture
def app(app: Path) -> Path:
    """The seed app, StartJob answering a version number the tests change."""
    handler = app / "functions" / "start_job" / "index.py"
    handler.write_text(handler.read_text().replace('return {"job_id": str(id)}',
                                                   'return {"job_id": str(id), "v": 1}'))
    return app


def _edit(path: Path, old: str, new: str) -> Callable[[], list[Path]]:
    def step() -> list[Path]:
        text = path.read_text()
        assert old in text, (old, path)
        path.write_text(text.replace(old, new))
        return [path]
    return step


def _run(app: Path, steps: Sequence[Callable[[], list[Path]]], cloud,
         ) -> tuple[list[DevUpdate], ScriptedChanges, AppContext]:
    context = AppContext(project_dir=app, manifest_file=app / "s.yaml")
    session = context.cloud(TargetOptions(Target.LOCAL, "cn-hangzhou", None, None))
    target = DevTarget(session.clients, "cn-hangzhou", session.account_id, "local",
                       context.deploy_dir)
    updates: list[DevUpdate] = []
    changes = ScriptedChanges(steps)
    run_dev_loop(DevSession(app / "s.yaml", target), changes, updates.append)
    return updates, changes, context


def _invoke(cloud, name: str) -> dict:
    from alibabacloud_fc20230330 import models

    response = cloud.fc_client().invoke_function(name, models.InvokeFunctionRequest(body=b"{}"))
    return json.loads(response.body.read())


def _written(update: DevUpdate) -> list[tuple[str, str, str]]:
    return [(r.resource.value, r.name, r.action.value) for r in update.written]


def _definition(cloud) -> str:
    from alibabacloud_fnf20190315 import models

    return cloud.fnf_client().describe_flow(
        models.DescribeFlowRequest(name="MyWorkFlow")).body.definition


def test_a_saved_handler_updates_only_its_function_and_new_instances_run_it(app):
    handler = app / "functions" / "start_job" / "index.py"
    with mock_cloud() as cloud:
        before = {}

        def warm_then_edit() -> list[Path]:
            before.update(_invoke(cloud, "StartJob"))  # a warm instance with the old code
            return _edit(handler, '"v": 1', '"v": 2')()

        updates, _, _ = _run(app, [warm_then_edit], cloud)
        after = _invoke(cloud, "StartJob")
    start, update = updates
    assert start.kind == "deploy" and start.write_calls == 6
    assert update.kind == "update" and update.trigger == ("functions/start_job/index.py",)
    assert _written(update) == [("function", "StartJob", "update")]
    assert update.written[0].changes == ("code",) and update.write_calls == 1
    assert before["v"] == 1 and after["v"] == 2


def test_a_saved_template_updates_only_the_flow(app):
    template = app / "templates" / "flow.yaml.j2"
    with mock_cloud() as cloud:
        updates, _, _ = _run(app, [_edit(template, "Code: timeout", "Code: gave_up")], cloud)
        definition = _definition(cloud)
    assert _written(updates[1]) == [("flow", "MyWorkFlow", "update")]
    assert updates[1].write_calls == 1
    assert "Code: gave_up" in definition


def test_broken_edits_deploy_nothing_and_the_last_good_deployment_keeps_running(app):
    handler = app / "functions" / "start_job" / "index.py"
    template = app / "templates" / "flow.yaml.j2"
    with mock_cloud() as cloud:
        seen: list[dict] = []
        steps = [
            _edit(handler, '"v": 1}', '"v": 2'),  # a syntax error
            lambda: (seen.append(_invoke(cloud, "StartJob")), [])[1] or [handler],
            _edit(template, "Next: GetJobStatus", "Next: GetJobStatuz"),  # an unknown state
            lambda: (seen.append({"definition": _definition(cloud)}), [])[1] or [template],
            _edit(template, "Next: GetJobStatuz", "Next: GetJobStatus"),
            _edit(handler, '"v": 2', '"v": 3}'),
        ]
        updates, _, _ = _run(app, steps, cloud)
        fixed = _invoke(cloud, "StartJob")
    kinds = [u.kind for u in updates]
    assert kinds == ["deploy", "error", "error", "error", "error", "unchanged", "update"]
    syntax = updates[1]
    assert syntax.error.startswith("functions/start_job/index.py:")
    assert "(function StartJob)" in syntax.error and syntax.write_calls == 0
    flow = updates[3]
    assert "flow MyWorkFlow is invalid" in flow.error
    assert any("GetJobStatuz" in line for line in flow.details)
    # the flow was checked against the whole project: its functions are defined in s.yaml
    assert not any("PRJ002" in line for line in flow.details), flow.details
    assert seen[0]["v"] == 1  # still the last good code
    assert "Next: GetJobStatus\n" in seen[1]["definition"]
    assert fixed["v"] == 3


def test_an_edited_manifest_redeploys_and_watches_what_it_adds(app):
    manifest = app / "s.yaml"
    extra = app / "functions" / "extra"

    def add_function() -> list[Path]:
        extra.mkdir()
        (extra / "index.py").write_text("def handler(event, context):\n    return 'extra'\n")
        text = manifest.read_text().replace("  job_flow:\n", (
            "  extra:\n    component: fc3\n    props:\n      region: ${vars.region}\n"
            "      functionName: Extra\n      runtime: python3.10\n      code: ./functions/extra\n"
            "      handler: index.handler\n\n  job_flow:\n"))
        manifest.write_text(text)
        return [manifest]

    with mock_cloud() as cloud:
        updates, changes, _ = _run(
            app, [add_function, _edit(extra / "index.py", "'extra'", "'extra 2'")], cloud)
        answer = cloud.fc_client().invoke_function("Extra", _request()).body.read()
    assert updates[1].kind == "deploy"
    assert ("function", "Extra", "create") in _written(updates[1])
    # the flow does not invoke Extra: its role's policy (exactly what the flow invokes) stays
    assert _written(updates[1]) == [("function", "Extra", "create")]
    assert _written(updates[2]) == [("function", "Extra", "update")]
    assert WatchRoot(extra, recursive=True) in changes.watched[-1]
    assert answer == b"extra 2"


def _request():
    from alibabacloud_fc20230330 import models

    return models.InvokeFunctionRequest(body=b"{}")


def test_files_outside_the_project_resources_are_ignored(app):
    readme = app / "README.md"
    with mock_cloud() as cloud:
        updates, changes, context = _run(
            app, [lambda: (readme.write_text("notes\n"), [readme])[1],
                  lambda: [app / "functions" / "start_job" / "notes.txt"]], cloud)
        workspace = context.deploy_dir
    assert [u.kind for u in updates] == ["deploy", "unchanged"]  # notes.txt is in the package
    roots = changes.watched[0]
    assert roots[0] == WatchRoot(app, recursive=False)
    assert WatchRoot(app / "templates", recursive=False) in roots
    assert workspace.is_relative_to(cloud.state_dir) and not (app / ".deploy").exists()


def test_a_broken_project_at_start_is_deployed_once_fixed(app):
    manifest = app / "s.yaml"
    manifest.write_text(manifest.read_text().replace("memorySize: 512", "memorySize: 500", 1))
    with mock_cloud() as cloud:
        updates, _, _ = _run(app, [_edit(manifest, "memorySize: 500", "memorySize: 512")], cloud)
        started = _invoke(cloud, "StartJob")
    assert updates[0].kind == "error" and "multiple of 64" in " ".join(
        [updates[0].error, *updates[0].details])
    assert updates[1].kind == "deploy" and updates[1].write_calls == 6
    assert started["v"] == 1



def test_closing_the_watcher_is_bounded_when_an_observer_thread_is_stuck(tmp_path):
    # watchdog's stop() joins its threads without a bound: Ctrl-C must still end `deploy dev`
    stuck, released = threading.Event(), threading.Event()

    class StuckObserver:
        def schedule(self, *args: object, **kwargs: object) -> None:
            pass

        def start(self) -> None:
            pass

        def stop(self) -> None:
            stuck.set()
            released.wait()

        def join(self, timeout: float | None = None) -> None:
            raise AssertionError("joined although its stop() never returned")

    watcher = FileWatcher(observer=StuckObserver, stop_timeout=0.2)
    watcher.watch([WatchRoot(tmp_path, recursive=True)])
    try:
        watcher.close()  # returns although stop() is stuck
        assert stuck.is_set()
        assert watcher.next_batch() is None
    finally:
        released.set()
