"""``compare`` for tests that hold loaded results: both sides tabled as the pipeline tables
them (:func:`adk_eval_action.run.pipeline.score_tables`: an ADK eval_history baseline's
cases placed in the head's suites), then :func:`adk_eval_action.analysis.compare.compare`,
which reads :class:`~adk_eval_action.results.scoretable.ScoreTable` only."""

from __future__ import annotations

from typing import Any

from adk_eval_action.analysis import compare as compare_module
from adk_eval_action.analysis.comparison import Comparison
from adk_eval_action.results.model import RunResults
from adk_eval_action.results.scoretable import ScoreTable
from adk_eval_action.run.pipeline import score_tables


def compare(head: RunResults | ScoreTable, baseline: RunResults | ScoreTable | None,
            baseline_note: str, **options: Any) -> Comparison:
    """:func:`adk_eval_action.analysis.compare.compare` on ``head`` and ``baseline``
    tabled (``options`` are its keyword arguments)."""
    head_table, base_table = score_tables(head, baseline)
    return compare_module.compare(head_table, base_table, baseline_note, **options)
