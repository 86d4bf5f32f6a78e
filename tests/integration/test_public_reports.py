"""Public reports of evaluating google-adk agents, each a folder of ``tests/fixtures/reported/``
(its README names the report and the right value), run with ``adk-eval-action run ...
--baseline none`` through real google-adk and the stand-in models; where google-adk's own
``adk eval`` can say what the right value is, it is run on the same folder and is the oracle.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.adk.cli.cli_tools_click import main as adk_main

from adk_eval_action.adk.compat import CASE_RUBRICS_ALONE
from conftest import CliRun, as_adk_eval_starts
from support.adk_features import needs_case_rubrics_alone
from support.reported import Run, only_metric, reported_runner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reported"


@pytest.fixture
def reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun) -> Run:
    """``run(folder, *args)`` on a copy of a folder of ``tests/fixtures/reported``."""
    return reported_runner(FIXTURES, tmp_path, monkeypatch, cli)


def _adk_eval_score(agent_dir: Path, eval_set: Path, config: Path, metric: str,
                    monkeypatch: pytest.MonkeyPatch) -> float | None:
    """``metric``'s score of the one eval case as google-adk's own ``adk eval`` gives it
    (its click command, in this process, as the command starts). The eval set is named
    from its own folder: google-adk 2.13 makes a legacy file's path its eval set id, which
    may hold no path separator."""
    monkeypatch.chdir(eval_set.parent)
    with as_adk_eval_starts(monkeypatch, ("agent", agent_dir.name)):
        completed = CliRunner().invoke(adk_main, [
            "eval", str(agent_dir), eval_set.name, "--config_file_path", str(config),
        ], catch_exceptions=False)
    assert completed.exit_code in (0, 1), completed.output
    (history,) = (agent_dir / ".adk" / "eval_history").glob("*.evalset_result.json")
    data = json.loads(history.read_text(encoding="utf-8"))
    (case,) = data["eval_case_results"]
    (found,) = [m for m in case["overall_eval_metric_results"] if m["metric_name"] == metric]
    score: float | None = found["score"]
    return score


def test_wrapped_legacy_list_with_trajectory_metric_accepted_as_adk_eval(
    reported: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrapped legacy list (``[{name, data, initial_session}]``) whose turns have no
    ``expected_tool_use``, under ``tool_trajectory_avg_score``: ``adk eval`` accepts it
    and reads the missing key as no tool call expected; so does this tool, with the same
    score (0.5: the greeting calls no tool, the gate check calls one), the absent key noted
    once for the file, and the case failing its 1.0 threshold (exit 1, not 2)."""
    code, output, results = reported("legacy_trajectory", "patrol_bot")
    assert code == 1, output
    assert results is not None
    ours = only_metric(results, "tool_trajectory_avg_score")["score"]
    assert output.count("have no `expected_tool_use`") == 1
    assert ("rounds.test.json: 2 of 2 turns have no `expected_tool_use`: `adk eval` reads "
            "that as no tool call expected") in output

    copy = tmp_path / "oracle"
    root = copy / "legacy_trajectory"

    shutil.copytree(FIXTURES / "legacy_trajectory", root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    eval_dir = root / "patrol_bot" / "eval"
    adk = _adk_eval_score(root / "patrol_bot", eval_dir / "rounds.test.json",
                          eval_dir / "test_config.json", "tool_trajectory_avg_score",
                          monkeypatch)
    assert ours == adk == 0.5


def test_wrapped_legacy_list_with_a_misspelt_key_refused_with_the_key_meant(
    reported: Run
) -> None:
    """The same file with ``expected_tool_uses`` for ``expected_tool_use`` on the turn that
    calls a tool: the misspelling, which ``adk eval`` would silently read as no tool call
    expected, is refused (exit 2) naming the case, the turn and the key meant."""
    code, output, results = reported("legacy_trajectory", "--config", "misspelt.yaml")
    assert code == 2 and results is not None
    (error,) = [e for suite in results["suites"] for e in suite["errors"]]
    assert error["kind"] == "eval_set"
    assert ("legacy case `night_round`, turn 2 has no `expected_tool_use`, which "
            "`tool_trajectory_avg_score` needs") in error["message"]
    assert "`expected_tool_uses` is perhaps `expected_tool_use` misspelt" in error["message"]


def test_agent_tool_inner_calls_said_on_the_evidence_line(reported: Run, tmp_path: Path) -> None:
    """A tool called inside an ``AgentTool`` (google/adk-python#3493, #3652): google-adk
    records the ``stock_agent`` call, not the ``check_stock`` call its agent made, so the
    trajectory scores 0.0 (google-adk's score, kept: exit 1). The evidence line of the
    expected ``check_stock`` says it is not in the recorded trajectory because the AgentTool
    called on that turn has it, instead of "(not called)" for a tool that ran."""
    code, output, results = reported("agent_tool_calls", "shop_bot")
    assert code == 1, output
    assert results is not None
    assert only_metric(results, "tool_trajectory_avg_score")["score"] == 0.0
    (suite,) = results["suites"]
    assert {a["name"]: a["tools"] for a in suite["agents"]} == {
        "shop_bot": ["stock_agent"], "stock_agent": ["check_stock"]}
    comment = next(tmp_path.rglob("comment.md")).read_text(encoding="utf-8")
    evidence = comment.split("### Why eval cases fail", 1)[1].split("</details>", 1)[0]
    assert ('- check_stock(sku="SKU-9")    (not in the recorded trajectory: the AgentTool '
            "stock_agent called on this turn has this tool, and google-adk does not record "
            "the calls made inside an AgentTool)") in evidence
    assert "(not called)" not in evidence
    assert '+ stock_agent(request="SKU-9")    (not expected)' in evidence


@needs_case_rubrics_alone
def test_eval_case_rubrics_typed_for_another_metric_config_error_before_any_call(
    reported: Run,
) -> None:
    """Eval-case rubrics typed for another metric (adk-docs PR #1853): ``two_plus_three``
    has two TOOL_USE_QUALITY rubrics and the eval config judges FINAL_RESPONSE_QUALITY with
    no criterion rubrics, so google-adk would raise "Rubrics are required." after the agent
    ran. It is a config error naming the case, file and line before any call for it: the
    case is left out (no model call: one agent and one judge call, ``greeting``'s), the other
    case is still evaluated, and the run is incomplete (exit 2), never "the code of ...
    failed"."""
    code, output, results = reported("typed_rubrics", "tutor_bot")
    assert code == 2, output
    assert results is not None
    (suite,) = results["suites"]
    (error,) = suite["errors"]
    assert error["kind"] == "config"
    assert (error["file"], error["line"], error["eval_id"]) == (
        "tutor_bot/eval/sums.evalset.json", 5, "two_plus_three")
    assert error["message"].startswith(
        "tutor_bot/eval/sums.evalset.json: eval case `two_plus_three` has 2 rubrics of type "
        "TOOL_USE_QUALITY, none of type FINAL_RESPONSE_QUALITY, so metric "
        "`rubric_based_final_response_quality_v1` has nothing to judge;")
    cases = [c["eval_id"] for s in suite["eval_sets"] for c in s["eval_cases"]]
    assert cases == ["greeting"]
    usage = {u["role"]: u["calls"] for u in results["metadata"]["model_calls"]["usage"]}
    assert usage == {"agent": 1, "judge": 1}
    assert "failed" not in error["message"] and "the code of" not in output


@pytest.mark.skipif(CASE_RUBRICS_ALONE, reason="google-adk 2.x judges eval-case rubrics alone")
def test_rubric_metric_without_criterion_rubrics_on_google_adk_1(reported: Run) -> None:
    """The same eval config on google-adk 1.x, whose rubric evaluator asserts "Rubrics are
    required." when it is built: a config error at the criterion's rubrics naming the
    version and what to do, before any call (it read "judge model ... cannot be set up")."""
    code, output, results = reported("typed_rubrics", "tutor_bot")
    assert code == 2, output
    assert results is not None and results["suites"] == []
    (error,) = results["errors"]
    assert error["kind"] == "config"
    assert error["message"].startswith(
        "metric `rubric_based_final_response_quality_v1` has no rubrics in its criterion, "
        "which google-adk 1.")
    assert "add the rubrics to the criterion, or upgrade google-adk" in error["message"]
