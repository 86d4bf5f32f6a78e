"""What differs between the google-adk versions this package supports, and every private
name of google-adk, google-genai, google-auth or httpx the package reaches, in one place.

Each helper detects the feature it needs on the installed google-adk (never its version
string) and otherwise does what that google-adk's own `adk eval` CLI does. The versions
tested, and what each lacks, are in docs/compatibility.md (scripts/compat.py). No other
module reaches another library's private names (tests/repo/test_architecture.py).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import httpx
from google.adk.evaluation import custom_metric_evaluator as _custom_metric_module
from google.adk.evaluation import eval_config as _eval_config_module
from google.adk.evaluation import metric_evaluator_registry as _registry_module
from google.adk.evaluation.base_eval_service import InferenceConfig
from google.adk.evaluation.custom_metric_evaluator import _CustomMetricEvaluator
from google.adk.evaluation.eval_case import ConversationScenario, Invocation
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_metrics import EvalStatus, Interval, MetricInfo, MetricValueInfo
from google.adk.evaluation.evaluator import EvaluationResult
from google.adk.evaluation.local_eval_service import LocalEvalService
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
from google.adk.models import BaseLlm

INFORMATIONAL_STATUS: EvalStatus | None = getattr(EvalStatus, "INFORMATIONAL", None)
"""ADK's status of reference-free metrics (the efficiency metrics); None before google-adk
2.x, which has neither the status nor those metrics."""


EFFICIENCY_METRICS_REPORTED: bool = hasattr(_eval_config_module,
                                             "append_default_efficiency_metrics")
"""Whether `get_eval_metrics_from_config` adds ADK's efficiency metrics (tool_call_count_v1,
inference_call_count_v1, token_usage_v1, invocation_duration_v1) to every eval (later 2.x);
before, results hold only the metrics of the eval config."""


CUSTOM_METRIC_GETS_EVAL_METRIC: bool = not hasattr(_custom_metric_module, "_get_eval_status")
"""Whether google-adk's ``_CustomMetricEvaluator`` calls a custom metric function with the
``EvalMetric`` first, ``(eval_metric, actual_invocations, expected_invocations,
conversation_scenario)``, and leaves the status to it (1.24 and later). google-adk 1.23,
the first with ``custom_metrics``, calls ``(actual_invocations, expected_invocations,
conversation_scenario)`` and sets the status itself with its module's ``_get_eval_status``
(score >= threshold), which later versions removed."""


def _case_rubrics_alone() -> bool:
    # Built as LocalEvalService builds a rubric metric's evaluator; the judge model is only
    # resolved, never called.
    from google.adk.evaluation.eval_metrics import EvalMetric, RubricsBasedCriterion
    from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
        RubricBasedFinalResponseQualityV1Evaluator,
    )

    try:
        RubricBasedFinalResponseQualityV1Evaluator(EvalMetric(
            metric_name="rubric_based_final_response_quality_v1", threshold=0.5,
            criterion=RubricsBasedCriterion(threshold=0.5, rubrics=[])))
    except (AssertionError, ValueError):  # pydantic's ValidationError is a ValueError
        return False
    return True


CASE_RUBRICS_ALONE: bool = _case_rubrics_alone()
"""Whether a rubric-based metric runs on the rubrics of eval cases and invocations alone,
with none on its criterion (google-adk 2.x). google-adk 1.x's ``RubricBasedEvaluator``
asserts "Rubrics are required." on the criterion, so there every rubric metric needs at
least one criterion rubric."""


LIVE_EVALUATION: bool = ("live_model_config" in EvalConfig.model_fields
                         and "use_live" in InferenceConfig.model_fields)
"""Whether the installed google-adk evaluates in live (bidirectional streaming) mode when an
eval config sets ``live_model_config`` (google-adk 2.13: ``EvalConfig.live_model_config``,
``InferenceConfig.use_live``). Before, ``EvalConfig`` drops the key and evaluates in text
mode (adk.files.evalconfig refuses the key there)."""


def inference_config(eval_config: EvalConfig) -> InferenceConfig:
    """ADK's ``InferenceConfig`` for one eval case at a time, resolved from the eval config as
    ``adk eval`` resolves it (google.adk.cli.cli_tools_click, cli_eval): live inference with
    ``live_model_config.timeout_seconds`` (seconds to wait for the model to end a turn) when
    the eval config sets ``live_model_config``, text mode otherwise."""
    live = getattr(eval_config, "live_model_config", None)
    if live is None or not LIVE_EVALUATION:
        return InferenceConfig(parallelism=1)
    return InferenceConfig(parallelism=1, use_live=True,
                           live_timeout_seconds=live.timeout_seconds)


def has_metric(metric_name: str) -> bool:
    """Whether the installed google-adk's metric registry knows ``metric_name`` (e.g.
    ``rubric_based_multi_turn_trajectory_quality_v1``, later 2.x only)."""
    known = MetricEvaluatorRegistry().get_registered_metrics()
    return metric_name in {m.metric_name for m in known}


def _takes_eval_metric(function: Any) -> bool:
    """Whether a custom metric function declares the later convention: four positional
    parameters, the ``EvalMetric`` first (:data:`CUSTOM_METRIC_GETS_EVAL_METRIC`)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in parameters) >= 4


