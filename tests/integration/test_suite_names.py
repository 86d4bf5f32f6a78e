"""Readable suite names (project.names), labels cut where they say least (text.shorten,
report.chart, report.format, github.logs.case_title), and old results files whose suites
carry the long names of earlier versions still compared suite by suite
(results.identity)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.adk.cli.cli_tools_click import main as adk_main

from adk_eval_action.github.logs import GitHubFormatter, log_to
from adk_eval_action.github.publish import log_suites
from adk_eval_action.project.discovery import discover_suites
from adk_eval_action.project.names import MAX_SUITE_NAME, short_names, suite_identity
from adk_eval_action.report.chart import MAX_LABEL_CHARS, build_charts
from adk_eval_action.results.identity import baseline_renames
from adk_eval_action.results.model import EvalSetRecord, SuiteRecord
from adk_eval_action.run.pipeline import run_pipeline
from adk_eval_action.settings import load_request
from adk_eval_action.text import shorten
from conftest import CliRun, as_adk_eval_starts, load_json
from support.layouts import HOME, adk_python

ROOT_SUITE = "home_automation_agent"
FILES_SUITE = "home_automation_agent:test_files"
EVENTS_SUITE = "home_automation_agent:test_files/memorizing_past_events"
# What earlier versions named these suites: the agent's name, then (three suites of one
# agent) its path, then the path and the eval config's folder, 105 to 130 characters.
OLD_NAMES = {
    ROOT_SUITE: f"{HOME}:{HOME}",
    FILES_SUITE: f"{HOME}:{HOME}/test_files",
    EVENTS_SUITE: f"{HOME}:{HOME}/test_files/memorizing_past_events",
}
EVENTS_ID = f"{HOME}/test_files/memorizing_past_events/eval_data.test.json"


def test_three_suites_of_one_agent_get_short_unique_names(tmp_path: Path) -> None:
    """adk-python's home_automation_agent: three folders of eval sets, each with its own
    test_config.json. The agent's folder names the suite at its own folder; the others add
    their folder relative to the agent's."""
    agent = adk_python(tmp_path)
    suites = discover_suites([tmp_path], tmp_path)
    by_name = {s.name: s for s in suites}
    assert set(by_name) == {ROOT_SUITE, FILES_SUITE, EVENTS_SUITE}
    assert by_name[ROOT_SUITE].eval_config_path == agent / "test_config.json"
    assert by_name[FILES_SUITE].eval_config_path == agent / "test_files/test_config.json"
    assert by_name[EVENTS_SUITE].eval_set_paths == [
        agent / "test_files/memorizing_past_events/eval_data.test.json"]
    assert max(len(n) for n in OLD_NAMES.values()) == 129
    assert all(len(s.name) <= MAX_SUITE_NAME for s in suites)


def test_same_named_agents_and_agents_beside_their_eval_sets() -> None:
    assert short_names([
        ("agents/adk/app", "agents/adk/tests/eval/evalsets"),
        ("agents/adk_a2a/app", "agents/adk_a2a/tests/eval/evalsets"),
        ("other/app", "other/tests/eval/evalsets"),
    ]) == ["adk/app", "adk_a2a/app", "other/app"]
    # adk-samples: eval sets beside the agent package, told apart relative to the folder
    # both are in; one suite alone needs no folder.
    assert short_names([
        ("shop/personalized_shopping", "shop/eval/eval_data"),
        ("shop/personalized_shopping", "shop/tests/tools"),
        ("rag/rag", "rag/eval/data"),
    ]) == ["personalized_shopping:eval/eval_data", "personalized_shopping:tests/tools", "rag"]


def test_long_names_are_cut_in_the_middle_and_stay_unique() -> None:
    deep = "a_rather_long_agent_name"
    folder = f"{deep}/" + "/".join(f"level_{i}" for i in range(12))
    names = short_names([(deep, folder + "/x_cases"), (deep, folder + "/y_cases"),
                         (deep, deep)])
    assert names == [
        "a_rather_long_agent_name:…/level_9/level_10/level_11/x_cases",
        "a_rather_long_agent_name:…/level_9/level_10/level_11/y_cases",
        "a_rather_long_agent_name",
    ]
    assert all(len(n) <= MAX_SUITE_NAME for n in names)
    # Cut alike, two names are made unique without passing the limit.
    levels = "/".join(f"level_{i}" for i in range(12))
    twins = short_names([(deep, f"{deep}/one/{levels}"), (deep, f"{deep}/two/{levels}"),
                         (deep, deep)])
    assert twins[0] == "a_rather_long_agent_name:…/level_8/level_9/level_10/level_11"
    assert twins[0] != twins[1] and twins[1].endswith(" #2")
    assert all(len(n) <= MAX_SUITE_NAME for n in twins)


