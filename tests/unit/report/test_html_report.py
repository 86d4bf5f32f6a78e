"""The HTML report as a document (no browser): self-contained, its Content-Security-Policy,
every case's row and deep link, the evidence it holds as HTML or packs, its bounds.

What a browser does with it (filters, deep links, JavaScript off, hostile text) is in
tests/e2e/test_html_browser.py."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.redaction import Redactor
from adk_eval_action.report.html import (
    HEAD_SCRIPT,
    HtmlLimits,
    MetricTrend,
    TrendPoint,
    _asset,
    redacted_json,
    render_html,
)
from adk_eval_action.report.html_cases import case_slugs
from adk_eval_action.report.html_view import case_records, marked_calls
from adk_eval_action.report.render import CommentContext, render_comment
from conftest import CliRun, SharedRun
from support.evidence_fixtures import HOSTILE, evidence_context, evidence_sides
from support.tables import compare


class Page(HTMLParser):
    """What a test reads of a report: inline scripts and styles (their exact text), every
    element's attributes, the CSP, and the text outside scripts and styles."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._raw: tuple[str, dict[str, str | None]] | None = None
        self._buffer: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._raw, self._buffer = (tag, dict(attrs)), []

    def handle_endtag(self, tag: str) -> None:
        if self._raw is not None and tag == self._raw[0]:
            body = "".join(self._buffer)
            if tag == "script":
                self.scripts.append((self._raw[1], body))
            else:
                self.styles.append(body)
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw is not None:
            self._buffer.append(data)
        else:
            self.text.append(data)

    @property
    def csp(self) -> str:
        return next(a["content"] or "" for t, a in self.elements
                    if t == "meta" and (a.get("http-equiv") or "").lower()
                    == "content-security-policy")

    def ids(self) -> list[str]:
        return [a["id"] or "" for _, a in self.elements if a.get("id")]

    def cases(self) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == "details" and "case" in (a.get("class")
                                                                              or "").split()]


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _report(hostile: bool = False, **limits: Any) -> tuple[str, CommentContext]:
    head, base = evidence_sides(hostile)
    context = evidence_context(hostile)
    return render_html(context, case_records(head), case_records(base),
                       limits=HtmlLimits(**limits)), context


