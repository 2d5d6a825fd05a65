"""The engine's task runner: which part of the emulator carries out a Task.

1. When the execution runs with a mock test case (:mod:`.task_mocks`) that maps the Task's
   state, the mocked response answers, whatever the action (a mocked ``FC:InvokeFunction``,
   ``HTTP:Request`` or ``FNF:StartExecution`` calls nothing).
2. Otherwise by action: ``FC:InvokeFunction`` invokes the local function
   (:mod:`.fc_tasks`), ``HTTP:Request`` sends the request (:mod:`.http_tasks`),
   ``FNF:StartExecution`` starts the child execution (:mod:`.subflows`); a distributed
   Map's ``FNF:StartMapRun`` (the engine's own, never mocked) runs its map run
   (:mod:`.map_runs`).
3. Any other action (OSS, MNS, EventBridge, DashScope, an OpenAPI action such as
   ``ECS:DescribeInstances``) has no local service: its task fails with
   ``FnF.MockedResponseMissing`` and a cause naming the mock to add (catchable: it matches
   ``FnF.ALL``). A ``WaitForCustomCallback`` task of such an action waits for its report, as
   the real service would have been handed the token.

Every runner answers without holding the calling thread: sub-flow starts (a commit each) run
on a small pool of their own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from deployer.emulator.ports import TaskDone, TaskOutcome, TaskRequest
from deployer.emulator.services.fc_tasks import FunctionInvoker
from deployer.emulator.services.http_tasks import HTTP_ACTION, HttpTasks
from deployer.emulator.services.map_runs import MapRuns
from deployer.emulator.services.subflows import FLOW_ACTION, SubflowTasks
from deployer.emulator.services.task_mocks import MOCK_ERROR, TaskMocks
from deployer.emulator.store.flow_repos import FlowRepo
from deployer.emulator.store.link_repos import LinkRepo
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import InvokeTask
from deployer.fdl.interpreter.states.distributed_map import MAP_RUN_ACTION
from deployer.fdl.syntax.task_checks import FC_INVOKE

__all__ = ["TaskRouter", "missing_mock_cause"]

log = logging.getLogger("deployer.emulator")


def missing_mock_cause(action: str, flow: str, state: str, case: str) -> str:
    """What to do about a Task the emulator cannot carry out: the mock to add."""
    where = (f"test case {case!r} of flow {flow!r} maps no response to state {state!r}"
             if case else "the execution runs with no mock test case")
    return (f"the emulator does not call {action}; {where}: add "
            f"StateMachines.{flow}.TestCases.<case>.{state}: <response> and "
            f"MockedResponses.<response>: {{\"0\": {{Return: ...}}}} to a mock file, load it "
            f"(deploy emulator start --mocks FILE, or deploy emulator mocks load FILE) and "
            f"start the execution with that case (deploy execute --mock-case <case>, or an "
            f"ExecutionName ending in #<case>)")


class TaskRouter:
    """Carries out every task of the engine (see the module docstring)."""

    def __init__(self, functions: FunctionInvoker, http: HttpTasks, subflows: SubflowTasks,
                 map_runs: MapRuns, mocks: TaskMocks, links: LinkRepo, repo: FlowRepo) -> None:
        self.functions = functions
        self.map_runs = map_runs
        self.http = http
        self.subflows = subflows
        self.mocks = mocks
        self._links = links
        self._repo = repo
        self._lock = threading.Lock()
        self._starts: ThreadPoolExecutor | None = None

    @staticmethod
    def handles(cmd: InvokeTask) -> bool:
        """Every task is handed to the router (a callback task of an action it cannot call
        then simply waits for its report)."""
        return True

    def start(self, request: TaskRequest, done: TaskDone) -> None:
        cmd = request.command
        if cmd.action == MAP_RUN_ACTION:  # the engine's own: never mocked
            self._pool().submit(self._guarded, self.map_runs.start, request, done)
            return
        case, flow = self._case(request)
        if case:
            outcome = self.mocks.answer(request.execution_seq, flow, case, cmd)
            if outcome is not None:
                done(outcome)
                return
        if cmd.action == FC_INVOKE:
            self.functions.start(request, done)
        elif cmd.action == HTTP_ACTION:
            self.http.start(request, done)
        elif cmd.action == FLOW_ACTION:
            self._pool().submit(self._guarded, self.subflows.start, request, done)
        elif cmd.task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK:
            done(None)
        else:
            if not flow:
                row = self._repo.execution_by_seq(request.execution_seq)
                flow = row.flow_name if row is not None else "<flow>"
            done(TaskOutcome.failed(MOCK_ERROR, missing_mock_cause(
                cmd.action, flow, cmd.state_path[-1], case)))

    @staticmethod
    def _guarded(start: Callable[[TaskRequest, TaskDone], None], request: TaskRequest,
                 done: TaskDone) -> None:
        try:
            start(request, done)
        except Exception as exc:  # a defect: the task fails, never hangs
            log.exception("task %s could not start", request.command.task_id)
            done(TaskOutcome.failed("FnF.InternalError", f"the task could not start "
                                    f"({type(exc).__name__}: {str(exc)[:500]})"))

    def _case(self, request: TaskRequest) -> tuple[str, str]:
        """The execution's mock test case and flow name (('', '') without mocks)."""
        if self.mocks.document.empty or not request.execution_seq:
            return "", ""
        case = self._links.links(request.execution_seq).mock_case
        if not case:
            return "", ""
        row = self._repo.execution_by_seq(request.execution_seq)
        return case, (row.flow_name if row is not None else "")

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._starts is None:
                self._starts = ThreadPoolExecutor(max_workers=4,
                                                  thread_name_prefix="subflow-start")
            return self._starts

    def cancel(self, execution_seq: int, task_id: str) -> None:
        self.subflows.cancel(execution_seq, task_id)
        self.map_runs.cancel(execution_seq, task_id)

    def close(self) -> None:
        """Drop what waits (the engine sends unfinished tasks again when it starts)."""
        with self._lock:
            pool, self._starts = self._starts, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        self.http.close()
        self.functions.close()