@pytest.mark.parametrize(("text", "limit", "shown"), [
    (EVENTS_ID, 60, "tests/integratio…/memorizing_past_events/eval_data.test.json"),
    (EVENTS_ID, 30, "tests/int…/eval_data.test.json"),
    (EVENTS_SUITE, 40, "home_…:test_files/memorizing_past_events"),
    ("rubric_based_final_response_quality_v1", 20, "rubric_based_…ity_v1"),
    ("short", 5, "short"),
])
def test_shorten_keeps_what_tells_names_apart(text: str, limit: int, shown: str) -> None:
    assert shorten(text, limit) == shown
    assert len(shown) <= limit


def _record(name: str, agent: str | None, *files: str) -> SuiteRecord:
    return SuiteRecord(name=name, agent=agent, eval_sets=[
        EvalSetRecord(eval_set_id=Path(f).stem, file=f) for f in files])


def test_baseline_suites_are_renamed_only_when_one_identity_matches() -> None:
    head = [_record("a", "x/a", "x/a/eval/s.test.json"),
            _record("a:other", "x/a", "x/a/other/t.test.json"),
            _record("b", "y/b", "y/b/e.test.json"),
            _record("gone", None, "z.test.json")]
    base = [_record("x/a:x/a/eval", "x/a", "x/a/eval/s.test.json", "x/a/eval/u.test.json"),
            _record("x/a:x/a/other", "x/a", "x/a/other/t.test.json"),
            _record("b", "y/b", "y/b/e.test.json"),
            _record("old", None, "z.test.json")]
    assert suite_identity("x/a", ["x/a/eval/s.test.json"]) == "x/a:x/a/eval"
    assert baseline_renames(base, head) == {"x/a:x/a/eval": "a", "x/a:x/a/other": "a:other"}
    # Two baseline suites of one identity: none is chosen.
    twice = [*base, _record("x/a:again", "x/a", "x/a/eval/v.test.json")]
    assert baseline_renames(twice, head) == {"x/a:x/a/other": "a:other"}


def _fail_one_turn(agent: Path) -> None:
    """The memorizing eval set expects the wrong device in its second turn: that suite's
    tool trajectory drops from 1.0 to 0.5."""
    path = agent / "test_files/memorizing_past_events/eval_data.test.json"
    data = json.loads(path.read_text())
    data["eval_cases"][0]["conversation"][1]["intermediate_data"]["tool_uses"][0]["args"] = {
        "device_id": "device_4"}
    path.write_text(json.dumps(data))


def _as_recorded_before(path: Path) -> None:
    """A results file as earlier versions wrote it: the same suites under their long names."""
    data = json.loads(path.read_text())
    for suite in data["suites"]:
        suite["name"] = OLD_NAMES[suite["name"]]
    path.write_text(json.dumps(data))


