"""Configuration: ``adk-eval.yaml`` (our project config) and eval configs (ADK's EvalConfig).

``adk-eval.yaml`` (YAML or JSON) is optional; without it suites are discovered by ADK's
conventions (see :mod:`adk_eval_action.discovery`). Example::

    suites:
      - name: travel_agent
        agent: examples/travel_agent            # folder ADK can load as an agent module
        eval_sets: ["examples/travel_agent/eval/*.evalset.json"]
        eval_config: examples/travel_agent/eval/test_config.json   # JSON or YAML
        num_runs: 2
        thresholds: {response_match_score: 0.6}
        higher_is_better: {brevity: false}
    gate:
      mode: status          # status (as `adk eval` decides) | mean
      min_pass_rate: 1.0    # fraction of eval cases that must pass
      not_evaluated: fail   # fail | warn
      fail_on: threshold    # threshold | regression | any | none (docs/gating.md)
      max_regression: 0.05  # largest allowed drop of a metric's mean, metric units
      min_effect: 0.02      # smallest delta worth calling regressed / improved
      require_significance: false
      max_token_increase: 0.2   # token_usage_v1 may grow 20% (relative)
      on_token_increase: warn   # warn | fail
      metrics:              # per-metric overrides; `suite/metric` for one suite
        response_match_score: {max_regression: 0.1}

Paths are relative to the folder of the config file. Eval configs are ADK's ``EvalConfig``
(google.adk.evaluation.eval_config) plus rubric short forms (:mod:`adk_eval_action.rubrics`);
:func:`load_eval_config` also lints what ADK accepts without a word.
"""

from __future__ import annotations

import difflib
import functools
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_metrics import MetricInfo
from google.adk.evaluation.eval_rubrics import Rubric
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .adk_history import EFFICIENCY_METRICS, MetricMeta
from .errors import ConfigError
from .evalsets import content_hash
from .rubrics import RubricFormatError, normalize_rubric_list

DEFAULT_CRITERIA: dict[str, Any] = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
"""ADK's default criteria when no eval config is found (eval_config._DEFAULT_EVAL_CONFIG)."""


class MetricGateRule(BaseModel):
    """Regression rules for one metric (``gate.metrics.<name>`` in ``adk-eval.yaml``).

    Units are the metric's own (as its scores). A field left unset inherits the gate-wide
    value; :meth:`GateConfig.rule_for` returns the resolved rule with every field set.
    """

    model_config = ConfigDict(extra="forbid")

    max_regression: float | None = Field(default=None, ge=0.0)
    min_effect: float | None = Field(default=None, ge=0.0)
    require_significance: bool | None = None


class GateConfig(BaseModel):
    """How the pass/fail decision is made (see :mod:`adk_eval_action.gate` and
    ``docs/gating.md``).

    ``max_regression`` unset means "no drop beyond ``min_effect``". ``metrics`` maps a
    metric name, or ``suite/metric`` for one suite only (which wins), to overrides of
    ``max_regression``, ``min_effect`` and ``require_significance``.
    ``max_token_increase`` is a relative budget for ``token_usage_v1`` (0.2: head may use
    20% more tokens than the baseline); ``on_token_increase`` says whether exceeding it
    warns or fails.
    """

    model_config = ConfigDict(extra="forbid")

    mode: Literal["status", "mean"] = "status"
    min_pass_rate: float = Field(default=1.0, ge=0.0, le=1.0)
    not_evaluated: Literal["fail", "warn"] = "fail"
    fail_on: Literal["threshold", "regression", "any", "none"] = "threshold"
    max_regression: float | None = Field(default=None, ge=0.0)
    min_effect: float = Field(default=0.0, ge=0.0)
    require_significance: bool = False
    max_token_increase: float | None = Field(default=None, ge=0.0)
    on_token_increase: Literal["warn", "fail"] = "warn"
    metrics: dict[str, MetricGateRule] = Field(default_factory=dict)

    def override_for(self, suite: str, metric: str) -> MetricGateRule | None:
        """The ``metrics`` overrides of one metric, field by field: ``suite/metric`` over
        ``metric``; None when neither entry exists."""
        entries = [self.metrics.get(metric), self.metrics.get(f"{suite}/{metric}")]
        present = [e for e in entries if e is not None]
        if not present:
            return None
        merged: dict[str, object] = {}
        for entry in present:
            merged.update(entry.model_dump(exclude_none=True))
        return MetricGateRule.model_validate(merged)

    def rule_for(self, suite: str, metric: str) -> MetricGateRule:
        """The resolved regression rule of one metric: its override, else the gate-wide
        value; ``max_regression`` defaults to the resolved ``min_effect`` (a drop too small
        to call is too small to fail)."""
        override = self.override_for(suite, metric) or MetricGateRule()
        min_effect = override.min_effect if override.min_effect is not None else self.min_effect
        max_regression = next(
            v for v in (override.max_regression, self.max_regression, min_effect) if v is not None
        )
        significance = override.require_significance
        return MetricGateRule(
            max_regression=max_regression,
            min_effect=min_effect,
            require_significance=self.require_significance
            if significance is None
            else significance,
        )

    def min_effect_for(self, suite: str, metric: str) -> float:
        """The resolved ``min_effect`` of one metric (for classification in compare)."""
        return float(self.rule_for(suite, metric).min_effect or 0.0)


