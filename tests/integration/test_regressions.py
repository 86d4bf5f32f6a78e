"""A drop that the thresholds let pass is seen: the headline names it, the comment shows the
evidence of the eval cases behind it (the baseline run's turn next to the head's), the job
summary lists every such case, and the action's ``regressed`` output and the console say
the same.

Real runs, through google-adk's ``LocalEvalService`` and the local fake of the Gemini API:

* the bundled example's 4-case eval set (``examples/travel_agent``, good vs regressed agent)
  under thresholds every answer of the regressed agent meets (``LENIENT``);
* the shape of google/adk-samples' ``customer-service``
  (``tests/fixtures/customer_service``: two legacy eval sets, thresholds 0.2, a wrong
  ``customer_id`` in every tool call).

Every expected delta is computed here from the two results files by hand (mean over eval
cases of each case's head − baseline), not read from the comparison.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from adk_eval_action.action import action_command
from adk_eval_action.analysis.gate import decide
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.headline import regressed_output
from adk_eval_action.results.io import load_results
from adk_eval_action.testing.gemini_fake import GeminiFake, load_script
from adk_eval_action.testing.gemini_faults import Fault
from conftest import (
    SHARED,
    CliRun,
    SharedRun,
    commit_all,
    copy_examples,
    load_json,
    shared_run,
)
from e2e.test_action import TOKEN, pull_request_event, read_outputs, runner_env
from support.github_stub import GitHubStub, Token
from support.tables import compare

CUSTOMER_SERVICE = Path(__file__).resolve().parents[1] / "fixtures" / "customer_service"
SHARED_SAMPLE = (SHARED / "fixtures/real-evalsets/google__adk-samples/python/agents/"
                 "customer-service/eval/eval_data")

LENIENT = """\
# The travel eval set under thresholds that every answer of the regressed agent meets.
suites:
  - name: travel
    agent: {agent}
    eval_sets: ["travel_agent/eval/travel.evalset.json"]
    eval_config: travel_agent/eval/test_config.json
    thresholds:
      tool_trajectory_avg_score: 0.0
      response_match_score: 0.2
      rubric_based_final_response_quality_v1: 0.5
      politeness: -1.0
      brevity: 50
"""

GATED = ("tool_trajectory_avg_score", "response_match_score",
         "rubric_based_final_response_quality_v1", "politeness", "brevity")


def case_means(path: Path) -> dict[str, dict[str, float]]:
    """Per eval case, each gated metric's mean over its runs, read from a results file."""
    out: dict[str, dict[str, float]] = {}
    for suite in load_json(path)["suites"]:
        for eval_set in suite["eval_sets"]:
            for case in eval_set["eval_cases"]:
                scores: dict[str, list[float]] = {}
                for run in case["runs"]:
                    for m in run["metrics"]:
                        if not m.get("informational") and m.get("score") is not None:
                            scores.setdefault(m["metric_name"], []).append(m["score"])
                out[case["eval_id"]] = {k: sum(v) / len(v) for k, v in scores.items()}
    return out


def hand_delta(base: Path, head: Path, name: str) -> float:
    """The metric's delta by hand: the mean over matched cases of head − baseline."""
    before, after = case_means(base), case_means(head)
    cases = [c for c in after if c in before and name in after[c] and name in before[c]]
    return sum(after[c][name] - before[c][name] for c in cases) / len(cases)


def signed(value: float) -> str:
    return f"{'+' if value > 0 else '−'}{abs(value):.3f}"


@pytest.fixture(scope="session")
def lenient_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[SharedRun, SharedRun]:
    """(baseline, head): ``run --config base.yaml`` (the good agent) and ``run --config
    head.yaml --baseline base.json`` (the regressed agent), both under ``LENIENT``."""
    root = copy_examples(tmp_path_factory.mktemp("lenient") / "repo")
    (root / "base.yaml").write_text(LENIENT.format(agent="travel_agent"))
    (root / "head.yaml").write_text(LENIENT.format(agent="travel_agent_regressed"))
    commit_all(root)
    base = shared_run(root, "--config", "base.yaml", results="base.json")
    head = shared_run(root, "--config", "head.yaml", "--baseline", "base.json",
                      results="head.json", comment="comment.md", summary="summary.md")
    return base, head


