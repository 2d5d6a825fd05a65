"""The history → progress fold (deployer.fdl.progress): the real seed history and synthetic
retry, catch, stop, timeout, Parallel and Map histories."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl import parse_flow
from deployer.fdl.progress import ProgressFold, Status, fold

SEED = json.loads((Path(__file__).parents[1] / "fixtures" / "console" / "seed-history.json")
                  .read_text())
SEED_FLOW = parse_flow(SEED["definition"]).flow
PATH = ("StartJob", "Pass", "Wait", "GetJobStatus", "CheckJobComplete", "JobSucceeded")


@dataclass(frozen=True)
class Event:
    event_id: int
    schedule_event_id: int
    type: str
    step_name: str
    time: str
    detail: Any


def seed_events() -> list[Event]:
    return [Event(e["EventId"], e["ScheduleEventId"], e["Type"], e["StepName"], e["Time"],
                  e["EventDetail"]) for e in SEED["events"]]


class History:
    """Builds histories with the emulator's ScheduleEventId rules (docs/fdl-semantics.md)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.second = 0
        self.add("ExecutionStarted", "", 0, {"Input": {}})

    def add(self, kind: str, step: str, schedule: int, detail: Any = None) -> int:
        event_id = len(self.events) + 1
        self.events.append(Event(event_id, schedule, kind, step,
                                 f"2026-12-01T00:00:{self.second:02d}.000Z",
                                 json.dumps(detail or {})))
        return event_id

    def enter(self, step: str, scope: int = 1, value: Any = None) -> int:
        entered = self.add("StepEntered", step, scope, {"Input": value})
        self.add("StepStarted", step, entered, {"Input": value})
        return entered

    def task(self, step: str, entered: int, *, output: Any = None, error: str = "") -> None:
        scheduled = self.add("TaskScheduled", step, entered,
                             {"Resource": "FC:InvokeFunction", "TaskMode": "RequestComplete",
                              "Parameters": {"resourceArn": f"acs:fc:::functions/{step}"}})
        self.add("TaskStarted", step, scheduled)
        if error:
            self.add("TaskFailed", step, scheduled, {"Error": error, "Cause": "boom"})
        else:
            self.add("TaskSucceeded", step, scheduled, {"Output": {"Body": output}})

    def succeed(self, step: str, entered: int, output: Any = None) -> None:
        self.add("StepSucceeded", step, entered, {"Output": output})
        self.add("StepExited", step, entered)

    def fail(self, step: str, entered: int, error: str = "E") -> None:
        self.add("StepFailed", step, entered, {"Error": error, "Cause": "boom"})
        self.add("StepExited", step, entered)

    def end(self, kind: str, detail: Any = None) -> None:
        self.add(kind, "", 1, detail or {})


def test_seed_history_complete() -> None:
    progress = fold(seed_events(), SEED_FLOW)
    states = progress.root.states
    assert progress.status == "Succeeded" and progress.transitions == 15
    assert [n for n in PATH if states[n].status is Status.SUCCEEDED] == list(PATH)
    assert states["FailJobFailed"].status is Status.NOT_REACHED
    assert [len(states[n].visits) for n in ("Wait", "GetJobStatus", "CheckJobComplete")] \
        == [4, 4, 4]
    assert progress.root.edges[("Wait", "GetJobStatus")] == 4
    assert progress.root.edges[("CheckJobComplete", "Wait")] == 3
    assert ("CheckJobComplete", "FailJobFailed") not in progress.root.edges
    last = states["GetJobStatus"].visits[-1]
    assert last.task is not None and last.task.body["job_status"] == "success"
    assert last.task.body["try_count"] == 4
    assert last.output == json.loads(SEED["describe"]["Output"])
    assert progress.output == json.loads(SEED["describe"]["Output"])
    assert last.event_range == (62, 68)
    assert progress.current() == []


