"""The HTML report's eval cases: one row per case of the comparison, its filters, its deep
link, and its evidence (baseline and head side by side, run by run, turn by turn).

Rules:

* **Filters** (a case may have several): ``failing``, a case the gate fails
  (:attr:`adk_eval_action.analysis.gate.GateResult.failing_cases`); ``regressed``, newly
  failing, or a gated metric of the case worse than on the baseline by more than that
  metric's min_effect (any worsening without one); ``flaky``, its runs disagree on either
  side; ``errored``, a run errored; ``new`` and ``removed``, on one side only.
* **Order**: the gate's failing cases worst first, then regressed, errored, flaky, new and
  removed ones, then the rest in the comparison's order.
* **Deep link**: ``case-<suite>-<eval id>``, each part with every character but ASCII
  letters, digits, ``_``, ``.`` and ``-`` as ``-`` (cut at 60), then ``-`` and 8 hex digits
  of the case's key's SHA-1 when another case took that slug first or a part had to be
  changed: the id is safe in a URL fragment and an HTML id, and unique.
* **Runs**: run *n* of the baseline beside run *n* of the head; the first pair whose head
  (or, for a removed case, baseline) run did not pass is open, else the first. Turns are
  aligned by number, the expected conversation beside them (the head's; the baseline's for
  a removed case, with a note when the baseline expected another one).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from adk_eval_action.analysis.compare import CaseComparison, Comparison, MetricComparison
from adk_eval_action.analysis.gate import GateResult
from adk_eval_action.report.format import score
from adk_eval_action.report.html_view import (
    MetricView,
    RubricView,
    RunView,
    SideCase,
    TurnView,
    clip,
    ident,
)
from adk_eval_action.results.model import ErrorRecord, MetricStatus
from adk_eval_action.results.scoretable import CaseKey

FILTERS = ("failing", "regressed", "flaky", "errored", "new", "removed")
"""The report's case filters, in the order its toolbar shows them."""
CHANGE_LABELS = {
    "newly_failing": "newly failing",
    "newly_passing": "newly passing",
    "still_failing": "still failing",
}
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_SUMMARY_METRICS = 3
"""Metric changes named on a case's row (the evidence lists all)."""


@dataclass(slots=True)
class DeltaRow:
    """A metric of a case, baseline vs head, as shown (runs averaged); ``worse`` when the
    head is worse in the metric's direction; ``status`` the head's (None: removed)."""

    metric: str
    base: str
    head: str
    delta: str
    status: str | None = None
    reason: str | None = None
    worse: bool = False


@dataclass(slots=True)
class ErrorView:
    """An error of the case: its kind, message, where (``file:line``) and what to do."""

    kind: str
    message: str
    where: str | None = None
    hint: str | None = None


@dataclass(slots=True)
class TurnRow:
    """Turn ``turn`` of a run pair: the user's message and each column's view of it."""

    turn: int
    user: str | None = None
    expected: TurnView | None = None
    base: TurnView | None = None
    head: TurnView | None = None


@dataclass(slots=True)
class MetricPair:
    """One metric of a run pair, baseline's and head's result."""

    metric: str
    base: MetricView | None = None
    head: MetricView | None = None


@dataclass(slots=True)
class RunPair:
    """Run ``run`` of the baseline beside run ``run`` of the head."""

    run: int
    opened: bool = False
    base_status: str | None = None
    head_status: str | None = None
    base_error: str | None = None
    head_error: str | None = None
    turns: list[TurnRow] = field(default_factory=list)
    more_turns: int = 0
    metrics: list[MetricPair] = field(default_factory=list)
    base_rubrics: list[RubricView] = field(default_factory=list)
    head_rubrics: list[RubricView] = field(default_factory=list)


@dataclass(slots=True)
class CaseBody:
    """A case's evidence: where it is, its errors, flaky runs, metric deltas and runs.
    ``columns`` names the columns of each turn (``expected``, ``base``, ``head``)."""

    columns: list[str]
    where: str | None = None
    errors: list[ErrorView] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    metrics: list[DeltaRow] = field(default_factory=list)
    note: str | None = None
    runs: list[RunPair] = field(default_factory=list)


