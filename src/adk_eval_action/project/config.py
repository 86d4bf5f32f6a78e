"""Project configuration: ``adk-eval.yaml`` (suites and gate rules).

``adk-eval.yaml`` (YAML or JSON) is optional; without it suites are discovered by ADK's
conventions (see :mod:`adk_eval_action.project.discovery`). Example::

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
    models:                 # per model: calls in flight, prices (docs/scaling.md)
      gemini-2.5-flash: {max_concurrency: 8, input_usd_per_1m_tokens: 0.3,
                         output_usd_per_1m_tokens: 2.5}
    budget: {model_calls: 500, tokens: 2000000, usd: 5}   # never started past these
    model_retries:          # model calls (agents, judges, user simulator): docs/action.md
      attempts: 5           # tries per call, the first included
      initial_delay_s: 1    # first backoff step; doubles, half of it random (jitter)
      max_delay_s: 60       # longest wait; a longer retryDelay/Retry-After ends the retries
      call_timeout_s: 180   # one attempt without an answer this long is a timeout
      run_budget_s: 300     # all waits of a run together

Paths are relative to the folder of the config file. Eval configs (ADK's ``EvalConfig``) are
loaded by :mod:`adk_eval_action.adk.files.evalconfig`. This module does not import google-adk, so
comparing, gating and rendering (``compare``, ``render``) do not pay for loading it
(~360 MB resident and seconds of start-up).
"""

from __future__ import annotations

import difflib
import json
import typing
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from adk_eval_action.errors import (
    ConfigError,
    closest_key,
    field_location,
    json_problem,
    model_keys,
    node_at,
    snake_case,
)
from adk_eval_action.files import MAX_CONFIG_BYTES, FileLimitError, load_yaml, read_text


def _not_a_boolean(value: Any) -> Any:
    """Refuses a YAML/JSON boolean where a number is meant: pydantic reads ``true`` as 1."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean, not a number")
    return value


#: A threshold in ``adk-eval.yaml``: a finite number (not a boolean, NaN or infinity); its
#: range is checked against the metric's by adk_eval_action.adk.files.evalconfig.
Threshold = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_not_a_boolean)]
#: Runs of each eval case at most (``num_runs``, ``adaptive_runs``): past a few dozen, more
#: runs change no decision (docs/gating.md); a billion would only exhaust memory.
MAX_RUNS = 1_000
#: Model calls in flight at most (``parallelism``, a model's ``max_concurrency``).
MAX_PARALLELISM = 1_000
#: A number of runs: an integer from 1 to :data:`MAX_RUNS`, not a boolean.
NumRuns = Annotated[int, Field(ge=1, le=MAX_RUNS), BeforeValidator(_not_a_boolean)]


class MetricGateRule(BaseModel):
    """Regression rules for one metric (``gate.metrics.<name>`` in ``adk-eval.yaml``).

    Units are the metric's own (as its scores). A field left unset inherits the gate-wide
    value; :meth:`GateConfig.rule_for` returns the resolved rule with every field set.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    max_regression: float | None = Field(default=None, ge=0.0)
    min_effect: float | None = Field(default=None, ge=0.0)
    require_significance: bool | None = None


