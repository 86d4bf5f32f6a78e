"""Debian's Chromium driven by Playwright for Python (``executable_path``: no browser is
downloaded), for the tests that look at a page: the HTML report's behaviour and the
comment's and job summary's widths. ``needs_chromium`` skips them, saying why, where either
is missing (``.ci/run`` installs Chromium, so CI runs them); ``tests/e2e/conftest.py``'s
``browser`` fixture launches one for a module."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    sync_playwright = None

#: Skips a test (or a module: ``pytestmark = needs_chromium``) without Playwright or Chromium.
needs_chromium = pytest.mark.skipif(
    sync_playwright is None or not CHROMIUM.exists() or not shutil.which(str(CHROMIUM)),
    reason=f"needs Playwright (pip install -e '.[test]') and Chromium at {CHROMIUM} "
    "(apt-get install chromium)",
)


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium, closed on exit."""
    assert sync_playwright is not None, "use with needs_chromium"
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