@dataclass(slots=True)
class CaseRow:
    """One eval case's row: names (escaped by the template), change, statuses, filters
    (:data:`FILTERS`), the deep link ``slug``, metric changes named on the row, and the
    evidence: ``body`` (set for the cases the page holds as HTML) or ``chunk`` (the data
    block the script reads it from); neither when it was left out to bound the file."""

    index: int
    key: CaseKey
    slug: str
    suite: str
    eval_set_id: str
    eval_id: str
    change: str
    change_label: str
    head_status: str | None
    base_status: str | None
    runs_text: str | None
    flags: list[str]
    changes: list[str]
    body: CaseBody | None = None
    chunk: int | None = None


def slug_part(text: str) -> tuple[str, bool]:
    """``text`` as a slug part (module docstring) and whether it had to change."""
    part = _SLUG.sub("-", text).strip("-")[:60] or "x"
    return part, part != text


def case_slugs(keys: list[CaseKey]) -> list[str]:
    """Each case's deep-link id (module docstring), unique among ``keys``."""
    taken: set[str] = set()
    out = []
    for key in keys:
        suite, suite_changed = slug_part(key[0])
        eval_id, id_changed = slug_part(key[2])
        slug = f"case-{suite}-{eval_id}"
        if slug in taken or suite_changed or id_changed:
            digest = hashlib.sha1("\x00".join(key).encode("utf-8", "replace")).hexdigest()
            slug = f"{slug}-{digest[:8]}"
        taken.add(slug)
        out.append(slug)
    return out


def _metric_rules(comparison: Comparison) -> dict[tuple[str, str], MetricComparison]:
    return {(m.suite, m.metric_name): m for m in comparison.metrics}


def _worse(case: CaseComparison, rules: Mapping[tuple[str, str], MetricComparison],
           metric: str, delta: float | None) -> bool:
    rule = rules.get((case.suite, metric))
    if delta is None or rule is None or rule.informational:
        return False
    effect = rule.min_effect or 0.0
    return delta < -effect if rule.higher_is_better else delta > effect


def case_flags(case: CaseComparison, failing: set[CaseKey],
               rules: Mapping[tuple[str, str], MetricComparison]) -> list[str]:
    """The filters ``case`` is in (module docstring), in :data:`FILTERS` order."""
    regressed = case.change == "newly_failing" or any(
        _worse(case, rules, d.metric_name, d.delta) for d in case.metrics)
    errored = case.head_status is not None and str(case.head_status) == "error"
    found = {
        "failing": case.key in failing,
        "regressed": regressed,
        "flaky": case.flaky,
        "errored": errored or case.change == "errored",
        "new": case.change == "new",
        "removed": case.change == "removed",
    }
    return [name for name in FILTERS if found[name]]


def ordered_cases(comparison: Comparison, gate: GateResult) -> list[CaseComparison]:
    """The comparison's cases in the report's order (module docstring)."""
    failing = [c.key for c in gate.failing_cases]
    rank = {key: i for i, key in enumerate(failing)}
    rules = _metric_rules(comparison)
    keys = set(rank)

    def group(case: CaseComparison) -> int:
        if case.key in keys:
            return 0
        flags = case_flags(case, set(), rules)
        return 1 + min((FILTERS.index(f) for f in flags), default=len(FILTERS))

    indexed = list(enumerate(comparison.cases))
    indexed.sort(key=lambda p: (group(p[1]), rank.get(p[1].key, 0), p[0]))
    return [case for _, case in indexed]


def _status(value: object | None) -> str | None:
    return None if value is None else str(value)


def delta_rows(case: CaseComparison, rules: Mapping[tuple[str, str], MetricComparison]
               ) -> list[DeltaRow]:
    """The case's metric rows (gated first, then informational)."""
    rows = []
    for d in case.metrics:
        rule = rules.get((case.suite, d.metric_name))
        rows.append((bool(rule and rule.informational), DeltaRow(
            metric=ident(d.metric_name), base=score(d.baseline), head=score(d.head),
            delta=_signed(d.delta), status=_status(d.head_status),
            reason=clip(d.reason) if d.reason else None,
            worse=_worse(case, rules, d.metric_name, d.delta))))
    return [row for _, row in sorted(rows, key=lambda p: p[0])]


def _signed(value: float | None) -> str:
    if value is None:
        return "—"
    text = score(abs(value))
    return "±0" if text == "0" else f"{'+' if value > 0 else '−'}{text}"


def row_changes(rows: list[DeltaRow]) -> list[str]:
    """What a case's row names: its worse metrics, then those not passed, as
    ``metric base → head`` (at most :data:`MAX_SUMMARY_METRICS`)."""
    picked = [r for r in rows if r.worse] + [
        r for r in rows if not r.worse and r.status not in (
            None, str(MetricStatus.PASSED), str(MetricStatus.INFORMATIONAL))]
    return [f"{r.metric} {r.base} → {r.head}" for r in picked[:MAX_SUMMARY_METRICS]]