class SuiteConfig(BaseModel):
    """One suite named in ``adk-eval.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    agent: str
    eval_sets: list[str] = Field(min_length=1)
    eval_config: str | None = None
    num_runs: int | None = Field(default=None, ge=1)
    thresholds: dict[str, float] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)


class ProjectConfig(BaseModel):
    """The whole ``adk-eval.yaml``. ``root`` is the folder the paths are relative to."""

    model_config = ConfigDict(extra="forbid")

    suites: list[SuiteConfig] = Field(default_factory=list)
    gate: GateConfig = Field(default_factory=GateConfig)
    num_runs: int = Field(default=1, ge=1)
    parallelism: int = Field(default=4, ge=1)
    exclude: list[str] = Field(default_factory=list)
    root: Path = Path(".")


def _read_mapping(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(path, f"cannot read: {e.strerror or e}") from e
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}"
        raise ConfigError(path, f"not valid JSON at {where}: {e.msg}") from e
    except yaml.YAMLError as e:
        raise ConfigError(path, f"not valid YAML: {e}") from e


def _first_error(error: ValidationError) -> tuple[str, str]:
    first = error.errors()[0]
    return ".".join(str(p) for p in first["loc"]), first["msg"]


def load_project_config(path: Path) -> ProjectConfig:
    """Loads and validates ``adk-eval.yaml`` (YAML or JSON).

    Raises:
        ConfigError: naming the file and the first invalid field.
    """
    data = _read_mapping(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, "must be a mapping with `suites:` and optional `gate:`")
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as e:
        field, message = _first_error(e)
        raise ConfigError(path, message, field=field) from e
    names = [s.name for s in config.suites]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(path, f"duplicate suite name(s): {', '.join(duplicates)}", "suites")
    config.root = path.resolve().parent
    return config


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
        from .rubrics import RUBRIC_METRIC_TYPES

        return [
            (name, RUBRIC_METRIC_TYPES[name])
            for name in self.eval_config.criteria
            if name in RUBRIC_METRIC_TYPES
        ]


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


def _lint(data: dict[str, Any], where: str, known: dict[str, MetricInfo]) -> list[str]:
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
        if name not in known:
            hint = _did_you_mean(name, list(known))
            warnings.append(f"{where}: metric `{name}` is not known to google-adk{hint}")
        if isinstance(criterion, dict):
            if "judge_model" in criterion or "judgeModel" in criterion:
                warnings.append(
                    f"{where}: `criteria.{name}.judge_model` is ignored by ADK; "
                    "put it under `judge_model_options: {judge_model: ...}`"
                )
            threshold = criterion.get("threshold")
        else:
            threshold = criterion
        if isinstance(threshold, str):
            warnings.append(f"{where}: threshold of `{name}` is a string ({threshold!r})")
            continue
        info = known.get(name)
        interval = info.metric_value_info.interval if info else None
        if (
            interval is not None
            and isinstance(threshold, (int, float))
            and not (interval.min_value <= threshold <= interval.max_value)
        ):
            warnings.append(
                f"{where}: threshold {threshold} of `{name}` is outside its value range "
                f"[{interval.min_value}, {interval.max_value}]"
            )
    return warnings


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


def _custom_metric_infos(data: dict[str, Any]) -> dict[str, MetricInfo]:
    infos: dict[str, MetricInfo] = {}
    for name, custom in (data.get("custom_metrics") or data.get("customMetrics") or {}).items():
        info = (custom or {}).get("metric_info") or (custom or {}).get("metricInfo")
        payload = dict(info or {})
        payload["metric_name"] = name
        payload.pop("metricName", None)
        payload.setdefault("metric_value_info", {"interval": {"min_value": 0.0, "max_value": 1.0}})
        try:
            infos[name] = MetricInfo.model_validate(payload)
        except ValidationError:
            continue
    return infos


def load_eval_config(
    path: Path | None,
    threshold_overrides: dict[str, float] | None = None,
    higher_is_better: dict[str, bool] | None = None,
    display_path: str | None = None,
) -> LoadedEvalConfig:
    """Loads an eval config (JSON or YAML) into ADK's ``EvalConfig``, or ADK's default
    criteria when ``path`` is None.

    Rubric short forms are expanded; efficiency metrics named in ``criteria`` are dropped with
    a warning (ADK reports them anyway and fails when they carry a threshold); threshold
    overrides from ``adk-eval.yaml`` are applied.

    Raises:
        ConfigError: the file is unreadable, or ADK's EvalConfig rejects it (names the field).
    """
    where = display_path or (str(path) if path else "default criteria")
    if path is None:
        data: Any = {"criteria": dict(DEFAULT_CRITERIA)}
        digest = None
    else:
        data = _read_mapping(path)
        digest = content_hash(path.read_bytes())
        if not isinstance(data, dict):
            raise ConfigError(path, "an eval config must be a mapping with `criteria`")
    data = json.loads(json.dumps(data))  # a private deep copy we may rewrite
    known = {**_registered_metrics(), **_custom_metric_infos(data)}
    if "criteria" not in data and path is not None:
        _refuse_missing_criteria(data, path)
    criteria = data.setdefault("criteria", {}) if isinstance(data.get("criteria"), dict) else {}
    for name, value in (threshold_overrides or {}).items():
        if isinstance(criteria.get(name), dict):
            criteria[name]["threshold"] = value
        else:
            criteria[name] = value
    warnings = _lint(data, where, known)
    for name in [n for n in criteria if n in EFFICIENCY_METRICS]:
        warnings.append(
            f"{where}: `{name}` is an informational efficiency metric; ADK reports it for every "
            "eval and rejects a threshold for it, so this entry is ignored"
        )
        del criteria[name]
    final_rubrics = _normalize_criteria_rubrics(data, path)
    try:
        eval_config = EvalConfig.model_validate(data)
    except ValidationError as e:
        field, message = _first_error(e)
        raise ConfigError(path or where, message, field=field) from e
    metas = {
        name: MetricMeta(
            min_value=info.metric_value_info.interval.min_value
            if info.metric_value_info.interval
            else None,
            max_value=info.metric_value_info.interval.max_value
            if info.metric_value_info.interval
            else None,
            higher_is_better=(higher_is_better or {}).get(name, name not in EFFICIENCY_METRICS),
        )
        for name, info in known.items()
    }
    return LoadedEvalConfig(
        path=path,
        eval_config=eval_config,
        content_hash=digest,
        metric_meta=metas,
        final_rubrics={
            name: [Rubric.model_validate(r) for r in rubrics]
            for name, rubrics in final_rubrics.items()
        },
        warnings=warnings,
    )
