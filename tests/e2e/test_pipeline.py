"""The main job end to end on the example repository, through the CLI and real google-adk.

Tests that only read the good agent's run (baseline) and the regressed variant's run
compared with it share them for the session (``good_run``, ``regressed_run`` in conftest).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adk_eval_action.adk.compat import EFFICIENCY_METRICS_REPORTED
from conftest import CliRun, SharedRun, case_runs, load_json, metric


@pytest.fixture
def baseline_and_head(good_run: SharedRun, regressed_run: SharedRun) -> tuple[Path, Path, str]:
    """The good agent's results (baseline), the regressed variant's results compared with
    it, and the regressed run's console output."""
    assert good_run.exit_code == 0, good_run.output
    assert regressed_run.exit_code == 1, regressed_run.output
    return good_run.results, regressed_run.results, regressed_run.output


@pytest.fixture
def comment(regressed_run: SharedRun) -> str:
    """The comment the regressed run wrote (``--comment-out``)."""
    assert regressed_run.comment is not None
    return regressed_run.comment.read_text()


def test_wrong_tool_argument_scores_zero_trajectory(baseline_and_head: tuple) -> None:
    _, head, _ = baseline_and_head
    run = case_runs(load_json(head), "weather_paris")[0]
    assert metric(run, "tool_trajectory_avg_score")["score"] == 0.0
    assert metric(run, "tool_trajectory_avg_score")["status"] == "failed"
    assert run["status"] == "failed"


def test_untyped_case_rubric_reaches_judge_and_shows_delta(
    baseline_and_head: tuple, comment: str
) -> None:
    base, head, _ = baseline_and_head
    rubric_metric = "rubric_based_final_response_quality_v1"
    base_run = case_runs(load_json(base), "weather_tokyo_rubrics")[0]
    head_run = case_runs(load_json(head), "weather_tokyo_rubrics")[0]
    base_rubrics = {r["rubric_id"]: r for r in metric(base_run, rubric_metric)["rubrics"]}
    head_rubrics = {r["rubric_id"]: r for r in metric(head_run, rubric_metric)["rubrics"]}
    # The case rubric has no `type` in the eval set; google-adk alone would drop it.
    assert base_rubrics["states_celsius"]["score"] == 1.0
    assert head_rubrics["states_celsius"]["score"] == 0.0
    assert head_rubrics["states_celsius"]["type"] == "FINAL_RESPONSE_QUALITY"
    assert head_rubrics["states_celsius"]["text"].startswith("The final answer gives")
    per_invocation = metric(head_run, rubric_metric)["invocations"][0]["rubrics"]
    assert any(r["rubric_id"] == "states_celsius" and r["rationale"] for r in per_invocation)
    row = next(
        line
        for line in comment.splitlines()
        if line.startswith("| `states_celsius`")  # under "Metric `rubric_based_…`"
    )
    # 5 paired cases, no interval: inconclusive, so the drop reads neutral, not red.
    assert "| 1.000 | 0.000 | −1.000 (worse) ❔ inconclusive" in row


def test_custom_metrics_keep_range_and_both_kinds_run(baseline_and_head: tuple) -> None:
    base, head, _ = baseline_and_head
    run = case_runs(load_json(head), "currency_usd_eur")[0]
    politeness = metric(run, "politeness")  # sync, range [-1, 1]
    assert (politeness["min_value"], politeness["max_value"]) == (-1.0, 1.0)
    assert politeness["score"] == -1.0
    brevity = metric(run, "brevity")  # async, lower is better
    assert brevity["score"] == 44.0
    assert brevity["status"] == "failed"
    assert brevity["higher_is_better"] is False
    good = case_runs(load_json(base), "currency_usd_eur")[0]
    assert metric(good, "brevity")["score"] == 8.0 and metric(good, "brevity")["status"] == "passed"


def test_legacy_test_json_runs_as_one_case(baseline_and_head: tuple) -> None:
    base, _, _ = baseline_and_head
    results = load_json(base)
    eval_set = next(
        s for s in results["suites"][0]["eval_sets"] if s["eval_set_id"] == "legacy_weather"
    )
    assert eval_set["shape"] == "legacy-turns"
    (case,) = eval_set["eval_cases"]
    run = case["runs"][0]
    assert len(run["actual_invocations"]) == 2
    assert metric(run, "tool_trajectory_avg_score")["score"] == 1.0