class EvalMetricFirstCustomMetricEvaluator(_CustomMetricEvaluator):
    """google-adk 1.23's custom metric evaluator, which also runs functions written for the
    later convention (:data:`CUSTOM_METRIC_GETS_EVAL_METRIC`) as google-adk 1.24+ does:
    a copy of the ``EvalMetric`` with ``threshold`` cleared first, the status the
    function's own, an awaitable awaited. A function of 1.23's own convention (three
    parameters) runs through ADK's evaluator unchanged, status from the threshold.

    Registered only where google-adk calls the old way (:func:`custom_metric_registry`),
    so an eval config that works with the later `adk eval` works on 1.23 too.
    """

    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        """The custom metric's result for these invocations (see the class docstring)."""
        if not _takes_eval_metric(self._metric_function):
            return await super().evaluate_invocations(
                actual_invocations, expected_invocations, conversation_scenario
            )
        eval_metric = self._eval_metric.model_copy(deep=True)
        eval_metric.threshold = None
        result = self._metric_function(
            eval_metric, actual_invocations, expected_invocations, conversation_scenario
        )
        return await result if inspect.isawaitable(result) else result


def custom_metric_registry(eval_config: EvalConfig) -> MetricEvaluatorRegistry:
    """A metric evaluator registry with the eval config's `custom_metrics` registered.

    google-adk's `register_custom_metrics_from_config` where it exists (later 2.x); before,
    what `adk eval` does (google.adk.cli.cli_tools_click, cli_eval): each custom metric's
    `metric_info` (else a [0, 1] interval) registered with `_CustomMetricEvaluator`, the
    function path kept by the registry (`_register`, 1.39 and later 2.x) or read from the
    EvalMetric that `get_eval_metrics_from_config` fills (older). Before 1.39 and in 2.0,
    the registry is one class-level dict shared by every instance: this one gets a copy of
    it, so a custom metric registered for one eval config is not known to the next one in
    the process (an undeclared metric stays a config error, not a broken evaluator). Where
    google-adk calls custom metrics the 1.23 way,
    :class:`EvalMetricFirstCustomMetricEvaluator` evaluates them, so functions of either
    convention run.
    """
    registry = MetricEvaluatorRegistry()
    if "_registry" not in vars(registry):
        # Before 1.39 and in 2.0 a class attribute; google-adk's types declare the later
        # instance attribute.
        registry._registry = dict(MetricEvaluatorRegistry._registry)  # type: ignore[misc]
    register: Callable[[EvalConfig, MetricEvaluatorRegistry], MetricEvaluatorRegistry] | None = (
        getattr(_registry_module, "register_custom_metrics_from_config", None))
    if register is not None:
        return register(eval_config, registry)
    evaluator = (_CustomMetricEvaluator if CUSTOM_METRIC_GETS_EVAL_METRIC
                 else EvalMetricFirstCustomMetricEvaluator)
    for metric_name, config in (eval_config.custom_metrics or {}).items():
        if config.metric_info:
            info = config.metric_info.model_copy()
            info.metric_name = metric_name
        else:
            info = MetricInfo(
                metric_name=metric_name, description=config.description,
                metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0,
                                                                    max_value=1.0)),
            )
        if hasattr(registry, "_register"):
            registry._register(info, evaluator, config.code_config.name)
        else:
            registry.register_evaluator(info, evaluator)
    return registry


