"""Judge flips: a judge that turns its verdict over with a probability
(``stand-in-judge-flaky-0.5``, seeded per side by ``ADK_EVAL_JUDGE_SEED``) judges an agent
that answers the same on both sides but for one eval case, through real google-adk. The
flips are found, labelled, set aside from the calls, and counted per judge model
(analysis.judgeflips, results.answers, report.judging); the oracle here reads the two
results files directly."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.results.io import load_results
from adk_eval_action.run.pipeline import run_pipeline
from adk_eval_action.testing.standins import JUDGE_SEED_VARIABLE
from conftest import request_for

pytestmark = pytest.mark.usefixtures("keep_cwd")

RUBRIC = "rubric_based_final_response_quality_v1"
JUDGE = "stand-in-judge-flaky-0.5"
CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Baku"]

AGENT_PY = '''
from google.adk.agents import LlmAgent

from adk_eval_action.testing.scripted import ScriptedLlm, ScriptRule

RULES = [ScriptRule(pattern="Paris", reply="{paris}"),
         ScriptRule(pattern=r"(?P<city>\\w+)\\?", reply="Happy to help: {{city}} is sunny.")]
root_agent = LlmAgent(name="sky", model=ScriptedLlm(model="scripted-sky", rules=RULES),
                      instruction="Report the weather.")
'''


def write_agent(root: Path, paris: str) -> None:
    folder = root / "sky"
    (folder / "eval").mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(AGENT_PY.format(paris=paris))
    cases = [{"eval_id": city.lower(), "session_input": {"app_name": "sky", "user_id": "u"},
              "conversation": [{
                  "user_content": {"role": "user", "parts": [{"text": f"{city}?"}]},
                  "final_response": {"role": "model", "parts": [
                      {"text": f"Happy to help: {city} is sunny."}]}}]}
             for city in CITIES]
    (folder / "eval" / "sky.evalset.json").write_text(json.dumps(
        {"eval_set_id": "sky", "eval_cases": cases}))
    rubrics = [{"rubric_id": rid, "rubric_content": {"text_property": text},
                "type": "FINAL_RESPONSE_QUALITY"}
               for rid, text in (("helps", 'The answer says "happy to help".'),
                                 ("sunny", 'The answer says "sunny".'))]
    (folder / "eval" / "test_config.json").write_text(json.dumps({"criteria": {
        RUBRIC: {"threshold": 0.5, "judge_model_options": {
            "judge_model": JUDGE, "num_samples": 1}, "rubrics": rubrics},
        "response_match_score": 0.1}}))


def run(root: Path, seed: str, **flags: Any) -> Any:
    previous = os.environ.get(JUDGE_SEED_VARIABLE)
    os.environ[JUDGE_SEED_VARIABLE] = seed
    try:
        os.chdir(root)
        return run_pipeline(request_for(**flags))
    finally:
        if previous is None:
            del os.environ[JUDGE_SEED_VARIABLE]
        else:
            os.environ[JUDGE_SEED_VARIABLE] = previous


@pytest.fixture(scope="module")
def flipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The baseline judged under one seed, then the head (Paris answered differently, the
    other cases alike) under another, compared with it."""
    root = tmp_path_factory.mktemp("judge_flips")
    previous = Path.cwd()
    try:
        write_agent(root, "Happy to help: Paris is sunny.")
        base = run(root, "1", results_path=root / "base.json", num_runs=2)
        assert base.exit_code in (0, 1), base.comment_markdown
        write_agent(root, "Paris is grey.")
        head = run(root, "2", baseline=str(root / "base.json"), results_path=root / "head.json",
                   num_runs=2, summary_out=root / "sum.md", html_out=root / "r.html",
                   comparison_out=root / "comparison.json")
    finally:
        os.chdir(previous)
    return root, head


def _answers(run: dict[str, Any]) -> list[Any]:
    """What a run answered, read here without the package: final texts and tool calls."""
    return [(i["final_response"], i.get("intermediate_data")) for i in run["actual_invocations"]]


def _per_case(path: Path) -> dict[str, tuple[list[Any], dict[str, float]]]:
    """Per eval id: each run's answers, and each rubric's mean verdict over the runs."""
    data = json.loads(path.read_text(encoding="utf-8"))
    found = {}
    for case in data["suites"][0]["eval_sets"][0]["eval_cases"]:
        verdicts: dict[str, list[float]] = {}
        for r in case["runs"]:
            [metric] = [m for m in r["metrics"] if m["metric_name"] == RUBRIC]
            for rubric in metric["rubrics"]:
                verdicts.setdefault(rubric["rubric_id"], []).append(rubric["score"])
        found[case["eval_id"]] = ([_answers(r) for r in case["runs"]],
                                  {k: sum(v) / len(v) for k, v in verdicts.items()})
    return found


