"""Layout in a browser (Chromium), with three suites of 60-character names and every
column a run can show: every table of the comment fits a GitHub comment's width (a window
of 780 px; ``scripts/screenshot_comment.py`` renders the markdown as GitHub does and styles
it as a comment) without a scroll bar, its last column in view: the main table, and with
eval case ids and eval set ids of 60 characters, rubrics of two lines of text, a token
metric and a trend history, the trend, efficiency, rubric, eval case and flaky tables too;
the HTML report's metric names never wrap inside a word."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adk_eval_action.report.html import render_html
from adk_eval_action.report.html_view import case_records
from adk_eval_action.report.render import render_comment
from support.chromium import needs_chromium
from support.wide_fixtures import LONG_CASE, SUITES, wide_context, wide_sides

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot_comment.py"
WIDTH = 780

pytestmark = needs_chromium

#: Each table's widths and header cells, as the browser laid it out.
TABLES = """() => [...document.querySelectorAll('table')].map(t => ({
    scroll: t.scrollWidth, client: t.clientWidth,
    right: t.querySelector('th:last-child').getBoundingClientRect().right,
    headers: [...t.querySelectorAll('th')].map(h => h.textContent.trim())}))"""


def _comment_html(markdown: str) -> str:
    spec = importlib.util.spec_from_file_location("screenshot_comment", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.render_html(markdown, "comment"))


def _laid_out(browser: Browser, tmp_path: Path, markdown: str) -> list[dict[str, Any]]:
    """The tables of ``markdown`` rendered as a comment in a window of :data:`WIDTH` px."""
    page_file = tmp_path / "comment.html"
    page_file.write_text(_comment_html(markdown), encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(page_file.as_uri())
    tables: list[dict[str, Any]] = page.evaluate(TABLES)
    page.close()
    return tables


def _fits(table: dict[str, Any]) -> None:
    assert table["scroll"] <= table["client"], table  # no horizontal scroll bar
    assert table["right"] <= WIDTH, table  # the last column in view


def test_three_suites_of_long_names_fit_the_comment_width(
    browser: Browser, tmp_path: Path
) -> None:
    assert all(len(s) == 60 for s in SUITES)
    tables = [t for t in _laid_out(browser, tmp_path, render_comment(wide_context()))
              if t["headers"][0] == "Metric"]
    assert len(tables) == 3  # one per suite, under its name
    for table in tables:
        assert table["headers"][-1] == "Pass rate and status", table
        _fits(table)


def test_every_table_of_the_comment_fits_with_long_ids_and_rubrics(
    browser: Browser, tmp_path: Path
) -> None:
    """The widest inputs of ``support.wide_fixtures`` (``worst``): each table the comment
    prints is there, a table per suite (no Suite column), and fits."""
    comment = render_comment(wide_context(worst=True))
    assert len(f"{LONG_CASE}_0") == 61
    tables = _laid_out(browser, tmp_path, comment)
    kinds = [t["headers"][0] + " … " + t["headers"][-1] for t in tables]
    assert kinds == [
        *["Metric … Pass rate and status"] * 3,
        *["Metric … Head"] * 3,  # the trend on the default branch
        *["Metric … Interval"] * 3,  # efficiency
        *["Rubric … Interval"] * 3,
        *["Eval case (eval set) … Metrics (baseline → head)"] * 3,
        *["Eval case … Head; baseline"] * 3,  # flaky
    ], kinds
    assert not any("Suite" in t["headers"] for t in tables)
    for table in tables:
        _fits(table)


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