def test_seed_mid_run_one_running_state() -> None:
    events = seed_events()
    progress = fold(events[:33], SEED_FLOW)  # visit 2 of GetJobStatus has just started
    states = progress.root.states
    assert progress.status == "Running"
    running = [s.name for s in states.values() if s.status.active]
    assert running == ["GetJobStatus"] and len(states["GetJobStatus"].visits) == 2
    assert len(states["Wait"].visits) == 2 and states["Wait"].status is Status.SUCCEEDED
    assert states["JobSucceeded"].status is Status.NOT_REACHED
    assert [(v.state, v.number) for v in progress.current()] == [("GetJobStatus", 2)]
    visit = states["GetJobStatus"].visits[1]
    assert visit.input == {"try_count": 1, "job_id": visit.input["job_id"],
                           "job_status": "running"}


def test_wait_is_waiting_with_its_firing_time() -> None:
    events = seed_events()
    progress = fold(events[:29], SEED_FLOW)  # the second Wait entered
    wait = progress.root.states["Wait"].visits[-1]
    assert wait.status is Status.WAITING
    from deployer.fdl.progress import parse_time

    assert wait.fires_at == parse_time(wait.entered_at) + 10
    assert fold(events[:29]).root.states["Wait"].status is Status.RUNNING  # no flow: no type


def test_incremental_fold_equals_whole_fold_and_ignores_repeats() -> None:
    events = seed_events()
    fold_ = ProgressFold(SEED_FLOW)
    for event in events[:40]:
        fold_.add(event)
    for event in events:  # a re-read page: events already folded are ignored
        fold_.add(event)
    assert fold_.progress == fold(events, SEED_FLOW)


def test_retry_is_retrying_then_succeeded() -> None:
    h = History()
    entered = h.enter("Call")
    h.task("Call", entered, error="FC.Unknown")
    retrying = fold(h.events)
    assert retrying.root.states["Call"].status is Status.RETRYING
    h.task("Call", entered, output={"ok": True})
    h.succeed("Call", entered, {"ok": True})
    h.end("ExecutionSucceeded", {"Output": {"ok": True}})
    visit = fold(h.events).root.states["Call"].visits[0]
    assert visit.status is Status.SUCCEEDED and len(visit.attempts) == 2
    assert visit.attempts[0].outcome == "failed" and visit.attempts[0].error == "FC.Unknown"
    assert visit.attempts[1].body == {"ok": True}


def test_failure_caught_then_handler_runs() -> None:
    h = History()
    entered = h.enter("Call")
    h.task("Call", entered, error="FC.Unknown")
    h.fail("Call", entered, "FC.Unknown")
    failed_now = fold(h.events)
    assert failed_now.root.states["Call"].status is Status.FAILED
    handler = h.enter("Handle")
    h.succeed("Handle", handler)
    h.end("ExecutionSucceeded")
    progress = fold(h.events)
    assert progress.root.states["Call"].status is Status.CAUGHT
    assert progress.root.states["Call"].visits[0].error == "FC.Unknown"
    assert progress.root.edges == {("Call", "Handle"): 1}


def test_uncaught_failure_fails_execution() -> None:
    h = History()
    entered = h.enter("Call")
    h.fail("Call", entered, "Boom")
    h.end("ExecutionFailed", {"Error": "Boom", "Cause": "boom"})
    progress = fold(h.events)
    assert progress.status == "Failed" and progress.error == "Boom"
    assert progress.root.states["Call"].status is Status.FAILED


def test_stop_marks_the_open_visit_stopped() -> None:
    h = History()
    h.enter("Wait")
    h.end("ExecutionStopped", {"Error": "user", "Cause": "stopped by test"})
    progress = fold(h.events)
    assert progress.status == "Stopped" and progress.cause == "stopped by test"
    assert progress.root.states["Wait"].status is Status.STOPPED


def test_timeout_marks_the_open_visit_timed_out() -> None:
    h = History()
    entered = h.enter("Call")
    h.add("TaskScheduled", "Call", entered, {"Resource": "FC:InvokeFunction"})
    h.end("ExecutionTimedOut", {"Error": "FnF.ExecutionTimeout", "Cause": "too long"})
    progress = fold(h.events)
    assert progress.status == "TimedOut"
    assert progress.root.states["Call"].status is Status.TIMED_OUT