def test_three_suites_compared_with_a_baseline_of_their_old_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun
) -> None:
    agent = adk_python(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli("run", "--baseline", "none", "--results-out", "base.json").exit_code == 0
    _as_recorded_before(tmp_path / "base.json")
    _fail_one_turn(agent)
    outcome = run_pipeline(load_request(tmp_path, flags={
        "baseline": "base.json", "results_path": Path("head.json"),
        "comparison_out": Path("comparison.json")}))
    assert outcome.exit_code == 1
    assert [s["name"] for s in load_json(tmp_path / "head.json")["suites"]] == [
        ROOT_SUITE, EVENTS_SUITE, FILES_SUITE]

    # Every eval case and metric is matched with its baseline across the renaming.
    comparison = load_json(tmp_path / "comparison.json")
    assert {c["change"] for c in comparison["cases"]} == {"newly_failing", "unchanged"}
    (failing,) = [c for c in comparison["cases"] if c["change"] == "newly_failing"]
    assert (failing["suite"], failing["eval_id"]) == (EVENTS_SUITE, EVENTS_ID)
    trajectory = {m["suite"]: m for m in comparison["metrics"]
                  if m["metric_name"] == "tool_trajectory_avg_score"}
    assert {s: (m["baseline"]["mean"], m["head"]["mean"]) for s, m in trajectory.items()} == {
        ROOT_SUITE: (1.0, 1.0), FILES_SUITE: (1.0, 1.0), EVENTS_SUITE: (1.0, 0.5)}
    assert not [n for n in comparison["comparability"] if "no baseline" in n]
    # `compare` of the two files matches them the same way.
    again = cli("compare", "head.json", "--baseline", "base.json", "--json-out", "c2.json")
    assert again.exit_code == 1, again.output
    assert load_json(tmp_path / "c2.json")["cases"] == comparison["cases"]

    # The comment's main table: one per suite, under the suite's whole name.
    lines = outcome.comment_markdown.splitlines()
    names = {lines[i - 2].strip("*").replace("\\_", "_") for i, x in enumerate(lines)
             if x.startswith("| Metric |")}
    assert names >= {ROOT_SUITE, FILES_SUITE, EVENTS_SUITE}

    # The summary's chart: suite tag and metric, distinct, within the label limit.
    labels = [r.label for c in build_charts(outcome.comparison).charts for r in c.rows]
    assert "memorizin…ents/tool_trajectory_avg_score" in labels
    assert "test_files/tool_trajectory_avg_score" in labels
    assert len(set(labels)) == len(labels) and not [x for x in labels if "#" in x]
    assert all(len(x) <= MAX_LABEL_CHARS for x in labels)
    assert "memorizin…ents/tool_trajectory_avg_score" in outcome.summary_markdown

    # The failing case's annotation: a title that keeps the suite's end and the file name.
    stream = io.StringIO()
    with log_to(stream, GitHubFormatter()):
        log_suites(outcome, tmp_path, tmp_path)
    (annotation,) = [x for x in stream.getvalue().splitlines() if x.startswith("::error ")]
    title = re.search(r"title=([^,:]*(?:%3A[^,:]*)*)::", annotation).group(1)
    assert title.replace("%3A", ":") == (
        "home_…:test_files/memorizing_past_events: "
        "tests/integratio…/memorizing_past_events/eval_data.test.json")


@pytest.fixture
def adk_eval_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as `adk eval home_automation_agent ...` starts it (no agent module of
    another test), and ADK's logging set-up and agent imports undone afterwards."""
    with as_adk_eval_starts(monkeypatch, ("agent", ROOT_SUITE)):
        yield


def test_an_adk_eval_history_is_compared_in_the_suite_that_evaluates_its_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun, adk_eval_process: None
) -> None:
    """google-adk's own `adk eval` of one eval set of adk-python's layout, as its README
    runs it from the fixture folder: the history's suite is the app's folder name, which is
    another suite here; its case is matched in the suite that evaluates it, by eval set id
    and eval id, never called removed."""
    agent = adk_python(tmp_path)
    monkeypatch.chdir(agent.parent)
    done = CliRunner().invoke(adk_main, [
        "eval", ROOT_SUITE, f"{ROOT_SUITE}/test_files/simple_test.test.json",
        "--config_file_path", f"{ROOT_SUITE}/test_files/test_config.json",
    ], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    history = agent / ".adk" / "eval_history"
    (written,) = [load_json(p) for p in history.glob("*.evalset_result.json")]
    (adk_case,) = written["eval_case_results"]
    adk_score = next(m["score"] for m in adk_case["overall_eval_metric_results"]
                     if m["metric_name"] == "tool_trajectory_avg_score")
    files_id = f"{HOME}/test_files/simple_test.test.json"
    assert (written["eval_set_id"], adk_case["eval_id"]) == ("9100bfc9", files_id)

    monkeypatch.chdir(tmp_path)
    outcome = run_pipeline(load_request(tmp_path, flags={
        "baseline": str(history), "results_path": Path("head.json"),
        "comparison_out": Path("comparison.json")}))
    assert outcome.exit_code == 0, outcome.comment_markdown
    comparison = load_json(tmp_path / "comparison.json")
    changes = {(c["suite"], c["eval_id"]): c["change"] for c in comparison["cases"]}
    assert changes == {(ROOT_SUITE, f"{HOME}/simple_test.test.json"): "new",
                       (FILES_SUITE, files_id): "unchanged", (EVENTS_SUITE, EVENTS_ID): "new"}
    (row,) = [m for m in comparison["metrics"] if m["suite"] == FILES_SUITE
              and m["metric_name"] == "tool_trajectory_avg_score"]
    assert (row["baseline"]["mean"], row["head"]["mean"], row["delta"]) == (adk_score, 1.0, 0.0)
    assert "(removed)" not in outcome.comment_markdown
    without = {g["suite"]: g["why"] for g in comparison["suites_without_baseline"]}
    assert FILES_SUITE not in without and without[ROOT_SUITE] == "absent"
    assert f"No baseline for suite `{ROOT_SUITE}`: not in the baseline run" in (
        outcome.comment_markdown)
    # `compare` of the head's file with the history matches them the same way.
    again = cli("compare", "head.json", "--baseline", str(history), "--json-out", "c2.json")
    assert again.exit_code == 0, again.output
    assert load_json(tmp_path / "c2.json")["cases"] == comparison["cases"]