def test_every_inline_script_and_style_is_allowed_by_hash_and_nothing_else() -> None:
    text, _ = _report()
    page = Page(text)
    policy = dict(part.strip().split(" ", 1) for part in page.csp.split(";") if part.strip())
    assert policy["default-src"] == "'none'"
    assert "unsafe" not in page.csp and "nonce" not in page.csp
    executable = [body for attrs, body in page.scripts if attrs.get("type") is None]
    assert executable and page.styles
    assert set(policy["script-src"].split()) == {_sha256(body) for body in executable}
    assert set(policy["style-src"].split()) == {_sha256(body) for body in page.styles}
    # Nothing is loaded from anywhere: no src, no stylesheet link, no inline style or handler.
    for tag, attrs in page.elements:
        assert "src" not in attrs and "style" not in attrs, (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
    assert not re.search(r"https?://", text.replace(
        "http://www.w3.org", "")), "the report names no URL but the run's"


#: Secret values that are also words of the page's own script ("document", "classList")
#: and of the data (the metric response_match_score, a final response).
SCRIPT_WORD_SECRETS = ["document", "classList", "response", "degrees Celsius"]


@pytest.mark.parametrize("static_cases", [200, 0])
def test_a_secret_that_is_a_word_of_the_script_is_redacted_in_the_data_only(
        static_cases: int) -> None:
    """Issue 34, "Silent, HTML report": the secret is replaced in the data (in the page
    and in the packed evidence), never in the style sheet, the scripts or the CSP, whose
    hashes therefore still match what the browser runs."""
    head, base = evidence_sides()
    redact = Redactor(SCRIPT_WORD_SECRETS)
    text = render_html(evidence_context(), case_records(head), case_records(base),
                       limits=HtmlLimits(static_cases=static_cases), redact=redact)
    page = Page(text)
    executable = [body for attrs, body in page.scripts if attrs.get("type") is None]
    assert executable == [HEAD_SCRIPT, _asset("report.js")]
    assert page.styles == [_asset("report.css")]
    policy = dict(part.strip().split(" ", 1) for part in page.csp.split(";") if part.strip())
    assert set(policy["script-src"].split()) == {_sha256(body) for body in executable}
    shown = "".join(page.text)
    assert "response_match_score" not in shown and "***_match_score" in shown
    packed = [json.loads(gzip.decompress(base64.b64decode(body)))
              for attrs, body in page.scripts if attrs.get("type") == "application/octet-stream"]
    evidence = json.dumps(packed) if static_cases == 0 else shown
    assert "Sunny, 22 degrees Celsius." not in evidence and "Sunny, 22 ***." in evidence
    if static_cases == 0:  # the names the script reads are kept; only values are redacted
        assert packed and redacted_json(b'{"response": "a response"}', redact) == \
            b'{"response":"a ***"}'


def test_every_case_has_a_row_and_a_unique_safe_deep_link() -> None:
    text, context = _report()
    page = Page(text)
    rows = page.cases()
    assert sorted((r["data-id"] or "") for r in rows) == sorted(
        c.eval_id.lower() for c in context.comparison.cases)
    ids = page.ids()
    assert len(ids) == len(set(ids))
    assert "case-travel-paris" in ids
    # Failing cases first, worst first, as the gate lists them.
    failing = [c.eval_id.lower() for c in context.gate.failing_cases]
    assert [r["data-id"] for r in rows[: len(failing)]] == failing


def test_slugs_are_safe_unique_and_keep_plain_ids_readable() -> None:
    keys = [("travel agent", "set", "weather_paris"), ("s", "a", "x"), ("s", "b", "x"),
            ("s", "a", '"><script>alert(1)</script>'), ("s", "a", "\u202eevil\u200b"),
            ("s", "a", "")]
    slugs = case_slugs(keys)
    assert slugs[1] == "case-s-x"
    assert slugs[2].startswith("case-s-x-") and slugs[2] != slugs[1]
    assert slugs[0].startswith("case-travel-agent-weather_paris-")
    assert len(set(slugs)) == len(slugs)
    for slug in slugs:
        assert re.fullmatch(r"case-[A-Za-z0-9_.-]+", slug), slug


def test_static_evidence_marks_the_wrong_argument_and_shows_the_rationale() -> None:
    text, _ = _report()
    page = "".join(Page(text).text)
    assert '"paris"' in page and 'expected "Paris"' in page
    assert re.search(r'<span class="arg diff"><span class="k">city</span>=<span class="v">'
                     r'&#34;paris&#34;</span><span class="exp">expected &#34;Paris&#34;</span>',
                     text)
    assert "judge: it says EUR, not USD." in page
    assert "not expected" in page  # the unexpected get_weather call of turn 2
    assert "turn 1 rude: says 'obviously'" in page  # a custom metric's reason


def test_marked_calls_follow_the_evidence_rules() -> None:
    expected = [("a", {"x": 1, "y": 2}), ("b", {})]
    actual = [("a", {"x": 1, "y": 3, "z": 0}), ("c", {})]
    calls = marked_calls(expected, actual)
    assert [(c.name, c.mark) for c in calls] == [("a", ""), ("c", "unexpected"),
                                                 ("b", "missing")]
    assert [(a.key, a.mark, a.expected) for a in calls[0].args] == [
        ("x", "", None), ("y", "diff", "2"), ("z", "extra", None)]
    assert [c.mark for c in marked_calls(None, actual)] == ["", ""]


def test_hostile_text_is_escaped_everywhere() -> None:
    text, _ = _report(hostile=True)
    page = Page(text)
    # Our own scripts only: the head's one, the main one (and no data block is executable).
    assert len([a for a, _ in page.scripts if a.get("type") is None]) == 2
    assert not any(t == "img" for t, _ in page.elements)
    assert "<details><summary>x</summary>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "alert(1)" in "".join(page.text)  # shown as text
    assert any((a.get("data-id") or "") == "paris|`x`<details>@octocat"
               for a in page.cases())


def test_packed_evidence_holds_every_other_case_and_unpacks_to_json() -> None:
    text, context = _report(static_cases=1, chunk_cases=2)
    page = Page(text)
    blocks = {a["id"]: body for a, body in page.scripts if a.get("type")}
    packed = [a for a in page.cases() if a.get("data-chunk") is not None]
    assert len(packed) == len(context.comparison.cases) - 1
    assert len(blocks) == 2  # 3 cases, 2 a block
    for attrs in packed:
        data = json.loads(gzip.decompress(base64.b64decode(blocks[f"chunk-{attrs['data-chunk']}"])))
        body = data[attrs["data-index"]]
        assert body["columns"] and body["runs"], attrs
    unpacked = json.dumps([json.loads(gzip.decompress(base64.b64decode(b)))
                           for b in blocks.values()])
    assert "it says EUR, not USD." in unpacked


def test_evidence_past_the_bounds_is_left_out_and_said() -> None:
    text, context = _report(static_cases=0, packed_bytes=0)
    page = Page(text)
    assert not any(a.get("data-chunk") for a in page.cases())
    assert len(page.cases()) == len(context.comparison.cases)
    words = " ".join("".join(page.text).split())
    assert f"{len(context.comparison.cases)} cases had their evidence left out" in words


def test_the_headline_says_what_the_comment_says() -> None:
    text, context = _report()
    words = " ".join("".join(Page(text).text).split())
    comment = render_comment(context)
    assert "❌ **ADK eval failed**" in comment
    assert "ADK eval failed" in words
    assert context.gate.count_text in words and context.gate.count_text in comment
    for reason in context.gate.reasons:
        assert reason in words
    # The drops the gate did not fail on, as the comment and the console name them.
    assert ("worse: tool_trajectory_avg_score −0.778, politeness −1.000 vs baseline "
            "(not gated: fail_on threshold)") in words
    assert "`tool_trajectory_avg_score` −0.778, `politeness` −1.000 vs baseline" in comment


def test_trend_is_shown_only_when_given() -> None:
    head, base = evidence_sides()
    context = evidence_context()
    records = case_records(head), case_records(base)
    assert 'id="trend"' not in render_html(context, *records)
    trend = [MetricTrend(suite="travel", metric_name="tool_trajectory_avg_score", points=[
        TrendPoint(label="a1", value=1.0), TrendPoint(label="b2", value=None),
        TrendPoint(label="c3", value=0.5)])]
    text = render_html(context, *records, trend=trend)
    assert 'id="trend"' in text and 'class="trend"' in text
    assert "oldest to newest: 1, —, 0.5" in text


def test_a_run_without_baseline_or_records_still_renders() -> None:
    head, _ = evidence_sides()
    comparison = compare(head, None, "none given")
    context = CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    text = render_html(context, {}, None)
    page = Page(text)
    assert len(page.cases()) == len(comparison.cases)
    assert "No baseline: none given." in " ".join("".join(page.text).split())


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", None])
def test_only_a_web_run_link_becomes_a_link(url: str | None) -> None:
    head, base = evidence_sides()
    context = evidence_context().model_copy(update={"run_url": url})
    text = render_html(context, case_records(head), case_records(base))
    hrefs = [a.get("href") or "" for t, a in Page(text).elements if t == "a"]
    assert all(h.startswith("#") for h in hrefs)
    assert HOSTILE not in text


def test_run_compare_and_render_write_the_report(
        regressed_run: SharedRun, good_run: SharedRun, cli: CliRun, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``run --html-out`` (the session's regressed run), ``compare --html-out`` and
    ``render --html-out`` write the same cases' evidence from the same results files."""
    monkeypatch.chdir(tmp_path)
    head, base = regressed_run.results, good_run.results
    compared = cli("compare", str(head), "--baseline", str(base), "--html-out", "c.html")
    assert compared.exit_code == 1, compared.output
    rendered = cli("render", str(head), "--baseline", str(base), "--html-out", "r.html",
                   "--out", "comment.md")
    assert rendered.exit_code == 0, rendered.output
    # The comment points at the report, from render as from compare.
    pointer = "📄 Every eval case turn by turn, baseline beside head: the HTML report `r.html`."
    assert pointer in (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert pointer.replace("r.html", "c.html") in cli(
        "compare", str(head), "--baseline", str(base), "--html-out", "c.html",
        "--print-comment").output
    assert regressed_run.html is not None
    ids = {c["eval_id"].lower() for s in json.loads(head.read_text())["suites"]
           for e in s["eval_sets"] for c in e["eval_cases"]}
    pages = [regressed_run.html.read_text(), (tmp_path / "c.html").read_text(),
             (tmp_path / "r.html").read_text()]
    for text in pages:
        page = Page(text)
        assert {a["data-id"] for a in page.cases()} == ids
        assert not any(a.get("data-chunk") for a in page.cases())  # all in the page
        assert 'class="arg diff"><span class="k">city</span>' in text
    bodies = [re.sub(r"<header.*?</header>", "", t, flags=re.S) for t in pages[1:]]
    assert bodies[0] == bodies[1]  # compare and render: one report of one comparison
