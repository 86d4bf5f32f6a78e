"""google-adk 2.13's evaluation features as ``adk eval`` runs them: each test copies a folder
of ``tests/fixtures/adk213/`` (its README names the feature and the right value) and runs
``adk-eval-action run ... --baseline none`` in it through real google-adk, with the stand-in
models of ``adk_eval_action.testing.standins``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.adk.models import LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.genai import types as genai_types

from adk_eval_action.adk.files import evalconfig
from adk_eval_action.errors import ConfigError
from conftest import CliRun
from support.adk_features import needs_live_evaluation
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
