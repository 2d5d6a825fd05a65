"""``deploy dev``: deploy, then redeploy what changed on every save (the developer loop)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from rich.text import Text

import deployer.cli.commands.executions  # noqa: F401  (registers the ExecutionResult view)
from deployer.cli.commands.deploy_views import SYMBOLS
from deployer.cli.context import AppContext, CloudSession, pass_app
from deployer.cli.live import ExecutionMonitor
from deployer.cli.options import TargetOptions, output_option, target_options
from deployer.cli.render import Renderer, view
from deployer.core import execution_start, executions
from deployer.core.dev import DevSession, DevTarget, DevUpdate, run_dev_loop
from deployer.core.executions import ExecutionResult
from deployer.core.watching import FileWatcher
from deployer.errors import DeployerError

if TYPE_CHECKING:
    from deployer.fdl import AnyFlow

DEV_EPILOG = """\b
Examples:
  deploy dev                                   the local emulator (started when needed)
  deploy dev --execute '{"delay": 5}'          run the flow again after every update
  deploy dev --execute @event.json --flow MyWorkFlow
  deploy dev --output json | jq -c 'select(.event == "update")'
\b
Deploys the whole project as `deploy up --yes` does, then watches s.yaml, each function's
code directory and each flow's template. A saved handler updates that function only
(UpdateFunction: its warm instances are retired), a saved template updates that flow only
(UpdateFlow), and an edited s.yaml redeploys what it changed. A broken edit — invalid
s.yaml or flow, a Python syntax error — prints its diagnostics and deploys nothing: the last
good deployment keeps running. Ctrl-C stops watching (exit 0) and leaves everything
deployed; `deploy down` removes it. With --output json every update is one JSON line.
"""

def _quiet(message: str) -> None:
    """Discards a progress message."""


@view(DevUpdate)
def _update_view(update: DevUpdate) -> Text:
    when = update.at.astimezone().strftime("%H:%M:%S")
    trigger = ", ".join(update.trigger[:3]) + (" ..." if len(update.trigger) > 3 else "")
    text = Text(f"{when}  ", style="dim")
    if trigger != "start":
        text.append(f"{trigger} -> ")
    if not update.ok:
        text.append(f"not deployed: {update.error}", style="red")
        for line in update.details:
            text.append(f"\n    {line}")
        if update.hint:
            text.append(f"\n    Hint: {update.hint}")
        text.append("\n    The last good deployment keeps running.", style="dim")
        return text
    if not update.written:
        text.append("up to date: nothing to deploy" if update.kind != "deploy"
                    else f"up to date ({len(update.resources)} resources, 0 write calls)")
        return text
    verb = "deployed" if update.kind == "deploy" else "updated"
    calls = f"{update.write_calls} write call" + ("s" if update.write_calls != 1 else "")
    text.append(f"{verb} in {update.seconds:.2f} s ({calls})", style="green")
    for r in update.written:
        symbol, style = SYMBOLS[r.action]
        changes = f" ({', '.join(r.changes)})" if r.changes else ""
        text.append(f"\n    {symbol} ", style=style)
        text.append(f"{r.action.value} {r.resource.value} {r.name}{changes}")
    return text


@dataclass(frozen=True, slots=True)
class DevExecution:
    """An execution ``deploy dev --execute`` ran after an update (JSON: ``event: execution``)."""

    result: ExecutionResult

    def to_json(self) -> dict[str, Any]:
        return {"event": "execution", **self.result.to_json()}


class ExecutionsOnUpdate:
    """Starts an execution after each good update and shows it as it runs, in a background
    thread so saving again is never blocked; a newer execution replaces the shown one (the
    older keeps running in the cloud, unshown)."""

    def __init__(self, renderer: Renderer, session: CloudSession, flow: str,
                 input_json: str) -> None:
        self.renderer, self.session, self.flow, self.input_json = (
            renderer, session, flow, input_json)
        self._shown: threading.Event | None = None

    def start(self) -> None:
        self.stop_showing()
        flows = self.session.clients.flows
        try:
            info = execution_start.start_execution(flows, self.flow, self.input_json)
            definition = executions.execution_flow(flows, self.flow)
        except DeployerError as exc:
            self.renderer.warn(f"cannot start an execution of {self.flow}: {exc.message}")
            return
        self.renderer.progress(f"Started execution {info.name} of {self.flow}")
        shown = self._shown = threading.Event()
        shown.set()
        threading.Thread(target=self._follow, args=(info.name, definition, shown),
                         name=f"follow-{info.name}", daemon=True).start()

    def stop_showing(self) -> None:
        if self._shown is not None:
            self._shown.clear()
            self._shown = None

    def _follow(self, name: str, definition: AnyFlow | None, shown: threading.Event) -> None:
        renderer = self.renderer
        console = renderer.err if renderer.is_json else renderer.out
        monitor = ExecutionMonitor(console, definition, live=False)

        def on_event(event: Any) -> None:
            if shown.is_set():
                monitor.on_event(event)

        try:
            result = executions.watch(self.session.clients.flows, self.flow, name,
                                      on_event=on_event)
        except DeployerError as exc:
            if shown.is_set():
                renderer.warn(f"stopped following execution {name}: {exc.message}")
            return
        if shown.is_set():  # text: the view `deploy execute` prints; JSON: one line
            renderer.stream(DevExecution(result) if renderer.is_json else result)


def _watched(session: DevSession) -> str:
    base = session.manifest_file.parent
    names = []
    for root in session.roots()[1:]:
        try:
            names.append(f"{root.path.relative_to(base)}/")
        except ValueError:
            names.append(f"{root.path}/")
    return ", ".join([session.manifest_file.name, *names])


@click.command("dev", epilog=DEV_EPILOG)
@target_options
@click.option("--execute", "execute_input", metavar="JSON|@FILE",
              help="After each good update, start an execution with this input and show it.")
@click.option("--flow", "flow_name", help="Flow --execute runs (default: the flow in s.yaml).")
@output_option
@pass_app
def dev(app: AppContext, target: TargetOptions, execute_input: str | None,
        flow_name: str | None, output: str) -> None:
    """Deploy, then redeploy what changed on every save (Ctrl-C stops; all stays deployed)."""
    renderer = app.use_output(output)
    input_json = (executions.parse_input(execute_input, base=app.project_dir)
                  if execute_input is not None else None)
    session = app.cloud(target)
    settings = session.settings
    dev_session = DevSession(app.manifest_file, DevTarget(
        session.clients, settings.region, session.account_id, settings.target.value,
        app.deploy_dir), progress=renderer.progress, values=app.external_values())
    shown: set[str] = set()  # each warning once per session, not on every save
    runs = None
    if input_json is not None:
        runs = ExecutionsOnUpdate(renderer, session, flow_name or app.manifest().flow(None).name,
                              input_json)
    first = True

    def on_update(update: DevUpdate) -> None:
        nonlocal first
        renderer.stream(update)
        for warning in update.warnings:
            if warning not in shown:
                shown.add(warning)
                renderer.warn(warning)
        if first and dev_session.manifest is not None and dev_session.manifest.hooks:
            renderer.warn("s.yaml's actions are not run by `deploy dev` (deploy up and deploy "
                          "down run them)")
        if first:
            renderer.progress(f"Watching {_watched(dev_session)}; save a file to redeploy it, "
                              "Ctrl-C to stop.")
            dev_session.progress = _quiet  # from now on each update's line says it all
            first = False
        if runs is not None and update.ok:
            runs.start()

    watcher = FileWatcher()
    try:
        run_dev_loop(dev_session, watcher, on_update)
    except KeyboardInterrupt:
        pass
    finally:
        watcher.close()
        if runs is not None:
            runs.stop_showing()
    renderer.progress("Stopped watching. Everything stays deployed; `deploy down` removes it.")
