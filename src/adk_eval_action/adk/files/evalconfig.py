"""Eval configs: ADK's ``EvalConfig`` (google.adk.evaluation.eval_config), JSON or YAML.

Rubric short forms are expanded (:mod:`adk_eval_action.adk.files.rubrics`), threshold and direction
overrides from ``adk-eval.yaml`` applied, and :func:`load_eval_config` lints what ADK
accepts without a word (unknown keys, unknown metrics, a missing ``criteria``).
"""

from __future__ import annotations

import difflib
import functools
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_metrics import BaseCriterion, MetricInfo, MetricValueInfo
from google.adk.evaluation.eval_rubrics import Rubric
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adk_eval_action.adk.compat import LIVE_EVALUATION
from adk_eval_action.adk.files.convert import MetricMeta
from adk_eval_action.adk.files.criteria import (
    criterion_models,
    enum_choices,
    normalized_criterion,
    typed_criterion,
)
from adk_eval_action.adk.files.evalsets import content_hash
from adk_eval_action.adk.files.lint import criterion_warnings
from adk_eval_action.adk.files.rubrics import RubricFormatError, normalize_rubric_list
from adk_eval_action.errors import ConfigError
from adk_eval_action.files import MAX_CONFIG_BYTES, read_bytes
from adk_eval_action.project.config import first_error, read_mapping
from adk_eval_action.project.layout import EFFICIENCY_METRICS

DEFAULT_CRITERIA: dict[str, Any] = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
"""ADK's default criteria when no eval config is found (eval_config._DEFAULT_EVAL_CONFIG)."""