def case_errors(errors: list[ErrorRecord]) -> dict[CaseKey, list[ErrorView]]:
    """The comparison's errors that name an eval case, by case."""
    out: dict[CaseKey, list[ErrorView]] = {}
    for e in errors:
        if e.suite is None or e.eval_set_id is None or e.eval_id is None:
            continue
        out.setdefault((e.suite, e.eval_set_id, e.eval_id), []).append(error_view(e))
    return out


def error_view(e: ErrorRecord) -> ErrorView:
    """An error as shown: ``where`` is ``file:line`` (or the file alone)."""
    where = None
    if e.file:
        where = clip(e.file, 300) + (f":{e.line}" if e.line else "")
    return ErrorView(kind=e.kind, message=clip(e.message), where=where,
                     hint=clip(e.hint) if e.hint else None)


def _flaky(case: CaseComparison) -> list[str]:
    out = []
    for side, flaky in (("head", case.flaky_head), ("baseline", case.flaky_baseline)):
        for name, (passes, runs) in flaky.items():
            out.append(f"{side}: {ident(name)} passed {passes} of {runs} runs")
    return out


def case_body(case: CaseComparison, head: SideCase | None, base: SideCase | None,
              rows: list[DeltaRow], errors: list[ErrorView]) -> CaseBody:
    """The evidence of ``case`` from each side's view (module docstring)."""
    expected_side = head or base
    expected = expected_side.expected if expected_side else None
    note = None
    if head is not None and base is not None and _turn_texts(head.expected) != _turn_texts(
            base.expected):
        note = ("the baseline was evaluated against another expected conversation (the eval "
                "case changed); the expected column shows the head's")
    columns = [name for name, side in (("expected", expected), ("base", base), ("head", head))
               if side is not None]
    where = None
    if case.file:
        where = clip(case.file, 300) + (f":{case.line}" if case.line else "")
    body = CaseBody(columns=columns, where=where, errors=errors, flaky=_flaky(case),
                    metrics=rows, note=note)
    body.runs = _run_pairs(expected, base, head)
    return body


def _turn_texts(turns: list[TurnView] | None) -> list[tuple[str | None, str | None]] | None:
    return None if turns is None else [(t.user, t.final) for t in turns]


def _run_pairs(expected: list[TurnView] | None, base: SideCase | None,
               head: SideCase | None) -> list[RunPair]:
    base_runs = {r.run: r for r in base.runs} if base else {}
    head_runs = {r.run: r for r in head.runs} if head else {}
    pairs = [_pair(n, expected, base_runs.get(n), head_runs.get(n))
             for n in sorted(base_runs.keys() | head_runs.keys())]
    lead = head_runs if head else base_runs
    first = next((p for p in pairs if (lead.get(p.run) and lead[p.run].status != "passed")),
                 pairs[0] if pairs else None)
    if first is not None:
        first.opened = True
    return pairs


def _pair(n: int, expected: list[TurnView] | None, base: RunView | None,
          head: RunView | None) -> RunPair:
    by_side = [{t.turn: t for t in (side.turns if side else [])} for side in (base, head)]
    wanted = {t.turn: t for t in expected or []}
    numbers = sorted(wanted.keys() | by_side[0].keys() | by_side[1].keys())
    turns = []
    for t in numbers:
        views = (by_side[1].get(t), by_side[0].get(t), wanted.get(t))
        user = next((v.user for v in views if v is not None and v.user is not None), None)
        turns.append(TurnRow(turn=t, user=user, expected=wanted.get(t), base=by_side[0].get(t),
                             head=by_side[1].get(t)))
    names = list(dict.fromkeys([m.metric for side in (base, head) if side
                                for m in side.metrics]))
    metrics = [MetricPair(name, _find(base, name), _find(head, name)) for name in names]
    return RunPair(
        run=n, base_status=base.status if base else None,
        head_status=head.status if head else None,
        base_error=base.error if base else None, head_error=head.error if head else None,
        turns=turns, more_turns=max(base.more_turns if base else 0,
                                    head.more_turns if head else 0),
        metrics=metrics, base_rubrics=base.rubrics if base else [],
        head_rubrics=head.rubrics if head else [],
    )


def _find(side: RunView | None, name: str) -> MetricView | None:
    return next((m for m in side.metrics if m.metric == name), None) if side else None
