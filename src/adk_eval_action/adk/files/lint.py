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
* **Legacy eval set keys.** ADK's converter of the legacy list formats reads the keys it
  knows with ``.get()`` and ignores the rest, so a misspelt ``expected_tool_use`` reads as
  "no tool call expected"; :func:`legacy_warnings` names each unknown key.
* **Non-finite numbers.** Python's ``json`` reads ``NaN`` and ``Infinity``, which JSON
  (RFC 8259) does not have, and ADK's models keep them (a ``session_input.state`` value the
  agent gets as ``float('nan')``, a ``creation_timestamp``); :func:`non_finite_warnings`
  names each one, with its eval case.
* **The judge model.** A judge metric whose criterion names no judge model uses
  ``JudgeModelOptions.judge_model``'s default; :func:`judge_model_for` says which, so the
  results file records it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.evaluation.eval_case import EvalCase, SessionInput
from google.adk.evaluation.eval_metrics import EvalMetric, JudgeModelOptions
from google.adk.evaluation.eval_set import EvalSet
from pydantic import BaseModel

from adk_eval_action.adk.files.criteria import criterion_models, judge_options
from adk_eval_action.errors import closest_key, model_keys

UNEVALUATED_CASE_FIELDS = {
    "final_session_state": "no metric of google-adk evaluates the final session state",
}
"""Eval case fields ADK accepts and no ADK metric reads, with why."""


def _nested(model: type[BaseModel]) -> dict[str, str]:
    """Field name of a nested options model -> ``parent.field`` (``num_samples`` ->
    ``judge_model_options.num_samples``), for the did-you-mean of a key one level too high."""
    out = {}
    if "judge_model_options" in model.model_fields:
        for field in JudgeModelOptions.model_fields:
            out[field] = f"judge_model_options.{field}"
    return out


def _unknown(keys: Iterable[str], model: type[BaseModel], nested: Mapping[str, str]) -> list[
    tuple[str, str]
]:
    """``(key, hint)`` for each key that is no field of ``model``; the hint's key is spelt
    in the style of the keys written (``matchTyp`` -> ``matchType``, ``match_typ`` ->
    ``match_type``: :func:`~adk_eval_action.errors.closest_key`), as ADK reads both."""
    written = [k for k in keys if isinstance(k, str)]
    accepted = model_keys(model)
    options = model_keys(JudgeModelOptions)
    # A nested option in both spellings (judge_model_options.num_samples and
    # judgeModelOptions.numSamples): ADK reads either.
    deeper = {spelling: path for path in nested.values()
              for spelling in (path, ".".join(_camel(p) for p in path.split(".")))}
    found = []
    for key in written:
        if key in accepted:
            continue
        one_level_up = nested.get(options.get(key, ""))
        meant: str | None
        if one_level_up:
            # Written as the option's alias (numSamples), meant as its camelCase path.
            camel = key != options[key]
            meant = ".".join(_camel(p) for p in one_level_up.split(".")) if camel else one_level_up
        else:
            meant = closest_key(key, [*sorted(accepted), *deeper], written)
        found.append((key, f"; did you mean `{meant}`?" if meant else ""))
    return found