def _strip_ids(answers: list[Any]) -> str:
    text = json.dumps(answers, sort_keys=True)
    return text if '"id"' not in text else json.dumps(
        [[(fr, {k: v for k, v in (data or {}).items() if k != "invocation_events"})
          for fr, data in run] for run in answers], sort_keys=True)


def oracle(root: Path) -> set[tuple[str, str]]:
    """(eval id, rubric id) of every verdict that changed where every run of the case, on
    both sides, answered the same."""
    base, head = _per_case(root / "base.json"), _per_case(root / "head.json")
    flips = set()
    for eval_id, (head_runs, head_verdicts) in head.items():
        base_runs, base_verdicts = base[eval_id]
        answers = {_strip_ids(r) for r in [*head_runs, *base_runs]}
        if len(answers) == 1:
            flips |= {(eval_id, k) for k, v in head_verdicts.items() if base_verdicts[k] != v}
    return flips


def test_flips_are_found_as_the_files_say(flipped: tuple[Path, Any]) -> None:
    root, outcome = flipped
    comparison = outcome.comparison
    expected = oracle(root)
    assert expected, "the seeds make some verdict flip (else choose others)"
    assert ("paris", "helps") not in expected  # Paris was answered differently
    found = {(f.eval_id, f.rubric_id) for f in comparison.judge_flips if f.rubric_id}
    assert found == expected
    assert all(f.judge_model == JUDGE for f in comparison.judge_flips)
    # The judge's self-disagreement: 5 cases answered alike x 2 rubrics compared.
    [noise] = comparison.judge_noise
    assert (noise.judge_model, noise.compared, noise.disagreed) == (JUDGE, 10, len(expected))
    assert noise.rate == pytest.approx(len(expected) / 10)


def test_flips_are_set_aside_from_the_calls(flipped: tuple[Path, Any]) -> None:
    root, outcome = flipped
    comparison = outcome.comparison
    base, head = _per_case(root / "base.json"), _per_case(root / "head.json")
    expected = oracle(root)
    for row in comparison.rubrics:
        aside = {e for e, r in expected if r == row.rubric_id}
        assert row.judge_flips == len(aside)
        kept = [e for e in head if e not in aside]
        deltas = [head[e][1][row.rubric_id] - base[e][1][row.rubric_id] for e in kept]
        assert row.interval is not None and row.interval.n_cases == len(kept)
        assert row.delta == pytest.approx(sum(deltas) / len(deltas))
        assert row.classification != "regressed" or any(d < 0 for d in deltas)


def test_flips_are_labelled_everywhere(flipped: tuple[Path, Any]) -> None:
    root, outcome = flipped
    expected = oracle(root)
    flips, cases = len(expected), len({e for e, _ in expected})
    comment = outcome.comment_markdown
    assert (f"⚖️ {flips} judge flips (same answer) in {cases} eval cases set aside: the judge "
            "changed its verdict where the agent answered alike on both sides") in comment
    assert f"Judge self-disagreement on the same answer: `{JUDGE}` {flips} of 10 verdicts" \
        in comment
    assert "⚖️ judge flip (same answer): " in comment
    summary = (root / "sum.md").read_text(encoding="utf-8")
    assert "<details><summary>Judge flips (same answer): " in summary
    report = (root / "r.html").read_text(encoding="utf-8")
    assert '<span class="flag flag-judge">judge flip (same answer)</span>' in report
    saved = json.loads((root / "comparison.json").read_text(encoding="utf-8"))
    assert saved["judge_noise"][0]["compared"] == 10
    assert len(saved["judge_flips"]) == flips


def test_the_results_file_records_the_judge_within_its_runs(flipped: tuple[Path, Any]) -> None:
    """Two runs of each eval case, judged under one seed: the same answer gets the same
    verdicts, each compared once per case (6 cases x 2 rubrics on the baseline)."""
    root, _ = flipped
    [noise] = load_results(root / "base.json").judge_noise or []
    assert (noise.judge_model, noise.compared, noise.disagreed, noise.rate) == (JUDGE, 12, 0, 0)
