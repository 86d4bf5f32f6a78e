"""What the eval config's way of running the conversation needs, checked by the preflight
(:mod:`.preflight`) before any call:

* the user simulator (``user_simulator_config``): its text model (``model``, google-adk's
  ``LlmBackedUserSimulatorConfig`` default ``gemini-2.5-flash``) when an eval set has
  ``conversation_scenario`` cases; and, for google-adk 2.13's audio simulator
  (``"type": "llm_audio"``, google.adk.evaluation.simulation._llm_audio_user_simulator), its
  ``audio_model`` (default ``cloud_tts``: Google Cloud Text-to-Speech), which speaks every
  user turn of every eval case, static conversations too (ADK's ``UserSimulatorProvider``
  routes them through it). Cloud Text-to-Speech authenticates with Application Default
  Credentials only (google-cloud-texttospeech's client; an API key does not reach it) and
  needs that package installed (google-adk's ``eval`` extra);
* live inference (``live_model_config``, google-adk 2.13, run as ``adk eval`` runs it:
  :func:`adk_eval_action.adk.compat.inference_config`): every agent the live flow runs (the
  root agent and its sub-agents) needs a model with a live connection (``BaseLlm.connect``
  overridden; google-adk's base class raises "Live connection is not supported").
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping
from typing import Any

from google.adk.models import BaseLlm, LLMRegistry

from adk_eval_action.adk.compat import is_cloud_tts
from adk_eval_action.adk.evaluate.preflight_models import (
    ModelUse,
    PreflightProblem,
    SuiteToCheck,
    is_google,
    provider_key_problem,
)
from adk_eval_action.adk.runtime.agent import agent_tree
from adk_eval_action.adk.runtime.credentials import application_default_credentials

DEFAULT_SIMULATOR_MODEL = "gemini-2.5-flash"
"""google-adk's ``LlmBackedUserSimulatorConfig.model`` default."""

TTS_CREDENTIALS = (
    "Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, `gcloud auth "
    "application-default login`, or a Google Cloud VM's service account) of a project with "
    "the Cloud Text-to-Speech API enabled; an API key does not authenticate it"
)


def simulator_findings(
    suite: SuiteToCheck, environ: Mapping[str, str]
) -> tuple[list[ModelUse], list[PreflightProblem]]:
    """The user simulator's models and what they lack (module docstring), and the agents
    live inference cannot run."""
    config = suite.eval_config.user_simulator_config
    where = f"user simulator of {suite.eval_config_file or 'the default config'}"
    uses: list[ModelUse] = []
    problems: list[PreflightProblem] = []
    if suite.has_scenarios:
        model = getattr(config, "model", None) or DEFAULT_SIMULATOR_MODEL
        _check_model(suite, model, "model", where, environ, uses, problems)
    audio_model = getattr(config, "audio_model", None)
    if isinstance(audio_model, str):
        _check_model(suite, audio_model, "audio_model", f"audio model of the {where}", environ,
                     uses, problems)
    return uses, problems + live_problems(suite)


def _check_model(
    suite: SuiteToCheck, model: str, key: str, where: str, environ: Mapping[str, str],
    uses: list[ModelUse], problems: list[PreflightProblem],
) -> None:
    """Resolves one simulator model as ADK does (``LLMRegistry``); adds its use, or why it
    cannot be called, to ``uses`` and ``problems``."""
    field = f"user_simulator_config.{key}"
    try:
        llm = LLMRegistry.new_llm(model)
    except ValueError as e:
        problems.append(PreflightProblem(
            kind="config", suite=suite.name, file=suite.eval_config_file, field=field,
            message=f"user simulator {key.replace('_', ' ')} `{model}` is not known to "
            f"google-adk's LLMRegistry ({str(e).splitlines()[0]})"))
        return
    if is_cloud_tts(llm):
        problems += _tts_problems(suite, model, where, environ)
    problems += provider_key_problem(llm, where, environ, suite=suite.name,
                                     file=suite.eval_config_file, field=field)
    uses.append(ModelUse(model=model, role="user_simulator", where=where, google=is_google(llm)))


def _tts_problems(
    suite: SuiteToCheck, model: str, where: str, environ: Mapping[str, str]
) -> list[PreflightProblem]:
    """What Google Cloud Text-to-Speech (the audio model ``cloud_tts``) lacks: its client
    package, or Application Default Credentials."""
    field = "user_simulator_config.audio_model"
    if importlib.util.find_spec("google.cloud.texttospeech_v1") is None:
        return [PreflightProblem(
            kind="config", suite=suite.name, file=suite.eval_config_file, field=field,
            message=f"{where}: `{model}` is Google Cloud Text-to-Speech, whose client "
            "(google-cloud-texttospeech) is not installed; install google-adk[eval], or "
            "name a Gemini TTS model (e.g. gemini-2.5-flash-preview-tts) as the audio_model")]
    if application_default_credentials(environ) is not None:
        return []
    return [PreflightProblem(
        kind="credentials", suite=suite.name, file=suite.eval_config_file, field=field,
        message=f"{where}: `{model}` is Google Cloud Text-to-Speech, which speaks every user "
        f"turn and needs {TTS_CREDENTIALS}; set them, or name a Gemini TTS model (e.g. "
        "gemini-2.5-flash-preview-tts) as the audio_model")]


def _live_agents(root: Any) -> Iterator[Any]:
    """The agents google-adk's live flow runs: the root agent and its sub-agents (an agent
    used as a tool, ``AgentTool``, runs in text mode inside the tool call)."""
    return agent_tree(root, agent_tools=False)


def live_problems(suite: SuiteToCheck) -> list[PreflightProblem]:
    """A config problem per agent the live flow runs whose model has no live connection,
    when the eval config sets ``live_model_config`` (module docstring)."""
    from google.adk.agents import LlmAgent

    if getattr(suite.eval_config, "live_model_config", None) is None:
        return []
    problems = []
    for agent in _live_agents(suite.root_agent):
        if not isinstance(agent, LlmAgent):
            continue
        try:
            llm = agent.canonical_model
        except ValueError:
            continue  # an unknown model: refused as the agent's problem
        if isinstance(llm, BaseLlm) and type(llm).connect is BaseLlm.connect:
            problems.append(PreflightProblem(
                kind="config", suite=suite.name, file=suite.eval_config_file,
                field="live_model_config",
                message=f"`live_model_config` runs every eval case in live (bidirectional "
                f"streaming) mode, as `adk eval` does, but agent `{agent.name}`'s model "
                f"`{llm.model}` ({type(llm).__name__}) has no live connection; give it a Live "
                "API model (e.g. gemini-live-2.5-flash), or remove `live_model_config` to "
                "evaluate in text mode"))
    return problems