def test_thresholds_pass_and_the_headline_names_every_drop(lenient_runs) -> None:
    base, head = lenient_runs
    assert base.exit_code == 0 and head.exit_code == 0, head.output
    deltas = {name: hand_delta(base.results, head.results, name) for name in GATED}
    # Every gated metric got worse (brevity, lower is better, rose).
    assert all(deltas[n] < 0 for n in GATED[:4]) and deltas["brevity"] > 0
    comment = head.comment.read_text()
    # Largest drop first, as a share of each metric's range: politeness is in [-1, 1],
    # brevity in [0, 1000]; the headline names four and counts the fifth.
    order = sorted(GATED[:4], key=lambda n: deltas[n] / (2 if n == "politeness" else 1))
    named = ", ".join(f"`{n}` {signed(deltas[n])}" for n in order)
    headline = (f"✅ **ADK eval passed**: 4/4 eval cases passed · ⚠️ {named} vs baseline "
                "(not gated: fail\\_on threshold); and 1 more (see the table).")
    assert comment.splitlines()[2] == headline
    assert order == ["politeness", "response_match_score", "tool_trajectory_avg_score",
                     "rubric_based_final_response_quality_v1"]
    console = next(line for line in head.output.splitlines() if line.startswith("gate "))
    plain = ", ".join(f"{n} {signed(deltas[n])}" for n in order)
    assert console == (f"gate PASSED: 4/4 eval cases passed; worse: {plain} vs baseline "
                       "(not gated: fail_on threshold); and 1 more (see the table)")


def _blocks(markdown: str) -> dict[str, str]:
    """The evidence blocks of the "What got worse" section, by eval case."""
    section = markdown.split("### What got worse than the baseline", 1)[1]
    section = re.split(r"\n#{2,3} |\n<details><summary>Eval cases", section)[0]
    return {m.group(1): m.group(0) for m in re.finditer(
        r"<details(?: open)?><summary><code>([^<]+)</code>.*?</details>", section, re.S)}


def test_the_comment_shows_why_each_passing_case_got_worse(lenient_runs) -> None:
    _, head = lenient_runs
    blocks = _blocks(head.comment.read_text())
    # Largest drop first, as a share of the metric's range (paris's trajectory 1 → 0 and
    # currency's politeness 1 → -1 are both the whole range: case order).
    assert list(blocks) == ["weather_paris", "currency_usd_eur", "multi_turn_trip",
                            "weather_tokyo_rubrics"]
    paris = blocks["weather_paris"]
    assert "@@ turn 1 of 1: baseline (-) vs head (+) @@" in paris
    assert '- get_weather(city="Paris")\n+ get_weather(city="paris")' in paris
    assert "📉 `tool_trajectory_avg_score` 1.000 → 0.000 in this eval case, threshold ≥ 0" \
        in paris
    # A custom metric's reason, from the head run.
    currency = blocks["currency_usd_eur"]
    assert ("📉 `politeness` 1.000 → -1.000 in this eval case, threshold ≥ -1: turn 1 rude: "
            "says 'obviously', 'whatever'") in currency
    assert "- Happy to help! 100 USD is 90.00 EUR.\n+ Obviously 100 USD is 90.00 EUR." \
        in currency
    # The judge's own "no", with its rationale, on the rubric the baseline run passed.
    tokyo = blocks["weather_tokyo_rubrics"]
    assert ("- Happy to help! It is cloudy in Tokyo at 18 degrees Celsius.\n"
            "+ Happy to help! It is cloudy in Tokyo at 18 degrees.") in tokyo
    assert ('⚖️ rubric `states_celsius` “The final answer gives the temperature in "Celsius".”: '
            "no on turn 1, judge: missing 'Celsius'.") in tokyo
    assert "`no_apology`" not in tokyo  # a "yes" on both sides is not evidence
    # The multi-turn case: its first turn that scored worse than the baseline's.
    trip = blocks["multi_turn_trip"]
    assert "@@ turn 2 of 3: baseline (-) vs head (+) @@" in trip


