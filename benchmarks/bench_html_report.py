"""Benchmark the HTML report at scale (a script, not a test): file size, render time in
Python, and time to first paint / interactive in Chromium.

A baseline and a head of ``--cases`` eval cases x ``--runs`` runs are generated with what
an agent run records: one to three turns per case, each with the user's message, one or
two tool calls with arguments, their tool responses and a final response; per run
``tool_trajectory_avg_score`` and ``response_match_score`` (per turn),
``rubric_based_final_response_quality_v1`` with three rubrics judged per turn with the
judge's rationale, a custom metric with a reason, and ``token_usage_v1``. On the head 5%
of the cases call a tool with a wrong argument on some runs (so some are flaky), 1% of the
baseline's cases are removed and 1% are new.

For each size it measures, side by side with the largest size's ratio to the smallest:

* ``render_s``: :func:`adk_eval_action.report.html.render_html` from each side's case
  records (compare and gate are ``bench_compare.py``'s), with the cyclic GC paused as the
  pipeline pauses it;
* ``size_mb``: the file (10**6 bytes), and how many cases' evidence is HTML, packed or left
  out;
* in Chromium (Debian's ``chromium``, headless, from ``file://``): ``fcp_s`` (first
  contentful paint), ``ready_s`` (the script has paged the list: interactive),
  ``load_s`` (the load event), ``open_s`` (opening the last packed case until its evidence
  is shown: unpacking a block), ``filter_s`` (the "failing" filter), ``search_s`` (a search
  by eval id). Skipped, saying why, without Chromium or Playwright.

Usage: ``.venv/bin/python benchmarks/bench_html_report.py [--cases 100 1000 10000]
[--runs 3] [--out DIR]``
"""

from __future__ import annotations

import argparse
import gc
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _measure import maxrss_mb

from adk_eval_action.analysis.compare import compare
from adk_eval_action.analysis.gate import decide, failed_on_scores
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.html import render_html
from adk_eval_action.report.html_view import case_records
from adk_eval_action.report.render import CommentContext
from adk_eval_action.results.model import (
    CaseStatus,
    EvalCaseRecord,
    EvalSetRecord,
    InvocationScore,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunRecord,
    RunResults,
    SuiteRecord,
)
from adk_eval_action.run.pipeline import score_tables

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]
CITIES = {"Paris": ("sunny", 22), "London": ("rainy", 14), "Tokyo": ("cloudy", 18)}
RUBRICS = {"friendly": 'The final answer is friendly and says "happy to help".',
           "celsius": "The final answer gives the temperature in Celsius.",
           "no_apology": 'The final answer never mentions "sorry".'}
N_EVAL_SETS = 10
_WORDS = random.Random(0)
VOCABULARY = ["".join(_WORDS.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(
    _WORDS.randint(2, 9))) for _ in range(3000)]
"""Words of the texts that vary (agent answers, rationales): real text compresses ~8x,
not the ~60x of the same sentence repeated."""


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(VOCABULARY, k=rng.randint(low, high)))
GATE = GateConfig(fail_on="any", min_effect=0.01)


def _content(text: str, role: str) -> dict[str, Any]:
    return {"parts": [{"text": text}], "role": role}


def _turn(city: str, wrong: bool, rng: random.Random) -> tuple[dict, dict]:
    """(expected, actual) invocations of one weather turn; ``wrong`` calls the tool with
    a lower-case city."""
    condition, temp = CITIES[city]
    user = _content(f"What's the weather in {city}? {_words(rng, 4, 12)}.", "user")
    answer = (f"Happy to help! It is {condition} in {city} at {temp} degrees Celsius. "
              f"{_words(rng, 8, 30)}.")
    expected = {"user_content": user, "final_response": _content(answer, "model"),
                "intermediate_data": {"tool_uses": [{"name": "get_weather",
                                                     "args": {"city": city}}]}}
    said = answer if not wrong else f"It is {condition} in {city.lower()}, {temp} C."
    events = [
        {"author": "travel_agent", "content": {"role": "model", "parts": [{"function_call": {
            "id": f"c-{rng.randrange(10**9)}", "name": "get_weather",
            "args": {"city": city.lower() if wrong else city}}}]}},
        {"author": "travel_agent", "content": {"role": "user", "parts": [{"function_response": {
            "id": "r", "name": "get_weather", "response": {
                "status": "success", "city": city, "condition": condition,
                "temperature_c": temp, "forecast": _words(rng, 5, 15)}}}]}},
    ]
    actual = {"invocation_id": f"e-{rng.randrange(10**9)}", "user_content": user,
              "final_response": _content(said, "model"),
              "intermediate_data": {"invocation_events": events}}
    return expected, actual