def llm_capabilities(**flags: bool) -> Any:
    """`google.adk.models.LlmCapabilities(**flags)`, or None where google-adk has no such
    class (before 2.x nothing asks a model for its capabilities)."""
    try:
        from google.adk.models import LlmCapabilities
    except ImportError:
        return None
    return LlmCapabilities(**flags)


def local_eval_service(**kwargs: Any) -> LocalEvalService:
    """`LocalEvalService(**kwargs)`, without `app` where the installed google-adk does not
    take one (1.x, 2.0: the agent module's App and its plugins are not applied there, as in
    that version's `adk eval`, which evaluates `root_agent` alone)."""
    if "app" not in inspect.signature(LocalEvalService.__init__).parameters:
        kwargs.pop("app", None)
    return LocalEvalService(**kwargs)


# google-adk, google-genai, google-auth and httpx keep what follows private: no public hook
# reaches it. Every such name this package reads or writes is here, each feature-detected
# (a missing attribute reads as None), so that a rename shows up in one module
# (tests/repo/test_architecture.py keeps private names of other libraries out of the others).

_JUDGE_ATTRIBUTES = ("_judge_model", "_llm")
"""Where an ADK evaluator keeps its judge model: ``_judge_model`` (google.adk.evaluation.
llm_as_judge, hallucinations_v1), ``_llm`` (per_turn_user_simulator_quality_v1); the same
in google-adk 1.23 to 2.13."""


def judge_model(evaluator: Any) -> BaseLlm | None:
    """The judge model an ADK evaluator built for itself (:data:`_JUDGE_ATTRIBUTES`), or None
    for an evaluator without one."""
    for attribute in _JUDGE_ATTRIBUTES:
        llm = getattr(evaluator, attribute, None)
        if isinstance(llm, BaseLlm):
            return llm
    return None


def replace_judge_model(evaluator: Any, wrap: Callable[[BaseLlm], BaseLlm]) -> None:
    """Puts ``wrap(judge)`` in place of an ADK evaluator's judge model (:func:`judge_model`),
    in place; nothing for an evaluator without one."""
    for attribute in _JUDGE_ATTRIBUTES:
        llm = getattr(evaluator, attribute, None)
        if isinstance(llm, BaseLlm):
            setattr(evaluator, attribute, wrap(llm))
            return


def replace_user_simulator_model(simulator: Any, wrap: Callable[[BaseLlm], BaseLlm]) -> None:
    """Puts ``wrap(model)`` in place of each model of an ADK user simulator, in place: the
    text model of ``LlmBackedUserSimulator`` (``_llm``, google.adk.evaluation.simulation.
    llm_backed_user_simulator, google-adk 1.23 to 2.13), and of google-adk 2.13's audio
    simulator (``_LlmAudioUserSimulator``, ...simulation._llm_audio_user_simulator) its audio
    model (``_audio_llm``) and the text simulator it wraps (``_text_simulator``); nothing
    for a simulator without them (a static conversation's)."""
    llm = getattr(simulator, "_llm", None)
    if isinstance(llm, BaseLlm):
        simulator._llm = wrap(llm)
    audio = getattr(simulator, "_audio_llm", None)
    if isinstance(audio, BaseLlm):
        simulator._audio_llm = wrap(audio)
    inner = getattr(simulator, "_text_simulator", None)
    if inner is not None:
        replace_user_simulator_model(inner, wrap)


def is_cloud_tts(llm: BaseLlm) -> bool:
    """Whether ``llm`` is google-adk's Google Cloud Text-to-Speech model (``_CloudTTSLlm``,
    google.adk.evaluation.simulation._cloud_tts_llm, model name ``cloud_tts``: the audio user
    simulator's default in google-adk 2.13); False where google-adk has no such class."""
    try:
        from google.adk.evaluation.simulation._cloud_tts_llm import _CloudTTSLlm
    except ImportError:
        return False
    return isinstance(llm, _CloudTTSLlm)


def custom_metric_function_uncallable(evaluator: Any) -> bool:
    """Whether ``evaluator`` is ADK's custom metric evaluator holding a function that is not
    callable (``_metric_function``, google.adk.evaluation.custom_metric_evaluator; google-adk
    1.x imports the function without the check that 2.x makes in ``_get_metric_function``).
    False for every other evaluator."""
    return not callable(getattr(evaluator, "_metric_function", callable))


