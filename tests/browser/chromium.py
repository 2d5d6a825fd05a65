"""Debian's Chromium under Playwright, as the browser tests and ``benchmarks/console.py
--browser`` drive it: the launch arguments, a page that may only reach loopback, and the
seed-free live scenario both measure."""

from __future__ import annotations

import os
from typing import Any

from tests.console.support import (
    COUNTER,
    CommitLog,
    create_flow,
    execution_path,
    start_seed,
)
from tests.emulator.cloudflow_support import start

CHROMIUM = os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def loopback_page(browser: Any) -> Any:
    """A new page (own context, 1360x900) whose requests beyond loopback are aborted and
    recorded in ``page.foreign_requests``; script errors go to ``page.page_errors``."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.foreign_requests = []
    page.page_errors = []

    def route(route: Any) -> None:
        if route.request.url.startswith(("http://127.0.0.1:", "data:")):
            route.continue_()
        else:
            page.foreign_requests.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    return page


def node(name: str, **attrs: str) -> str:
    return f"#n-{name}" + "".join(f'[data-{k}="{v}"]' for k, v in attrs.items())


def open_seed_waiting(cloud: Any, page: Any, name: str) -> float | None:
    """Start the seed execution ``name`` (the caller holds the clock) and open its page until
    it shows Wait waiting; the page's first contentful paint (ms), None when not reported."""
    start_seed(cloud, name)
    page.goto(cloud.url + execution_path(cloud, name))
    page.wait_for_selector(node("Wait", status="waiting"))
    return page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime")


RECORD_VERSIONS = """() => {
  window.applied = [];
  const summary = document.querySelector("[data-summary]");
  let last = Number(summary.dataset.version);
  new MutationObserver(() => {
    const version = Number(summary.dataset.version);
    if (version === last) return;  // the same version drawn again is no new version
    last = version;
    window.applied.push([version, performance.timeOrigin + performance.now()]);
  }).observe(summary, {attributes: true, attributeFilter: ["data-version"]});
  return last;
}"""


def live_loop(cloud: Any, page: Any, name: str) -> tuple[dict[int, float], CommitLog, int]:
    """Run the 25-turn Counter flow one virtual second at a time with its execution page open:
    (the wall time, in seconds, at which the page applied each version; the engine's commit log
    of the execution; the version the page showed first). Each turn waits for the page to show
    it before the clock moves on."""
    create_flow(cloud, "Counter", COUNTER)
    with cloud.auto_advance_disabled():
        start(cloud.fnf_client(), "Counter", name, "{}")
        page.goto(cloud.url + execution_path(cloud, name, "Counter"))
        page.wait_for_selector(node("Tick", status="waiting", visits="1"))
        page.wait_for_selector('[data-live="live"]')
        # the version shown when recording starts, read in the same page task (a version
        # applied between two separate reads would count as both first and recorded)
        first = int(page.evaluate(RECORD_VERSIONS))
        commits = CommitLog(cloud, name, first, 30, flow="Counter")
        for turn in range(2, 26):
            cloud.advance(1)
            page.wait_for_selector(node("Tick", visits=str(turn)))
        cloud.advance(1)
        page.wait_for_selector(node("Done", status="succeeded"))
        applied = {int(v): t / 1000 for v, t in page.evaluate("window.applied")}
    return applied, commits, first