def _metrics(turns: int, wrong: bool, run: int, rng: random.Random) -> list[MetricResult]:
    score = 0.0 if wrong else 1.0
    status = MetricStatus.FAILED if wrong else MetricStatus.PASSED
    per_turn = [InvocationScore(index=i, score=score, status=status) for i in range(turns)]
    verdicts = [InvocationScore(index=i, score=score, status=status, rubrics=[
        RubricScoreRecord(rubric_id=rid, text=text, score=0.0 if wrong and rid == "celsius"
                          else 1.0, rationale=f"turn {i + 1}: the answer "
                          f"{'omits' if wrong and rid == 'celsius' else 'has'} what {rid} asks: "
                          f"{_words(rng, 4, 16)}.")
        for rid, text in RUBRICS.items()]) for i in range(turns)]
    return [
        MetricResult(metric_name="tool_trajectory_avg_score", score=score, status=status,
                     threshold=1.0, min_value=0.0, max_value=1.0, invocations=per_turn),
        MetricResult(metric_name="response_match_score", score=0.4 if wrong else 1.0,
                     status=status, threshold=0.7, min_value=0.0, max_value=1.0),
        MetricResult(metric_name="rubric_based_final_response_quality_v1",
                     score=0.67 if wrong else 1.0, status=status, threshold=0.8,
                     min_value=0.0, max_value=1.0, judge_model="gemini-2.5-flash",
                     invocations=verdicts),
        MetricResult(metric_name="politeness", score=-1.0 if wrong else 1.0, status=status,
                     threshold=0.0, min_value=-1.0, max_value=1.0,
                     reason=f"run {run}: {'rude' if wrong else 'polite'}: says "
                     f"{'whatever' if wrong else 'happy to help'}"),
        MetricResult(metric_name="token_usage_v1", score=60.0 + 20 * turns,
                     status=MetricStatus.INFORMATIONAL, higher_is_better=False,
                     informational=True),
    ]


