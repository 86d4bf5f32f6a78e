"""Layout in a browser (Chromium), with three suites of 60-character names and every
column a run can show: the comment's main table fits a GitHub comment's width (a window of
780 px; ``scripts/screenshot_comment.py`` renders the markdown as GitHub does and styles
it as a comment) without a scroll bar, its last column, the status, in view; the HTML
report's metric names never wrap inside a word."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_eval_action.report.html import render_html
from adk_eval_action.report.html_view import case_records
from adk_eval_action.report.render import render_comment
from support.wide_fixtures import SUITES, wide_context, wide_sides

CHROMIUM = Path("/usr/bin/chromium")
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot_comment.py"
WIDTH = 780

try:
    from playwright.sync_api import Browser, sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    sync_playwright = None

pytestmark = pytest.mark.skipif(
    sync_playwright is None or not CHROMIUM.exists() or not shutil.which(str(CHROMIUM)),
    reason=f"needs Playwright (pip install -e '.[test]') and Chromium at {CHROMIUM} "
    "(apt-get install chromium)",
)


def _comment_html(markdown: str) -> str:
    spec = importlib.util.spec_from_file_location("screenshot_comment", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.render_html(markdown, "comment"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield launched
        launched.close()


def test_three_suites_of_long_names_fit_the_comment_width(
    browser: Browser, tmp_path: Path
) -> None:
    comment = render_comment(wide_context())
    assert all(len(s) == 60 for s in SUITES)
    page_file = tmp_path / "comment.html"
    page_file.write_text(_comment_html(comment), encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(page_file.as_uri())
    tables = page.evaluate("""() => [...document.querySelectorAll('table')]
        .filter(t => t.querySelector('th').textContent.trim() === 'Metric')
        .map(t => ({scroll: t.scrollWidth, client: t.clientWidth,
                    right: t.querySelector('th:last-child').getBoundingClientRect().right,
                    header: t.querySelector('th:last-child').textContent.trim()}))""")
    page.close()
    assert len(tables) == 3  # one per suite, under its name
    for table in tables:
        assert table["scroll"] <= table["client"], table  # no horizontal scroll bar
        assert table["header"] == "Pass rate and status" and table["right"] <= WIDTH, table


def test_the_html_reports_metric_names_never_wrap_inside_a_word(
    browser: Browser, tmp_path: Path
) -> None:
    """One eval case a suite: every metric's interval is a "no interval:" reason, which
    made the metric column one letter wide. Each metric name stays on one line, whole,
    and the reason wraps as text."""
    head, base = wide_sides(cases_per_suite=1)
    context = wide_context(cases_per_suite=1)
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(context, case_records(head), case_records(base)),
                         encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(page_file.as_uri())
    names = page.evaluate("""() => [...document.querySelectorAll('code.metric')].map(c => ({
        text: c.textContent, lines: c.getClientRects().length,
        height: c.getBoundingClientRect().height,
        line: parseFloat(getComputedStyle(c).lineHeight) || 20,
        fits: c.scrollWidth <= Math.ceil(c.getBoundingClientRect().width) + 1}))""")
    reasons = page.locator("table.metrics .why").all_inner_texts()
    page.close()
    assert reasons and all(r.startswith("no interval") for r in reasons), reasons[:3]
    assert {n["text"] for n in names} >= {"rubric_based_final_response_quality_v1",
                                           "tool_trajectory_avg_score"}
    for name in names:
        assert name["lines"] == 1 and name["height"] < 2 * name["line"], name
        assert name["fits"], name