def test_comment_and_summary_have_deltas(
    baseline_and_head: tuple, comment: str, regressed_run: SharedRun
) -> None:
    _, _, output = baseline_and_head
    assert comment.startswith("### ADK evaluation")
    assert "❌ **ADK eval failed**" in comment
    assert re.search(r"\| `tool_trajectory_avg_score` ≥ [\d.]+ \| 1\.000 \| 0\.700 \| "
                     r"−0\.300 \(worse\) ❔ inconclusive", comment)
    assert "### Rubrics" in comment
    assert "newly failing" in comment
    assert "gate FAILED" in output
    assert regressed_run.summary is not None
    assert regressed_run.summary.read_text().startswith("## ADK evaluation")


def test_comment_explains_why_cases_fail(
    baseline_and_head: tuple, comment: str, regressed_run: SharedRun
) -> None:
    """The regressed run's comment names the wrong tool argument, the missing "Celsius"
    rubric with the judge's rationale and the politeness reason: checked against the eval
    set file and the regressed agent's script (independent of the results file)."""
    _, head, _ = baseline_and_head
    eval_set = load_json(regressed_run.root / "travel_agent/eval/travel.evalset.json")
    paris = next(c for c in eval_set["eval_cases"] if c["eval_id"] == "weather_paris")
    (call,) = paris["conversation"][0]["intermediate_data"]["tool_uses"]
    assert call["args"] == {"city": "Paris"}
    # The regressed agent lower-cases the city (examples/travel_agent_regressed/agent.py).
    assert '- get_weather(city="Paris")\n+ get_weather(city="paris")' in comment
    celsius = (
        "- ⚖️ rubric `states_celsius` “The final answer gives the temperature in "
        "\"Celsius\".”: no on turn 1, judge: missing 'Celsius'."
    )
    assert celsius in comment
    assert "`politeness` -1.000 (threshold ≥ 0): turn 1 rude: says 'obviously', 'whatever'" in (
        comment
    )
    # Every evidence line comes from results.json: the expected invocations recorded there
    # are the eval set's conversation.
    recorded = next(
        c
        for s in load_json(head)["suites"]
        for e in s["eval_sets"]
        for c in e["eval_cases"]
        if c["eval_id"] == "weather_paris"
    )
    expected = recorded["expected_invocations"][0]
    assert expected["intermediate_data"]["tool_uses"][0]["args"] == call["args"]
    assert expected["final_response"] == paris["conversation"][0]["final_response"]
    politeness = metric(recorded["runs"][0], "politeness")
    assert politeness["reason"] == "turn 1 polite: says 'happy to help'"
    assert politeness["rubrics"] == []  # the explanation is a reason, not a rubric verdict


def test_results_metadata_and_hashes(baseline_and_head: tuple) -> None:
    base, _, _ = baseline_and_head
    results = load_json(base)
    assert results["schema_version"] == 2
    meta = results["metadata"]
    assert meta["adk_version"] and meta["tool_version"] and meta["started_at"]
    suite = results["suites"][0]
    assert suite["eval_config_hash"].startswith("sha256:")
    assert all(s["content_hash"].startswith("sha256:") for s in suite["eval_sets"])
    # The example's eval config names no judge: ADK's default judge is recorded.
    assert suite["judge_models"] == {"rubric_based_final_response_quality_v1": "gemini-2.5-flash"}


def test_compare_and_render_commands_need_no_agent(
    baseline_and_head: tuple, cli: CliRun, example_repo: Path, comment: str
) -> None:
    base, head, _ = baseline_and_head
    result = cli("compare", str(head), "--baseline", str(base), "--print-comment")
    assert result.exit_code == 1
    assert "−0.300 (worse) ❔ inconclusive" in result.output
    same = cli("compare", str(base), "--baseline", str(base))
    assert same.exit_code == 0
    rendered = cli("render", str(head), "--baseline", str(base))
    assert rendered.exit_code == 0
    # The run wrote a job summary, so its comment points at the chart there; render writes
    # none, so its comment does not (issue 11, item 8).
    chart_line = "📈 A chart of baseline vs head per metric is in the job summary.\n"
    assert chart_line in comment
    # The run wrote the HTML report too (--html-out); render was asked for none.
    html_line = ("📄 Every eval case turn by turn, baseline beside head: the HTML report "
                 "`report.html`.\n")
    assert html_line in comment and "HTML report" not in rendered.output

    def lines(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip()]

    assert lines(rendered.output) == lines(comment.replace(chart_line, "").replace(html_line, ""))


def test_no_baseline_says_so(good_run: SharedRun) -> None:
    # good_run is `run travel_agent --print-comment` (and --results-out).
    assert good_run.exit_code == 0, good_run.output
    assert "No baseline: none given" in good_run.output
    assert "✅ **ADK eval passed**: 5/5 eval cases passed" in good_run.output


