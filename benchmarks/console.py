"""Server-side cost of the console's execution page and of one live update.

For the seed execution (77 events) and a loop execution of about 5,000 events (the
``max_events`` default), in an in-process emulator: the execution view-model
(``execution_model``), one live update (``execution_update``: the model plus the re-rendered
fragments every ``step`` event carries) and the whole HTML page over HTTP. Wall time and CPU
time (this thread's), median and p95 of ``--runs`` runs after two warm-up runs.

``--browser`` measures in Debian's Chromium instead (Playwright, the browser tests' loopback-only
pages): the first contentful paint of the seed's execution page, and the live latency from a
step's commit (the engine's notification) to the DOM (the page's MutationObserver seeing the
delta applied) over the 25 turns of a loop, ``--runs`` times; p50, p95 and max per run.

    python benchmarks/console.py [--runs 20] [--turns 400]
    python benchmarks/console.py --browser [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deployer.console import execution as ex
from deployer.console import live
from tests.console.support import (
    COUNTER,
    FLOW,
    create_flow,
    execution_path,
    seed_cloud,
    start_seed,
)
from tests.emulator.cloudflow_support import history, start


def measure(fn: Callable[[], object], runs: int) -> tuple[float, float, float, float]:
    """(wall p50, wall p95, cpu p50, cpu p95) in milliseconds."""
    for _ in range(2):
        fn()
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.thread_time()
        fn()
        walls.append(1000 * (time.perf_counter() - wall))
        cpus.append(1000 * (time.thread_time() - cpu))

    def p95(values: list[float]) -> float:
        return sorted(values)[min(len(values) - 1, int(0.95 * len(values)))]

    return statistics.median(walls), p95(walls), statistics.median(cpus), p95(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--turns", type=int, default=400, help="loop turns (about 12 events each)")
    parser.add_argument("--browser", action="store_true",
                        help="first paint and commit-to-DOM latency in Chromium")
    args = parser.parse_args()
    if args.browser:
        browser_main(args.runs)
        return
    with seed_cloud() as cloud:
        start_seed(cloud, "seed")
        cloud.wait_for_execution(FLOW, "seed")
        big = COUNTER.replace("$Input.i < 25", f"$Input.i < {args.turns}")
        create_flow(cloud, "Counter", big)
        start(cloud.fnf_client(), "Counter", "big", "{}")
        cloud.wait_for_execution("Counter", "big", timeout=600)
        src = cloud.server.console._src  # type: ignore[union-attr]
        print(f"{'execution':<10} {'events':>6}  {'what':<34} {'wall p50':>9} {'p95':>7} "
              f"{'cpu p50':>8} {'p95':>7}  (ms)")
        for flow, name in ((FLOW, "seed"), ("Counter", "big")):
            events = len(history(cloud.fnf_client(), flow, name))
            url = cloud.url + execution_path(cloud, name, flow)
            cases = {
                "view-model (execution_model)":
                    lambda f=flow, n=name: ex.execution_model(src, cloud.region, f, n),
                "live update (model + fragments)":
                    lambda f=flow, n=name: live.execution_update(src, cloud.region, f, n),
                "HTML page over HTTP": lambda u=url: urllib.request.urlopen(u).read(),
            }
            for what, fn in cases.items():
                w50, w95, c50, c95 = measure(fn, args.runs)
                cpu = f"{c50:8.1f} {c95:7.1f}" if "HTTP" not in what else f"{'-':>8} {'-':>7}"
                print(f"{name:<10} {events:>6}  {what:<34} {w50:9.1f} {w95:7.1f} {cpu}")


def browser_main(runs: int) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.chromium import ARGS, CHROMIUM, live_loop, loopback_page, open_seed_waiting

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for run in range(runs):
            page = loopback_page(browser)
            with seed_cloud() as cloud:
                with cloud.auto_advance_disabled():
                    paint = open_seed_waiting(cloud, page, "seed")
                applied, commits, _ = live_loop(cloud, page, "latency")
            lags = sorted(1000 * (at - commits.wait(v)[0]) for v, at in applied.items())
            p95 = lags[min(len(lags) - 1, int(0.95 * len(lags)))]
            print(f"run {run + 1}: first contentful paint {paint or 0:.0f} ms; commit -> DOM over "
                  f"{len(lags)} steps: p50 {statistics.median(lags):.1f} ms, p95 {p95:.1f} ms, "
                  f"max {lags[-1]:.1f} ms")
            assert not page.foreign_requests, page.foreign_requests
            page.context.close()
        browser.close()


if __name__ == "__main__":
    main()