def test_the_job_summary_lists_every_case_that_got_worse(lenient_runs) -> None:
    base, head = lenient_runs
    summary = head.summary.read_text()
    table = summary.split("<summary>Eval cases worse than the baseline: 4</summary>", 1)[1]
    rows = [line for line in table.split("</details>")[0].splitlines()
            if line.startswith("| travel |")]
    before, after = case_means(base.results), case_means(head.results)
    assert {row.split(" | ")[2].strip("`") for row in rows} == set(after)
    paris = next(r for r in rows if "`weather_paris`" in r)
    assert paris.endswith("| passed | `tool_trajectory_avg_score` 1 → 0 |")
    currency = next(r for r in rows if "`currency_usd_eur`" in r)
    worse = [name for name in GATED if (after["currency_usd_eur"][name]
             - before["currency_usd_eur"][name]) * (-1 if name == "brevity" else 1) < 0]
    assert currency.count("→") == len(worse) == 4  # its tool call did not change
    assert len(_blocks(summary)) == 4


def test_fail_on_any_fails_with_the_same_evidence(lenient_runs, cli: CliRun) -> None:
    base, head = lenient_runs
    out = head.root / "any.md"
    result = cli("compare", str(head.results), "--baseline", str(base.results),
                 "--fail-on", "any", "--comment-out", str(out))
    assert result.exit_code == 1, result.output
    comment = out.read_text()
    assert comment.splitlines()[2].startswith("❌ **ADK eval failed**: 4/4 eval cases passed. "
                                              "Failed rules:")
    delta = hand_delta(base.results, head.results, "tool_trajectory_avg_score")
    assert (f"- max\\_regression: `tool_trajectory_avg_score` (travel) dropped by "
            f"{-delta:.3f}") in comment
    # compare reads tables that keep the records of passing cases too: the same evidence.
    assert _blocks(comment) == _blocks(head.comment.read_text())