class GateConfig(BaseModel):
    """How the pass/fail decision is made (see :mod:`adk_eval_action.analysis.gate` and
    ``docs/gating.md``).

    ``max_regression`` unset means "no drop beyond ``min_effect``". ``metrics`` maps a
    metric name, or ``suite/metric`` for one suite only (which wins), to overrides of
    ``max_regression``, ``min_effect`` and ``require_significance``.
    ``max_token_increase`` is a relative budget for ``token_usage_v1`` (0.2: head may use
    20% more tokens than the baseline); ``on_token_increase`` says whether exceeding it
    warns or fails. ``informational_min_effect`` is informational metrics' (durations,
    tokens) smallest change worth calling, as a share of their matched baseline mean
    (0.1: 10%), unless ``metrics`` sets theirs explicitly.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    # Each description is also the help of the setting's CLI flag and action input
    # (adk_eval_action.settings derives both from these fields; ``mode`` is `gate_mode` there).
    mode: Literal["status", "mean"] = Field(
        default="status",
        description="status: a case fails when any metric failed (as adk eval); mean: each "
        "metric's mean vs its threshold.",
    )
    min_pass_rate: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Fraction of eval cases that must pass."
    )
    not_evaluated: Literal["fail", "warn"] = Field(
        default="fail",
        description="Whether metrics ADK left NOT_EVALUATED fail their case (a metric whose "
        "code failed makes the run incomplete either way; left unset, so does a judge model "
        "that answered off-format).",
    )
    fail_on: Literal["threshold", "regression", "any", "none"] = Field(
        default="threshold", description="Which rule fails the gate."
    )
    max_regression: float | None = Field(
        default=None,
        ge=0.0,
        description="Largest allowed drop of a metric's mean, in the metric's units "
        "(unset: min_effect).",
    )
    min_effect: float = Field(
        default=0.0, ge=0.0, description="Smallest delta worth calling a change."
    )
    require_significance: bool = Field(
        default=False,
        description="Only fail a regression whose interval lies wholly beyond max_regression.",
    )
    max_token_increase: float | None = Field(
        default=None,
        ge=0.0,
        description="Largest allowed relative growth of token_usage_v1 (0.2 = +20%).",
    )
    on_token_increase: Literal["warn", "fail"] = Field(
        default="warn", description="Whether exceeding max_token_increase warns or fails."
    )
    informational_min_effect: float = Field(
        default=0.1,
        ge=0.0,
        description="Informational metrics' (durations, tokens) smallest change worth "
        "calling, as a share of their baseline mean (0.1 = 10%); a metric's own min_effect "
        "in adk-eval.yaml wins.",
    )
    metrics: dict[str, MetricGateRule] = Field(default_factory=dict)
    quarantine: Literal["off", "flaky"] = Field(
        default="off",
        description="flaky: an eval case the default branch's history knows as flaky "
        "(it failed in some and passed in others of the recorded runs with unchanged "
        "inputs) does not fail the gate by failing; it is still shown (docs/baselines.md).",
    )
    pool_runs: int = Field(
        default=0,
        ge=0,
        le=100,
        description="Earlier recorded runs of the default branch whose runs of each eval "
        "case count as extra baseline runs when their suite inputs, google-adk version and "
        "judge models are the baseline's (0: off; docs/baselines.md).",
    )
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

    def informational_min_effect_for(self, suite: str, metric: str) -> float:
        """The relative min_effect of an informational metric: ``informational_min_effect``,
        or 0 when ``metrics`` gives the metric a ``min_effect`` of its own (that one
        applies as given)."""
        override = self.override_for(suite, metric)
        explicit = override is not None and override.min_effect is not None
        return 0.0 if explicit else self.informational_min_effect

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


class ModelRetrySettings(BaseModel):
    """How model calls are retried (adk-eval.yaml ``model_retries:``).

    Attributes:
        attempts: Tries per model call, the first included (1 = no retries).
        initial_delay_s: The first backoff step in seconds; each next step doubles.
        max_delay_s: The longest single wait in seconds. A server asking for a longer wait
            (``retryDelay``/``Retry-After``) ends the call's retries instead.
        call_timeout_s: Seconds one attempt may wait for the model's next answer before it
            counts as a timeout (a transient fault); 0 for no limit.
        run_budget_s: Seconds of waiting all retries of one run may add up to; once spent,
            calls are tried once.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    attempts: int = Field(default=5, ge=1, le=20)
    initial_delay_s: float = Field(default=1.0, ge=0)
    max_delay_s: float = Field(default=60.0, ge=0)
    call_timeout_s: float = Field(default=180.0, ge=0)
    run_budget_s: float = Field(default=300.0, ge=0)


