"""The HTML report file of a run (``--html-out``): the report (:mod:`adk_eval_action.report.html`)
of what the comment renders from and each side's eval case records, written with the
run's known secret values redacted."""

from __future__ import annotations

from pathlib import Path

from adk_eval_action.redaction import Redactor
from adk_eval_action.report.html import render_html
from adk_eval_action.report.html_view import case_records
from adk_eval_action.report.render import CommentContext
from adk_eval_action.results.model import RunResults
from adk_eval_action.results.scoretable import ScoreTable
from adk_eval_action.run.stop_outcomes import write_text


def write_html_report(
    path: Path | None,
    context: CommentContext,
    head: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    redact: Redactor | None = None,
    what: str = "--html-out",
) -> None:
    """Writes the HTML report to ``path`` (None: nothing). A side given as a table has the
    evidence of the cases whose records it kept; give the results for every case's.
    ``what``: the option that names the file, for the error.

    Raises:
        OutputError: the file cannot be written (names it and ``what``).
    """
    if path is None:
        return
    history = context.comparison.history
    trend = history.trends if history is not None and history.recorded_runs else None
    text = render_html(context, case_records(head), case_records(baseline), trend=trend,
                       redact=redact if redact else None)
    write_text(path, text, what)
