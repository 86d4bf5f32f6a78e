"""google-adk 2.13's evaluation features as ``adk eval`` runs them: each test copies a folder
of ``tests/fixtures/adk213/`` (its README names the feature and the right value) and runs
``adk-eval-action run ... --baseline none`` in it through real google-adk, with the stand-in
models of ``adk_eval_action.testing.standins``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from google.adk.models import LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.genai import types as genai_types

from adk_eval_action.adk.files import evalconfig
from adk_eval_action.adk.files.eval_history import read_eval_history
from adk_eval_action.errors import ConfigError
from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import RunResults
from conftest import CliRun, as_adk_eval_starts
from support.adk_features import ADK, needs_audio_user_simulator, needs_live_evaluation
from support.adk_num_runs import adk_eval_num_runs
from support.newer_adk import with_tool_parameter_match
from support.reported import Run, only_metric, reported_runner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "adk213"


@pytest.fixture
def adk213(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun) -> Run:
    """``run(folder, *args)`` on a copy of a folder of ``tests/fixtures/adk213``."""
    return reported_runner(FIXTURES, tmp_path, monkeypatch, cli)


@needs_live_evaluation
def test_live_model_config_runs_live_as_adk_eval(adk213: Run) -> None:
    """``live_model_config`` runs the eval case in live mode, as ``adk eval`` does
    (``InferenceConfig(use_live=True)``): the agent's model answers only over a live
    connection, and it called the tool and answered as expected. Evaluated in text mode
    (the key ignored) the same case is an inference error instead."""
    code, output, results = adk213("live_desk", "stock_bot")
    assert code == 0 and results is not None
    assert only_metric(results, "tool_trajectory_avg_score")["score"] == 1.0
    assert only_metric(results, "response_match_score")["score"] == 1.0
    assert "live_model_config: every eval case is run in live" in output
    assert results["suites"][0]["eval_config"]["live_model_config"] == {"timeout_seconds": 10}


@needs_live_evaluation
def test_live_model_config_ignored_would_be_a_text_mode_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun
) -> None:
    """The control of the test above: the same agent and case with ``live_model_config``
    removed runs in text mode, where the live-only model refuses the call (exit 2)."""
    def text_mode(root: Path) -> None:
        config = root / "stock_bot" / "eval" / "test_config.json"
        config.write_text('{"criteria": {"tool_trajectory_avg_score": 1.0}}', encoding="utf-8")

    run = reported_runner(FIXTURES, tmp_path, monkeypatch, cli, text_mode)
    code, output, _ = run("live_desk", "stock_bot")
    assert code == 2
    assert "answers only over a live connection" in output


@needs_live_evaluation
def test_live_model_config_without_a_live_model_refused_before_any_call(adk213: Run) -> None:
    """An agent whose model has no live connection (google-adk's ``BaseLlm.connect``) with
    ``live_model_config`` is refused before any agent runs, naming the field, the agent and
    its model: exit 2, nothing evaluated."""
    code, output, results = adk213("live_desk", "ledger_bot")
    assert code == 2 and results is not None
    assert results["suites"] == []
    (error,) = results["errors"]
    assert error["kind"] == "config"
    assert error["file"] == "ledger_bot/eval/test_config.json"
    assert "agent `ledger_bot`'s model `scripted-ledger` (TextOnlyLlm) has no live connection" \
        in error["message"]
    assert "(field `live_model_config`)" in error["message"]
    assert "before any agent ran" in output


def test_live_model_config_refused_where_google_adk_has_no_live_evaluation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a google-adk whose EvalConfig has no ``live_model_config`` (before 2.13) the key
    would be dropped and the agent evaluated in text mode: the eval config is refused
    instead, naming the field, in either spelling."""
    monkeypatch.setattr(evalconfig, "LIVE_EVALUATION", False)
    for key in ("live_model_config", "liveModelConfig"):
        path = tmp_path / f"{key}.json"
        path.write_text(f'{{"criteria": {{"response_match_score": 0.8}}, "{key}": {{}}}}',
                        encoding="utf-8")
        with pytest.raises(ConfigError) as raised:
            evalconfig.load_eval_config(path)
        assert raised.value.field == key
        assert "evaluated in text mode instead" in str(raised.value)


@needs_audio_user_simulator
def test_audio_user_simulator_model_in_preflight(
    adk213: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """google-adk 2.13's audio user simulator (``"type": "llm_audio"``) speaks every user
    turn with its ``audio_model``, by default ``cloud_tts`` (Google Cloud Text-to-Speech),
    which authenticates with Application Default Credentials only. Without them the run is
    refused before any call, naming the audio model and what it needs; a Gemini TTS model
    without a key is named among the models that need one."""
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    code, output, results = adk213("audio_desk", "voice_bot")
    assert code == 2 and results is not None and results["suites"] == []
    (error,) = results["errors"]
    assert error["kind"] == "credentials"
    assert "audio model of the user simulator of voice_bot/eval/test_config.json: `cloud_tts` " \
        "is Google Cloud Text-to-Speech" in error["message"]
    assert "Application Default Credentials" in error["message"]
    assert "(field `user_simulator_config.audio_model`)" in error["message"]

    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, output, results = adk213("audio_desk", "--config", "gemini_tts.yaml")
    assert code == 2 and results is not None and results["suites"] == []
    (error,) = results["errors"]
    assert error["kind"] == "credentials"
    assert "`gemini-2.5-flash-preview-tts` (audio model of the user simulator of " \
        "voice_bot/eval/gemini_tts_config.json) needs them" in error["message"]


@needs_audio_user_simulator
def test_cloud_tts_without_credentials_fails_in_google_adk_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The oracle of the preflight's rule: google-adk's own ``cloud_tts`` model, called
    without Application Default Credentials, fails in google-auth (at run time, after the
    agent's first turn was asked for)."""
    from google.auth.exceptions import DefaultCredentialsError

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    llm = LLMRegistry.new_llm("cloud_tts")
    request = LlmRequest(contents=[genai_types.Content(
        role="user", parts=[genai_types.Part(text="hello")])])

    async def speak() -> None:
        async for _ in llm.generate_content_async(request):
            pass

    with pytest.raises(DefaultCredentialsError):
        asyncio.run(speak())


@pytest.fixture
def coin_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of ``coin_desk`` with the eval_history of ``adk eval --num_runs 3`` of its
    agent: one file holding three results of the one eval case, scored 1, 0 and 1 (the
    agent's model answers "yes", "no", "yes")."""
    root = tmp_path / "coin_desk"
    shutil.copytree(FIXTURES / "coin_desk", root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(root)
    eval_dir = root / "coin_bot" / "eval"
    with as_adk_eval_starts(monkeypatch, ("agent", "coin_bot")):
        history = adk_eval_num_runs(root / "coin_bot", eval_dir / "sky.evalset.json",
                                    eval_dir / "test_config.json", num_runs=3)
    if len(list(history.glob("*.evalset_result.json"))) > 1:
        pytest.skip(f"{ADK} writes one eval_history file per run of adk eval --num_runs "
                    "(no multi-run aggregator, ADK PR #4411)")
    return history


def _case_scores(results: RunResults, metric: str) -> list[float | None]:
    (suite,) = results.suites
    (eval_set,) = suite.eval_sets
    (case,) = eval_set.eval_cases
    return [m.score for run in case.runs for m in run.metrics if m.metric_name == metric]


def test_multi_run_eval_history_read_as_its_runs(coin_history: Path) -> None:
    """The file of ``adk eval --num_runs 3`` holds three results of ``sunny``: read as its
    runs 1..3, alike from the file and from the folder (the folder once kept only the first
    result of each case of the newest file: one run, scored 1.0)."""
    (file,) = coin_history.glob("*.evalset_result.json")
    raw = json.loads(file.read_text(encoding="utf-8"))
    assert [r["eval_id"] for r in raw["eval_case_results"]] == ["sunny"] * 3
    for source in (file, coin_history):
        results = read_eval_history(source)
        assert results.suites[0].num_runs == 3
        assert sorted(_case_scores(results, "response_match_score")) == [0.0, 1.0, 1.0]


def test_multi_run_eval_history_as_baseline_and_head_without_averaging_twice(
    coin_history: Path, cli: CliRun
) -> None:
    """A multi-run eval_history is a baseline and a head as it is: the case's mean over its
    three runs (2/3), the same as this tool's own three runs of the same agent, so the delta
    is 0 both ways; neither one run of it (1.0, a drop of 1/3) nor the runs' mean counted as
    one run beside them."""
    result = cli("run", "coin_bot", "--num-runs", "3", "--baseline", str(coin_history),
                 "--results-out", "ours.json", "--comparison-out", "comparison.json")
    assert result.exit_code in (0, 1), result.output
    ours = load_results(Path("ours.json"))
    assert sorted(_case_scores(ours, "response_match_score")) == [0.0, 1.0, 1.0]
    _assert_unchanged(json.loads(Path("comparison.json").read_text(encoding="utf-8")))

    result = cli("compare", str(coin_history), "--baseline", "ours.json",
                 "--json-out", "reverse.json")
    assert result.exit_code in (0, 1), result.output
    _assert_unchanged(json.loads(Path("reverse.json").read_text(encoding="utf-8")))


def _assert_unchanged(comparison: dict[str, Any]) -> None:
    (metric,) = [m for m in comparison["metrics"] if m["metric_name"] == "response_match_score"]
    for side in ("baseline", "head"):
        assert metric[side]["mean"] == pytest.approx(2 / 3)
        assert metric[side]["scored"] == 3
        assert metric[f"{side}_matched"] == pytest.approx(2 / 3)
    assert metric["delta"] == pytest.approx(0.0)


def test_new_metric_name_handled_generically_with_its_declared_range(
    adk213: Run, monkeypatch: pytest.MonkeyPatch, cli: CliRun, tmp_path: Path
) -> None:
    """A metric a later google-adk ships (``tool_parameter_match``, google/adk-python#6726)
    is evaluated, planned, recorded and gated as google-adk declares it: no name list of
    this package knows it. The agent passes 1 of 2 expected arguments: 0.5, passed at the
    0.5 threshold, its range [0, 1] recorded; the plan counts no judge call for it and does
    not call it a custom metric; a threshold outside its declared range is refused; an ADK
    eval_history holding it gets that range too."""
    with with_tool_parameter_match(monkeypatch):
        code, output, results = adk213("param_desk", "hotel_bot")
        assert code == 0, output
        assert results is not None
        metric = only_metric(results, "tool_parameter_match")
        assert (metric["score"], metric["status"]) == (0.5, "passed")
        assert (metric["min_value"], metric["max_value"]) == (0.0, 1.0)
        assert metric["higher_is_better"] is True
        assert only_metric(results, "tool_trajectory_avg_score")["score"] == 0.0

        plan = cli("plan", "hotel_bot")
        assert plan.exit_code == 0, plan.output
        assert "tool_parameter_match" in plan.output  # among the suite's metrics
        assert "not estimated: tool_parameter_match" not in plan.output
        assert "judge calls: none" in plan.output

        code, output, results = adk213("param_desk", "--config", "out_of_range.yaml")
        assert code == 2
        assert "tool_parameter_match" in output and "1.5" in output

    outside = tmp_path / "outside"
    shutil.copytree(FIXTURES / "param_desk", outside)
    history = outside / "hotel_bot" / ".adk" / "eval_history"
    history.mkdir(parents=True)
    (history / "hotel_bot_rome_1.evalset_result.json").write_text(
        json.dumps(_history_of(results_metric=metric)), encoding="utf-8")
    with with_tool_parameter_match(monkeypatch):
        read = read_eval_history(history)
    (run,) = read.suites[0].eval_sets[0].eval_cases[0].runs
    (recorded,) = run.metrics
    assert (recorded.min_value, recorded.max_value, recorded.score) == (0.0, 1.0, 0.5)


def _history_of(results_metric: dict[str, Any]) -> dict[str, Any]:
    """An ADK EvalSetResult of one eval case scored on ``tool_parameter_match`` alone."""
    score = results_metric["score"]
    metric = {"metric_name": "tool_parameter_match", "threshold": 0.5, "score": score,
              "eval_status": 1}
    return {
        "eval_set_result_id": "hotel_bot_rome_1", "eval_set_id": "rome",
        "creation_timestamp": 1.0,
        "eval_case_results": [{
            "eval_set_file": "rome", "eval_set_id": "rome", "eval_id": "one_room",
            "final_eval_status": 1, "overall_eval_metric_results": [metric],
            "eval_metric_result_per_invocation": [], "session_id": "s1",
        }],
    }
