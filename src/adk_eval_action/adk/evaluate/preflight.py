"""Preflight: what cannot work is refused before any agent runs, in one message.

For every suite it resolves what an evaluation would call, as google-adk resolves it:

* the agents' models (the agent tree walked: sub-agents and agents used as tools), through
  ``LlmAgent.canonical_model`` (google.adk.agents.llm_agent), which asks ADK's LLMRegistry;
* the judge models of the eval config's metrics (``judge_model_options.judge_model``, ADK's
  default ``gemini-2.5-flash`` when unset) and the custom metric functions, by building each
  metric's evaluator with ADK's ``MetricEvaluatorRegistry`` as ``LocalEvalService`` does;
* the user simulator's model (``user_simulator_config.model``) when an eval set has
  ``conversation_scenario`` cases, and the audio simulator's ``audio_model`` (google-adk 2.13)
  for every eval case; the agents' models when ``live_model_config`` asks for live inference
  (:mod:`.preflight_modes`).

Refused (kind in brackets, the kind of the error record): a model of ADK's ``Gemini`` class
without Google credentials [credentials]; a model no registry resolves [agent | judge]; a
custom metric function that does not import or is not callable [custom_metric]; a metric in
``criteria`` that is neither built in nor in ``custom_metrics``, or an empty ``criteria``
[config]; a metric that needs expected invocations in a suite with ``conversation_scenario``
cases, which have none (``criteria.NEEDS_EXPECTED_INVOCATIONS``) [config]; a Vertex AI evaluated
metric without a project [credentials]; a LiteLLM model
(agent, judge or user simulator) whose provider's API key LiteLLM finds missing, or
google-adk's own OpenAI model without OPENAI_API_KEY [credentials]
(:func:`provider_missing_keys`); the audio model ``cloud_tts`` (Google Cloud Text-to-Speech)
without Application Default Credentials [credentials] or its client package [config]; an
agent model without a live connection when ``live_model_config`` is set [config]. A model
the preflight cannot judge (a custom ``BaseLlm``) is not refused.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.models import BaseLlm

from adk_eval_action.adk.compat import (
    custom_metric_function_uncallable,
    custom_metric_registry,
    judge_model,
)
from adk_eval_action.adk.evaluate.preflight_models import (
    Kind,
    ModelUse,
    PreflightProblem,
    PreflightReport,
    Role,
    SuiteToCheck,
    is_google,
    provider_key_problem,
)
from adk_eval_action.adk.evaluate.preflight_modes import simulator_findings
from adk_eval_action.adk.files.criteria import scenario_unsupported
from adk_eval_action.adk.files.lint import judge_model_for
from adk_eval_action.adk.runtime.agent import agent_tree
from adk_eval_action.adk.runtime.credentials import (
    CREDENTIALS_HINT,
    missing_google_credentials,
)
from adk_eval_action.project.discovery import Suite, relative_path

if TYPE_CHECKING:
    from adk_eval_action.adk.files.prepare import SharedInputs
    from adk_eval_action.adk.runtime.agent import LoadedAgent

__all__ = [
    "Kind", "ModelUse", "PreflightProblem", "PreflightReport", "Role", "SuiteToCheck",
    "agent_models", "check_suites", "eval_config_models", "preflight", "suite_findings",
]

# Metrics scored by the Vertex AI evaluation service (google.adk.evaluation
# vertex_ai_eval_facade); it needs GOOGLE_API_KEY, or GOOGLE_CLOUD_PROJECT and
# GOOGLE_CLOUD_LOCATION, when the evaluator is built.
VERTEX_EVAL_METRICS = frozenset(
    {
        "response_evaluation_score",
        "safety_v1",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    }
)

def agent_models(
    suite: str, root_agent: Any, environ: Mapping[str, str] | None = None
) -> tuple[list[ModelUse], list[PreflightProblem]]:
    """The models of an agent tree; a model name no registry resolves is a problem, and so
    is a LiteLLM or OpenAI model without its API key in ``environ``
    (:func:`provider_missing_keys`; not checked when ``environ`` is None)."""
    from google.adk.agents import LlmAgent

    uses, problems = [], []
    for agent in agent_tree(root_agent):
        if not isinstance(agent, LlmAgent):
            continue
        where = f"agent `{agent.name}`"
        try:
            llm = agent.canonical_model
        except ValueError as e:
            problems.append(
                PreflightProblem(
                    kind="agent",
                    suite=suite,
                    message=f"{where}: model `{agent.model}` is not known to google-adk's "
                    f"LLMRegistry ({str(e).splitlines()[0]}); use a `gemini-*` model or "
                    "register the model's BaseLlm class" + _standin_hint(str(agent.model)),
                )
            )
            continue
        name = llm.model if isinstance(llm, BaseLlm) else str(agent.model)
        uses.append(ModelUse(model=name, role="agent", where=where, google=is_google(llm)))
        if environ is not None and isinstance(llm, BaseLlm):
            problems += provider_key_problem(llm, where, environ, suite=suite)
    return uses, problems


def _standin_hint(model: str) -> str:
    """What a model name of ``adk_eval_action.testing``'s stand-ins (``stand-in-*``,
    ``scripted-*``) unknown to the registry needs: the process never called
    ``register_standins()``; "" for any other name."""
    if not model.startswith(("stand-in-", "scripted-")):
        return ""
    return (" (adk_eval_action.testing's stand-in models: call `register_standins()` from "
            "adk_eval_action.testing.standins in the agent package's `__init__.py`)")


def _metric_problem(
    error: Exception, metric: EvalMetric, suite: SuiteToCheck, known: list[str]
) -> PreflightProblem:
    name, file = metric.metric_name, suite.eval_config_file
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    custom = (suite.eval_config.custom_metrics or {}).get(name)
    if custom is not None and isinstance(error, (ImportError, TypeError)):
        cause = error.__cause__ or error
        return PreflightProblem(
            kind="custom_metric",
            suite=suite.name,
            file=file,
            field=f"custom_metrics.{name}.code_config.name",
            message=f"custom metric `{name}`: `{custom.code_config.name}` cannot be used "
            f"({type(cause).__name__}: {cause}); it must name an importable function "
            "`package.module.function` (the repository root and the agent's folder are on "
            "sys.path)",
        )
    if "not found in registry" in text:
        close = difflib.get_close_matches(name, known, n=1)
        return PreflightProblem(
            kind="config",
            suite=suite.name,
            file=file,
            field=f"criteria.{name}",
            message=f"metric `{name}` is neither a google-adk metric nor declared in "
            f"`custom_metrics`{f'; did you mean `{close[0]}`?' if close else ''}",
        )
    if text == "Rubrics are required.":
        return PreflightProblem(
            kind="config", suite=suite.name, file=file, field=f"criteria.{name}.rubrics",
            message=f"metric `{name}` has no rubrics in its criterion, which google-adk "
            f"{version('google-adk')} requires (its rubric evaluator asserts "
            "\"Rubrics are required.\"; google-adk 2.x also judges eval-case rubrics "
            "alone); add the rubrics to the criterion, or upgrade google-adk",
        )
    judge = judge_model_for(metric) or "?"
    return PreflightProblem(
        kind="judge",
        suite=suite.name,
        file=file,
        field=f"criteria.{name}.judge_model_options.judge_model",
        message=f"metric `{name}`: judge model `{judge}` cannot be "
        f"set up ({text}); use a `gemini-*` model or register the judge's BaseLlm class"
        + _standin_hint(judge),
    )


def eval_config_models(
    suite: SuiteToCheck, environ: Mapping[str, str]
) -> tuple[list[ModelUse], list[PreflightProblem]]:
    """Builds every metric's evaluator as ADK would; returns the judge and user-simulator
    models, and the metrics, judges and custom metrics that cannot be set up."""
    config, file = suite.eval_config, suite.eval_config_file or "the default criteria"
    uses: list[ModelUse] = []
    problems: list[PreflightProblem] = []
    if not config.criteria:
        problems.append(
            PreflightProblem(
                kind="config",
                suite=suite.name,
                file=suite.eval_config_file,
                field="criteria",
                message="`criteria` is empty, so no metric would be evaluated; name at least "
                "one metric with its threshold",
            )
        )
    registry = custom_metric_registry(config)
    for metric in get_eval_metrics_from_config(config):
        try:
            evaluator = registry.get_evaluator(metric)
        except Exception as e:  # noqa: BLE001 - every failure is reported, none raised
            known = [m.metric_name for m in registry.get_registered_metrics()]
            problems.append(_metric_problem(e, metric, suite, known))
            continue
        if custom_metric_function_uncallable(evaluator):
            # google-adk 1.x imports a custom metric's function without the check 2.x makes
            # (custom_metric_evaluator._get_metric_function): its TypeError, made here.
            path = (config.custom_metrics or {})[metric.metric_name].code_config.name
            error = TypeError(f"Custom metric {path} does not refer to a callable.")
            problems.append(_metric_problem(error, metric, suite, []))
            continue
        judge = judge_model(evaluator)
        if judge is not None:
            where = f"judge of `{metric.metric_name}` in {file}"
            uses.append(
                ModelUse(model=judge.model, role="judge", where=where, google=is_google(judge))
            )
            field = f"criteria.{metric.metric_name}.judge_model_options.judge_model"
            problems += provider_key_problem(judge, where, environ, suite=suite.name,
                                         file=suite.eval_config_file, field=field)
        if metric.metric_name in VERTEX_EVAL_METRICS:
            problems.extend(_vertex_eval_problem(suite, metric.metric_name, environ))
    found, refused = simulator_findings(suite, environ)
    uses += found
    problems += refused
    if suite.has_scenarios:
        problems += _scenario_metric_problems(suite)
    return uses, problems


def _scenario_metric_problems(suite: SuiteToCheck) -> list[PreflightProblem]:
    """A config problem per metric of ``criteria`` that cannot score a
    ``conversation_scenario`` case
    (:func:`adk_eval_action.adk.files.criteria.scenario_unsupported`)."""
    cases = suite.scenario_cases
    shown = ", ".join(f"`{c}`" for c in cases[:3]) + (f" and {len(cases) - 3} more"
                                                      if len(cases) > 3 else "")
    fix = (
        "remove it from this eval config, or give the scenario cases an eval config of their own"
        if suite.eval_config_file
        else "it is one of ADK's default criteria (no eval config was found): give the suite "
        "an eval config"
    )
    return [
        PreflightProblem(
            kind="config",
            suite=suite.name,
            file=suite.eval_config_file,
            field=f"criteria.{name}",
            message=f"metric `{name}` does not support user simulation: "
            f"`conversation_scenario` eval cases{f' ({shown})' if shown else ''} have no "
            "expected invocations, which google-adk's evaluator of this metric compares "
            f"with; {fix} (with, for example, rubric_based_final_response_quality_v1 or "
            "hallucinations_v1)",
        )
        for name in scenario_unsupported(suite.eval_config)
    ]


def _vertex_eval_problem(
    suite: SuiteToCheck, metric: str, environ: Mapping[str, str]
) -> list[PreflightProblem]:
    if environ.get("GOOGLE_API_KEY") or (
        environ.get("GOOGLE_CLOUD_PROJECT") and environ.get("GOOGLE_CLOUD_LOCATION")
    ):
        return []
    return [
        PreflightProblem(
            kind="credentials",
            suite=suite.name,
            file=suite.eval_config_file,
            field=f"criteria.{metric}",
            message=f"`{metric}` is scored by the Vertex AI evaluation service, which needs "
            "GOOGLE_API_KEY, or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION",
        )
    ]


def _credentials_problem(
    uses: list[ModelUse], environ: Mapping[str, str], suites: Sequence[str] = (),
) -> list[PreflightProblem]:
    """Missing Google credentials, said once for every model that needs them; when only
    some of ``suites`` call such models (each use's ``suite``), once per such suite,
    naming it, so that the others can run without the key."""
    google = [u for u in uses if u.google]
    missing = missing_google_credentials(environ) if google else None
    if missing is None:
        return []
    calling = {u.suite for u in google}
    if None in calling or calling >= set(suites):
        return [_no_credentials(google, missing, None)]
    return [_no_credentials([u for u in google if u.suite == name], missing, name)
            for name in suites if name in calling]


def _no_credentials(uses: list[ModelUse], missing: str, suite: str | None
                    ) -> PreflightProblem:
    names = sorted({f"`{u.model}` ({u.where})" for u in uses})
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return PreflightProblem(
        kind="credentials", suite=suite,
        message=f"no model credentials: {missing}, but {shown} "
        f"{'needs' if len(names) == 1 else 'need'} them; {CREDENTIALS_HINT}",
    )


def preflight(suites: list[SuiteToCheck], environ: Mapping[str, str]) -> PreflightReport:
    """Checks every suite (module docstring); never raises for a problem it finds.

    Args:
        suites: The suites about to be evaluated, agents loaded.
        environ: The environment the evaluation will see (``os.environ``).

    Returns:
        The problems (missing credentials reported once for all models) and the models found.
    """
    uses: list[ModelUse] = []
    problems: list[PreflightProblem] = []
    for suite in suites:
        found, refused = suite_findings(suite, environ)
        uses += found
        problems += refused
    return PreflightReport(problems=[*_credentials_problem(uses, environ), *problems], models=uses)


def suite_findings(
    suite: SuiteToCheck, environ: Mapping[str, str]
) -> tuple[list[ModelUse], list[PreflightProblem]]:
    """One suite's models and problems (credentials not yet judged: :func:`preflight`)."""
    uses: list[ModelUse] = []
    problems: list[PreflightProblem] = []
    if suite.root_agent is not None:
        found, refused = agent_models(suite.name, suite.root_agent, environ)
        uses += found
        problems += refused
    found, refused = eval_config_models(suite, environ)
    return uses + found, problems + refused


async def check_suites(
    suites: list[Suite], repo_root: Path, environ: Mapping[str, str]
) -> PreflightReport:
    """The preflight of a run's suites, before any of them runs: each suite's eval config,
    eval sets and agent loaded as the evaluation loads them (each agent folder once, in
    import scopes of their own; a factory's resources closed at once), then checked. A
    suite whose files or agent do not load is left to the evaluation, which reports it.
    Suites of one agent and one eval config are checked once (their findings differ only
    in the suite's name): 5,000 suites of one agent take seconds, not minutes."""
    from adk_eval_action.adk.evaluate.harness import evaluation_scope
    from adk_eval_action.adk.files.prepare import SharedInputs
    from adk_eval_action.adk.runtime.agent import agent_phases

    checkable = [s for s in suites if s.agent_dir is not None and not s.agent_error]
    shared = SharedInputs(repo_root)
    memo: dict[tuple[object, ...], Findings] = {}
    uses: list[ModelUse] = []
    problems: list[PreflightProblem] = []
    for phase in agent_phases(s.agent_dir for s in checkable if s.agent_dir is not None):
        with evaluation_scope(phase, repo_root):
            agents = await _load_agents(phase, repo_root)
            try:
                for suite in (s for s in checkable if s.agent_dir in agents):
                    assert suite.agent_dir is not None
                    found = _findings(suite, agents[suite.agent_dir], shared, memo, environ)
                    uses += [u.model_copy(update={"suite": suite.name}) for u in found[0]]
                    problems += [p.model_copy(update={"suite": suite.name}) for p in found[1]]
            finally:
                for agent in agents.values():
                    await agent.close()
    names = [s.name for s in checkable]
    return PreflightReport(problems=[*_credentials_problem(uses, environ, names), *problems],
                           models=uses)


Findings = tuple[list[ModelUse], list[PreflightProblem]]
"""A suite's models and problems (:func:`suite_findings`)."""


async def _load_agents(phase: list[Path], repo_root: Path) -> dict[Path, LoadedAgent]:
    """The agents of ``phase`` that import (``LoadedAgent`` by folder), in the caller's
    scope; one that does not is left to the evaluation, which reports it."""
    from adk_eval_action.adk.runtime.agent import AgentLoadError, load_agent

    agents: dict[Path, LoadedAgent] = {}
    for folder in phase:
        try:
            agents[folder] = await load_agent(folder, repo_root)
        except AgentLoadError:
            continue
    return agents


def _findings(
    suite: Suite, agent: LoadedAgent, shared: SharedInputs,
    memo: dict[tuple[object, ...], Findings],
    environ: Mapping[str, str],
) -> Findings:
    """``suite``'s findings with its ``agent`` loaded, its files read through ``shared``
    (prepare.SharedInputs) and the findings of each (agent, eval config, scenario cases)
    kept in ``memo``; none when its eval config does not load (the evaluation says why)."""
    from adk_eval_action.adk.files.prepare import may_have_scenarios

    # Only whether a case has a scenario is needed of the eval sets: they are parsed (the
    # evaluation parses them again) only when a file names the field; 10,000 cases take
    # ~1.4 s to parse.
    scenarios = may_have_scenarios(suite)
    inputs, _ = shared(suite, eval_sets=scenarios)
    if inputs.config is None:
        return [], []
    cases = [f"{s.path.name}: {c.eval_id}" for s in (inputs.eval_sets if scenarios else [])
             for c in s.eval_set.eval_cases if c.conversation_scenario]
    key = (suite.agent_dir, suite.eval_config_path, tuple(cases))
    if key not in memo:
        config_file = suite.eval_config_path
        memo[key] = suite_findings(SuiteToCheck(
            name=suite.name, root_agent=agent.root_agent, eval_config=inputs.config.eval_config,
            eval_config_file=relative_path(config_file, shared.repo_root) if config_file
            else None, has_scenarios=bool(cases), scenario_cases=cases), environ)
    return memo[key]
