"""The HTML report in a real browser: Debian's Chromium driven by Playwright for Python
(``support.chromium``: no browser is downloaded). Skipped, saying why, where either is
missing; ``.ci/run`` installs Chromium so CI runs them.

The regressed example's report (the session's ``regressed_run`` against ``good_run``)
shows every eval case, the wrong tool argument, the agent's answer and the judge's
rationale, each read from the results files; filters, search, paging and deep links work;
the page logs no error (a Content-Security-Policy violation is one); with JavaScript off
the headline, the tables and the evidence are there; hostile text renders as text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from adk_eval_action.analysis.verdict import compare_and_gate
from adk_eval_action.project.config import GateConfig
from adk_eval_action.redaction import Redactor
from adk_eval_action.report.html import HtmlLimits, render_html
from adk_eval_action.report.html_view import case_records
from adk_eval_action.report.render import CommentContext
from adk_eval_action.results.io import load_results
from adk_eval_action.run.pipeline import score_tables
from conftest import SharedRun
from support.chromium import needs_chromium
from support.evidence_fixtures import evidence_context, evidence_sides

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page

pytestmark = needs_chromium


class Opened:
    """A report opened in a page, with what the page logged."""

    def __init__(self, browser: Browser, path: Path, fragment: str = "",
                 javascript: bool = True) -> None:
        self.context = browser.new_context(java_script_enabled=javascript,
                                           viewport={"width": 1280, "height": 900})
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dismissed)
        self.page.goto(path.as_uri() + fragment)
        if javascript:
            self.page.wait_for_function(
                "() => document.documentElement.classList.contains('ready')")

    def _dismissed(self, dialog: Dialog) -> None:
        """An alert or prompt the page opened: noted (none should) and dismissed."""
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def visible_cases(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "details.case", "els => els.filter(e => !e.hidden).map(e => e.id)")

    def close(self) -> None:
        self.context.close()


def _write(tmp_path: Path, text: str, name: str = "report.html") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the regressed example ---------------------------------------------------------------


@pytest.fixture(scope="module")
def example_report(regressed_run: SharedRun) -> tuple[Path, dict[str, Any]]:
    """The regressed example's report (``run --html-out``), and the head's results file as
    JSON (the independent source of what the report must show)."""
    assert regressed_run.html is not None and regressed_run.html.exists(), regressed_run.output
    return regressed_run.html, json.loads(regressed_run.results.read_text())


def _cases(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(s["name"], c) for s in results["suites"] for e in s["eval_sets"]
            for c in e["eval_cases"]]


@pytest.mark.slow
def test_example_report_shows_every_case_the_wrong_argument_answer_and_rationale(
        browser: Browser, example_report: tuple[Path, dict[str, Any]]) -> None:
    path, results = example_report
    opened = Opened(browser, path, "#case-travel_agent-weather_paris")
    page = opened.page
    ids = page.eval_on_selector_all("details.case code.cid", "els => els.map(e => e.textContent)")
    assert sorted(ids) == sorted(c["eval_id"] for _, c in _cases(results))
    paris = page.locator("#case-travel_agent-weather_paris")
    assert paris.evaluate("e => e.open")
    wrong = paris.locator(".col-head .arg.diff").first
    # The results file: the head's call and the expected one, as JSON.
    case = next(c for _, c in _cases(results) if c["eval_id"] == "weather_paris")
    run = case["runs"][0]
    call = next(p["function_call"] for e in run["actual_invocations"][0]["intermediate_data"][
        "invocation_events"] for p in e["content"]["parts"] if "function_call" in p)
    expected = case["expected_invocations"][0]["intermediate_data"]["tool_uses"][0]
    assert call["args"]["city"] != expected["args"]["city"]
    assert wrong.locator(".k").inner_text() == "city"
    assert wrong.locator(".v").inner_text() == json.dumps(call["args"]["city"])
    assert wrong.locator(".exp").inner_text() == "expected " + json.dumps(
        expected["args"]["city"])
    assert wrong.is_visible()
    # The agent's answer and the judge's "no" with its rationale (multi_turn_trip's rude turn).
    trip = next(c for _, c in _cases(results) if c["eval_id"] == "multi_turn_trip")
    answers = [inv["final_response"]["parts"][0]["text"]
               for inv in trip["runs"][0]["actual_invocations"]]
    rationales = [r["rationale"] for m in trip["runs"][0]["metrics"]
                  for inv in m.get("invocations", []) for r in inv.get("rubrics", [])
                  if r.get("score") == 0.0]
    assert rationales
    page.goto(path.as_uri() + "#case-travel_agent-multi_turn_trip")
    section = page.locator("#case-travel_agent-multi_turn_trip")
    section.evaluate("e => e.open")
    text = section.inner_text()
    for answer in answers:
        assert " ".join(answer.split()) in " ".join(text.split())
    for rationale in rationales:
        assert "judge: " + rationale in text
    assert not opened.errors and not opened.dialogs
    opened.close()


def _statuses(results: dict[str, Any]) -> dict[str, list[str]]:
    return {c["eval_id"]: [r["status"] for r in c["runs"]] for _, c in _cases(results)}


@pytest.mark.slow
def test_example_filters_search_and_deep_links_work(
        browser: Browser, example_report: tuple[Path, dict[str, Any]]) -> None:
    path, results = example_report
    opened = Opened(browser, path)
    page = opened.page
    every = opened.visible_cases()
    assert len(every) == len(_cases(results))
    page.click("button[data-filter=failing]")
    failing = {i for i, runs in _statuses(results).items() if any(s != "passed" for s in runs)}
    shown = opened.visible_cases()
    assert {page.locator(f"#{i} code.cid").text_content() for i in shown} == failing
    page.click("button[data-filter=new]")
    assert opened.visible_cases() == [] and page.locator("#no-match").is_visible()
    # A deep link to a case the filter hides shows it again, opened.
    page.evaluate("() => { location.hash = 'case-travel_agent-weather_tokyo_rubrics'; }")
    page.wait_for_function("() => document.getElementById("
                           "'case-travel_agent-weather_tokyo_rubrics').open")
    assert "case-travel_agent-weather_tokyo_rubrics" in opened.visible_cases()
    box = page.locator("#case-travel_agent-weather_tokyo_rubrics").bounding_box()
    assert box is not None and 0 < box["y"] < 900  # below the sticky toolbar
    page.click("button[data-filter=all]")
    page.fill("#case-search", "TOKYO")
    page.wait_for_function("() => document.querySelectorAll('details.case:not([hidden])')"
                           ".length === 1")
    assert opened.visible_cases() == ["case-travel_agent-weather_tokyo_rubrics"]
    # Printed: no toolbar or navigation, the cases shown print with their evidence open.
    page.emulate_media(media="print")
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    assert not page.locator(".toolbar").is_visible() and not page.locator("nav.toc").is_visible()
    assert page.locator("#case-travel_agent-weather_tokyo_rubrics").evaluate("e => e.open")
    assert not opened.errors and not opened.dialogs
    opened.close()


@pytest.mark.slow
def test_example_report_reads_with_javascript_off(
        browser: Browser, example_report: tuple[Path, dict[str, Any]]) -> None:
    path, results = example_report
    opened = Opened(browser, path, javascript=False)
    page = opened.page
    assert "ADK eval failed" in page.locator("#verdict").inner_text()
    assert page.locator("#metrics table.metrics tbody tr").count() >= 4
    assert len(opened.visible_cases()) == len(_cases(results))
    assert not page.locator(".toolbar").is_visible()  # it needs the script
    # A case's evidence opens natively (details), every case's evidence is in the page.
    page.locator("#case-travel_agent-weather_paris > summary").click()
    assert page.locator("#case-travel_agent-weather_paris .col-head .arg.diff").is_visible()
    assert page.locator("details.case > .body.pending").count() == 0
    opened.close()


# --- hand-built reports: hostile text, paging, the two renderers ---------------------------


def test_hostile_text_renders_as_text(browser: Browser, tmp_path: Path) -> None:
    head, base = evidence_sides(hostile=True)
    context = evidence_context(hostile=True)
    records = case_records(head), case_records(base)
    for name, limits in (("static", HtmlLimits()), ("packed", HtmlLimits(static_cases=0))):
        path = _write(tmp_path, render_html(context, *records, limits=limits), f"{name}.html")
        opened = Opened(browser, path)
        page = opened.page
        page.eval_on_selector_all("details.case", "els => els.forEach(e => { e.open = true; })")
        page.wait_for_function("() => !document.querySelector('.body.pending')")
        text = page.locator("#cases").inner_text()
        assert "<script>alert(1)</script>" in text and 'onerror="alert(2)"' in text, name
        assert "paris|`x`<details>@octocat" in text, name
        assert page.evaluate("() => document.querySelectorAll('img, iframe, object').length") == 0
        assert page.evaluate("() => document.querySelectorAll('script:not([type])').length") == 2
        assert not opened.dialogs and not opened.errors, (name, opened.errors)
        opened.close()


def test_a_secret_that_is_a_word_of_the_script_leaves_the_script_running(
        browser: Browser, tmp_path: Path) -> None:
    """Issue 34, "Silent, HTML report": with the secret values ``document`` and
    ``classList`` (words of the page's script) the page's scripts still run (their CSP
    hashes match): filters and the packed evidence work, the secrets are gone from the
    data and no CSP violation is logged."""
    head, base = evidence_sides()
    context = evidence_context()
    records = case_records(head), case_records(base)
    redact = Redactor(["document", "classList", "degrees Celsius"])
    for name, limits in (("static", HtmlLimits()), ("packed", HtmlLimits(static_cases=0))):
        path = _write(tmp_path, render_html(context, *records, limits=limits, redact=redact),
                      f"{name}.html")
        opened = Opened(browser, path)  # waits for the script to mark the page ready
        page = opened.page
        page.eval_on_selector_all("details.case", "els => els.forEach(e => { e.open = true; })")
        page.wait_for_function("() => !document.querySelector('.body.pending')")
        text = page.locator("#cases").inner_text()
        assert "Sunny, 22 ***." in text and "degrees Celsius" not in text, name
        every = opened.visible_cases()
        page.click("button[data-filter=failing]")
        assert 0 < len(opened.visible_cases()) < len(every), name
        assert not opened.errors and not opened.dialogs, (name, opened.errors)
        opened.close()


@pytest.mark.slow
def test_an_rtl_override_and_zero_width_characters_stay_inert(
        browser: Browser, tmp_path: Path) -> None:
    head, base = evidence_sides()
    case = head.suites[0].eval_sets[0].eval_cases[0]
    case.eval_id = "abc\u202edef\u200bghi"
    case.runs[0].actual_invocations[0]["final_response"]["parts"][-1]["text"] = (
        "[javascript:alert(1)](javascript:alert(1)) \u202egnp.exe")
    verdict = compare_and_gate(*score_tables(head, base), "base", GateConfig())
    context = CommentContext(comparison=verdict.comparison, gate=verdict.gate)
    path = _write(tmp_path, render_html(context, case_records(head), case_records(base),
                                        limits=HtmlLimits(static_cases=0)))
    opened = Opened(browser, path)
    page = opened.page
    row = page.locator("details.case", has_text="abc")
    assert row.locator("code.cid").text_content() == "abc\\u202edef\\u200bghi"
    row.locator("summary").click()
    row.locator(".body:not(.pending)").wait_for()
    assert "\\u202egnp.exe" in row.inner_text()
    assert page.evaluate("() => [...document.querySelectorAll('a')].every("
                         "a => a.getAttribute('href').startsWith('#'))")
    assert not opened.errors
    opened.close()


@pytest.mark.slow
def test_packed_evidence_is_the_same_as_the_static_evidence(
        browser: Browser, example_report: tuple[Path, dict[str, Any]], tmp_path: Path,
        good_run: SharedRun, regressed_run: SharedRun) -> None:
    """report.js builds each case's evidence as templates/_case.html.j2 does: the same
    elements, classes and texts (whitespace between elements aside)."""
    head, base = load_results(regressed_run.results), load_results(good_run.results)
    verdict = compare_and_gate(*score_tables(head, base), "good_run", GateConfig())
    context = CommentContext(comparison=verdict.comparison, gate=verdict.gate)
    records = case_records(head), case_records(base)
    shapes = {}
    for name, limits in (("static", HtmlLimits()), ("packed", HtmlLimits(static_cases=0))):
        path = _write(tmp_path, render_html(context, *records, limits=limits), f"{name}.html")
        opened = Opened(browser, path)
        opened.page.eval_on_selector_all("details.case", "els => els.forEach(e => e.open = true)")
        opened.page.wait_for_function("() => !document.querySelector('.body.pending')")
        shapes[name] = opened.page.evaluate(SHAPE)
        assert not opened.errors
        opened.close()
    assert shapes["static"] == shapes["packed"]
    assert len(shapes["static"]) == len(verdict.comparison.cases)


SHAPE = """() => {
  function shape(el) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.data)
      .join('').trim();
    return [el.tagName, el.className, el.open === true, own,
            [...el.children].map(shape)];
  }
  return [...document.querySelectorAll('details.case > .body')].map(shape);
}"""


@pytest.mark.slow
def test_pages_hold_page_size_cases(browser: Browser, tmp_path: Path) -> None:
    head, base = evidence_sides()
    context = evidence_context()
    text = render_html(context, case_records(head), case_records(base),
                       limits=HtmlLimits(page_size=3))
    opened = Opened(browser, _write(tmp_path, text))
    page = opened.page
    first = opened.visible_cases()
    assert len(first) == 3
    page.click("button[data-page='1']")
    second = opened.visible_cases()
    assert len(second) == len(context.comparison.cases) - 3 and not set(first) & set(second)
    assert page.locator("#page-info").inner_text().startswith("page 2 of 2")
    assert not opened.errors
    opened.close()
