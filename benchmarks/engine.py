"""Interpreter throughput and memory (not a test): prints a table.

* the seed flow with mocked tasks and N polls, in one process: executions/s and state
  transitions/s (a transition = one state entered);
* memory of executions parked in the seed flow's Wait: 10,000 executions held in memory,
  measured with tracemalloc (bytes allocated per execution, including its history events of the
  last step dropped), and the size of ``Execution.to_json()`` as compact JSON (what a store
  keeps per row).

Targets: >= 20,000 transitions/s on one core; <= 5 KiB per parked execution.
Run: python benchmarks/engine.py

``python benchmarks/engine.py --instructions [SCENARIO...]`` counts CPU instructions per
transition instead (valgrind's callgrind, which the shared machine's load does not disturb):
each scenario (seed-1, seed-4, seed-20, map-100) runs twice under callgrind, with a low and a
high number of executions after a warm-up (``RUNS``); the difference in instructions divided
by the difference in transitions leaves out start-up, imports, parsing and compiling.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import jinja2

from deployer.fdl import check_flow
from deployer.fdl.interpreter import (
    CompiledFlow,
    InvokeTask,
    TaskSucceeded,
    compile_flow,
    start,
    step,
)
from deployer.fdl.interpreter.history import HistoryEventType
from deployer.fdl.interpreter.simulate import TaskAnswer, simulate
from deployer.fdl.syntax.ast import Flow

ROOT = Path(__file__).resolve().parents[1]


def seed_flow() -> Flow:
    text = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(
        (ROOT / "templates" / "flow.yaml.j2").read_text()
    ).render(region="cn-hangzhou", account_id="1234567890123456", start_job_function="StartJob",
             get_job_status_function="GetJobStatus", max_polls=10_000)
    check = check_flow(text, source="flow.yaml")
    assert check.ok and check.flow is not None
    return check.flow


def answerer(polls: int):  # type: ignore[no-untyped-def]
    start_job = json.dumps({"job_id": "j-1"})

    def answer(command: InvokeTask, now: float) -> TaskAnswer:
        if command.state_path[-1] == "StartJob":
            return TaskAnswer(start_job)
        count = command.parameters["body"]["try_count"] + 1
        status = "success" if count >= polls else "running"
        return TaskAnswer(json.dumps({"job_id": "j-1", "job_status": status, "try_count": count}))

    return answer


MAP_FLOW = """Type: StateMachine
Name: fan-out
SpecVersion: v1
StartAt: Each
States:
  - Type: Map
    Name: Each
    ItemsPath: $Input.items
    MaxConcurrency: 40
    Processor:
      StartAt: Work
      States:
        - Type: Task
          Name: Work
          Action: FC:InvokeFunction
          Parameters: {resourceArn: "acs:fc:cn-hangzhou:1:functions/w/LATEST",
                       invocationType: Sync, body: {item.$: $Input}}
          Next: Shape
        - Type: Pass
          Name: Shape
          InputConstructor: {item.$: $Input.Body.item, ok: true}
          End: true
    End: true
