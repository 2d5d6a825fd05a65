"""A legacy execution in a real browser: the steps, the inline steps of a choice drawn inside
its node, a waiting wait step in a parallel branch, no request beyond loopback."""

from __future__ import annotations

from typing import Any

import pytest

from deployer.testing.environment import mock_cloud
from tests.browser.chromium import node
from tests.console.support import create_flow, execution_path
from tests.emulator.cloudflow_support import start
from tests.legacy.test_emulator import NESTED

pytestmark = pytest.mark.browser


def test_a_legacy_execution_is_drawn_with_its_inline_steps(page: Any) -> None:
    with mock_cloud(intercept=False, console=True) as cloud:
        create_flow(cloud, "Nested", NESTED)
        with cloud.auto_advance_disabled():
            start(cloud.fnf_client(), "Nested", "hold", '{"xs": [1], "go": false}')
            page.goto(cloud.url + execution_path(cloud, "hold", "Nested"))
            pause = '[data-key="Fan/0/Pause"]'
            page.wait_for_selector(pause + '[data-status="waiting"]')
            assert page.get_attribute(pause, "aria-label") == \
                "Pause, wait, waiting, visit 1 of 1, branch 1 of Fan"
            hold = '[data-key="Route/1/Hold"]'
            assert page.get_attribute(hold, "data-status") == "succeeded"
            assert page.get_attribute('[data-key="Route/0/Approve"]', "data-status") == \
                "not-reached"
            inside = page.evaluate("""() => {
              const box = (sel) => document.querySelector(sel).getBoundingClientRect();
              const within = (a, b) => a.left >= b.left && a.right <= b.right
                && a.top >= b.top && a.bottom <= b.bottom;
              return [within(box('[data-key="Route/1/Hold"]'), box('[data-key="Route"]')),
                      within(box('[data-key="Each/*/Double"]'), box('[data-key="Each"]'))];
            }""")
            assert inside == [True, True]
            assert page.get_attribute(node("Route"), "data-status") == "succeeded"
            cloud.advance(30)
            page.wait_for_selector(node("Done") + '[data-status="succeeded"]')
        assert page.foreign_requests == [] and page.page_errors == []