def test_unreadable_named_baseline_is_exit_2_with_the_scores(
    example_repo: Path, cli: CliRun,
) -> None:
    """A baseline file named explicitly that cannot be read is the user's error (exit 2),
    and the head's scores are still compared (without a baseline) and written."""
    (example_repo / "bad.json").write_text("{not json")
    # Named by its absolute path: messages still name it relative to the repository.
    result = cli("run", "travel_agent", "--baseline", str(example_repo / "bad.json"),
                 "--print-comment")
    assert result.exit_code == 2
    # Python's json names the first problem: a key must be a quoted string.
    said = ("bad.json: the baseline file could not be read: not valid JSON: Expecting "
            "property name enclosed in double quotes: line 1 column 2 (char 1)")
    assert f"error (config: bad.json): {said}\n" in result.output
    assert f"No baseline: {said}. Showing head scores only." in result.output
    assert str(example_repo) not in result.output
    assert "tool_trajectory_avg_score" in result.output  # the comparison is still shown
    assert load_json(example_repo / "adk-eval-results.json")["complete"] is False


def test_num_runs_keeps_every_run(example_repo: Path, cli: CliRun) -> None:
    result = cli(
        "run", "travel_agent/eval/travel.evalset.json", "--num-runs", "2", "--results-out", "r.json"
    )
    assert result.exit_code == 0, result.output
    runs = case_runs(load_json(example_repo / "r.json"), "multi_turn_trip")
    assert [r["run"] for r in runs] == [1, 2]
    assert all(len(r["actual_invocations"]) == 3 for r in runs)


def test_user_template_is_sandboxed_and_gets_the_context(example_repo: Path, cli: CliRun) -> None:
    (example_repo / "t.j2").write_text(
        "{{ gate.passed }} {{ comparison.metrics | length }} "
        "{% for m in comparison.metrics %}{{ m.metric_name | md }};{% endfor %}"
        "{{ ''.__class__.__mro__ if false else '' }}"
        "|{{ comparison.cases[0].head_status }}|"
    )
    result = cli("run", "travel_agent", "--template", "t.j2", "--print-comment")
    assert result.exit_code == 0, result.output
    # The eval config's 5 metrics, and ADK's 4 efficiency metrics where it reports them.
    metrics = 9 if EFFICIENCY_METRICS_REPORTED else 5
    assert f"True {metrics} tool\\_trajectory\\_avg\\_score;" in result.output
    assert "|passed|" in result.output  # a status prints as its value, not CaseStatus.PASSED
    (example_repo / "evil.j2").write_text("ok\n{{ ''.__class__.__mro__[1].__subclasses__() }}")
    evil = cli("run", "travel_agent", "--template", str(example_repo / "evil.j2"),
               "--results-out", "r.json")
    assert evil.exit_code == 2
    # Named relative to the repository, at the line that failed (the template's 2nd).
    said = ("evil.j2:2: template error: SecurityError: access to attribute '__class__' of "
            "'str' object is unsafe.")
    assert f"error: {said}\n" in evil.output
    assert str(example_repo) not in evil.output
    error = load_json(example_repo / "r.json")["errors"][-1]
    assert (error["kind"], error["file"], error["line"], error["message"]) == (
        "config", "evil.j2", 2, said)


def test_missing_baseline_file_is_a_usage_error(example_repo: Path, cli: CliRun) -> None:
    result = cli("run", "travel_agent", "--baseline", "base.jsn", "--fail-on", "regression")
    assert result.exit_code == 2
    assert ("base.jsn: baseline file not found (--baseline); --baseline takes a results "
            "file or one of auto, artifact, rerun, none") in result.output
    assert "suite travel_agent" not in result.output  # nothing was evaluated
    typo = cli("run", "travel_agent", "--baseline", "nnone")
    assert typo.exit_code == 2
    assert "nnone: baseline file not found (--baseline); did you mean `--baseline none`?" in (
        typo.output)


def test_compare_uses_the_gate_of_adk_eval_yaml(
    baseline_and_head: tuple, cli: CliRun, example_repo: Path
) -> None:
    base, head, _ = baseline_and_head
    assert cli("compare", str(head), "--baseline", str(base)).exit_code == 1
    (example_repo / "adk-eval.yaml").write_text("gate:\n  min_pass_rate: 0.2\n")
    assert cli("compare", str(head), "--baseline", str(base)).exit_code == 0


def test_render_with_a_broken_template_is_exit_2(
    baseline_and_head: tuple, cli: CliRun, example_repo: Path
) -> None:
    _, head, _ = baseline_and_head
    (example_repo / "bad.j2").write_text("{{ nope.nothing }}")
    result = cli("render", str(head), "--template", "bad.j2")
    assert result.exit_code == 2
    assert "bad.j2:1: template error: UndefinedError" in result.output