MAX_USD_PER_1M_TOKENS = 10_000.0
"""The most a price of ``models:`` may be, dollars per million tokens: over ten times the
dearest model's price (OpenAI's o1-pro, $600 per million output tokens, in 2025)."""


class ModelSettings(BaseModel):
    """One model's settings (``models: {NAME: {...}}`` in adk-eval.yaml, NAME as the agent
    or the eval config names the model).

    Attributes:
        max_concurrency: At most this many calls of the model in flight at once, across
            suites, eval cases, runs and judges (adk_eval_action.adk.runtime.model_limits); None:
            only ``parallelism`` bounds them.
        input_usd_per_1m_tokens: Dollars per million input (prompt) tokens; with it the
            model's calls have dollars (adk_eval_action.results.usage), without it tokens
            only.
        output_usd_per_1m_tokens: Dollars per million output tokens (thought tokens
            included, as Gemini and OpenAI bill them).
        cached_input_usd_per_1m_tokens: Dollars per million input tokens read from the
            context cache (default: the input price).

    Each price is at most :data:`MAX_USD_PER_1M_TOKENS`: a larger one is a typo (a price
    per token, a missing decimal point), and one near the float's limit (1e308) made the
    run's dollars infinite, which no results file can hold.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    max_concurrency: int | None = Field(default=None, ge=1, le=MAX_PARALLELISM)
    input_usd_per_1m_tokens: float | None = Field(default=None, ge=0, le=MAX_USD_PER_1M_TOKENS)
    output_usd_per_1m_tokens: float | None = Field(default=None, ge=0, le=MAX_USD_PER_1M_TOKENS)
    cached_input_usd_per_1m_tokens: float | None = Field(
        default=None, ge=0, le=MAX_USD_PER_1M_TOKENS)

    @model_validator(mode="after")
    def _prices_together(self) -> ModelSettings:
        """An output or cached price without an input price would price nothing."""
        others = (self.output_usd_per_1m_tokens, self.cached_input_usd_per_1m_tokens)
        if self.input_usd_per_1m_tokens is None and any(p is not None for p in others):
            raise ValueError(
                "input_usd_per_1m_tokens is missing: give the input price with the others"
            )
        if self.input_usd_per_1m_tokens is not None and self.output_usd_per_1m_tokens is None:
            raise ValueError(
                "output_usd_per_1m_tokens is missing: give the output price with the input's"
            )
        return self

    @property
    def priced(self) -> bool:
        """Whether the model has prices (its calls have dollars)."""
        return self.input_usd_per_1m_tokens is not None


class BudgetConfig(BaseModel):
    """What one run may spend at most (``budget:`` in adk-eval.yaml; the flags
    ``--max-model-calls``, ``--max-tokens``, ``--max-usd`` and the action inputs of the same
    names win). None: no limit. How each is enforced: docs/scaling.md, "Cost and budgets".

    Attributes:
        model_calls: Requests sent to models (each retry is one), agents, judges and user
            simulator together: a hard cap.
        tokens: Tokens all models reported (input, output and thoughts).
        usd: Dollars at the prices of ``models:`` (models without a price count nothing).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model_calls: int | None = Field(default=None, ge=1)
    tokens: int | None = Field(default=None, ge=1)
    usd: float | None = Field(default=None, gt=0)


def _agent_given(value: str) -> str:
    """A suite's agent folder, which ``init`` leaves empty when it found none."""
    if not value.strip():
        raise ValueError("empty: fill in the folder of the agent these eval sets evaluate "
                         "(`adk-eval-action init` names the agent folders it saw in a comment "
                         "above; `init --agent PATH` writes it)")
    return value