def registered_evaluators() -> dict[str, Any]:
    """The table of a new ``MetricEvaluatorRegistry``: metric name -> (evaluator class,
    metric info) (``_registry``, google.adk.evaluation.metric_evaluator_registry, google-adk
    1.23 to 2.13); {} if a later google-adk renames it."""
    table = getattr(MetricEvaluatorRegistry(), "_registry", None)
    return table or {}


def judge_prompt_text(metric_name: str) -> str | None:
    """The prompt templates google-adk's evaluator of ``metric_name`` fills in for its judge:
    the str constants named ``*PROMPT*`` of the evaluator class's module and of the
    ``*prompts`` modules whose functions it imports (google-adk keeps them private:
    ``_RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1_PROMPT`` in
    google.adk.evaluation.rubric_based_final_response_quality_v1, the segmenter's and the
    validator's in hallucinations_v1, per_turn_user_simulator_quality_prompts' templates;
    google-adk 1.23 to 2.13), in name order; None for a metric without a registered
    evaluator or without such constants (a custom metric, a Vertex AI metric)."""
    entry = registered_evaluators().get(metric_name)
    evaluator = entry[0] if isinstance(entry, tuple) and entry else None
    module = sys.modules.get(getattr(evaluator, "__module__", "") or "")
    if module is None:
        return None
    modules = [module, *dict.fromkeys(
        found for value in vars(module).values()
        if callable(value) and (getattr(value, "__module__", "") or "").endswith("prompts")
        and (found := sys.modules.get(value.__module__)) is not None)]
    texts = [value for m in modules for name, value in sorted(vars(m).items())
             if "PROMPT" in name and isinstance(value, str) and value.strip()]
    return "\n".join(texts) or None


def litellm_args(llm: BaseLlm) -> dict[str, Any]:
    """The keyword arguments a ``LiteLlm`` passes to LiteLLM on each call (``api_key``,
    ``api_base``...: ``_additional_args``, google.adk.models.lite_llm, google-adk 1.23 to
    2.13); {} for any other model."""
    return getattr(llm, "_additional_args", None) or {}


def gcloud_credentials_path() -> str:
    """Where gcloud keeps Application Default Credentials (google-auth's
    ``google.auth._cloud_sdk.get_application_default_credentials_path``; raises as it does
    when gcloud has no config folder)."""
    from google.auth import _cloud_sdk

    path: str = _cloud_sdk.get_application_default_credentials_path()
    return path


def on_google_cloud_vm() -> bool:
    """Whether this Linux machine is a Google Cloud VM, from its DMI product name, with no
    network call (google-auth's
    ``google.auth.compute_engine._metadata.detect_gce_residency_linux``)."""
    from google.auth.compute_engine import _metadata

    return bool(_metadata.detect_gce_residency_linux())


def genai_httpx_client(model: Any) -> tuple[httpx.AsyncClient, Any] | None:
    """The ``httpx.AsyncClient`` and the ``HttpOptions`` of the google-genai client of an
    ADK ``Gemini`` model (its ``api_client``, for the running event loop:
    ``Client._api_client._async_httpx_client`` and ``._http_options``, google-genai as
    google-adk 1.23 to 2.13 install it), or None for other models, a client without them or
    one that cannot be built (the call reports that)."""
    try:
        api = getattr(getattr(model, "api_client", None), "_api_client", None)
    except Exception:  # noqa: BLE001 - a client that cannot be built is the call's to report
        return None
    client = getattr(api, "_async_httpx_client", None)
    options = getattr(api, "_http_options", None)
    if not isinstance(client, httpx.AsyncClient) or options is None:
        return None
    return client, options


def httpx_transports(
    client: httpx.AsyncClient,
) -> tuple[httpx.AsyncBaseTransport, dict[Any, Any]] | None:
    """An ``httpx.AsyncClient``'s own transport and its mounted ones (pattern -> transport,
    the proxies it mounted from the environment): httpx's ``_transport`` and ``_mounts``
    (the dict itself, to change in place); None where httpx lacks them."""
    transport = getattr(client, "_transport", None)
    mounts = getattr(client, "_mounts", None)
    if not isinstance(transport, httpx.AsyncBaseTransport) or not isinstance(mounts, dict):
        return None
    return transport, mounts


def set_httpx_transport(client: httpx.AsyncClient, transport: httpx.AsyncBaseTransport) -> None:
    """Makes ``transport`` an ``httpx.AsyncClient``'s own (httpx's ``_transport``)."""
    client._transport = transport