def test_customer_service_shape_warns_and_shows_the_changed_tool_call(
    tmp_path: Path, gemini_api: GeminiFake, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """adk-samples' customer-service: thresholds 0.2, a wrong tool argument in every case:
    tool_trajectory_avg_score 1.000 → 0.450, both cases still pass, exit 0; the headline,
    the console and the ``regressed`` output say so, and the comment shows the call."""
    gemini_api.agents = load_script(CUSTOMER_SERVICE / "gemini_fake.yaml").agents
    ws = tmp_path / "ws"
    shutil.copytree(CUSTOMER_SERVICE, ws)
    config = ("suites:\n  - name: customer_service\n    agent: {}\n"
              "    eval_sets: [\"eval/eval_data/*.test.json\"]\n"
              "    eval_config: eval/eval_data/test_config.json\n")
    (ws / "base.yaml").write_text(config.format("customer_service"))
    (ws / "adk-eval.yaml").write_text(config.format("customer_service_regressed"))
    base = shared_run(ws, "--config", "base.yaml", results="base.json")
    assert base.exit_code == 0, base.output
    with GitHubStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as stub:
        stub.add_pull(12, "a" * 40)
        env = runner_env(ws, stub, pull_request_event(tmp_path / "event.json"),
                         baseline="base.json")
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(action_command, [], env=env)
        assert result.exit_code == 0, result.output
        (posted,) = stub.comments(12)
    delta = hand_delta(ws / "base.json", ws / "adk-eval-results.json",
                       "tool_trajectory_avg_score")
    assert delta == pytest.approx(-0.55)  # (1/2 + 4/10) / 2 − 1
    headline = ("✅ **ADK eval passed**: 2/2 eval cases passed · ⚠️ "
                "`tool_trajectory_avg_score` −0.550 vs baseline (not gated: fail\\_on "
                "threshold).")
    assert headline in posted["body"].splitlines()
    assert ('- access_cart_information(customer_id="123")\n'
            '+ access_cart_information(customer_id="124")') in posted["body"]
    assert "also worse than the baseline on turns 3, 4, 5, 7, 9" in posted["body"]
    outputs = read_outputs(tmp_path / "output.txt")
    assert outputs["passed"] == "true"
    regressed: list[dict[str, Any]] = json.loads(outputs["regressed"])
    assert regressed == [{
        "suite": "customer_service", "metric": "tool_trajectory_avg_score", "rubric": None,
        "eval_set": None, "eval_case": None, "delta": pytest.approx(delta),
        "classification": "inconclusive", "gated": False, "note": "not gated: fail_on threshold"}]
    assert ("gate PASSED: 2/2 eval cases passed; worse: tool_trajectory_avg_score −0.550 vs "
            "baseline (not gated: fail_on threshold)") in result.output
    summary = (tmp_path / "summary.md").read_text()
    assert "<summary>Eval cases worse than the baseline: 2</summary>" in summary


@pytest.mark.reference
@pytest.mark.skipif(not SHARED_SAMPLE.is_dir(), reason="the adk-samples fixture is not "
                    "beside this clone (../shared); the shape is written in the README")
def test_the_fixture_keeps_the_samples_shape() -> None:
    """Optional: against google/adk-samples' own files, the fixture has the same turns,
    the same tool calls on the same turns and the same thresholds."""
    for name in ("simple.test.json", "full_conversation.test.json", "test_config.json"):
        ours = json.loads((CUSTOMER_SERVICE / "eval/eval_data" / name).read_text())
        theirs = json.loads((SHARED_SAMPLE / name).read_text())
        if name == "test_config.json":
            assert ours == theirs
            continue
        assert [[(c["tool_name"], c["tool_input"]) for c in t["expected_tool_use"]]
                for t in ours] == [[(c["tool_name"], c["tool_input"])
                                    for c in t["expected_tool_use"]] for t in theirs]


RAISE_FOR_PARIS = ('    if name == "Paris":\n'
                   '        raise RuntimeError("weather service down")\n')


@pytest.fixture(scope="session")
def crashed_run(good_run: SharedRun, tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """The example agent with ``get_weather`` raising for Paris, compared with ``good_run``
    (every case passed) under ``min_pass_rate: 0.6`` and the default ``fail_on:
    threshold``."""
    root = copy_examples(tmp_path_factory.mktemp("crashed") / "repo")
    agent = root / "travel_agent/agent.py"
    anchor = "    if name not in _WEATHER:\n"
    agent.write_text(agent.read_text().replace(anchor, RAISE_FOR_PARIS + anchor))
    commit_all(root)
    return shared_run(root, "travel_agent", "--baseline", str(good_run.results),
                      "--min-pass-rate", "0.6", results="head.json", comment="comment.md")


def _crashed_by_hand(base: Path, head: Path) -> dict[str, str]:
    """Eval id -> the head's run error, for the cases whose every baseline run passed and
    a head run raised: read from the two results files."""
    def runs(path: Path) -> dict[str, list[dict[str, Any]]]:
        return {c["eval_id"]: c["runs"] for s in load_json(path)["suites"]
                for e in s["eval_sets"] for c in e["eval_cases"]}
    before, after = runs(base), runs(head)
    return {
        eval_id: next(r["error"] for r in head_runs if r.get("error"))
        for eval_id, head_runs in after.items()
        if any(r.get("error") for r in head_runs)
        and all(r["status"] == "passed" for r in before.get(eval_id, [{"status": "x"}]))
    }


def test_cases_that_crash_are_named_though_the_thresholds_pass(
    good_run: SharedRun, crashed_run: SharedRun
) -> None:
    crashed = _crashed_by_hand(good_run.results, crashed_run.results)
    assert sorted(crashed) == ["legacy_weather", "weather_paris"]
    assert all(e.startswith("the agent raised RuntimeError: weather service down (at "
                            "travel_agent/agent.py:") for e in crashed.values())
    assert crashed_run.exit_code == 0, crashed_run.output  # 3/5 meets min_pass_rate 0.6
    comment = crashed_run.comment.read_text()
    assert comment.splitlines()[2] == (
        "✅ **ADK eval passed**: 3/5 eval cases passed · ⚠️ 2 eval cases newly failing "
        "(crashed: `legacy_weather`, `weather_paris`; not gated: fail\\_on threshold).")
    assert ("gate PASSED: 3/5 eval cases passed; worse: 2 eval cases newly failing (crashed: "
            "legacy_weather, weather_paris; not gated: fail_on threshold)") in crashed_run.output
    # The metrics the crashed cases never got: 3 of 5 runs passed, 2 crashed (not 100% ✅).
    row = next(line for line in comment.splitlines() if "| `tool_trajectory_avg_score` " in line)
    assert row.endswith("| 60% ❌ 2 crashed |"), row


@pytest.mark.parametrize("fail_on", ["regression", "any"])
def test_the_regression_rule_fails_on_cases_that_crashed(
    good_run: SharedRun, crashed_run: SharedRun, cli: CliRun, fail_on: str
) -> None:
    out = crashed_run.root / f"{fail_on}.md"
    result = cli("compare", str(crashed_run.results), "--baseline", str(good_run.results),
                 "--fail-on", fail_on, "--min-pass-rate", "0.6", "--comment-out", str(out))
    assert result.exit_code == 1, result.output  # the agent's own code raised
    crashed = _crashed_by_hand(good_run.results, crashed_run.results)
    reason = ("newly failing: 2 eval cases passed on the baseline and crashed: "
              f"`legacy_weather` (travel_agent): {crashed['legacy_weather']}; "
              f"`weather_paris` (travel_agent): {crashed['weather_paris']}")
    assert f"  - {reason}" in result.output.splitlines()
    headline = out.read_text().splitlines()[2]
    assert headline.startswith("❌ **ADK eval failed**: 3/5 eval cases passed. ")
    # The action's `regressed` output lists the same cases, gated.
    comparison = compare(load_results(crashed_run.results), load_results(good_run.results), "")
    gate = decide(comparison, GateConfig(fail_on=fail_on, min_pass_rate=0.6))
    suites = {s["name"]: s for s in load_json(crashed_run.results)["suites"]}
    eval_sets = {c["eval_id"]: e["eval_set_id"] for s in suites.values()
                 for e in s["eval_sets"] for c in e["eval_cases"]}
    assert [r for r in regressed_output(gate) if r["eval_case"]] == [
        {"suite": "travel_agent", "metric": None, "rubric": None,
         "eval_set": eval_sets[eval_id], "eval_case": eval_id, "delta": None,
         "classification": None, "gated": True, "note": ""}
        for eval_id in ("legacy_weather", "weather_paris")]
    assert "newly failing: 2 eval cases passed on the baseline and crashed: `legacy_weather`" \
        in headline


def test_cases_that_crash_for_a_model_outage_leave_the_run_incomplete(
    good_run: SharedRun, example_repo: Path, cli: CliRun, gemini_api: GeminiFake
) -> None:
    """The same regression rule, but the cases crash because the model cannot be reached:
    not the agent's doing, so the run is incomplete (exit 2), never "failed"."""
    (example_repo / "adk-eval.yaml").write_text(
        "model_retries: {attempts: 1, initial_delay_s: 0.01}\n", encoding="utf-8")
    gemini_api.faults = [Fault(status=503, role="agent")]
    result = cli("run", "travel_agent", "--baseline", str(good_run.results), "--fail-on",
                 "regression", "--results-out", "r.json", "--comment-out", "c.md")
    assert result.exit_code == 2, result.output
    crashed = _crashed_by_hand(good_run.results, example_repo / "r.json")
    assert len(crashed) == 5 and all("503 UNAVAILABLE" in e for e in crashed.values())
    headline = (example_repo / "c.md").read_text().splitlines()[2]
    assert headline.startswith("⚠️ **ADK eval incomplete** (model unreachable): ")
    assert "failed" not in headline.lower()
    assert "gate INCOMPLETE (model unreachable): " in result.output
    assert "FAILED" not in result.output
