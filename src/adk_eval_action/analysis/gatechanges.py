"""What changed in the gate between the baseline and the head: thresholds and criteria of
each suite's eval config, and the run's gate rules.

A pull request defines the gate it is judged by: its eval configs (ADK's ``EvalConfig``
``criteria``: each metric's ``threshold``) and its gate rules (``adk-eval.yaml``'s
``gate``, action inputs, flags). A PR that lowers a threshold, removes a metric from the
criteria or relaxes ``min_pass_rate`` can turn its own check green, so the comparison
names every such change (:func:`gate_changes`):

* **Criteria** of a suite both sides have, read from the eval config each side recorded
  (for a baseline re-scored under the head's eval config, the one it was recorded under:
  :attr:`adk_eval_action.results.model.SuiteRecord.recorded_eval_config`). A threshold
  moved against the metric's direction (lower, for a higher-is-better metric) loosens; a
  metric the baseline's criteria had and the head's do not loosens; the opposite moves
  tighten. A criterion is a number (the threshold) or an object with ``threshold``
  (google.adk.evaluation.eval_metrics ``BaseCriterion``). A side with no recorded eval
  config (ADK's eval_history) is not compared.
* **Gate rules** of the run (``RunMetadata.gate`` of the baseline, the gate the head is
  judged by now): ``min_pass_rate`` lower, ``fail_on`` dropping a rule (``any`` is
  ``threshold`` + ``regression``; ``none`` has none), ``not_evaluated`` ``fail`` → ``warn``,
  ``max_regression`` or ``min_effect`` higher, ``require_significance`` turned on loosen;
  the opposite moves tighten. ``max_regression`` unset means ``min_effect`` (docs/gating.md),
  so unset → set and back compare as those values. A baseline that recorded no gate
  (files written before it was recorded) is not compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import RunResults, SuiteRecord

__all__ = ["GateChange", "gate_changes", "recorded_gate"]

Value = float | str | bool | None

#: The rules each ``fail_on`` applies (analysis.gate).
_FAIL_ON_RULES = {
    "threshold": {"threshold"},
    "regression": {"regression"},
    "any": {"threshold", "regression"},
    "none": set(),
}


class GateChange(BaseModel):
    """One change of the gate, baseline → head.

    Attributes:
        suite: The suite whose eval config changed; None for a gate rule of the run.
        name: The metric (for ``threshold``/``removed``/``added``) or the gate rule's name
            (``min_pass_rate``, ``fail_on``, ...).
        kind: ``threshold`` (a criterion's threshold moved), ``removed`` (a metric left
            the criteria), ``added`` (a metric joined them), ``rule`` (a gate rule changed).
        baseline: The baseline's value (threshold in metric units, the rule's value);
            None for ``added``, or an unset rule.
        head: The head's value; None for ``removed``, or an unset rule.
        loosens: True when the change lets a worse head pass; False when it tightens or
            only changes how (``fail_on`` ``threshold`` → ``regression`` drops a rule and
            adds one: it loosens).
    """

    suite: str | None = None
    name: str
    kind: Literal["threshold", "removed", "added", "rule"]
    baseline: Value = None
    head: Value = None
    loosens: bool


def _threshold(criterion: Any) -> float | None:
    """A criterion's threshold: the number itself, or its object's ``threshold``."""
    if isinstance(criterion, bool):
        return None
    if isinstance(criterion, int | float):
        return float(criterion)
    if isinstance(criterion, Mapping):
        value = criterion.get("threshold")
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _criteria(suite: SuiteRecord) -> dict[str, Any] | None:
    """The criteria of the eval config the suite was scored under when recorded."""
    config = suite.recorded_eval_config or suite.eval_config
    criteria = (config or {}).get("criteria")
    return dict(criteria) if isinstance(criteria, Mapping) else None


def _suite_changes(
    base: SuiteRecord, head: SuiteRecord, higher: Mapping[tuple[str, str], bool]
) -> list[GateChange]:
    before, after = _criteria(base), _criteria(head)
    if before is None or after is None:
        return []
    changes = []
    for name in [*after, *(n for n in before if n not in after)]:
        old = _threshold(before[name]) if name in before else None
        new = _threshold(after[name]) if name in after else None
        if name not in after:
            changes.append(GateChange(suite=head.name, name=name, kind="removed",
                                      baseline=old, loosens=True))
        elif name not in before:
            changes.append(GateChange(suite=head.name, name=name, kind="added",
                                      head=new, loosens=False))
        elif old is not None and new is not None and not math.isclose(old, new):
            up = higher.get((head.name, name), True)
            changes.append(GateChange(suite=head.name, name=name, kind="threshold",
                                      baseline=old, head=new, loosens=(new < old) == up))
    return changes


def _rule_loosens(name: str, old: Value, new: Value) -> bool:
    if name == "fail_on":
        return bool(_FAIL_ON_RULES.get(str(old), set()) - _FAIL_ON_RULES.get(str(new), set()))
    if name == "not_evaluated":
        return new == "warn"
    if name == "require_significance":
        return bool(new)
    if name == "min_pass_rate":
        return float(new or 0.0) < float(old or 0.0)
    return float(new or 0.0) > float(old or 0.0)  # max_regression, min_effect


def _rule_changes(base: GateConfig, head: GateConfig) -> list[GateChange]:
    changes = []
    for name in ("fail_on", "min_pass_rate", "not_evaluated", "max_regression",
                 "min_effect", "require_significance"):
        old, new = getattr(base, name), getattr(head, name)
        if name == "max_regression":  # unset: min_effect (docs/gating.md)
            old = base.min_effect if old is None else old
            new = head.min_effect if new is None else new
        if old == new:
            continue
        changes.append(GateChange(name=name, kind="rule", baseline=old, head=new,
                                  loosens=_rule_loosens(name, old, new)))
    return changes


def recorded_gate(results: RunResults) -> GateConfig | None:
    """The gate rules ``results`` recorded (``metadata.gate``), or None when it recorded
    none or they do not read as this version's rules."""
    if results.metadata.gate is None:
        return None
    try:
        return GateConfig.model_validate(results.metadata.gate)
    except ValidationError:
        return None


def gate_changes(
    head: RunResults,
    baseline: RunResults,
    gate: GateConfig | None,
    higher_is_better: Mapping[tuple[str, str], bool],
) -> list[GateChange]:
    """Every change of the gate from ``baseline`` to ``head`` (module docstring): the
    run's gate rules first (``gate``: the rules the head is judged by; None: the head's
    recorded ones), then each suite's criteria in the head's suite order.

    Args:
        head: The head's results (a skeleton is enough: eval configs and metadata).
        baseline: The baseline's, its suites already named as the head's.
        gate: The gate rules the head is judged by now.
        higher_is_better: Each (suite, metric)'s direction; a metric not in it is
            higher-is-better.
    """
    changes: list[GateChange] = []
    base_gate, head_gate = recorded_gate(baseline), gate or recorded_gate(head)
    if base_gate is not None and head_gate is not None:
        changes += _rule_changes(base_gate, head_gate)
    base_suites = {s.name: s for s in baseline.suites}
    for suite in head.suites:
        if suite.name in base_suites:
            changes += _suite_changes(base_suites[suite.name], suite, higher_is_better)
    return changes