"""


def map_flow() -> Flow:
    check = check_flow(MAP_FLOW, source="map.yaml")
    assert check.ok and check.flow is not None
    return check.flow


def map_answer(command: InvokeTask, now: float) -> TaskAnswer:
    item = command.parameters["body"]["item"]
    return TaskAnswer(json.dumps({"item": item}), after=1 + item % 7)


def throughput(
    flow: CompiledFlow, answer_factory, data: object,  # type: ignore[no-untyped-def]
    seconds: float = 2.0,
) -> tuple[float, float]:
    probe = simulate(flow, answer_factory(), input=data)
    transitions = sum(1 for e in probe.history if e.type is HistoryEventType.STEP_ENTERED)
    runs, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        simulate(flow, answer_factory(), input=data, execution_name=f"e{runs}",
                 keep_history=False)
        runs += 1
    elapsed = time.perf_counter() - began
    return runs / elapsed, runs * transitions / elapsed


def parked_memory(flow: CompiledFlow, count: int = 10_000) -> tuple[float, float]:
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    parked = []
    for i in range(count):
        ex, commands = start(flow, input={"delay": 30}, execution_name=f"exec-{i:06d}", now=0.0)
        task = next(c for c in commands if isinstance(c, InvokeTask))
        ex, _ = step(flow, ex, TaskSucceeded(0.0, task.task_id, json.dumps({"job_id": f"j-{i}"})))
        ex.new_events = []  # persisted by the store with the step; not kept in memory
        parked.append(ex)
    now = tracemalloc.take_snapshot()
    tracemalloc.stop()
    used = sum(s.size_diff for s in now.compare_to(base, "filename"))
    serialised = sum(len(json.dumps(ex.to_json(), separators=(",", ":"))) for ex in parked)
    return used / count, serialised / count


#: name -> (flow, answer factory, input): the throughput scenarios, for ``--instructions``
SCENARIOS = {
    "seed-1": (seed_flow, lambda: answerer(1), {}),
    "seed-4": (seed_flow, lambda: answerer(4), {}),
    "seed-20": (seed_flow, lambda: answerer(20), {}),
    "map-100": (map_flow, lambda: map_answer, {"items": list(range(100))}),
}
LABELS = {
    "seed-1": "seed flow, 1 poll", "seed-4": "seed flow, 4 polls",
    "seed-20": "seed flow, 20 polls", "map-100": "Map of 100 items, 40 at a time",
}
RUNS = {"seed-1": (10, 60), "seed-4": (10, 40), "seed-20": (4, 16), "map-100": (2, 6)}


def run_scenario(name: str, runs: int) -> int:
    """Simulate scenario ``name`` ``runs`` times after a warm-up; return transitions per run."""
    make_flow, answer_factory, data = SCENARIOS[name]
    flow = compile_flow(make_flow())
    probe = simulate(flow, answer_factory(), input=data)
    transitions = sum(1 for e in probe.history if e.type is HistoryEventType.STEP_ENTERED)
    for i in range(2):
        simulate(flow, answer_factory(), input=data, execution_name=f"w{i}", keep_history=False)
    for i in range(runs):
        simulate(flow, answer_factory(), input=data, execution_name=f"e{i}", keep_history=False)
    return transitions


def _callgrind(name: str, runs: int) -> tuple[int, int]:
    """(instructions, transitions per run) of ``run_scenario(name, runs)`` under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--run", name, str(runs)],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        transitions = int(proc.stdout.strip().splitlines()[-1])
        with open(out) as profile:
            totals = re.search(r"^totals: (\d+)", profile.read(), re.MULTILINE)
        assert totals is not None, "callgrind wrote no totals"
        return int(totals.group(1)), transitions


def instructions(names: list[str]) -> None:
    print(f"{'scenario':<38} {'instructions/transition':>24}")
    for name in names or SCENARIOS:
        low, high = RUNS[name]
        low_ir, transitions = _callgrind(name, low)
        high_ir, _ = _callgrind(name, high)
        per = (high_ir - low_ir) / ((high - low) * transitions)
        print(f"{LABELS[name]:<38} {per:>24,.0f}", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--instructions"]:
        instructions(sys.argv[2:])
        return
    if sys.argv[1:2] == ["--run"]:
        print(run_scenario(sys.argv[2], int(sys.argv[3])))
        return
    flow = compile_flow(seed_flow())
    print(f"{'scenario':<38} {'executions/s':>14} {'transitions/s':>15}")
    for polls in (1, 4, 20):
        per_ex, per_tr = throughput(flow, lambda polls=polls: answerer(polls), {})
        print(f"{f'seed flow, {polls} poll(s)':<38} {per_ex:>14,.0f} {per_tr:>15,.0f}")
    items = {"items": list(range(100))}
    per_ex, per_tr = throughput(compile_flow(map_flow()), lambda: map_answer, items)
    print(f"{'Map of 100 items, 40 at a time':<38} {per_ex:>14,.0f} {per_tr:>15,.0f}")
    heap, json_size = parked_memory(flow)
    print()
    print(f"{'parked in Wait (10,000 executions)':<38} {'bytes/execution':>14}")
    print(f"{'  tracemalloc (in memory)':<38} {heap:>14,.0f}")
    print(f"{'  Execution.to_json() compact JSON':<38} {json_size:>14,.0f}")


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):  # the docstring is the help
        print(__doc__)
        raise SystemExit(0)
    main()