class SuiteConfig(BaseModel):
    """One suite named in ``adk-eval.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    agent: Annotated[str, AfterValidator(_agent_given)]
    eval_sets: list[str] = Field(min_length=1)
    eval_config: str | None = None
    num_runs: NumRuns | None = None
    thresholds: dict[str, Threshold] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)
    requirements: list[str] | None = Field(default=None, description=(
        "The agent's own dependency files (requirements files or pyproject.toml, relative "
        "to this file), installed by the action before the suite runs; unset: the one "
        "next to the agent (its folder, or the nearest folder above it below this file's "
        "that has a requirements.txt or pyproject.toml); []: none."))
    shard: int | None = Field(default=None, ge=1, le=256, description=(
        "The shard (1..N) that evaluates this whole suite when the run is sharded "
        "(`--shard K/N`, the matrix workflow `init` writes): its agent's group, whose "
        "dependencies that job installs; unset: its eval cases are spread by weight."))


class ProjectConfig(BaseModel):
    """The whole ``adk-eval.yaml``. ``root`` is the folder the paths are relative to.

    Which fields the file gave is ``model_fields_set`` (and ``gate.model_fields_set``):
    :func:`adk_eval_action.settings.layers` lets only those outrank the defaults.
    """

    model_config = ConfigDict(extra="forbid")

    suites: list[SuiteConfig] = Field(default_factory=list)
    gate: GateConfig = Field(default_factory=GateConfig)
    # None: not given here; the default is the settings model's (adk_eval_action.settings).
    num_runs: NumRuns | None = None
    parallelism: int | None = Field(default=None, ge=1, le=MAX_PARALLELISM)
    #: Recorded runs the default branch's history keeps (``history_runs``).
    history_runs: int | None = Field(default=None, ge=1, le=10_000)
    #: Days after which the comment flags the baseline as old (``baseline_max_age``).
    baseline_max_age: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    #: Per-model concurrency limits and prices by model name (as the agent or the eval
    #: config names it).
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    #: gitignore-style patterns (pathspec's gitwildmatch), relative to ``root``, of eval sets
    #: that discovery skips and that the suites' ``eval_sets`` globs leave out.
    exclude: list[str] = Field(default_factory=list)
    model_retries: ModelRetrySettings = Field(default_factory=ModelRetrySettings)
    root: SkipJsonSchema[Path] = Path(".")  # set by the loader, not a key of the file


#: The names ``adk-eval.yaml`` is found under in the working directory, in this order.
PROJECT_CONFIG_NAMES = ("adk-eval.yaml", "adk-eval.yml", "adk-eval.json")


def find_project_config(workdir: Path) -> Path | None:
    """The project config in ``workdir`` (first of :data:`PROJECT_CONFIG_NAMES`), or None."""
    return next((workdir / n for n in PROJECT_CONFIG_NAMES if (workdir / n).is_file()), None)


def read_mapping(path: Path) -> Any:
    """The parsed content of a JSON (``.json``) or YAML file: a regular file of at most
    ``files.MAX_CONFIG_BYTES``, YAML without alias bombs (``files.load_yaml``).

    Raises:
        ConfigError: unreadable, too large, not a regular file, nested too deeply, an alias
            bomb, or not valid JSON/YAML (with the line for JSON).
    """
    try:
        text = read_text(path, MAX_CONFIG_BYTES)
    except FileLimitError as e:
        raise ConfigError(path, str(e).removeprefix(f"{path}: ")) from e
    except UnicodeDecodeError as e:
        raise ConfigError(path, f"not UTF-8 text: {e}") from e
    except OSError as e:
        raise ConfigError(path, f"cannot read: {e.strerror or e}") from e
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return load_yaml(text)
    except RecursionError as e:
        raise ConfigError(path, "nested too deeply") from e
    except json.JSONDecodeError as e:
        raise ConfigError(path, json_problem(e)) from e
    except yaml.YAMLError as e:
        raise ConfigError(path, f"not valid YAML: {e}") from e


def first_error(
    error: ValidationError, data: Any = None, model: type[BaseModel] | None = None
) -> tuple[str, str]:
    """``(dotted field path, message)`` of a validation error's first error, the field as
    the user wrote it in ``data`` (:func:`~adk_eval_action.errors.field_location`).

    A mapping where a union also takes a number (an ADK criterion: a threshold or a
    ``BaseCriterion``) is reported by the error inside the mapping, not "Input should be a
    valid number". A required key missing beside a key close to it (``treshold`` for
    ``threshold``, where the model keeps unknown keys) is reported as that misspelling.
    With ``model`` (the model validated), an unknown key names the key it was perhaps meant
    to be, spelt in the style of the user's keys (:func:`~adk_eval_action.errors.closest_key`),
    or the keys accepted there, instead of pydantic's "Extra inputs are not permitted"."""
    errors = error.errors()
    first = errors[0]
    if isinstance(first.get("input"), dict) and first["type"] not in ("missing",
                                                                       "extra_forbidden"):
        # A union member that is no model refused the mapping; the model member's own
        # error (one level deeper) names the field that is wrong.
        prefix = first["loc"][:-1]
        first = next((e for e in errors if len(e["loc"]) > len(first["loc"])
                      and e["loc"][:len(prefix)] == prefix), first)
    if first["type"] == "missing":
        # A misspelt required key is two errors: the key missing, the misspelling unknown;
        # the misspelling says more.
        first = next((e for e in errors if e["type"] == "extra_forbidden"
                      and e["loc"][:-1] == first["loc"][:-1]
                      and difflib.get_close_matches(str(e["loc"][-1]), [str(first["loc"][-1])])),
                     first)
    message = first["msg"]
    loc = first["loc"]
    if first["type"] == "missing" and isinstance(first.get("input"), dict):
        # A model that keeps unknown keys (ADK's BaseCriterion) reports only the missing one.
        wanted = str(loc[-1])
        written = [k for k in first["input"] if isinstance(k, str)]
        typo = difflib.get_close_matches(wanted, written, n=1)
        if typo:
            spellings = {wanted, snake_case(wanted)}
            meant = closest_key(typo[0], spellings, written) or wanted
            return (field_location((*loc[:-1], typo[0]), data),
                    f"unknown key `{typo[0]}`; did you mean `{meant}`?")
    if model is not None and first["type"] == "extra_forbidden" and loc:
        accepted = sorted(_accepted_keys(model, loc[:-1]))
        siblings = node_at(loc[:-1], data)
        close = closest_key(str(loc[-1]), accepted,
                            siblings if isinstance(siblings, dict) else ())
        message = f"unknown key `{loc[-1]}`" + (
            f"; did you mean `{close}`?" if close
            else f"; accepted here: {', '.join(accepted)}" if accepted else ""
        )
    return field_location(loc, data), message


