"""Keys that google-adk accepts without a word and never reads, named before anything runs.

* **Criterion keys.** ADK's ``BaseCriterion`` allows extra keys (``extra="allow"``) and each
  evaluator re-reads the criterion as its own model (``criterion_type`` of the evaluator
  class its ``MetricEvaluatorRegistry`` holds: ``ToolTrajectoryCriterion``,
  ``RubricsBasedCriterion``, …), so a misspelt ``ignore_arguments`` or a ``num_samples``
  beside ``threshold`` is silently dropped. :func:`criterion_warnings` checks every key
  against the metric's own model (and ``judge_model_options`` against
  ``JudgeModelOptions``) with a did-you-mean. Custom metrics are skipped: their function
  receives the whole criterion.
* **Eval set and eval case fields.** ``EvalSet`` ignores unknown keys, ``EvalCase`` and
  ``SessionInput`` keep them (``extra="allow"``) without reading them, and no metric of
  google-adk 2.13 evaluates ``final_session_state``. :func:`eval_set_warnings` names them.
* **The judge model.** A judge metric whose criterion names no judge model uses
  ``JudgeModelOptions.judge_model``'s default; :func:`judge_model_for` says which, so the
  results file records it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.evaluation.eval_case import EvalCase, SessionInput
from google.adk.evaluation.eval_metrics import EvalMetric, JudgeModelOptions
from google.adk.evaluation.eval_set import EvalSet
from pydantic import BaseModel

from adk_eval_action.adk.criteria import criterion_models, judge_options

UNEVALUATED_CASE_FIELDS = {
    "final_session_state": "no metric of google-adk evaluates the final session state",
}
"""Eval case fields ADK accepts and no ADK metric reads, with why."""


def _keys(model: type[BaseModel]) -> dict[str, str]:
    """Every spelling ADK accepts for the model's fields (name and camelCase alias) -> name."""
    names: dict[str, str] = {}
    for field, info in model.model_fields.items():
        names[field] = field
        generator = model.model_config.get("alias_generator")
        alias = info.alias or (
            generator(field)
            if callable(generator)
            else None
        )
        if alias:
            names[alias] = field
    return names


def _nested(model: type[BaseModel]) -> dict[str, str]:
    """Field name of a nested options model -> ``parent.field`` (``num_samples`` ->
    ``judge_model_options.num_samples``), for the did-you-mean of a key one level too high."""
    out = {}
    if "judge_model_options" in model.model_fields:
        for field in JudgeModelOptions.model_fields:
            out[field] = f"judge_model_options.{field}"
    return out


def _did_you_mean(word: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _unknown(keys: Iterable[str], model: type[BaseModel], nested: Mapping[str, str]) -> list[
    tuple[str, str]
]:
    """``(key, hint)`` for each key that is no field of ``model``."""
    accepted = _keys(model)
    options = _keys(JudgeModelOptions)
    found = []
    for key in keys:
        if key in accepted:
            continue
        deeper = nested.get(options.get(key, ""))
        hint = f"; did you mean `{deeper}`?" if deeper else _did_you_mean(
            key, [*sorted(model.model_fields), *nested.values()]
        )
        found.append((key, hint))
    return found


def criterion_warnings(where: str, name: str, criterion: Any, custom: Iterable[str]) -> list[str]:
    """Warnings for keys of ``criteria.<name>`` (and its ``judge_model_options``) that the
    metric's own ADK criterion model has no field for."""
    model = criterion_models().get(name)
    if model is None or name in set(custom) or not isinstance(criterion, Mapping):
        return []
    warnings = [
        f"{where}: `criteria.{name}.{key}` is ignored by ADK ({model.__name__} has no such "
        f"field){hint}"
        for key, hint in _unknown(criterion, model, _nested(model))
    ]
    options = criterion.get("judge_model_options", criterion.get("judgeModelOptions"))
    if "judge_model_options" in model.model_fields and isinstance(options, Mapping):
        warnings += [
            f"{where}: `criteria.{name}.judge_model_options.{key}` is not an option of ADK's "
            f"JudgeModelOptions{hint}"
            for key, hint in _unknown(options, JudgeModelOptions, {})
        ]
    return warnings


def _extra_keys(data: Mapping[str, Any], model: type[BaseModel]) -> list[tuple[str, str]]:
    return _unknown([k for k in data if isinstance(k, str)], model, {})


def _case_warnings(case: Mapping[str, Any], where: str) -> list[str]:
    eval_id = case.get("eval_id", case.get("evalId", "?"))
    here = f"{where}: eval case `{eval_id}`"
    warnings = [
        f"{here}: `{key}` is not a field of ADK's EvalCase and is never evaluated{hint}"
        for key, hint in _extra_keys(case, EvalCase)
    ]
    for field, why in UNEVALUATED_CASE_FIELDS.items():
        value = case.get(field, case.get(_camel(field)))
        if value:
            warnings.append(f"{here}: `{field}` is accepted by ADK but never evaluated ({why})")
    session = case.get("session_input", case.get("sessionInput"))
    if isinstance(session, Mapping):
        warnings += [
            f"{here}: `session_input.{key}` is not a field of ADK's SessionInput and is never "
            f"used{hint}"
            for key, hint in _extra_keys(session, SessionInput)
        ]
    return warnings


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def eval_set_warnings(data: Mapping[str, Any], where: str) -> list[str]:
    """Warnings for fields of an eval set file (ADK's ``EvalSet`` JSON, snake or camelCase)
    that google-adk accepts and never evaluates: unknown keys of the eval set, of each eval
    case and of its ``session_input``, and :data:`UNEVALUATED_CASE_FIELDS` that are set."""
    warnings = [
        f"{where}: `{key}` is not a field of ADK's EvalSet and is ignored{hint}"
        for key, hint in _extra_keys(data, EvalSet)
    ]
    cases = data.get("eval_cases", data.get("evalCases"))
    for case in cases if isinstance(cases, list) else []:
        if isinstance(case, Mapping):
            warnings += _case_warnings(case, where)
    return warnings


def judge_model_for(metric: EvalMetric) -> str | None:
    """The judge model a metric will call: the one its criterion names (either spelling:
    :func:`adk_eval_action.adk.criteria.judge_options`), else ADK's default when the
    metric's criterion model has ``judge_model_options``; None for metrics without a judge
    (and custom metrics)."""
    options = judge_options(metric)
    return str(options.judge_model) if options is not None else None
