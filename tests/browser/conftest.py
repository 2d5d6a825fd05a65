"""Playwright on Debian's Chromium (``CONSOLE_CHROMIUM``, default /usr/bin/chromium). Without a
browser these tests skip on a developer machine and FAIL when ``CI=true``. Every page is checked
to send no request beyond loopback."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.chromium import ARGS, CHROMIUM, loopback_page


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


# One Chromium for the browser tests of this package (a launch costs seconds of CPU). Playwright
# holds an event loop in this thread, so the browser lives no longer than the package: the
# tests elsewhere that run their own loop never see it.
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[browser]')")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = loopback_page(browser)
    yield page
    assert page.foreign_requests == []
    assert page.page_errors == []
    page.context.close()