def criterion_warnings(where: str, name: str, criterion: Any, custom: Iterable[str]) -> list[str]:
    """Warnings for keys of ``criteria.<name>`` (and its ``judge_model_options``) that the
    metric's own ADK criterion model has no field for, each key as the file spells it."""
    model = criterion_models().get(name)
    if model is None or name in set(custom) or not isinstance(criterion, Mapping):
        return []
    warnings = [
        f"{where}: `criteria.{name}.{key}` is ignored by ADK ({model.__name__} has no such "
        f"field){hint}"
        for key, hint in _unknown(criterion, model, _nested(model))
    ]
    spelt = next((k for k in ("judge_model_options", "judgeModelOptions") if k in criterion),
                 "judge_model_options")
    options = criterion.get(spelt)
    if "judge_model_options" in model.model_fields and isinstance(options, Mapping):
        warnings += [
            f"{where}: `criteria.{name}.{spelt}.{key}` is not an option of ADK's "
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


LEGACY_TURN_KEYS = ("query", "expected_tool_use", "expected_intermediate_agent_responses",
                    "reference")
"""The keys ADK reads from a turn of a legacy eval set (``[{"query", "expected_tool_use",
"reference"}]``): google.adk.evaluation.local_eval_sets_manager
``_convert_invocation_to_pydantic_schema`` reads ``query`` and ``.get()``s the others, so a
misspelt one is read as empty (no tool call expected, an empty reference)."""

LEGACY_CASE_KEYS = ("name", "data", "initial_session")
"""The keys ADK reads from a case of a wrapped legacy eval set (``[{"name", "data",
"initial_session"}]``): ``convert_eval_set_to_pydantic_schema`` in the same module."""


def _legacy_key_warnings(item: Mapping[str, Any], keys: tuple[str, ...], here: str) -> list[str]:
    warnings = []
    for key in [k for k in item if isinstance(k, str) and k not in keys]:
        meant = closest_key(key, keys)
        warnings.append(
            f"{here}: `{key}` is not a key of ADK's legacy eval set format and is ignored"
            + (f"; did you mean `{meant}`?" if meant else f" (it reads {', '.join(keys)})"))
    return warnings


def legacy_warnings(data: list[Any], where: str) -> list[str]:
    """Warnings for keys of a legacy eval set (a list of turns, or a list of cases each
    with its turns under ``data``) that ADK's converter never reads
    (:data:`LEGACY_TURN_KEYS`, :data:`LEGACY_CASE_KEYS`), each with its turn (from 1) and
    case and the key perhaps meant. A turn is a mapping with ``query``; a case, a mapping
    with a ``data`` list."""
    warnings: list[str] = []
    if all(isinstance(i, Mapping) and "query" in i for i in data):
        warnings = [w for n, turn in enumerate(data, 1)
                    for w in _legacy_key_warnings(turn, LEGACY_TURN_KEYS, f"{where}: turn {n}")]
    else:
        for case in data:
            if not isinstance(case, Mapping) or not isinstance(case.get("data"), list):
                continue
            here = f"{where}: legacy case `{case.get('name')}`"
            warnings += _legacy_key_warnings(case, LEGACY_CASE_KEYS, here)
            warnings += [
                w for n, turn in enumerate(case["data"], 1) if isinstance(turn, Mapping)
                for w in _legacy_key_warnings(turn, LEGACY_TURN_KEYS, f"{here}, turn {n}")]
    if len(warnings) > MAX_LEGACY_KEYS_NAMED:  # a generated file misspelling every turn
        more = len(warnings) - MAX_LEGACY_KEYS_NAMED
        warnings = [*warnings[:MAX_LEGACY_KEYS_NAMED],
                    f"{where}: {more} more keys ADK's legacy format does not read"]
    return warnings


MAX_LEGACY_KEYS_NAMED = 10
"""Unknown legacy keys named one by one in a file at most; more are counted."""


#: Non-finite numbers named one by one at most; more are counted.
MAX_NON_FINITE_NAMED = 10


def non_finite_warnings(data: Any, where: str) -> list[str]:
    """A warning per ``NaN``, ``Infinity`` or ``-Infinity`` in an eval set file's JSON
    ``data`` (module docstring), naming its field and, under ``eval_cases``, the eval case
    (by its ``eval_id``); the first :data:`MAX_NON_FINITE_NAMED`, then how many more."""
    found = [(_field(path, data), value) for path, value in _non_finite(data)]
    warnings = [
        f"{where}: {field} is {value}, which JSON does not allow and ADK passes on as it is "
        "(a NaN state value reaches the agent as float('nan')): write a number or null"
        for field, value in found[:MAX_NON_FINITE_NAMED]]
    if len(found) > MAX_NON_FINITE_NAMED:
        warnings.append(f"{where}: {len(found) - MAX_NON_FINITE_NAMED} more NaN or Infinity "
                        "values")
    return warnings


def _non_finite(data: Any) -> Iterable[tuple[list[str | int], float]]:
    """Paths to the non-finite floats of ``data``, in document order (a stack, not
    recursion: the JSON may be nested as deep as ``json`` reads)."""
    stack: list[tuple[list[str | int], Any]] = [([], data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            yield path, node
        elif isinstance(node, Mapping):
            stack += reversed([([*path, str(k)], v) for k, v in node.items()])
        elif isinstance(node, list):
            stack += reversed([([*path, i], v) for i, v in enumerate(node)])


def _field(path: list[str | int], data: Any) -> str:
    """``eval case `ID`: session_input.state.budget`` for a path under an eval case,
    else the dotted path (list items as ``[i]``)."""
    case = ""
    if len(path) >= 2 and path[0] in ("eval_cases", "evalCases") and isinstance(path[1], int):
        item = data[path[0]][path[1]]
        eval_id = item.get("eval_id", item.get("evalId")) if isinstance(item, Mapping) else None
        case = f"eval case `{eval_id}`: " if eval_id is not None else f"eval_cases[{path[1]}]."
        path = path[2:]
    dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return case + dotted


def judge_model_for(metric: EvalMetric) -> str | None:
    """The judge model a metric will call: the one its criterion names (either spelling:
    :func:`adk_eval_action.adk.files.criteria.judge_options`), else ADK's default when the
    metric's criterion model has ``judge_model_options``; None for metrics without a judge
    (and custom metrics)."""
    options = judge_options(metric)
    return str(options.judge_model) if options is not None else None