PARALLEL_FLOW = parse_flow("""\
Type: StateMachine
SpecVersion: v1
Name: par
StartAt: Fan
States:
  - Type: Parallel
    Name: Fan
    End: true
    Branches:
      - StartAt: A
        States:
          - Type: Pass
            Name: A
            End: true
      - StartAt: B
        States:
          - Type: Wait
            Name: B
            Seconds: 5
            Next: B2
          - Type: Pass
            Name: B2
            End: true
""").flow


def test_parallel_branches_nest() -> None:
    h = History()
    fan = h.enter("Fan")
    b0 = h.add("BranchEntered", "Fan", fan, {"Index": 0, "Input": {}})
    b1 = h.add("BranchEntered", "Fan", fan, {"Index": 1, "Input": {}})
    a = h.enter("A", b0)
    h.succeed("A", a)
    h.add("BranchExited", "Fan", b0, {"Index": 0, "Output": {}})
    h.enter("B", b1)
    mid = fold(h.events, PARALLEL_FLOW)
    visit = mid.root.states["Fan"].visits[0]
    branch0, branch1 = visit.scopes
    assert (branch0.kind, branch0.index, branch1.index) == ("branch", 0, 1)
    assert branch0.states["A"].status is Status.SUCCEEDED and branch0.output == {}
    assert branch1.states["B"].status is Status.WAITING
    assert branch1.states["B2"].status is Status.NOT_REACHED
    assert [(v.state, v.number) for v in mid.current()] == [("Fan", 1), ("B", 1)]
    h.fail("Fan", fan)  # a sibling failure cancels branch 1 without events
    h.end("ExecutionFailed", {"Error": "E"})
    done = fold(h.events, PARALLEL_FLOW)
    assert done.root.states["Fan"].visits[0].scopes[1].states["B"].status is Status.STOPPED


def test_map_iterations_nest() -> None:
    h = History()
    each = h.enter("Each")
    for index in range(3):
        it = h.add("IterationEntered", "Each", each, {"Index": index, "Input": index})
        item = h.enter("Item", it, index)
        h.succeed("Item", item, index)
        h.add("IterationExited", "Each", it, {"Index": index, "Output": index})
    h.succeed("Each", each, {"Items": [0, 1, 2]})
    progress = fold(h.events)
    scopes = progress.root.states["Each"].visits[0].scopes
    assert [s.kind for s in scopes] == ["iteration"] * 3
    assert [s.states["Item"].visits[0].output for s in scopes] == [0, 1, 2]


@settings(max_examples=60, deadline=None)
@given(polls=st.integers(1, 8), retries=st.lists(st.integers(0, 3), min_size=8, max_size=8),
       cut=st.integers(0, 400))
def test_poll_loop_counts_visits_edges_and_attempts(polls: int, retries: list[int],
                                                    cut: int) -> None:
    h = History()
    for n in range(polls):
        wait = h.enter("Wait")
        h.succeed("Wait", wait)
        poll = h.enter("Poll")
        for _ in range(retries[n]):
            h.task("Poll", poll, error="FC.Unknown")
        h.task("Poll", poll, output={"n": n})
        h.succeed("Poll", poll)
    h.end("ExecutionSucceeded")
    progress = fold(h.events)
    states = progress.root.states
    assert len(states["Wait"].visits) == len(states["Poll"].visits) == polls
    assert progress.root.edges.get(("Poll", "Wait"), 0) == polls - 1
    assert progress.root.edges[("Wait", "Poll")] == polls
    assert [len(v.attempts) for v in states["Poll"].visits] == [r + 1 for r in retries[:polls]]
    assert all(s.status is Status.SUCCEEDED for s in states.values())
    partial = fold(h.events[:cut])  # any prefix folds, with at most one visit in progress
    assert len(partial.current()) <= 1
    assert partial.transitions == sum(e.type == "StepEntered" for e in h.events[:cut])