def _accepted_keys(model: type[BaseModel], parent: tuple[int | str, ...]) -> set[str]:
    """The keys (names and aliases) of the models found at ``parent``, a validation error's
    location: fields (by name or alias: ADK's models validate camelCase aliases) step into
    their models; list indices, dict keys and pydantic's union tags stay where they are."""
    models = [model]
    for part in parent:
        fields = [info for m in models for name, info in m.model_fields.items()
                  if part in (name, info.alias)]
        if fields:
            models = [found for f in fields for found in _models_in(f.annotation)]
    return {key for m in models for key in model_keys(m)}


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models inside a type annotation (``list[X]``, ``dict[str, X]``,
    ``X | None``, ``Annotated[X, ...]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def load_project_config(path: Path) -> ProjectConfig:
    """Loads and validates ``adk-eval.yaml`` (YAML or JSON).

    Raises:
        ConfigError: naming the file and the first invalid field.
    """
    data = read_mapping(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, "must be a mapping with `suites:` and optional `gate:`")
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as e:
        field, message = first_error(e, data, ProjectConfig)
        raise ConfigError(path, message, field=field) from e
    # Counted once (names.count per name was quadratic: 1 s for 5,000 suites).
    counts = Counter(s.name for s in config.suites)
    duplicates = sorted(n for n, count in counts.items() if count > 1)
    if duplicates:
        raise ConfigError(path, f"duplicate suite name(s): {', '.join(duplicates)}", "suites")
    config.root = path.resolve().parent
    return config