def _case(c: int, runs: int, head: bool, rng: random.Random) -> EvalCaseRecord:
    turns = 1 + c % 3
    cities = [list(CITIES)[(c + t) % 3] for t in range(turns)]
    bad = head and c % 20 == 7  # 5% of the head's cases regress
    records, expected = [], []
    for r in range(runs):
        wrong = bad and (r == 0 or c % 40 == 7)  # half of them on one run only: flaky
        pairs = [_turn(city, wrong and t == 0, rng) for t, city in enumerate(cities)]
        expected = [e for e, _ in pairs]
        metrics = _metrics(turns, wrong, r + 1, rng)
        records.append(RunRecord(run=r + 1, status=CaseStatus.FAILED if wrong
                                 else CaseStatus.PASSED, metrics=metrics,
                                 actual_invocations=[a for _, a in pairs]))
    return EvalCaseRecord(eval_id=f"case_{c:05d}", line=3 + 20 * (c // N_EVAL_SETS),
                          expected_invocations=expected, runs=records)


def results(n_cases: int, runs: int, head: bool) -> RunResults:
    """One side (module docstring)."""
    rng = random.Random(2 if head else 1)
    eval_sets = [EvalSetRecord(eval_set_id=f"set_{s}", file=f"evals/set_{s}.evalset.json")
                 for s in range(N_EVAL_SETS)]
    skip = 97 if head else 89  # removed on the head / new on the head (~1% each)
    for c in range(n_cases):
        if c % 100 == skip:
            continue
        eval_sets[c % N_EVAL_SETS].eval_cases.append(_case(c, runs, head, rng))
    return RunResults(suites=[SuiteRecord(name="bench", num_runs=runs, eval_sets=eval_sets)])


def render(n_cases: int, runs: int, out: Path) -> dict[str, Any]:
    """Generates both sides, renders the report to ``out``; the Python figures."""
    base, head = results(n_cases, runs, False), results(n_cases, runs, True)
    gc.collect()
    gc.disable()
    comparison = compare(*score_tables(head, base), "bench baseline",
                         min_effect=GATE.min_effect_for)
    gate = decide(comparison, GATE)
    context = CommentContext(comparison=comparison, gate=gate,
                             failed_on_scores=failed_on_scores(gate))
    records = case_records(head), case_records(base)
    start = time.perf_counter()
    html = render_html(context, *records)
    render_s = time.perf_counter() - start
    gc.enable()
    out.write_text(html, encoding="utf-8")
    return {"cases": n_cases, "render_s": render_s,
            "size_mb": len(html.encode("utf-8")) / 1e6,
            "static": html.count('<div class="body">') - html.count(
                '<div class="body"><p class="note">Evidence left out'),
            "packed": html.count('<div class="body pending">'),
            "left_out": html.count("Evidence left out to bound"),
            "rss_mb": maxrss_mb()}


BROWSER_JS = """async () => {
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const nav = performance.getEntriesByType('navigation')[0];
  return {fcp_s: fcp ? fcp.startTime / 1000 : null, load_s: nav.loadEventEnd / 1000};
}"""


def browse(path: Path) -> dict[str, Any]:
    """The Chromium figures of the report at ``path`` (module docstring)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="commit")
        page.wait_for_function("() => document.documentElement.classList.contains('ready')",
                               timeout=120_000)
        ready_s = time.perf_counter() - start
        page.wait_for_load_state("load")
        figures = page.evaluate(BROWSER_JS)
        figures["ready_s"] = ready_s
        figures.update(_interactions(page))
        browser.close()
    return figures


def _interactions(page: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    last = page.evaluate("""() => { const all = document.querySelectorAll('details[data-chunk]');
      return all.length ? all[all.length - 1].id : null; }""")
    if last:
        start = time.perf_counter()
        page.evaluate("id => { location.hash = id; }", last)
        page.wait_for_selector(f"#{last} > .body:not(.pending)", timeout=60_000)
        out["open_s"] = time.perf_counter() - start
    start = time.perf_counter()
    page.click("button[data-filter=failing]")
    page.wait_for_function("() => document.getElementById('page-info').textContent !== ''")
    out["filter_s"] = time.perf_counter() - start
    start = time.perf_counter()
    page.fill("#case-search", "case_0000")
    page.wait_for_function("() => document.getElementById('page-info').textContent.includes('(')"
                           " && !document.getElementById('page-info').textContent.includes("
                           "'failing')")
    page.wait_for_timeout(150)  # the search waits 80 ms for more typing
    out["search_s"] = time.perf_counter() - start
    return out


def _chromium_missing() -> str | None:
    if not shutil.which(CHROMIUM):
        return f"{CHROMIUM} not found (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[100, 1000, 10_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="keep the reports here")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-html-"))
    out.mkdir(parents=True, exist_ok=True)
    missing = _chromium_missing()
    rows = []
    for n in args.cases:
        path = out / f"report-{n}.html"
        row = render(n, args.runs, path)
        if missing is None:
            row.update(browse(path))
        rows.append(row)
        print({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()},
              flush=True)
    if missing:
        print(f"browser figures skipped: {missing}")
    _table(rows)
    if args.out is None:
        shutil.rmtree(out)


def _table(rows: list[dict[str, Any]]) -> None:
    keys = [k for k in dict.fromkeys(k for r in rows for k in r) if k != "cases"]
    print("\n| figure | " + " | ".join(f"{r['cases']:,} cases" for r in rows)
          + (" | ratio last/first |" if len(rows) > 1 else " |"))
    print("|---|" + "---:|" * (len(rows) + (len(rows) > 1)))
    for key in keys:
        values = [r.get(key) for r in rows]
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in values]
        ratio = ""
        if len(rows) > 1 and isinstance(values[0], (int, float)) and values[0]:
            ratio = f" {values[-1] / values[0]:.1f}× |"
        print(f"| {key} | " + " | ".join(cells) + (" |" + ratio if ratio else " | |"))


if __name__ == "__main__":
    main()
