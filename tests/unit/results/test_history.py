"""The default branch's history (results.history_file, results.history_file_io, analysis.trends,
analysis.pooling, baseline.trust, report.trend_text): the file, its bounds, what it says about
a pull request (known flaky cases, trends, pooled baseline runs), and the gate's quarantine.
The end-to-end runs are in test_history_runs.py."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from adk_eval_action.analysis.trend_models import MetricTrend, TrendPoint
from adk_eval_action.analysis.trends import (
    known_flaky,
    pooled_runs,
    trends,
)
from adk_eval_action.analysis.verdict import HistoryInput, compare_and_gate
from adk_eval_action.baseline.models import ResolvedBaseline
from adk_eval_action.baseline.trust import baseline_trust
from adk_eval_action.project.config import GateConfig
from adk_eval_action.project.inputs import folder_digest
from adk_eval_action.report.trend_text import (
    sparkline,
    trend_chart,
    trend_titles,
    trust_line,
)
from adk_eval_action.results.history_file import (
    MAX_HISTORY_BYTES,
    History,
    RecordedCase,
    RecordedMetric,
    RecordedRun,
    RecordedSuite,
    appended,
    history_json,
    inputs_hash,
    recorded_run,
)
from adk_eval_action.results.history_file_io import (
    HistoryUnusable,
    history_from_bytes,
    load_history,
    save_history,
)
from adk_eval_action.results.model import SuiteRecord
from adk_eval_action.results.scoretable import ScoreTable
from support.results_builder import metric, results, scores_side
from support.tables import compare

SCHEMA = Path(__file__).resolve().parents[3] / "schemas" / "history.schema.json"
NOW = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)


def _run(commit: str, cases: dict[str, str], *, inputs: str | None = "sha256:x",
         adk: str = "2.13.0", judge: str = "gemini-2.5-flash", suite: str = "travel",
         scores: dict[str, list[float | None]] | None = None) -> RecordedRun:
    """A recorded run of one suite whose cases have the run statuses ``cases`` (``"pf"``)
    and, per case, response_match_score run scores (1.0 passed, 0.0 failed by default)."""
    recorded = [RecordedCase(eval_set_id="smoke", eval_id=eval_id, runs=letters,
                             scores=[(scores or {}).get(eval_id)
                                     or [1.0 if x == "p" else 0.0 for x in letters]])
                for eval_id, letters in cases.items()]
    return RecordedRun(
        commit=commit, recorded_at="2026-02-01T00:00:00+00:00", adk_version=adk, ref="main",
        suites=[RecordedSuite(name=suite, inputs_hash=inputs,
                              judge_models={"response_match_score": judge},
                              metrics=[RecordedMetric(name="response_match_score", mean=0.5,
                                                      count=1, min_value=0.0, max_value=1.0)],
                              cases=recorded)])


# --------------------------------------------------------------------------- the file


def test_a_recorded_run_keeps_each_metrics_mean_and_each_cases_run_scores():
    head = results({
        "a": [[metric("m", 1.0), metric("n", 0.2, threshold=0.1)],
              [metric("m", 0.5), metric("n", 0.4, threshold=0.1)]],
        "b": [[metric("m", 0.0)], [metric("m", None)]],
    })
    run = recorded_run(head, {"travel": "sha256:abc"}, run_url="https://x/runs/1")
    (suite,) = run.suites
    assert (run.commit, run.adk_version, suite.inputs_hash) == (
        "0123456789abcdef0123", "2.13.0", "sha256:abc")
    by_name = {m.name: m for m in suite.metrics}
    # The mean over every scored case run, by hand: m has 1.0, 0.5, 0.0 (None is no score).
    assert by_name["m"].mean == pytest.approx(0.5) and by_name["m"].count == 3
    assert by_name["n"].mean == pytest.approx(0.3) and by_name["n"].count == 2
    a, b = suite.cases
    assert (a.runs, a.scores) == ("pp", [[1.0, 0.5], [0.2, 0.4]])
    # A run whose metric was not evaluated is no failure (results_builder's run status).
    assert b.runs == "fp" and b.scores[0] == [0.0, None] and b.scores[1] == []


def test_the_history_keeps_its_newest_runs_within_count_and_size():
    history = None
    for i in range(5):
        history, notes = appended(history, _run(f"c{i}", {"a": "p"}), max_runs=3,
                                  repository="octo/agents")
    assert [r.commit for r in history.runs] == ["c2", "c3", "c4"]
    assert notes == ["history: the 1 oldest recorded run(s) left out (it keeps 3)"]
    one = len(_run("c9", {"a": "p"}).model_dump_json(exclude_none=True))
    small, notes = appended(history, _run("c5", {"a": "p"}), max_runs=100,
                            max_bytes=2 * one + 300)
    assert [r.commit for r in small.runs] == ["c4", "c5"]
    assert "under" in notes[-1] and len(history_json(small)) <= 2 * one + 300
    # The new run is always kept, whatever its size.
    alone, _ = appended(history, _run("c6", {"a": "p"}), max_bytes=10)
    assert [r.commit for r in alone.runs] == ["c6"]


def test_a_history_file_round_trips_and_validates_against_its_schema(tmp_path):
    history, _ = appended(None, recorded_run(scores_side({"a": [1.0, 0.0]}), {}),
                          repository="octo/agents", branch="main")
    path = tmp_path / "adk-eval-history.json"
    save_history(history, path)
    text = path.read_text()
    assert "\n" not in text.rstrip("\n")  # compact: one line
    jsonschema.validate(json.loads(text), json.loads(SCHEMA.read_text()))
    assert load_history(path, repository="octo/agents") == history


# --------------------------------------------------------------------------- hostile


def _bytes(history: History | dict) -> bytes:
    data = history.model_dump() if isinstance(history, History) else history
    return json.dumps(data).encode()


@pytest.mark.parametrize(("data", "says"), [
    (b"{not json", r"not a history file"),
    (b"[1, 2]", r"not a history file"),
    (b"[" * 100_000 + b"]" * 100_000, r"not a history file"),
    (_bytes({"schema_version": 1, "runs": [{"suites": "nope"}]}),
     r"malformed \(runs\.0\.suites: Input should be a valid (list|array)"),
    (_bytes({"schema_version": 7, "runs": []}),
     r"written by a newer adk-eval-action \(history schema_version 7; this version reads 1\)"),
    (_bytes({"schema_version": 1, "repository": "evil/fork", "runs": []}),
     r"recorded in another repository \(evil/fork, not octo/agents\): not used"),
    (b" " * (MAX_HISTORY_BYTES + 1), r"too large \(33,554,433 bytes; a history is at most"),
])
def test_a_hostile_history_is_refused_saying_why(data: bytes, says: str):
    with pytest.raises(HistoryUnusable, match=says):
        history_from_bytes(data, "h.json", repository="octo/agents", now=NOW)


def test_runs_from_the_future_are_left_out(console):
    runs = [_run("past", {"a": "p"}),
            _run("future", {"a": "p"}).model_copy(update={"recorded_at": "2099-01-01T00:00:00Z"})]
    read = history_from_bytes(_bytes(History(runs=runs)), "h.json", now=NOW)
    assert [r.commit for r in read.runs] == ["past"]
    assert read.left_out == ["1 recorded run recorded in the future"]
    assert any("h.json: 1 recorded run recorded in the future left out (commits future)"
               in line for line in console.lines)


# Issue 34, "Silent, history": a history is input like a results file (range, branch,
# duplicates); what is left out is said, never pooled or counted.


def test_runs_of_another_branch_are_not_the_branchs_flaky_record(console):
    """Runs recorded on feature/x inside main's history: with them the case is known
    flaky and quarantine keeps its failure from the gate; read as input they are left out,
    said, and the failure fails the gate."""
    runs = [_run(f"c{i}", {"a": s, "b": "p"}).model_copy(update={"ref": "feature/x"})
            for i, s in enumerate("pfpf")]
    runs.append(_run("m1", {"a": "p", "b": "p"}).model_copy(update={"ref": "refs/heads/main"}))
    history = History(branch="main", runs=runs)
    assert known_flaky(history, ["travel"])  # what the unchecked history says
    read = history_from_bytes(_bytes(history), "h.json", now=NOW)
    assert [r.commit for r in read.runs] == ["m1"]
    assert read.left_out == ["4 recorded runs of another branch (feature/x)"]
    assert any("h.json: 4 recorded runs of another branch (feature/x) left out (commits c0, "
               "c1, c2, c3): not the history's branch main" in line for line in console.lines)
    verdict = compare_and_gate(
        ScoreTable.from_results(scores_side({"a": [0.0], "b": [1.0]})),
        ScoreTable.from_results(scores_side({"a": [1.0], "b": [1.0]})), "b",
        GateConfig(quarantine="flaky"), history=HistoryInput(history=read))
    assert not verdict.gate.passed and verdict.gate.quarantined == []


def test_a_history_without_a_branch_is_its_newest_runs():
    runs = [_run("f1", {"a": "p"}).model_copy(update={"ref": "feature/x"}), _run("m1", {"a": "p"})]
    read = history_from_bytes(_bytes(History(runs=runs)), "h.json", now=NOW)
    assert [r.commit for r in read.runs] == ["m1"]


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # the unchecked history's
@pytest.mark.parametrize("score", [1e300, -1e300])
def test_scores_outside_their_range_are_not_pooled(score, console):
    """An earlier recorded run scoring ±1e300 in the baseline's window: pooled, it turns
    an unchanged head red (or falsely green); read as input, its suite is left out and
    said, and the head is unchanged."""
    cases = "abcdef"
    base = scores_side({c: [1.0, 1.0] for c in cases})
    sha = base.metadata.git_sha
    runs = [_run("x1", dict.fromkeys(cases, "pp"), scores={c: [score, score] for c in cases}),
            _run("x2", dict.fromkeys(cases, "pp")), _run(sha, dict.fromkeys(cases, "pp"))]
    history = History(runs=runs)

    def verdict(recorded: History) -> Any:
        return compare_and_gate(ScoreTable.from_results(base), ScoreTable.from_results(base),
                                "b", GateConfig(pool_runs=5, fail_on="any"),
                                history=HistoryInput(history=recorded))

    unchecked = verdict(history)  # what the history did before it was checked
    assert unchecked.comparison.metrics[0].classification == (
        "regressed" if score > 0 else "improved")
    assert unchecked.gate.passed is (score < 0)
    read = history_from_bytes(_bytes(history), "h.json", now=NOW)
    assert [r.commit for r in read.runs] == ["x2", sha]
    assert read.left_out == ["1 recorded run with impossible scores"]
    assert any(f"metric `response_match_score`: score {score!r} is outside its value range "
               "[0.0, 1.0]: such suites left out" in line for line in console.lines)
    checked = verdict(read)
    assert checked.gate.passed, checked.gate.reasons
    assert checked.comparison.metrics[0].delta == 0.0
    assert checked.comparison.history.pooled.commits == ["x2"]


def test_a_suite_with_impossible_scores_leaves_the_runs_other_suites():
    good = _run("x1", {"a": "p"})
    bad = _run("x1", {"a": "p"}, suite="other", scores={"a": [math.nan]})
    run = good.model_copy(update={"suites": [*good.suites, *bad.suites]})
    (read,) = history_from_bytes(_bytes(History(runs=[run])), "h.json", now=NOW).runs
    assert [s.name for s in read.suites] == ["travel"]


def test_the_same_recorded_run_repeated_counts_once(console):
    base = scores_side({"a": [1.0]})
    sha = base.metadata.git_sha
    runs = [_run("x1", {"a": "f"})] * 3 + [_run(sha, {"a": "p"})]
    read = history_from_bytes(_bytes(History(runs=runs)), "h.json", now=NOW)
    assert [r.commit for r in read.runs] == ["x1", sha]
    assert read.left_out == ["2 recorded runs repeated"]
    extra, note = pooled_runs(read, base, pool_runs=5)
    assert note.recorded_runs == 1
    assert extra == {("travel", "smoke", "a", "response_match_score"): [0.0]}
    # A re-run of one commit is another recording (another time), kept.
    again = _run("x1", {"a": "p"}).model_copy(update={"recorded_at": "2026-02-02T00:00:00Z"})
    read = history_from_bytes(_bytes(History(runs=[runs[0], again])), "h.json", now=NOW)
    assert len(read.runs) == 2 and read.left_out == []


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "h.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_HISTORY_BYTES + 1)
    with pytest.raises(HistoryUnusable, match="above the limit of 33,554,432"):
        load_history(path)


# --------------------------------------------------------------------------- flaky


def test_known_flaky_counts_failures_over_runs_with_unchanged_inputs():
    statuses = ["p", "f", "p", "f", "f", "p", "p", "f"]
    runs = [_run(f"c{i}", {"flaky": s, "steady": "p", "broken": "f"})
            for i, s in enumerate(statuses)]
    (flaky,) = known_flaky(History(runs=runs), ["travel"])
    assert flaky.key == ("travel", "smoke", "flaky")
    assert (flaky.recorded, flaky.failed, flaky.flips) == (8, 4, 5)  # counted by hand
    assert flaky.text == "failed 4 of the last 8 recorded runs on main, with unchanged inputs"
    assert flaky.flip_rate == pytest.approx(5 / 7)


@pytest.mark.parametrize("change", ["inputs", "adk", "judge"])
def test_a_change_of_inputs_google_adk_or_judge_starts_a_new_window(change):
    """The runs before the change are another agent (or another measure): the two failures
    there make no case flaky after it."""
    old: dict[str, Any] = {"inputs": "sha256:old"} if change == "inputs" else (
        {"adk": "1.23.0"} if change == "adk" else {"judge": "gemini-1.5"})
    runs = [_run(f"o{i}", {"a": s}, **old) for i, s in enumerate("ffpp")]
    runs += [_run(f"n{i}", {"a": "p"}) for i in range(4)]
    assert known_flaky(History(runs=runs), ["travel"]) == []
    assert [f.recorded for f in known_flaky(History(runs=runs[:4]), ["travel"])] == [4]


def test_runs_that_disagree_within_a_recorded_run_are_flaky_too():
    runs = [_run(f"c{i}", {"a": "pfp"}) for i in range(3)]
    (flaky,) = known_flaky(History(runs=runs), ["travel"])
    assert flaky.text == ("failed 3 of the last 3 recorded runs on main (3 of 9 runs), "
                          "with unchanged inputs")


def test_unknown_inputs_make_no_window():
    runs = [_run(f"c{i}", {"a": s}, inputs=None) for i, s in enumerate("pfpf")]
    assert known_flaky(History(runs=runs), ["travel"]) == []


# --------------------------------------------------------------------------- the gate


def _flaky_pr(quarantine: str):
    history = History(runs=[_run(f"c{i}", {"a": s, "b": "p"}) for i, s in enumerate("pfpf")])
    base = scores_side({"a": [1.0], "b": [1.0]})
    head = scores_side({"a": [0.0], "b": [1.0]})
    verdict = compare_and_gate(ScoreTable.from_results(head), ScoreTable.from_results(base), "b",
                               GateConfig(quarantine=quarantine),
                               history=HistoryInput(history=history))
    return verdict.gate, verdict.comparison


def test_quarantine_keeps_a_known_flaky_case_from_failing_the_gate_and_shows_it():
    gate, _ = _flaky_pr("flaky")
    assert gate.passed and [c.eval_id for c in gate.quarantined] == ["a"]
    assert [c.eval_id for c in gate.failing_cases] == ["a"]  # shown, never hidden
    assert any(w.startswith("quarantine: eval case `a` (travel) failed but is known flaky "
                            "(failed 2 of the last 4 recorded runs on main")
               for w in gate.warnings)


def test_without_quarantine_a_known_flaky_case_fails_as_any():
    gate, _ = _flaky_pr("off")
    assert not gate.passed and gate.quarantined == []


# --------------------------------------------------------------------------- pooling


def test_pooled_runs_are_the_baselines_own_runs_to_the_test():
    """Comparing with earlier recorded runs pooled gives exactly what comparing with a
    baseline that holds those runs itself gives (the independent route: a results file)."""
    base_scores = {"a": [1.0, 1.0, 0.0], "b": [1.0, 0.0, 1.0], "c": [0.0, 0.0, 1.0],
                   "d": [1.0, 1.0, 1.0]}
    earlier = {"a": [1.0, 0.0, 1.0, 1.0], "b": [1.0, 1.0], "c": [0.0, 1.0], "d": [1.0]}
    head = scores_side({"a": [0.0, 0.0, 1.0], "b": [0.0, 0.0, 0.0], "c": [0.0, 0.0, 0.0],
                        "d": [1.0, 0.0, 1.0]})
    base = scores_side(base_scores)
    pool = {("travel", "smoke", k, "response_match_score"): v for k, v in earlier.items()}
    pooled = compare(head, base, "b", pool=pool)
    whole = compare(head, scores_side({k: base_scores[k] + earlier[k] for k in base_scores}), "b")
    (p,), (w,) = pooled.metrics, whole.metrics
    assert pooled.pooled_scores == 9
    assert p.delta == pytest.approx(w.delta)
    assert p.baseline_matched == pytest.approx(w.baseline_matched)
    assert (p.interval.p_worse, p.interval.low, p.interval.high) == pytest.approx(
        (w.interval.p_worse, w.interval.low, w.interval.high))
    # By hand: the mean over cases of mean(head runs) - mean(all baseline runs).
    by_hand = np.mean([np.mean(h) - np.mean(base_scores[k] + earlier[k]) for k, h in
                       {"a": [0, 0, 1], "b": [0, 0, 0], "c": [0, 0, 0], "d": [1, 0, 1]}.items()])
    assert p.delta == pytest.approx(by_hand)


def test_pooling_takes_the_window_of_the_baselines_own_run():
    base = scores_side({"a": [1.0]})  # commit 0123456789abcdef0123
    sha = base.metadata.git_sha
    runs = [_run("old", {"a": "f"}, inputs="sha256:other"), _run("x1", {"a": "p"}),
            _run("x2", {"a": "f"}), _run(sha, {"a": "p"}), _run("later", {"a": "f"})]
    extra, note = pooled_runs(History(runs=runs), base, pool_runs=5)
    # x2 and x1 (newest first); not the baseline's own run, not older inputs, not later runs.
    assert note.commits == ["x2", "x1"] and note.recorded_runs == 2
    assert extra == {("travel", "smoke", "a", "response_match_score"): [0.0, 1.0]}
    assert pooled_runs(History(runs=runs), base, pool_runs=1)[1].commits == ["x2"]
    assert pooled_runs(History(runs=runs), base, pool_runs=5, skip=["travel"])[0] == {}
    assert pooled_runs(History(runs=runs[:3]), base, 5)[1].reason == (
        "the history holds no recorded run of the baseline's commit")


# --------------------------------------------------------------------------- inputs, trust


def test_the_inputs_hash_follows_the_agent_files_eval_sets_and_eval_config(tmp_path):
    agent = tmp_path / "agent"
    (agent / "__pycache__").mkdir(parents=True)
    (agent / "agent.py").write_text("x = 1\n")
    (agent / "__pycache__" / "agent.cpython-312.pyc").write_bytes(b"\0")
    (agent / ".adk").mkdir()
    first = folder_digest(agent)
    (agent / ".adk" / "history.json").write_text("{}")  # adk eval's own history: ignored
    assert folder_digest(agent) == first
    (agent / "agent.py").write_text("x = 2\n")
    assert folder_digest(agent) != first
    suite = SuiteRecord.model_validate({"name": "s", "eval_config_hash": "c1", "eval_sets": [
        {"eval_set_id": "e", "content_hash": "h1"}]})
    one = inputs_hash("sha256:a", suite)
    assert one != inputs_hash("sha256:b", suite)
    assert one != inputs_hash("sha256:a", suite.model_copy(update={"eval_config_hash": "c2"}))
    assert inputs_hash(None, suite) is None


def test_the_baseline_trust_record_flags_age_and_changed_inputs():
    head = results({"a": [[metric("m", 1.0)]]})
    head.suites[0].agent = "travel_agent"
    resolved = ResolvedBaseline(
        results=head, source="artifact", label="artifact x", commit="a" * 40,
        commit_url="https://github.example/o/r/commit/" + "a" * 40,
        run_url="https://github.example/o/r/actions/runs/7", recorded_at="2026-02-19T00:00:00Z",
        behind=2, merge_base="b" * 40, base_ref="main",
        changed_since=["README.md", "travel_agent/tools.py", "evals/smoke.evalset.json"])
    trust = baseline_trust(resolved, head, max_age_days=7, now=NOW)
    assert trust.age_days == pytest.approx(10)
    assert trust.flags == [
        "the baseline is 10 days old, older than baseline_max_age (7 days): scores recorded "
        "then may not be today's",
        "the suite inputs changed between the baseline (2 commit(s) behind the merge-base) "
        "and the merge-base: travel_agent/tools.py, evals/smoke.evalset.json"]
    assert trust_line(trust) == (
        f"commit [`aaaaaaa`](https://github.example/o/r/commit/{'a' * 40}) · "
        "[recorded run](https://github.example/o/r/actions/runs/7) · recorded 10 days ago · "
        "2 commits behind the merge-base with main")
    fresh = resolved.model_copy(update={"changed_since": ["README.md"], "behind": 0})
    assert baseline_trust(fresh, head, max_age_days=30, now=NOW).flags == []
    hostile = trust.model_copy(update={"run_url": "javascript:alert(1)", "commit": "x](y)"})
    shown = trust_line(hostile)
    assert "javascript" not in shown and not re.search(r"(?<!\\)\]\(", shown), shown


# --------------------------------------------------------------------------- trends


def test_each_gated_metric_is_charted_over_the_recorded_runs_then_the_head():
    runs = [_run(f"{i:07d}", {"a": "p"}) for i in range(8)]
    for i, run in enumerate(runs):
        run.suites[0].metrics[0].mean = i / 10
    head = scores_side({"a": [0.25]})
    comparison = compare(head, None, "")
    (trend,) = trends(History(runs=runs), comparison)
    assert [p.value for p in trend.points] == pytest.approx([i / 10 for i in range(8)] + [0.25])
    chart = trend_chart(trend)
    labels = chart.split("x-axis [", 1)[1].split("]", 1)[0].split(", ")
    assert len(labels) == 9 and labels[-1] == '"head"' and labels[0] == '"0000000"'
    assert "line [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.25]" in chart
    assert 'y-axis "mean" 0 --> 1' in chart
    # By hand: (value - 0) / (1 - 0) * 7, rounded half to even, into ▁▂▃▄▅▆▇█.
    assert sparkline(trend) == "▁▂▂▃▄▅▅▆ → ▃"
    assert math.isclose(trend.points[-1].value, 0.25)


def test_trend_chart_titles_tell_two_suites_of_one_agent_apart():
    """Two suites of one agent whose names differ only at their end, two metrics each, and
    a lower-is-better metric: every title is distinct (they read
    `home_automation_agent:test…ory_avg_score` twice)."""
    points = [TrendPoint(label="0000001", value=0.5), TrendPoint(label="head", value=0.6)]
    suites = ["home_automation_agent:tests/integration/fixture/memorizing_1",
              "home_automation_agent:tests/integration/fixture/memorizing_2"]
    trends_ = [MetricTrend(suite=s, metric_name=m, points=points)
               for s in suites for m in ("tool_trajectory_avg_score", "response_match_score")]
    trends_.append(MetricTrend(suite=suites[0], metric_name="token_usage_v1",
                               higher_is_better=False, points=points))
    assert trend_titles(trends_) == [
        "memorizing_1/tool_trajectory_avg_score",
        "memorizing_1/response_match_score",
        "memorizing_2/tool_trajectory_avg_score",
        "memorizing_2/response_match_score",
        "memorizing_1/token_usage_v1 ↓",
    ]
    chart = trend_chart(trends_[2], trend_titles(trends_)[2])
    assert chart is not None and '    title "memorizing_2/tool_trajectory_avg_score"' in chart
    # Names that a cut still leaves alike are numbered.
    long = [MetricTrend(suite=f"an_agent_of_a_long_name_{i}_and_a_longer_tail_to_it",
                        metric_name="tool_trajectory_avg_score", points=points) for i in (1, 2)]
    first, second = trend_titles(long)
    assert second == first[:36] + " #2"