class LoadedEvalConfig(BaseModel):
    """An eval config ready for ADK, with what we keep about it.

    ``eval_config`` is ADK's model; ``metric_meta`` maps metric name to value range and
    direction; ``warnings`` are lint findings, each naming the file.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path | None
    eval_config: EvalConfig
    content_hash: str | None
    metric_meta: dict[str, MetricMeta]
    final_rubrics: dict[str, list[Rubric]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    def rubric_types(self) -> list[tuple[str, str]]:
        """``(metric name, rubric type)`` of the rubric metrics in the criteria, config order."""
        from adk_eval_action.adk.files.rubrics import RUBRIC_METRIC_TYPES

        return [
            (name, RUBRIC_METRIC_TYPES[name])
            for name in self.eval_config.criteria
            if name in RUBRIC_METRIC_TYPES
        ]

    def recorded(self) -> dict[str, Any]:
        """The eval config as a results file records it: ADK's ``EvalConfig`` as JSON, each
        criterion with the fields the file set, in snake_case whichever spelling the file
        used (so a camelCase config and its snake_case twin record the same)."""
        data = self.eval_config.model_dump(mode="json", exclude_none=True)
        data["criteria"] = {
            name: criterion.model_dump(mode="json", exclude_none=True, exclude_unset=True)
            if isinstance(criterion, BaseModel)
            else criterion
            for name, criterion in self.eval_config.criteria.items()
        }
        return data


_EVAL_CONFIG_KEYS = {
    name for field, info in EvalConfig.model_fields.items() for name in (field, info.alias or field)
}


@functools.cache
def adk_metrics() -> tuple[MetricInfo, ...]:
    """The metrics google-adk ships (its registry's list), built once per process."""
    return tuple(MetricEvaluatorRegistry().get_registered_metrics())


def _registered_metrics() -> dict[str, MetricInfo]:
    return {m.metric_name: m for m in adk_metrics()}


def _did_you_mean(word: str, options: list[str]) -> str:
    """``"; did you mean `x`?"`` for the closest option, or ""."""
    close = difflib.get_close_matches(word, options, n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _refuse_missing_criteria(data: dict[str, Any], path: Path) -> None:
    """An eval config without ``criteria`` would run no metric but the efficiency ones, which
    ADK accepts without a word; refuse it, suggesting the key that was probably meant."""
    close = [k for k in data if difflib.get_close_matches(k, ["criteria"], n=1)]
    hint = f"; did you mean `criteria` instead of `{close[0]}`?" if close else ""
    raise ConfigError(path, f"no `criteria`, so no metric would be evaluated{hint}", "criteria")


def _lint(
    data: dict[str, Any],
    where: str,
    known: dict[str, MetricInfo],
    custom: Iterable[str],
    overridden: Iterable[str] = (),
) -> list[str]:
    """Lint warnings of an eval config (each naming ``where``); ``custom`` names its custom
    metrics, whose criterion keys are their function's to read.

    Raises:
        ConfigError: a threshold that is not a finite number, or lies outside its metric's
            value range (:func:`_check_threshold`).
    """
    warnings = []
    for key in data:
        if key in _EVAL_CONFIG_KEYS:
            continue
        hint = _did_you_mean(key, sorted(_EVAL_CONFIG_KEYS))
        warnings.append(
            f"{where}: unknown top-level key `{key}` is ignored by ADK's EvalConfig{hint}"
        )
    criteria = data.get("criteria") or {}
    for name, criterion in criteria.items():
        # A metric no registry knows is refused by the preflight (adk.evaluate.preflight),
        # not linted.
        field = f"criteria.{name}"
        if isinstance(criterion, dict):
            warnings += criterion_warnings(where, name, criterion, custom)
            threshold, field = criterion.get("threshold"), f"{field}.threshold"
        else:
            threshold = criterion
        if name in overridden:
            field = f"{field}, set by adk-eval.yaml `thresholds.{name}`"
        if isinstance(threshold, str):
            warnings.append(f"{where}: threshold of `{name}` is a string ({threshold!r})")
        info = known.get(name)
        _check_threshold(where, field, name, threshold, info.metric_value_info if info else None)
    return warnings


def _check_threshold(
    where: str, field: str, name: str, threshold: Any, value_info: MetricValueInfo | None
) -> None:
    """Refuses a threshold ADK would take but no score can meet as meant: a boolean (pydantic
    reads ``true`` as 1.0), NaN or infinity (Python's json reads ``NaN``; every case would
    fail), or a number outside the metric's value range (ADK's ``MetricInfo``; above it no
    case can pass, below it none can fail). A string or a missing threshold is left to
    ADK's EvalConfig to parse or refuse.

    Raises:
        ConfigError: naming ``where``, ``field``, the value and, when known, the range.
    """
    interval = value_info.interval if value_info else None
    span = f"[{interval.min_value}, {interval.max_value}]" if interval else None
    give = f"give a number in {span}, the value range of `{name}`" if span else "give a number"
    if isinstance(threshold, bool):
        problem = f"threshold {json.dumps(threshold)} is a boolean, not a number; {give}"
    elif isinstance(threshold, str):
        try:
            number = float(threshold)
        except ValueError:
            return
        if math.isfinite(number):
            return
        problem = f"threshold {threshold!r} is not a finite number; {give}"
    elif not isinstance(threshold, (int, float)):
        return
    elif not math.isfinite(threshold):
        problem = f"threshold {threshold} is not a finite number; {give}"
    elif interval is not None and not interval.min_value <= threshold <= interval.max_value:
        problem = (
            f"threshold {threshold} of `{name}` is outside its value range {span}: no eval "
            f"case could {'pass' if threshold > interval.max_value else 'fail'}; {give}"
        )
    else:
        return
    raise ConfigError(where, problem, field)


def _normalize_criteria_rubrics(
    data: dict[str, Any], path: Path | None
) -> dict[str, list[dict[str, Any]]]:
    """Expands rubric short forms in criteria; returns the ``applies_to: final`` rubrics of
    each metric, removed from its criterion (they are attached to each case's last turn)."""
    finals: dict[str, list[dict[str, Any]]] = {}
    for name, criterion in (data.get("criteria") or {}).items():
        if isinstance(criterion, dict) and criterion.get("rubrics") is not None:
            try:
                normalized = normalize_rubric_list(criterion["rubrics"], f"criteria.{name}.rubrics")
            except RubricFormatError as e:
                raise ConfigError(path, str(e), f"criteria.{name}.rubrics") from e
            criterion["rubrics"] = [r for r, a in normalized if a == "every"]
            final = [r for r, a in normalized if a == "final"]
            if final:
                finals[name] = final
    return finals


def _custom_metric_infos(eval_config: EvalConfig) -> dict[str, MetricInfo]:
    """Each custom metric's ``MetricInfo`` as its ``metric_info`` declares it (named after
    the metric); without one, no value range. ADK registers such a metric with a [0, 1]
    interval (``CustomMetricConfig.metric_info``'s documented default) but never checks a
    score against it: a default is not the user's claim, so only a declared range bounds a
    threshold (:func:`_check_threshold`) and a score (``results.model.usable_score``)."""
    infos: dict[str, MetricInfo] = {}
    for name, custom in (eval_config.custom_metrics or {}).items():
        if custom.metric_info is not None:
            infos[name] = custom.metric_info.model_copy(update={"metric_name": name})
            continue
        infos[name] = MetricInfo(
            metric_name=name, description=custom.description,
            metric_value_info=MetricValueInfo(),
        )
    return infos


def _read(path: Path | None) -> tuple[dict[str, Any], str | None]:
    """The eval config's mapping (a private deep copy we may rewrite) and content hash; ADK's
    default criteria (no hash) when ``path`` is None.

    Raises:
        ConfigError: the file is unreadable or not a mapping.
    """
    if path is None:
        return {"criteria": dict(DEFAULT_CRITERIA)}, None
    data = read_mapping(path)
    digest = content_hash(read_bytes(path, MAX_CONFIG_BYTES))
    if not isinstance(data, dict):
        raise ConfigError(path, "an eval config must be a mapping with `criteria`")
    return json.loads(json.dumps(data)), digest


def _apply_overrides(criteria: dict[str, Any], overrides: dict[str, float]) -> None:
    """``adk-eval.yaml``'s thresholds replace the eval config's (a criterion object keeps
    its other fields)."""
    for name, value in overrides.items():
        if isinstance(criteria.get(name), dict):
            criteria[name]["threshold"] = value
        else:
            criteria[name] = value


def _drop_efficiency_metrics(criteria: dict[str, Any], where: str) -> list[str]:
    """Removes the efficiency metrics from ``criteria``; one warning each."""
    warnings = []
    for name in [n for n in criteria if n in EFFICIENCY_METRICS]:
        warnings.append(
            f"{where}: `{name}` is an informational efficiency metric; ADK reports it for every "
            "eval and rejects a threshold for it, so this entry is ignored"
        )
        del criteria[name]
    return warnings


def _metric_metas(
    known: dict[str, MetricInfo], higher_is_better: dict[str, bool]
) -> dict[str, MetricMeta]:
    """Value range (ADK's ``MetricInfo``) and direction of every known metric; lower is
    better for the efficiency metrics unless ``adk-eval.yaml`` says otherwise."""
    metas = {}
    for name, info in known.items():
        interval = info.metric_value_info.interval
        metas[name] = MetricMeta(
            min_value=interval.min_value if interval else None,
            max_value=interval.max_value if interval else None,
            higher_is_better=higher_is_better.get(name, name not in EFFICIENCY_METRICS),
        )
    return metas


def declared_metric_metas() -> dict[str, MetricMeta]:
    """The value range and direction google-adk's metric registry declares for each metric
    it ships (its ``MetricInfo``: whatever metrics the installed version has, those a later
    google-adk adds too), for results that do not record them (ADK's eval_history files)."""
    return _metric_metas(_registered_metrics(), {})


class Overrides(BaseModel):
    """What ``adk-eval.yaml`` says of a suite's metrics, and where: ``thresholds`` replace
    the eval config's, ``higher_is_better`` gives a custom metric its direction; ``file``
    and ``field`` (``suites[0]``) are where they were written, for errors."""

    thresholds: dict[str, float] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)
    file: str | None = None
    field: str | None = None


def _check_overrides(overrides: Overrides, known: dict[str, MetricInfo],
                     custom: Iterable[str]) -> None:
    """Refuses an override of a metric that neither google-adk's registry nor the eval
    config's ``custom_metrics`` knows (with the metric meant), and a ``higher_is_better``
    that turns a google-adk metric's direction around: ADK's metrics are higher-is-better
    (``EvalStatus`` passes a score at or above its threshold:
    google.adk.evaluation's evaluators), its efficiency metrics lower-is-better, and
    reversing one would call every drop an improvement.

    Raises:
        ConfigError: naming ``overrides.file`` and the field.
    """
    custom = set(custom)
    where = overrides.field or "suite"
    for kind, names in (("thresholds", overrides.thresholds),
                        ("higher_is_better", overrides.higher_is_better)):
        for name in names:
            if name in known or name in EFFICIENCY_METRICS:
                continue
            raise ConfigError(
                overrides.file, f"`{name}` is neither a google-adk metric nor declared in the "
                f"eval config's `custom_metrics`{_did_you_mean(name, sorted(known))}",
                f"{where}.{kind}.{name}")
    for name, higher in overrides.higher_is_better.items():
        fixed = name not in EFFICIENCY_METRICS
        if name in custom or higher == fixed:
            continue
        raise ConfigError(
            overrides.file, f"`{name}` is a google-adk metric, "
            f"{'higher' if fixed else 'lower'} is better, and google-adk decides its status "
            "that way; `higher_is_better` is for custom metrics: remove this entry",
            f"{where}.higher_is_better.{name}")


def load_eval_config(
    path: Path | None,
    overrides: Overrides | None = None,
    display_path: str | None = None,
) -> LoadedEvalConfig:
    """Loads an eval config (JSON or YAML) into ADK's ``EvalConfig``, or ADK's default
    criteria when ``path`` is None.

    Rubric short forms are expanded; efficiency metrics named in ``criteria`` are dropped with
    a warning (ADK reports them anyway and fails when they carry a threshold); threshold
    overrides from ``adk-eval.yaml`` are applied.

    Raises:
        ConfigError: the file is unreadable, ADK's EvalConfig rejects it (names the field), or
            a threshold is not a finite number or lies outside its metric's value range.
    """
    where = display_path or (str(path) if path else "default criteria")
    data, digest = _read(path)
    if "criteria" not in data and path is not None:
        _refuse_missing_criteria(data, path)
    criteria = data.setdefault("criteria", {}) if isinstance(data.get("criteria"), dict) else {}
    overrides = overrides or Overrides()
    _apply_overrides(criteria, overrides.thresholds)
    final_rubrics = _normalize_criteria_rubrics(data, path)
    eval_config = _parse(data, path, where)
    known = {**_registered_metrics(), **_custom_metric_infos(eval_config)}
    custom = list(eval_config.custom_metrics or {})
    _check_overrides(overrides, known, custom)
    warnings = _lint(data, where, known, custom, overrides.thresholds)
    warnings += _drop_efficiency_metrics(eval_config.criteria, where)
    return LoadedEvalConfig(
        path=path,
        eval_config=eval_config,
        content_hash=digest,
        metric_meta=_metric_metas(known, overrides.higher_is_better),
        final_rubrics={
            name: [Rubric.model_validate(r) for r in rubrics]
            for name, rubrics in final_rubrics.items()
        },
        warnings=warnings,
    )


def effective_eval_config(recorded: Any) -> Any:
    """A results file's recorded ``eval_config`` as ADK's evaluators read it: ADK's
    ``EvalConfig`` with every criterion read by its metric's model, defaults filled in, as
    JSON. Records written by earlier versions of this tool (criteria as the file wrote them),
    or from a camelCase config and its snake_case twin, are equal exactly when ADK evaluates
    them alike. ``recorded`` unchanged when it is no mapping or ADK's models reject it."""
    if not isinstance(recorded, dict):
        return recorded
    try:
        config = EvalConfig.model_validate(recorded)
        custom = set(config.custom_metrics or {})
        typed = {
            name: criterion if name in custom else typed_criterion(name, criterion)
            for name, criterion in config.criteria.items()
        }
    except ValidationError:
        return recorded
    effective = config.model_dump(mode="json", exclude_none=True)
    effective["criteria"] = {  # each by its own model (1.x dumps them as BaseCriterion)
        name: c.model_dump(mode="json", exclude_none=True) if isinstance(c, BaseModel) else c
        for name, c in typed.items()
    }
    return effective


def _parse(data: dict[str, Any], path: Path | None, where: str) -> EvalConfig:
    """ADK's ``EvalConfig`` of ``data``, each criterion read with its metric's own criterion
    model and kept in snake_case (:func:`adk_eval_action.adk.files.criteria.normalized_criterion`;
    a custom metric's stays as written, its function receives it whole).

    Raises:
        ConfigError: ADK's models reject the config or a criterion, naming the field as the
            file spells it (and an enum field's accepted values).
    """
    _refuse_live_without_support(data, path or where)
    try:
        eval_config = EvalConfig.model_validate(data)
    except ValidationError as e:
        field, message = first_error(e, data, EvalConfig)
        raise ConfigError(path or where, message, field=field) from e
    custom = set(eval_config.custom_metrics or {})
    for name, criterion in list(eval_config.criteria.items()):
        if name in custom or name in EFFICIENCY_METRICS:
            continue  # a custom metric's own; an efficiency metric's entry is dropped
        try:
            eval_config.criteria[name] = normalized_criterion(name, criterion)
        except ValidationError as e:
            raw = data["criteria"][name]
            model = criterion_models().get(name, BaseCriterion)
            field, message = first_error(e, raw, model)
            choices = enum_choices(model, str(e.errors()[0]["loc"][0]))
            if choices:
                given = e.errors()[0].get("input")
                message = f"`{field}` must be one of {', '.join(choices)}, not {given!r}"
            raise ConfigError(path or where, message, field=f"criteria.{name}.{field}") from e
    _type_user_simulator(eval_config, data, path or where)
    return eval_config


def _refuse_live_without_support(data: dict[str, Any], where: Path | str) -> None:
    """Refuses ``live_model_config`` where the installed google-adk cannot evaluate live
    (:data:`adk_eval_action.adk.compat.LIVE_EVALUATION`): its ``EvalConfig`` would drop the
    key and the agent be evaluated in text mode, passing where ``adk eval`` of a google-adk
    with live evaluation (2.13) runs it live.

    Raises:
        ConfigError: naming the field and why.
    """
    key = next((k for k in ("live_model_config", "liveModelConfig") if k in data), None)
    if key is None or LIVE_EVALUATION:
        return
    from importlib.metadata import version

    raise ConfigError(
        where, f"`{key}` asks for live (bidirectional streaming) evaluation, which the "
        f"installed google-adk {version('google-adk')} does not have (its EvalConfig has no "
        "such field): the agent would be evaluated in text mode instead; install a google-adk "
        "with live evaluation (2.13 has it), or remove the key", field=key)


def _type_user_simulator(eval_config: EvalConfig, data: dict[str, Any], where: Path | str) -> None:
    """google-adk 1.x keeps ``user_simulator_config`` as a ``BaseUserSimulatorConfig`` with
    its keys as the file spelt them, and ``LlmBackedUserSimulator`` re-reads it as its
    ``LlmBackedUserSimulatorConfig`` (google.adk.evaluation.simulation.user_simulator
    ``UserSimulator.__init__``); it is read so here (2.x's EvalConfig already does), and kept
    as a ``BaseUserSimulatorConfig`` with snake_case keys, which 1.x serializes whole.

    Raises:
        ConfigError: that model refuses it, naming the field.
    """
    from google.adk.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulatorConfig,
    )
    from google.adk.evaluation.simulation.user_simulator import BaseUserSimulatorConfig

    config = eval_config.user_simulator_config
    if type(config) is not BaseUserSimulatorConfig:
        return
    raw = data.get("user_simulator_config", data.get("userSimulatorConfig"))
    try:
        typed = LlmBackedUserSimulatorConfig.model_validate(config.model_dump(exclude_unset=True))
    except ValidationError as e:
        field, message = first_error(e, raw, LlmBackedUserSimulatorConfig)
        raise ConfigError(where, message, field=f"user_simulator_config.{field}") from e
    eval_config.user_simulator_config = BaseUserSimulatorConfig.model_validate(
        typed.model_dump(mode="json", exclude_unset=True)
    )
