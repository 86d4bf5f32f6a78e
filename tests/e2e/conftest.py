"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from support.chromium import chromium

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module (mark its tests ``support.chromium.needs_chromium``)."""
    with chromium() as launched:
        yield launched
