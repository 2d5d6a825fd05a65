"""The web console in a real browser: the seed live, start and stop, deep links, keyboard and
ARIA, escaping, live updates in order. Synchronised on the page's own attributes and the
virtual clock."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.browser.chromium import live_loop, node, open_seed_waiting
from tests.console.support import (
    FLOW,
    NESTED,
    create_flow,
    execution_path,
    seed_cloud,
    start_seed,
)
from tests.emulator.cloudflow_support import start

pytestmark = pytest.mark.browser
# screenshots refresh docs/ only when asked (CONSOLE_SCREENSHOTS=1); otherwise a temp dir
DOCS = (Path(__file__).resolve().parents[2] / "docs" if os.environ.get("CONSOLE_SCREENSHOTS")
        else Path(tempfile.mkdtemp(prefix="console-shots-")))
PATH_STATES = ("StartJob", "Pass", "Wait", "GetJobStatus", "CheckJobComplete", "JobSucceeded")


def test_seed_mid_run_then_final_with_body(page: Any) -> None:
    with seed_cloud() as cloud:
        with cloud.auto_advance_disabled():
            paint = open_seed_waiting(cloud, page, "seed-run-1")
            print(f"first contentful paint: {paint} ms")
            cloud.advance(10)
            page.wait_for_selector(node("Wait", status="waiting", visits="2"))
            running = page.eval_on_selector_all(
                "svg.graph .node", "ns => ns.filter(n => ['running','waiting','retrying']"
                ".includes(n.dataset.status)).map(n => n.dataset.state)")
            assert running == ["Wait"]  # exactly one active node
            assert page.text_content(node("Wait") + " .vbadge text") == "×2"
            for name in ("JobSucceeded", "FailJobFailed"):
                assert page.get_attribute(node(name), "data-status") == "not-reached"
            assert "fires at" in page.text_content("[data-current]")
            page.wait_for_selector('[data-live="live"]:has-text("● Live")')
            page.wait_for_selector('[data-engine]:has-text("1 running")')
            clock = page.text_content("[data-clock] time")
            cloud.advance(1)  # no timer is due: only the header's clock moves
            page.wait_for_function("c => document.querySelector('[data-clock] time')"
                                   ".textContent !== c", arg=clock)
            page.wait_for_selector("[data-current]:has-text('(in 9 s)')")  # follows the clock
            page.screenshot(path=str(DOCS / "console-running.png"), full_page=True)
        cloud.wait_for_execution(FLOW, "seed-run-1")
        page.wait_for_selector('[data-live="final"]:has-text("Final")')
        page.wait_for_selector('[data-engine]:has-text("0 running · 0 timers · 0 in flight")')
        for name in PATH_STATES:
            assert page.get_attribute(node(name), "data-status") == "succeeded", name
        assert page.get_attribute(node("FailJobFailed"), "data-status") == "not-reached"
        assert page.text_content("[data-exec-status]").strip() == "✓ SUCCEEDED"
        assert [page.get_attribute(node(n), "data-visits")
                for n in ("Wait", "GetJobStatus", "CheckJobComplete")] == ["4", "4", "4"]
        assert page.is_hidden("[data-stop]")
        page.click(node("GetJobStatus"))
        page.wait_for_selector("[data-panel] [data-visit-label]:has-text('Visit 4 of 4')")
        body = dict(page.eval_on_selector_all(
            "[data-panel] [data-body] .kvt tr", "rs => rs.map(r => [r.querySelector('th')"
            ".textContent, r.querySelector('td').textContent])"))
        assert body["job_status"] == "success" and body["try_count"] == "4"
        page.screenshot(path=str(DOCS / "console-succeeded.png"), full_page=True)
        assert paint is not None and paint > 0  # how soon: benchmarks/console.py --browser


def test_every_step_reaches_the_open_page_live_in_commit_order(page: Any) -> None:
    """All 25 turns of a loop reach the page over its live channel, each version applied
    after its commit and in order (how fast: ``python benchmarks/console.py --browser``)."""
    with seed_cloud() as cloud:
        applied, commits, first = live_loop(cloud, page, "latency")
        versions = sorted(applied)
        assert len(versions) >= 25 and versions[0] > first
        assert [applied[v] for v in versions] == sorted(applied.values())  # in commit order
        assert all(applied[v] > commits.wait(v)[0] for v in versions)  # never before its commit


def test_parallel_branches_and_map_iterations_are_drawn_inside_their_node(page: Any) -> None:
    with seed_cloud() as cloud:
        create_flow(cloud, "Nested", NESTED)
        with cloud.auto_advance_disabled():
            start(cloud.fnf_client(), "Nested", "nested", "{}")
            page.goto(cloud.url + execution_path(cloud, "nested", "Nested"))
            pause = '[data-key="Fan/0/Pause"]'
            page.wait_for_selector(pause + '[data-status="waiting"]')
            assert page.get_attribute(pause, "aria-label") == \
                "Pause, Wait, waiting, visit 1 of 1, branch 1 of Fan"
            assert page.get_attribute('[data-key="Each/*/Double"]', "aria-label") == \
                "Double, Pass, succeeded, 3 visits over 3 iterations of Each"
            inside = page.evaluate("""() => {
              const box = (sel) => document.querySelector(sel).getBoundingClientRect();
              const within = (a, b) => a.left >= b.left && a.right <= b.right
                && a.top >= b.top && a.bottom <= b.bottom;
              return [within(box('[data-key="Fan/0/Pause"]'), box('[data-key="Fan"]')),
                      within(box('[data-key="Fan/1/Right"]'), box('[data-key="Fan"]')),
                      within(box('[data-key="Each/*/Double"]'), box('[data-key="Each"]'))];
            }""")
            assert inside == [True, True, True]
            assert page.get_attribute(node("Fan"), "data-status") == "running"
            page.click(pause)
            page.wait_for_selector("[data-panel] h2:has-text('Pause')")
            assert "in Fan" in page.text_content("[data-panel] h2")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(DOCS / "console-nested.png"), full_page=True)
        cloud.wait_for_execution("Nested", "nested")
        page.wait_for_selector('[data-live="final"]')
        assert page.get_attribute(pause, "data-status") == "succeeded"
        assert page.get_attribute(node("Done"), "data-status") == "succeeded"


def test_start_from_the_flow_page_then_stop(page: Any) -> None:
    with seed_cloud() as cloud, cloud.auto_advance_disabled():
        page.goto(cloud.url + f"/_console/r/{cloud.region}/flows/{FLOW}")
        page.fill("#exec-name", "from-page")
        page.fill("#exec-input", '{"delay": 20}')
        page.click("form[data-start] button[type=submit]")
        page.wait_for_url("**/executions/from-page")
        page.wait_for_selector(node("Wait", status="waiting"))
        page.click("[data-stop]")
        page.fill(".confirm input[name=cause]", "stopped from the page")
        page.click("[data-confirm-stop]")
        page.wait_for_selector(node("Wait", status="stopped"))
        page.wait_for_selector('[data-exec-status="Stopped"]')
        assert page.is_hidden("[data-stop]")
        assert "stopped from the page" in page.text_content("[data-summary]")


def test_bad_json_in_the_start_form_names_the_problem(page: Any) -> None:
    with seed_cloud() as cloud:
        page.goto(cloud.url + f"/_console/r/{cloud.region}/flows/{FLOW}")
        page.fill("#exec-input", '{"delay": ')
        page.click("form[data-start] button[type=submit]")
        page.wait_for_selector("#start-error:has-text('Invalid JSON')")


def test_deep_link_keyboard_and_aria(page: Any) -> None:
    with seed_cloud() as cloud:
        start_seed(cloud, "a11y")
        cloud.wait_for_execution(FLOW, "a11y")
        page.goto(cloud.url + execution_path(cloud, "a11y") + "?state=GetJobStatus&visit=2")
        assert "Visit 2 of 4" in page.text_content("[data-visit-label]")
        assert page.get_attribute(node("GetJobStatus"), "aria-pressed") == "true"
        labels = page.eval_on_selector_all("svg.graph .node", "ns => ns.map(n => n.ariaLabel "
                                           "|| n.getAttribute('aria-label'))")
        assert "GetJobStatus, Task, succeeded, visit 4 of 4" in labels
        assert all(any(w in label for w in ("succeeded", "not reached")) for label in labels)
        assert page.get_attribute("svg.graph", "aria-label") == f"Flow graph of {FLOW}"
        assert page.is_visible(".legend")
        page.focus(node("StartJob"))
        page.keyboard.press("ArrowDown")
        assert page.evaluate("document.activeElement.dataset.state") == "Pass"
        page.keyboard.press("Enter")
        page.wait_for_selector("[data-panel] h2:has-text('Pass')")
        assert page.get_attribute(node("Pass"), "aria-pressed") == "true"
        graph = {n: page.get_attribute(node(n), "data-status") for n in PATH_STATES}
        page.click("[data-tab=table]")
        rows = page.eval_on_selector_all("[data-table-view] tbody tr",
                                         "rs => rs.map(r => [r.dataset.state, r.dataset.status])")
        assert {state: status for state, status in rows} == graph


def test_user_input_renders_inert(page: Any) -> None:
    attack = "</script><img src=x onerror=window.pwned=1>"
    with seed_cloud() as cloud:
        start_seed(cloud, "xss", note=attack)
        cloud.wait_for_execution(FLOW, "xss")
        page.on("dialog", lambda dialog: pytest.fail("a dialog opened"))
        for suffix in ("?state=StartJob", "?view=events", "?view=io"):
            page.goto(cloud.url + execution_path(cloud, "xss") + suffix)
            assert page.query_selector("img") is None
            assert page.evaluate("window.pwned") is None
        page.goto(cloud.url + f"/_console/r/{cloud.region}/flows/{FLOW}/executions")
        assert page.query_selector("img") is None
